"""The simple answer check: numbers read from both sides, compared with tolerance.

Integers compare exactly at any size (``2432902008176640001`` is not 20!, though the
two are one float), and so do fractions of integers (``2/3``, ``1:3``) with each other
and with integers; anything else (a value written with a decimal point that is not a
whole number, ``0.75``) with a relative tolerance of 1e-3; the policies ``strict`` (same numbers, any order), ``model_include_gt`` and
``gt_include_model`` say which side must cover the other; with no number on either
side the two strings are compared literally (case and spaces ignored).

Where the reference tool contradicts its own README we follow the README (see
``tests/answers/test_numeric.py``): a value written with k >= 2 decimals also matches
the other side rounded to k decimals, so ``$1.33`` matches ``1.333333`` (the README's
own example), which plain 1e-3 relative tolerance rejects.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

CHECK_POLICIES = ("strict", "model_include_gt", "gt_include_model")
REL_TOL = 1e-3
#: Most number pairs one check compares: matching numbers with a tolerance is quadratic
#: (answers with thousands of non-integers on both sides). Integers alone are linear.
MAX_COMPARISONS = 1_000_000
#: Integers with more digits stay :class:`~decimal.Decimal` (exact, built in linear time)
#: rather than ``int``: Python refuses ``int()`` of more than 4,300 digits, and the
#: conversion is quadratic. Fractions of such numbers compare with the tolerance.
MAX_INT_DIGITS = 4000

# The reference tool's five number patterns, applied in this order; each collects its
# matches and deletes them before the next runs. The "." of the first three is an
# unescaped any-character, so "10 3/4" is one (unreadable) token: kept for parity.
# Linear time (a 10,000-digit number took 8 s, a 1,500-digit "0.3333...3" a minute):
# tried at every digit of a long run, the reference patterns scan to the run's end and
# back each time. The guards below skip only starting points that cannot change the
# result (tests/answers/test_numeric.py checks them against the reference patterns on
# random text):
# - (?=(\d+))\1 is an atomic \d+ (Python 3.10's re has no possessive quantifiers);
# - (?<!\d): a match of patterns 2 and 4 inside a digit run would continue exactly as
#   one from the run's first digit, which was tried before and failed (every match ends
#   at the end of a digit run, so no earlier match ends inside one);
# - pattern 1 (a single \d, then "." may eat a digit) can start inside a run only at its
#   last two digits; from any earlier digit it continues as from the run's first one.
_NUMBER_PATTERNS = [re.compile(p) for p in (
    r"-?(?:(?<!\d)|(?=\d{1,2}(?!\d)))\d(.\d+)?[eE][+-]?\d+",
    r"-?(?<!\d)(?=(\d+))\1(.\d+)?\s*[/:]\s*\d+(.\d+)?",
    r"-?\d{1,3}(,\d{3})+(.\d+)?",
    r"-?(?<!\d)\d+\s*[./:]\s*\d+",
    r"-?\d+",
)]
#: The reference tool's patterns as it writes them (the oracle of the tests).
REFERENCE_PATTERNS = (
    r"-?\d(.\d+)?[eE][+-]?\d+",
    r"-?\d+(.\d+)?\s*[/:]\s*\d+(.\d+)?",
    r"-?\d{1,3}(,\d{3})+(.\d+)?",
    r"-?\d+\s*[./:]\s*\d+",
    r"-?\d+",
)


@dataclass(frozen=True)
class Number:
    """A number read from an answer: its value and how many decimals were written
    (None for fractions and ratios, whose expansion does not end).

    ``value`` is exact (``int``, ``Fraction``, or ``Decimal`` past :data:`MAX_INT_DIGITS`
    digits) for whole numbers and fractions of integers, else a ``float``.
    """

    value: int | float | Fraction | Decimal
    decimals: int | None

    @property
    def exact(self) -> bool:
        """Whether ``value`` is exact (compared without tolerance)."""
        return not isinstance(self.value, float)

    def __repr__(self) -> str:
        return repr(float(self.value) if isinstance(self.value, Fraction) else self.value)


class UnreadableNumber(ValueError):
    """A token the number patterns matched but that is no number (``10 3/4``)."""


class TooManyNumbers(Exception):
    """Comparing the numbers of two answers would take more than ``MAX_COMPARISONS``.

    Not a ValueError: the input is well formed, only too large to judge; the caller
    reports the check as skipped (``mathir answers`` writes ``"skipped"``).
    """


def read_number(token: str) -> Number:
    """The number a token of :func:`read_numbers` stands for (``,`` and spaces ignored,
    ``:`` a fraction bar); :class:`UnreadableNumber` when it is none.

    >>> read_number("1,400"), read_number("3 : 4"), read_number("2.50").decimals
    (1400, 0.75, 2)
    """
    t = token.replace(",", "").replace(":", "/").replace(" ", "")
    try:
        if "/" in t:
            num, den = t.split("/")
            value = float(num) / float(den)
            n, d = _exact_integer(num), _exact_integer(den)
            if isinstance(n, int) and isinstance(d, int) and d:
                ratio = Fraction(n, d)
                return Number(ratio.numerator if ratio.denominator == 1 else ratio, None)
            return Number(value, None)
        value = float(t)
    except (ValueError, ZeroDivisionError):
        raise UnreadableNumber(token) from None
    mant = t.lower().split("e")[0]
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    exact = _exact_integer(t)
    return Number(value if exact is None else exact, decimals)


def _exact_integer(text: str) -> int | Decimal | None:
    """The whole number ``text`` (a token part float() reads) stands for, exactly; None
    when it is no whole number. Read as a Decimal (linear time, any exponent: "1e999999"
    costs nothing), an ``int`` up to :data:`MAX_INT_DIGITS` digits.

    >>> _exact_integer("2432902008176640001"), _exact_integer("1.50e1"), _exact_integer("0.5")
    (2432902008176640001, 15, None)
    """
    try:
        d = Decimal(text)
    except (InvalidOperation, ValueError):
        return None
    if not d.is_finite():
        return None
    sign, digits, exp = d.as_tuple()
    if exp < 0 and any(digits[exp:]):
        return None  # a fractional part
    if d.adjusted() < MAX_INT_DIGITS:
        return int(d)
    return d


def read_numbers(text: str) -> list[Number]:
    """The numbers of ``text`` (the reference tool's patterns and order).

    Raises :class:`UnreadableNumber` for a token that is no number.

    >>> read_numbers("200 ml of 5% and 1,400 ml; ratio 1:2")
    [0.5, 1400, 200, 5]
    """
    numbers = []
    for pat in _NUMBER_PATTERNS:
        found = [m.group(0) for m in pat.finditer(text)]
        numbers.extend(read_number(t) for t in found)
        text = pat.sub("", text)
    return numbers


def numbers_equal(a: Number, b: Number, rel_tol: float = REL_TOL) -> bool:
    """Exact values (integers, fractions of integers) exactly, else relative tolerance,
    else the README's rounding rule.

    >>> numbers_equal(Number(1001, 0), Number(1000, 0))
    False
    >>> numbers_equal(Number(2432902008176640001, 0), Number(2432902008176640000, 0))
    False
    >>> numbers_equal(Number(1.0005, 4), Number(1, 0))
    True
    >>> numbers_equal(Number(1.33, 2), Number(1.333333, 6))
    True
    """
    if a.exact and b.exact:
        return a.value == b.value
    fa, fb = _approximate(a.value), _approximate(b.value)
    if math.isclose(fa, fb, rel_tol=rel_tol):
        return True
    # README rule (see module doc): the less precise side, written with k >= 2
    # decimals, equals the other side rounded to k decimals.
    short, other = (a, b) if (b.decimals is None or (a.decimals is not None
                                                    and a.decimals < b.decimals)) else (b, a)
    k = short.decimals
    if k is None or k < 2 or (other.decimals is not None and other.decimals <= k):
        return False
    return abs(round(_approximate(other.value), k) - _approximate(short.value)) \
        < 0.5 * 10 ** -(k + 3)


def _approximate(value: int | float | Fraction | Decimal) -> float:
    """``value`` as a float; +-inf past the float range (``float(10**400)`` raises)."""
    try:
        return float(value)
    except OverflowError:
        return -math.inf if value < 0 else math.inf


def _covered(needles: list[Number], haystack: list[Number]) -> bool:
    """Every needle matches a distinct haystack number (greedy, order-free).

    Raises :class:`TooManyNumbers` past ``MAX_COMPARISONS`` comparisons.
    """
    if len(needles) > len(haystack):
        return False  # each needle takes a haystack number of its own
    if len(needles) * len(haystack) > 64 and all(x.exact for x in needles + haystack):
        # Exact values compare exactly, an equivalence: the greedy matching below then
        # succeeds iff the needles are a sub-multiset of the haystack (linear time).
        have = Counter(h.value for h in haystack)
        return all(have[v] >= k for v, k in Counter(n.value for n in needles).items())
    free = list(haystack)
    work = 0
    for n in needles:
        for i, h in enumerate(free):
            if numbers_equal(n, h):
                del free[i]
                break
        else:
            return False
        work += i + 1
        if work > MAX_COMPARISONS:
            raise TooManyNumbers(f"more than {MAX_COMPARISONS:,} number comparisons "
                                 f"({len(needles):,} numbers against {len(haystack):,})")
    return True


def _clean(text: str) -> str:
    for ch in ". \n. \n":
        text = text.rstrip(ch)
    return text.replace("$", "")


def simple_check(answer: str | None, gold: str, policy: str = "strict") -> bool:
    """Whether the extracted ``answer`` matches ``gold`` (numbers, else literally).

    Linear in the length of the texts, except that thousands of non-integer numbers on
    both sides raise :class:`TooManyNumbers` rather than compare for minutes.

    >>> simple_check("200 ml and 400 ml.", "400, 200")
    True
    >>> simple_check("16 - 3 - 4 = 9", "9"), simple_check("16 - 3 - 4 = 9", "9", "model_include_gt")
    (False, True)
    >>> simple_check("Yes", "yes"), simple_check(None, "5")
    (True, False)
    """
    if policy not in CHECK_POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {CHECK_POLICIES}")
    if answer is None:
        return False
    answer, gold = _clean(answer), _clean(gold)
    try:
        model_nums, gold_nums = read_numbers(answer), read_numbers(gold)
    except UnreadableNumber:
        return False
    if not model_nums and not gold_nums:
        squash = str.maketrans("", "", " \n")
        return answer.translate(squash).lower() == gold.translate(squash).lower()
    if not model_nums or not gold_nums:
        return False
    if policy == "strict":
        return len(model_nums) == len(gold_nums) and _covered(gold_nums, model_nums)
    if policy == "model_include_gt":
        return _covered(gold_nums, model_nums)
    return _covered(model_nums, gold_nums)

