"""A parser of plain-text math (``2*x**2 + 1``, ``a * m + b = c``) into SymPy, without eval.

SymPy's own text parsers (``sympify``, ``parse_expr``, ``S("...")``) turn their input
into Python code and run it with ``eval``: a model response or a run-file template
such as ``__import__("os").system(...)`` would execute. This module is the one place
in mathir that reads math from text (apart from LaTeX, which latex2sympy2_extended
parses with an ANTLR grammar): a tokenizer and a recursive-descent parser build SymPy
objects directly (``Integer``, ``Float``, ``Symbol``, ``+ - * / **``, whitelisted
functions), and it evaluates nothing. ``tests/test_no_eval.py`` checks that no other
module calls an evaluating parser.

Written by hand: the grammar is a dozen rules, and a small whitelist that can be read
in one sitting is the point; SymPy's parsers all end in ``eval`` and a parser
generator would be a new dependency with its own recursion limits.

The grammar (Python's precedence; ``^`` is a power, as in math, not XOR)::

    equation := expr "=" expr                      (parse_equation only)
    expr     := term (("+" | "-") term)*
    term     := unary (("*" | "/") unary | unary)*  (juxtaposition only with
                                                     implicit_multiplication)
    unary    := ("+" | "-") unary | power
    power    := postfix (("**" | "^") unary)?      (right-associative)
    postfix  := atom "!"?                          (factorial)
    atom     := NUMBER | NAME | FUNCTION "(" expr ("," expr)? ")" | "(" expr ")"

Only ASCII is read: digits, letters, spaces and ``+ - * / ^ ( ) , ! = .``. Anything
else (quotes, underscores, ``[``, ``.`` outside a number, ``lambda`` or any unknown
name, full-width or other non-ASCII letters, which Python would NFKC-normalise into
identifiers) raises :class:`UnsafeExpression`; malformed input raises
:class:`ExpressionError`. Input length, nesting depth and the size of numbers are
capped, so no input makes it recurse without bound or compute a huge integer.

It imports nothing from mathir: the SymPy worker process loads it by path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from functools import lru_cache

MAX_LENGTH = 2_000
MAX_DEPTH = 50
#: Bits of the largest integer or fraction part that a parse may compute.
MAX_BITS = 10_000
MAX_FACTORIAL = 1_000

_SPACE = frozenset(" \t\r\n")
_OPERATORS = ("**", "+", "-", "*", "/", "^", "(", ")", ",", "!", "=")
# [0-9] and [A-Za-z], never \d or \w: those match non-ASCII digits and letters.
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)$")
_MAX_DIGITS = 1_000


class ExpressionError(ValueError):
    """Text that is not an expression of the grammar (malformed, or refused)."""


class UnsafeExpression(ExpressionError):
    """Text refused outright: a character, name or size the grammar does not admit.

    >>> parse_expression('__import__("os")')  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    UnsafeExpression: character '_' at position 0 is not allowed
    """


def _short(text: str) -> str:
    return ascii(text if len(text) <= 60 else text[:57] + "...")


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """``(kind, text, position)`` with kind NUMBER, NAME or OP; ``("END", "", n)`` last."""
    if not isinstance(text, str):
        raise ExpressionError(f"expected a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise UnsafeExpression(f"expression of {len(text)} characters (at most {MAX_LENGTH})")
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch in _SPACE:
            i += 1
            continue
        m = _NUMBER.match(text, i)
        if m:
            out.append(("NUMBER", m.group(), i))
            i = m.end()
            continue
        m = _NAME.match(text, i)
        if m:
            out.append(("NAME", m.group(), i))
            i = m.end()
            continue
        op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
        if op is None:
            raise UnsafeExpression(f"character {ascii(ch)} at position {i} is not allowed")
        out.append(("OP", op, i))
        i += len(op)
    out.append(("END", "", n))
    return out


def identifiers(text: str) -> list[str]:
    """The names in ``text`` (in order of first use); refuses characters outside the grammar.

    >>> identifiers("a * m + b * n = c1")
    ['a', 'm', 'b', 'n', 'c1']
    """
    return list(dict.fromkeys(t for kind, t, _ in _tokens(text) if kind == "NAME"))


@lru_cache(maxsize=1)
def _sympy_tables():
    import sympy

    functions = {
        "sqrt": (sympy.sqrt, (1,)), "exp": (sympy.exp, (1,)),
        "log": (sympy.log, (1, 2)), "ln": (sympy.log, (1,)),
        "abs": (sympy.Abs, (1,)), "Abs": (sympy.Abs, (1,)),
        "floor": (sympy.floor, (1,)), "ceiling": (sympy.ceiling, (1,)),
        "ceil": (sympy.ceiling, (1,)), "factorial": (sympy.factorial, (1,)),
    }
    for name in ("sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan",
                 "sinh", "cosh", "tanh"):
        functions[name] = (getattr(sympy, name), (1,))
    for name in ("sin", "cos", "tan"):
        functions["arc" + name] = functions["a" + name]
    # Without declared names: E/e is Euler's number, as latex2sympy2 reads e^{x};
    # I is the imaginary unit and oo infinity, as SymPy's parse_expr read them.
    constants = {"pi": sympy.pi, "e": sympy.E, "E": sympy.E, "I": sympy.I, "oo": sympy.oo}
    return sympy, functions, constants


def _bits(x) -> int:
    """Bits of the integer or of the larger part of the fraction ``x`` (0 otherwise)."""
    if getattr(x, "is_Rational", False):
        return max(int(x.p).bit_length(), int(x.q).bit_length())
    return 0


class _Parser:
    """Recursive descent over the tokens; each node is ``(expr, bits)`` where ``bits``
    bounds the size of any number SymPy computed in it (checked against MAX_BITS
    before an operation, so ``9**9**9`` is refused rather than computed)."""

    def __init__(self, text: str, names: Collection[str] | None, functions: bool,
                 implicit_multiplication: bool):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0
        self.names = None if names is None else frozenset(names)
        self.use_functions = functions
        self.implicit = implicit_multiplication
        self.sympy, self.functions, self.constants = _sympy_tables()

    # --- helpers --------------------------------------------------------------------

    @property
    def tok(self) -> tuple[str, str, int]:
        return self.toks[self.i]

    def _error(self, message: str) -> ExpressionError:
        kind, t, pos = self.tok
        where = "end of input" if kind == "END" else f"{t!r} at position {pos}"
        return ExpressionError(f"{message} at {where} in {_short(self.text)}")

    def _accept(self, op: str) -> bool:
        if self.tok[0] == "OP" and self.tok[1] == op:
            self.i += 1
            return True
        return False

    def _expect(self, op: str) -> None:
        if not self._accept(op):
            raise self._error(f"expected {op!r}")

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise UnsafeExpression(f"expression nested deeper than {MAX_DEPTH} levels")

    @staticmethod
    def _check(bits: int) -> int:
        if bits > MAX_BITS:
            raise UnsafeExpression(f"number of more than {MAX_BITS} bits")
        return bits

    # --- grammar --------------------------------------------------------------------

    def expression(self):
        self._enter()
        value, bits = self._term()
        terms = [value]
        while self.tok[0] == "OP" and self.tok[1] in "+-":
            op = self.tok[1]
            self.i += 1
            right, rbits = self._term()
            bits = self._check(max(bits, rbits) + 1)
            terms.append(right if op == "+" else -right)
        self.depth -= 1
        # One Add of all terms: the same sum as adding left to right, in linear time.
        return (value if len(terms) == 1 else self.sympy.Add(*terms)), bits

    def _starts_atom(self) -> bool:
        kind, t, _ = self.tok
        return kind in ("NUMBER", "NAME") or (kind == "OP" and t == "(")

    def _term(self):
        value, bits = self._unary()
        while True:
            if self.tok[0] == "OP" and self.tok[1] in ("*", "/"):
                op = self.tok[1]
                self.i += 1
            elif self.implicit and self._starts_atom():
                op = "*"
            else:
                return value, bits
            right, rbits = self._unary()
            bits = self._check(bits + rbits)
            value = value * right if op == "*" else value / right

    def _unary(self):
        if self.tok[0] == "OP" and self.tok[1] in "+-":
            op = self.tok[1]
            self.i += 1
            self._enter()
            value, bits = self._unary()
            self.depth -= 1
            return (-value if op == "-" else value), bits
        return self._power()

    def _power(self):
        base, bits = self._postfix()
        if self.tok[0] == "OP" and self.tok[1] in ("**", "^"):
            self.i += 1
            self._enter()
            exponent, ebits = self._unary()
            self.depth -= 1
            if getattr(exponent, "is_Rational", False):
                bits = self._check(max(bits, 1) * max(abs(int(exponent.p)), 1))
            else:
                bits = self._check(max(bits, ebits))
            return base ** exponent, bits
        return base, bits

    def _postfix(self):
        value, bits = self._atom()
        if self._accept("!"):
            if self.tok[0] == "OP" and self.tok[1] == "!":
                raise UnsafeExpression("'!!' is not allowed (write factorial(...) twice)")
            return self._factorial(value, bits)
        return value, bits

    def _factorial(self, value, bits):
        if getattr(value, "is_Integer", False):
            if value > MAX_FACTORIAL:
                raise UnsafeExpression(f"factorial of more than {MAX_FACTORIAL}")
            bits = max(bits, int(math.lgamma(int(value) + 1) / math.log(2)) + 1 if value > 0 else 1)
        return self.sympy.factorial(value), self._check(bits)

    def _atom(self):
        kind, t, _ = self.tok
        if kind == "NUMBER":
            self.i += 1
            return self._number(t)
        if kind == "NAME":
            self.i += 1
            if self.tok[0] == "OP" and self.tok[1] == "(" and self._is_function(t):
                return self._call(t)
            return self._name(t), 0
        if self._accept("("):
            value, bits = self.expression()
            self._expect(")")
            return value, bits
        raise self._error("expected a number, a name or '('")

    def _number(self, t: str):
        m = _EXPONENT.search(t)
        if len(t) > _MAX_DIGITS or (m and abs(int(m.group(1))) > _MAX_DIGITS):
            raise UnsafeExpression(f"number {_short(t)} too long")
        if "." in t or m:  # as parse_expr: 1e5 and 0.5 are Floats, 12 an Integer
            value = self.sympy.Float(t)
        else:
            value = self.sympy.Integer(int(t))
        return value, _bits(value)

    def _is_function(self, name: str) -> bool:
        return (self.use_functions and name in self.functions
                and (self.names is None or name not in self.names))

    def _name(self, name: str):
        if self.names is not None:
            if name in self.names:
                return self.sympy.Symbol(name)
        elif name in self.constants:
            return self.constants[name]
        elif len(name) == 1:
            return self.sympy.Symbol(name)
        self.i -= 1
        if self.use_functions and name in self.functions:
            raise self._error(f"function {name!r} without '('")
        raise UnsafeExpression(f"unknown name {_short(name)} in {_short(self.text)}")

    def _call(self, name: str):
        fn, arities = self.functions[name]
        self._expect("(")
        args, bits = [], 0
        while True:
            value, b = self.expression()
            args.append(value)
            bits = max(bits, b)
            if not self._accept(","):
                break
        self._expect(")")
        if len(args) not in arities:
            raise ExpressionError(f"{name}() takes {' or '.join(map(str, arities))} "
                                  f"argument(s), not {len(args)}")
        if fn is self.sympy.factorial:
            return self._factorial(args[0], bits)
        return fn(*args), bits

    def end(self) -> None:
        if self.tok[0] != "END":
            raise self._error("unexpected token")


def parse_expression(text: str, names: Collection[str] | None = None, *,
                     functions: bool = True, implicit_multiplication: bool = False):
    """The SymPy expression of ``text``.

    Without ``names``, a name is a single letter (a Symbol), ``pi``, ``e``/``E``,
    ``I`` or ``oo``, or a whitelisted function called with brackets. With ``names``,
    exactly those names are Symbols (they shadow constants and functions) and,
    when ``functions`` is true, the whitelisted functions may be called.

    >>> parse_expression("2*x**2 + sqrt(4) - 3!")
    2*x**2 - 4
    >>> parse_expression("1/2 + 0.25"), parse_expression("2^-1")
    (0.750000000000000, 1/2)
    >>> parse_expression("rate*t", names={"rate", "t"}, functions=False)
    rate*t
    >>> parse_expression("(1).__class__")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    UnsafeExpression: character '.' at position 3 is not allowed
    """
    p = _Parser(text, names, functions, implicit_multiplication)
    value, _ = p.expression()
    p.end()
    return value


def parse_equation(text: str, names: Collection[str] | None = None, *,
                   functions: bool = True, implicit_multiplication: bool = False):
    """``(lhs, rhs)``: the two sides of an equation with exactly one ``=``.

    >>> parse_equation("a * m + b * n = c", names={"a", "b", "c", "m", "n"}, functions=False)
    (a*m + b*n, c)
    >>> parse_equation("3(2k+3) = 31", names={"k"}, implicit_multiplication=True)
    (6*k + 9, 31)
    """
    p = _Parser(text, names, functions, implicit_multiplication)
    lhs, _ = p.expression()
    p._expect("=")
    rhs, _ = p.expression()
    p.end()
    return lhs, rhs
