"""The safe math parser: what real data needs is accepted, every other construct refused.

SymPy's evaluating parsers appear here only as the reference the safe parser must
agree with (tests/ is outside tests/test_no_eval.py's scope on purpose).
"""

import glob
import json
import re

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st
from sympy.parsing.sympy_parser import parse_expr

from mathir.answer_checking.safe_math import (
    MAX_DEPTH,
    MAX_LENGTH,
    ExpressionError,
    UnsafeExpression,
    identifiers,
    parse_equation,
    parse_expression,
)
from tests.conftest import real_path

x, y, e, m = sympy.symbols("x y e m")


# --- accepted -------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("2*x**2 + 1", 2 * x**2 + 1),
    ("x^2", x**2),                        # a power, not Python's XOR
    ("2^-1", sympy.Rational(1, 2)),       # parse_expr read this as 2 XOR -1 = -3
    ("2**3**2", 512),                     # right-associative
    ("-x**2", -(x**2)),                   # ** binds tighter than unary minus
    ("(-x)**2", x**2),
    ("1/2 + 1/3", sympy.Rational(5, 6)),
    ("0.5", sympy.Float("0.5")), (".5", sympy.Float("0.5")), ("3.", sympy.Float(3)),
    ("1e5", sympy.Float(100000)), ("1.5E-3", sympy.Float("0.0015")),
    ("3!", 6), ("x!", sympy.factorial(x)), ("factorial(4)", 24),
    ("sqrt(16) + abs(-2) + Abs(-1)", 7),
    ("log(8, 2)", 3), ("ln(e)", 1), ("exp(0)", 1), ("log(E)", 1),
    ("sin(pi/2) + cos(0) + tan(0)", 2), ("arcsin(1)", sympy.pi / 2),
    ("floor(2.5) + ceiling(1.2) + ceil(0.1)", 5),
    ("e", sympy.E), ("E", sympy.E), ("I**2", -1), ("oo", sympy.oo), ("pi", sympy.pi),
    ("  ( ( x ) )\t+\n1 ", x + 1),
    ("--2", 2), ("+-+2", -2),
])
def test_accepts(text, expected):
    assert parse_expression(text) == expected


def test_equations_and_declared_names():
    assert parse_equation("a * m + b = c", {"a", "b", "c", "m"}, functions=False) \
        == (sympy.Symbol("a") * m + sympy.Symbol("b"), sympy.Symbol("c"))
    # declared names shadow constants and functions: e is a slot in templates
    assert parse_expression("e * m", {"e", "m"}) == e * m
    assert parse_expression("sqrt", {"sqrt"}) == sympy.Symbol("sqrt")
    assert parse_expression("rate1*t", {"rate1", "t"}) == sympy.Symbol("rate1") * sympy.Symbol("t")
    assert parse_equation("3(2k+3) = 31", {"k"}, implicit_multiplication=True) \
        == (6 * sympy.Symbol("k") + 9, 31)
    assert identifiers("a*m + b1 = a") == ["a", "m", "b1"]


# Generated expressions of the shared grammar: the safe parser builds exactly what
# parse_expr built (same SymPy tree), so the fallback of the LaTeX check and templates
# give the same numbers as before. Letters parse_expr reads as SymPy objects (E, I, N,
# O, Q, S) and e (Euler's number here) are left out.
_letters = st.sampled_from(list("abcdmnpqrstuvwxyz"))
_numbers = st.integers(0, 50).map(str) | st.sampled_from(["0.5", "2.25", ".5", "1e2", "3."])
_atoms = _letters | _numbers


def _combine(children):
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "/"]), children).map(
        lambda t: f"{t[0]} {t[1]} {t[2]}")
    power = st.tuples(children, st.sampled_from(["0", "1", "2", "3", "-1", "-2"])).map(
        lambda t: f"({t[0]})**{t[1]}")
    call = st.tuples(st.sampled_from(["sqrt", "sin", "cos", "exp", "log", "Abs"]),
                     children).map(lambda t: f"{t[0]}({t[1]})")
    return (binary | power | call | children.map(lambda c: f"({c})")
            | children.map(lambda c: f"-{c}") | _letters.map(lambda c: f"{c}!"))


@given(st.recursive(_atoms, _combine, max_leaves=12))
def test_same_tree_as_parse_expr(text):
    assert sympy.srepr(parse_expression(text)) == sympy.srepr(parse_expr(text))


@pytest.mark.realdata
def test_every_real_template_parses_as_sympify_did():
    n = 0
    for f in ("draw.json", "kushman.json", "dolphin_t2_final.json"):
        for rec in json.loads(real_path("word_problems", "draw_release", f).read_text()):
            for eq in rec.get("Template") or ():
                names = identifiers(eq)
                lhs, rhs = parse_equation(eq, names, functions=False)
                syms = {s: sympy.Symbol(s) for s in names}
                a, b = eq.split("=")
                old = sympy.sympify(a, locals=syms) - sympy.sympify(b, locals=syms)
                assert sympy.srepr(lhs - rhs) == sympy.srepr(old), eq
                n += 1
    assert n == 3755


# Dolphin1878's equations: everything in the algebra grammar parses (names declared by
# the equation itself, "3(x+1)" as a product); the rest is refused with an
# ExpressionError: inequalities, is_integer(...)-style predicates, "%", "[", a
# thousands comma, gcd/lcm/remainder, "6...8", and a bare "x".
_OUTSIDE = re.compile(r"[<>_%\[]|\d,\d|\.\.|\b(?:gcd|lcm|remainder)\(|^[^=]*$")


@pytest.mark.realdata
def test_dolphin1878_equations():
    from mathir.readers.word_problems import iter_dolphin1878

    folder = real_path("word_problems", "mwptoolkit", "dolphin1878")
    parsed = refused = 0
    for f in sorted(glob.glob(str(folder / "number_word_std.*.json"))):
        for p in iter_dolphin1878(f):
            for eq in p.equations:
                try:
                    parse_equation(eq, set(identifiers(eq)), implicit_multiplication=True)
                except ExpressionError:
                    assert _OUTSIDE.search(eq), eq
                    refused += 1
                else:
                    assert not _OUTSIDE.search(eq), eq
                    parsed += 1
    assert (parsed, refused) == (2634, 127)


# --- refused ----------------------------------------------------------------------------

FORBIDDEN = [
    "(1).__class__", "x.real", "().__class__.__bases__[0].__subclasses__()",  # attributes
    "__import__('os')", "_", "x_1", "1_000",                                   # underscores
    '"x"', "'x'", "b'x'",                                                     # strings
    "x[0]", "[1, 2]", "{1}", "{x: 1}",                                         # subscripts, displays
    "lambda: 1", "lambda x: x",                                               # lambdas
    "(x := 1)", "x if y else z", "x and y", "not x", "x or y",
    "x == y", "x < y", "x >= 1", "x % 2", "x // 2", "x @ y", "x & y", "x | y", "~x",
    "x >> 1", "x; y", "x # comment", "x \\\n + 1", "`x`", "$x", "?", "x!!",
    "1, 2", "(1, 2)", "x(1, 2)",                                              # commas
    "f'{x}'", "[c for c in 'ab']",
    "ｘ", "＿＿import＿＿('os')", "α", "１２", "١٢", "x\u00a0+ 1", "x\u3000+1",  # non-ASCII
    "eval('1')", "exec", "getattr(x, 'y')", "Symbol('x')", "Integer(3)", "sympify",
    "abc", "True", "None", "xy", "0x10", "1j", "1e",
    "sqrt", "sqrt(1, 2)", "log(1, 2, 3)", "sqrt()",
    "", "   ", "1 +", "(1", "1)", "* 2", "2 3", "x y", "x = 1",
]


@pytest.mark.parametrize("text", FORBIDDEN)
def test_refuses(text):
    with pytest.raises(ExpressionError):
        parse_expression(text)


@pytest.mark.parametrize("text", ["m = a.__class__", "m = _", "m = 'a'", "m = a[0]",
                                  "m = ｂ", "m = a = b", "m + a", "m = sqrt(a)", "m == a"])
def test_refuses_in_equations(text):
    with pytest.raises(ExpressionError):
        parse_equation(text, set(re.findall(r"[A-Za-z][A-Za-z0-9]*", text)), functions=False)


def test_forbidden_characters_are_unsafe_expression():
    for text in ["(1).__class__", "'x'", "x[0]", "＿＿import＿＿", "ｘ", "abc", "x; y"]:
        with pytest.raises(UnsafeExpression):
            parse_expression(text)
    with pytest.raises(UnsafeExpression, match="not allowed"):
        identifiers("m = a.b")
    with pytest.raises(ExpressionError, match="expected a string"):
        parse_expression(b"1")


@pytest.mark.parametrize("text", [
    "(" * 100_000 + "1" + ")" * 100_000,       # long: refused before parsing
    "(" * 1000 + "1" + ")" * 1000,             # deep: refused, no RecursionError
    "-" * 1900 + "1", "**".join(["x"] * 600), "sqrt(" * 300 + "1" + ")" * 300,
    "9**9**9", "2**100000", "(2**5000)**3", "10000!", "factorial(2000)", "1e99999999",
    "9" * 1500, "x**100000",
])
def test_size_limits(text):
    with pytest.raises(UnsafeExpression):
        parse_expression(text)


def test_limits_leave_room():
    assert parse_expression("(" * (MAX_DEPTH - 1) + "x" + ")" * (MAX_DEPTH - 1)) == x
    assert parse_expression("+".join(["x"] * (MAX_LENGTH // 2))) == (MAX_LENGTH // 2) * x
    assert parse_expression("2**1000") == 2**1000 and parse_expression("100!") > 0


@given(st.text(max_size=80))
def test_any_text_parses_or_raises_expression_error(text):
    try:
        parse_expression(text)
    except ExpressionError:
        pass


def test_worker_fallback_reads_caret_as_power_and_runs_nothing():
    from mathir.answer_checking.sympy_worker import compare, parse

    # latex2sympy2 cannot read these; parse_expr read ^ as XOR (2^-1 = -3) and ran text
    assert compare("2^-1", "0.5")["equal"] and compare("2**3 - x", "8 - x")["equal"]
    assert parse("__import__('os').getcwd()") is None
