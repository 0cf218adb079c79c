"""The Dolphin gold-answer format (SigmaDolphin number_word_std ``ans`` field).

``;`` separates the values of different variables, ``{...}`` allows any order of
them, `` or `` separates alternative solutions (all must be given, in any order),
``|`` separates equivalent forms of the whole answer, decimals keep three digits
after the point, and ``ans_no_result`` means no valid answer. A system output uses
the same syntax (``9; 14 or 14; 9``). Written by hand: the official evaluation code
was never released; Table 3 of the dataset document is our test
(``tests/answer_checking/test_dolphin.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import (
    MAX_EMAX,
    MIN_EMIN,
    ROUND_HALF_UP,
    Context,
    Decimal,
    Inexact,
    InvalidOperation,
)

NO_RESULT = "ans_no_result"
#: Fraction terms with more digits stay Decimal: int() refuses 4,300 digits.
_MAX_INT_DIGITS = 4000
_NAME = re.compile(r"^[a-z]\w*\s*=\s*", re.I)
_FRACTION = re.compile(r"^-?\d+\s*/\s*\d+$")
# (?<!\s): inside a run of spaces a match would continue as one from the run's start,
# tried before; without it a long run of spaces took quadratic time.
_OR = re.compile(r"(?<!\s)\s+or\s+")


def _value(token: str):
    """A comparable form of one value: rounded decimal, (num, den) fraction or text.

    Fractions stay as written (``18/28`` is not ``9/14``: the gold wants the reduced
    form) and never equal decimals (``0.643`` is not ``9/14``).
    """
    t = _NAME.sub("", token.strip()).rstrip("%").strip()
    if _FRACTION.match(t):
        num, den = (_integer(x) for x in t.replace(" ", "").split("/"))
        return ("fraction", num, den)
    try:
        d = Decimal(t)
    except InvalidOperation:
        return ("text", re.sub(r"\s+", "", t.lower()))
    if not d.is_finite():
        return ("text", t.lower())
    return ("decimal", _three_decimals(d))


def _integer(text: str) -> int | Decimal:
    """``int(text)``, or past :data:`_MAX_INT_DIGITS` digits (``int()`` refuses 4,300)
    the equal Decimal (the same hash; no int of that size to mistake it for)."""
    digits = text.lstrip("-").lstrip("0") or "0"
    if len(digits) <= _MAX_INT_DIGITS:
        return -int(digits) if text.startswith("-") else int(digits)
    return Decimal(text)


def _three_decimals(d: Decimal) -> Decimal:
    """``d`` rounded half up to 3 decimals, trailing zeros dropped (one form for
    ``100``, ``100.0`` and ``100.0004``), exactly at any size: the precision is that of
    the digits written, never the 28 digits of the default context (which made
    ``10**41 + 1`` equal ``10**41``), and a written exponent is never expanded
    (``1e999999999`` costs nothing).

    >>> _three_decimals(Decimal("2.2225")), _three_decimals(Decimal("1" + "0" * 40 + "1"))
    (Decimal('2.223'), Decimal('100000000000000000000000000000000000000001'))
    """
    sign, digits, exp = d.as_tuple()
    exact = Context(prec=len(digits) + 2, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[Inexact])
    if exp < -3:  # the rounded value has fewer digits than d: the precision holds it
        d = d.quantize(Decimal("0.001"), rounding=ROUND_HALF_UP,
                       context=Context(prec=len(digits) + 2, Emax=MAX_EMAX, Emin=MIN_EMIN))
    return d.normalize(exact)


def _sorted_reprs(values: tuple) -> tuple[str, ...]:
    return tuple(sorted(map(repr, values)))


@dataclass(frozen=True)
class Solution:
    """The values of one solution, in order unless ``unordered``."""

    values: tuple
    unordered: bool

    def matches(self, values: tuple) -> bool:
        if len(values) != len(self.values):
            return False
        if self.unordered:
            return _sorted_reprs(values) == _sorted_reprs(self.values)
        return values == self.values


def _solutions(form: str, gold: bool) -> list[Solution]:
    out = []
    for part in _OR.split(form.strip()):
        part = part.strip()
        unordered = gold and part.startswith("{") and part.endswith("}")
        if unordered:
            part = part[1:-1]
        out.append(Solution(tuple(_value(v) for v in part.split(";")), unordered))
    return out


def parse_gold(ans: str) -> list[list[Solution]]:
    """The equivalent forms of a gold answer, each a list of alternative solutions.

    >>> [len(f) for f in parse_gold("20/9; 20 or 0; 0 | 2.222; 20 or 0; 0")]
    [2, 2]
    >>> parse_gold("{9; 14}")[0][0].unordered
    True
    """
    return [_solutions(form, gold=True) for form in ans.split("|")]


def dolphin_check(output: str, gold: str) -> bool:
    """Whether a system ``output`` is correct against a Dolphin gold answer.

    Correct iff, for one form of the gold, every solution of the output matches one
    of the gold's alternative solutions and every alternative is given (values in
    order unless ``{}``; a solution repeated in another order is the same solution).

    >>> dolphin_check("14; 9", "{9; 14}"), dolphin_check("9 or 14", "{9; 14}")
    (True, False)
    >>> dolphin_check("2.222; 20 or 0; 0", "20/9; 20 or 0; 0 | 2.222; 20 or 0; 0")
    True
    >>> dolphin_check("ans_no_result", "ans_no_result"), dolphin_check("", "ans_no_result")
    (True, False)
    """
    output, gold = output.strip(), gold.strip()
    if gold == NO_RESULT or output == NO_RESULT:
        return output == gold
    if not output:
        return False
    # Set look-ups instead of comparing every solution with every other (quadratic on
    # thousands of " or "): an ordered gold solution matches the values equal to its
    # own (hash-equal: tuples of str, int and Decimal), an unordered one those with the
    # same sorted reprs -- the two cases of Solution.matches. (Equal is not same repr:
    # 0 and -0.)
    predicted = [s.values for s in _solutions(output, gold=False)]
    by_reprs: dict[tuple[str, ...], set[tuple]] = {}
    for v in predicted:
        by_reprs.setdefault(_sorted_reprs(v), set()).add(v)
    values = set(predicted)
    for form in parse_gold(gold):
        ordered = {s.values for s in form if not s.unordered}
        unordered = {_sorted_reprs(s.values) for s in form if s.unordered}
        if (all(r in unordered or all(v in ordered for v in vs) for r, vs in by_reprs.items())
                and all((_sorted_reprs(s.values) in by_reprs) if s.unordered
                        else s.values in values for s in form)):
            return True
    return False
