"""The simple answer check: numbers read from both sides, compared with tolerance.

Integers compare exactly at any size (``2432902008176640001`` is not 20!, though the
two are one float), and so do fractions of integers (``2/3``, ``1:3``) with each other
and with integers; anything else (a value written with a decimal point that is not a
whole number, ``0.75``) with a relative tolerance of 1e-3; the policies ``strict`` (same numbers, any order), ``model_include_gt`` and
``gt_include_model`` say which side must cover the other; with no number on either
side the two strings are compared literally (case and spaces ignored).

Where the reference tool contradicts its own README we follow the README (see
``tests/answer_checking/test_numeric.py``): a value written with k >= 2 decimals also matches
the other side rounded to k decimals, so ``$1.33`` matches ``1.333333`` (the README's
own example), which plain 1e-3 relative tolerance rejects.

Past the float range no number is a float. The tool reads ``1e400`` and ``2e400`` as
one ``inf`` and calls them equal (``math.isclose(inf, inf)``), and ``1e-400`` and
``2e-400`` as one 0. Here integers stay exact as above, and a non-integer whose float
would overflow, or round to 0 or to a subnormal (fewer digits than a float holds), stays
the :class:`~decimal.Decimal` it was written as (a fraction: :class:`DecimalRatio`) and
compares with the same relative tolerance, computed exactly: ``|a - b| <= 1e-3 *
max(|a|, |b|)`` (``math.isclose``'s rule; the tolerance is the decimal ``REL_TOL``
prints as). Within the normal float range the tool's floats stay (parity). The rounding
rule above is not applied past the float range: two huge values within 0.005 of each
other are within the tolerance anyway. Costs stay linear in the digits written:
magnitudes are compared first, no ``10**exponent`` is ever built (``1e999999999``
against ``1e-999999999`` costs nothing), and exact arithmetic is done only on values
within a factor of 10**20 of each other, shifted by one common power of ten. An exponent
past Python's decimal range (beyond +-999999999999999999: ``1e9999999999999999999``)
makes the token unreadable (the check is False), not an ``inf`` equal to every other.

Infinity is never read from an answer (the number patterns need digits, so ``inf``
compares literally); a ``float`` infinity in a :class:`Number` is infinity as written
(SymPy's ``\\infty`` in :mod:`mathir.answer_checking.latex`) and equals only infinity of the same
sign.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, Inexact, InvalidOperation
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import NamedTuple

CHECK_POLICIES = ("strict", "model_include_gt", "gt_include_model")
REL_TOL = 1e-3
#: Most number pairs one check compares: matching numbers with a tolerance is quadratic
#: (answers with thousands of non-integers on both sides). Integers alone are linear.
MAX_COMPARISONS = 1_000_000
#: Integers with more digits stay :class:`~decimal.Decimal` (exact, built in linear time)
#: rather than ``int``: Python refuses ``int()`` of more than 4,300 digits, and the
#: conversion is quadratic. Fractions of such numbers compare with the tolerance.
MAX_INT_DIGITS = 4000
#: The normal float range. A value outside it (overflowing to inf, or rounding to zero or
#: to a subnormal float) is kept exact and compared exactly, never as a float.
_FLOAT_MIN, _FLOAT_MAX = sys.float_info.min, sys.float_info.max
#: Values whose estimated magnitudes (powers of ten, each off by less than one) differ
#: by more than this differ by a factor over 10**18: never within a relative tolerance
#: below 1 (a float below 1 is at most 1 - 2**-53).
_MAX_SHIFT = 20
#: Reads decimal strings exactly (the precision of a context never rounds a constructor)
#: and raises InvalidOperation on an exponent past the decimal range whatever the
#: caller did to the thread's default context.
_READ = Context(traps=[InvalidOperation])

# The reference tool's five number patterns, applied in this order; each collects its
# matches and deletes them before the next runs. The "." of the first three is an
# unescaped any-character, so "10 3/4" is one (unreadable) token: kept for parity.
# Linear time (a 10,000-digit number took 8 s, a 1,500-digit "0.3333...3" a minute):
# tried at every digit of a long run, the reference patterns scan to the run's end and
# back each time. The guards below skip only starting points that cannot change the
# result (tests/answer_checking/test_numeric.py checks them against the reference patterns on
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


class DecimalRatio(NamedTuple):
    """A fraction of two finite Decimals (``denominator`` > 0): the value of a fraction
    token past the float range, or of integers past :data:`MAX_INT_DIGITS` digits,
    which no float or :class:`~fractions.Fraction` holds cheaply."""

    numerator: Decimal
    denominator: Decimal

    def __str__(self) -> str:
        return f"{self.numerator}/{self.denominator}"


class _Parts(NamedTuple):
    """A value as ``sign * numerator / denominator * 10**exponent`` (coefficients: Decimal
    integers with exponent 0, of ``digits`` digits in all), about
    ``mantissa * 10**magnitude`` (0.1 < mantissa < 10)."""

    sign: int
    numerator: Decimal
    denominator: Decimal
    exponent: int
    digits: int
    magnitude: int
    mantissa: float


@dataclass(frozen=True)
class Number:
    """A number read from an answer: its value and how many decimals were written
    (None for fractions and ratios, whose expansion does not end).

    ``value`` is exact (``int``, ``Fraction``, or ``Decimal`` past :data:`MAX_INT_DIGITS`
    digits) for whole numbers and fractions of integers, else a ``float``; past the
    float range a non-integer is the ``Decimal`` (or :class:`DecimalRatio`) it was
    written as, with ``tolerant`` set: compared with the tolerance, exactly.
    """

    value: int | float | Fraction | Decimal | DecimalRatio
    decimals: int | None
    tolerant: bool = False

    @property
    def exact(self) -> bool:
        """Whether ``value`` is exact (compared without tolerance)."""
        return not (self.tolerant or isinstance(self.value, float))

    @cached_property
    def _float(self) -> float | None:
        return _in_float_range(self.value)

    @cached_property
    def _parts(self) -> _Parts:
        return _exact_parts(self.value)

    def __repr__(self) -> str:
        if isinstance(self.value, (Fraction, DecimalRatio)):
            return str(self.value) if self._float is None else repr(self._float)
        return repr(self.value)


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
    >>> read_number("1e400").exact, read_number("2.5e-400")
    (True, Decimal('2.5E-400'))
    """
    t = token.replace(",", "").replace(":", "/").replace(" ", "")
    try:
        if "/" in t:
            num, den = t.split("/")
            return _read_fraction(num, den)
        value = float(t)  # what float() cannot read is no number, as in the tool
        d = Decimal(t, _READ)  # InvalidOperation: an exponent past the decimal range
    except (ValueError, ZeroDivisionError, InvalidOperation):
        raise UnreadableNumber(token) from None
    mant = t.lower().split("e")[0]
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    exact = _whole(d)
    if exact is not None:
        return Number(exact, decimals)
    if _normal(value) or not d.is_finite():  # the tool's float; inf or nan as written
        return Number(value, decimals)
    return Number(d, decimals, tolerant=True)  # past the float range


def _read_fraction(num: str, den: str) -> Number:
    """``num/den``: exact for integers, the tool's float for others within the float
    range, a tolerant :class:`DecimalRatio` past it."""
    fn, fd = float(num), float(den)  # ValueError: unreadable, as the tool's eval fails
    dn, dd = Decimal(num, _READ), Decimal(den, _READ)
    if not (dn.is_finite() and dd.is_finite()):  # inf or nan as written
        return Number(fn / fd, None)
    if not dd:
        raise ZeroDivisionError(den)
    n, d = _whole(dn), _whole(dd)
    if isinstance(n, int) and isinstance(d, int):
        ratio = Fraction(n, d)
        return Number(ratio.numerator if ratio.denominator == 1 else ratio, None)
    if (n is None or d is None) and (_normal(fn) or not dn) and _normal(fd):
        value = fn / fd
        if _normal(value) or not dn:
            return Number(value, None)
    # past the float range, or integers past MAX_INT_DIGITS digits: tolerance, exactly
    if dd < 0:  # copy_negate: unary minus would round to the context's 28 digits
        dn, dd = dn.copy_negate(), dd.copy_negate()
    return Number(DecimalRatio(dn, dd), None, tolerant=True)


def _normal(f: float) -> bool:
    """Whether ``f`` is a float of the normal range (no inf, nan, 0 or subnormal)."""
    return _FLOAT_MIN <= abs(f) <= _FLOAT_MAX


def _whole(d: Decimal) -> int | Decimal | None:
    """The whole number ``d`` (a token part, read exactly) is: an ``int`` up to
    :data:`MAX_INT_DIGITS` digits, past them the Decimal itself (linear time, any
    exponent: "1e999999" costs nothing); None when it is no finite whole number.

    >>> _whole(Decimal("2432902008176640001")), _whole(Decimal("1.50e1")), _whole(Decimal("0.5"))
    (2432902008176640001, 15, None)
    """
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
    else the README's rounding rule. Past the float range, the tolerance exactly.

    >>> numbers_equal(Number(1001, 0), Number(1000, 0))
    False
    >>> numbers_equal(Number(2432902008176640001, 0), Number(2432902008176640000, 0))
    False
    >>> numbers_equal(Number(1.0005, 4), Number(1, 0))
    True
    >>> numbers_equal(Number(1.33, 2), Number(1.333333, 6))
    True
    >>> numbers_equal(read_number("1.5e-400"), read_number("1.5001e-400"))
    True
    >>> ten = "1" + "0" * 400  # 10**400: a float would be inf, as would 2 * 10**400 + 0.5
    >>> numbers_equal(read_number(ten), read_number("2" + ten[1:] + ".5"))
    False
    """
    if not 0 <= rel_tol < 1:
        raise ValueError(f"rel_tol must be at least 0 and below 1, not {rel_tol!r}")
    if a.exact and b.exact:
        return a.value == b.value
    fa, fb = a._float, b._float
    if fa is None or fb is None:  # past the float range: exactly
        other = fb if fa is None else fa
        if other is not None and not math.isfinite(other):
            return False  # inf or nan as written: no finite value is close
        return _close(a._parts, b._parts, rel_tol)
    if math.isclose(fa, fb, rel_tol=rel_tol):
        return True
    # README rule (see module doc): the less precise side, written with k >= 2
    # decimals, equals the other side rounded to k decimals.
    if b.decimals is None or (a.decimals is not None and a.decimals < b.decimals):
        short, fs, other, fo = a, fa, b, fb
    else:
        short, fs, other, fo = b, fb, a, fa
    k = short.decimals
    if k is None or k < 2 or (other.decimals is not None and other.decimals <= k):
        return False
    return abs(round(fo, k) - fs) < 0.5 * 10 ** -(k + 3)


def _in_float_range(value: int | float | Fraction | Decimal | DecimalRatio) -> float | None:
    """``value`` as a float where that float stands for it: a float itself, or a number
    in the normal float range (or 0); None past that range (``float(10**400)`` raises,
    a Decimal's float would be inf, a tiny fraction's 0)."""
    if isinstance(value, float):
        return value
    if isinstance(value, DecimalRatio):
        return None
    try:
        f = float(value)
    except OverflowError:
        return None
    if f == 0:
        return f if value == 0 else None
    return f if _normal(f) else None


def _coefficient(d: Decimal) -> tuple[bool, Decimal, int, int, float]:
    """``d`` as (negative, coefficient as an integer Decimal, exponent, digits, leading
    digits as a float in [1, 10)); linear in the digits."""
    negative, digits, exp = d.as_tuple()
    lead = digits[:17]
    mantissa = int("".join(map(str, lead))) / 10 ** (len(lead) - 1)
    return bool(negative), Decimal((0, digits, 0)), exp, len(digits), mantissa


def _exact_parts(value: int | float | Fraction | Decimal | DecimalRatio) -> _Parts:
    """``value`` (finite) split for :func:`_close`."""
    if isinstance(value, DecimalRatio):
        num, den = value
    elif isinstance(value, Fraction):
        num, den = Decimal(value.numerator), Decimal(value.denominator)
    else:  # int, Decimal, finite float: exactly
        num, den = Decimal(value), _ONE
    n_neg, n, n_exp, n_digits, n_mant = _coefficient(num)
    if den is _ONE:
        d_neg, d, d_exp, d_digits, d_mant = False, _ONE, 0, 1, 1.0
    else:
        d_neg, d, d_exp, d_digits, d_mant = _coefficient(den)
    sign = 0 if not n else (-1 if n_neg != d_neg else 1)
    return _Parts(sign, n, d, n_exp - d_exp, n_digits + d_digits,
                  (n_digits + n_exp) - (d_digits + d_exp), n_mant / d_mant)


def _close(a: _Parts, b: _Parts, rel_tol: float) -> bool:
    """``|a - b| <= rel_tol * max(|a|, |b|)`` (``math.isclose`` without floats), for
    0 <= rel_tol < 1. Signs and magnitudes first, then floats of the leading digits;
    exact Decimal arithmetic only where those are too close to the limit to tell."""
    if not a.sign or not b.sign:
        return a.sign == b.sign  # only 0 is within a relative tolerance of 0
    if a.sign != b.sign:
        return False  # |a - b| = |a| + |b| > max(|a|, |b|)
    shift = a.magnitude - b.magnitude
    if abs(shift) > _MAX_SHIFT:
        return False
    r = a.mantissa / b.mantissa * 10.0 ** shift
    gap = 1 - min(r, 1 / r)  # |a - b| / max(|a|, |b|), to some 1e-15
    if abs(gap - rel_tol) > 1e-9:
        return gap < rel_tol
    # Exactly: both over one denominator and shifted by one power of ten, whole numbers
    # of at most a.digits + b.digits + |exponent difference| digits: the exponents differ
    # by at most _MAX_SHIFT plus the digits written, never by a written exponent.
    ctx = _exact_context(a.digits + b.digits + abs(a.exponent - b.exponent) + 30)
    x, y = a.numerator, b.numerator
    if b.denominator is not _ONE:
        x = ctx.multiply(x, b.denominator)
    if a.denominator is not _ONE:
        y = ctx.multiply(y, a.denominator)
    if a.exponent > b.exponent:
        x = ctx.scaleb(x, a.exponent - b.exponent)
    elif b.exponent > a.exponent:
        y = ctx.scaleb(y, b.exponent - a.exponent)
    return ctx.subtract(x, y).copy_abs() <= ctx.multiply(_decimal(rel_tol), max(x, y))


_ONE = Decimal(1)


@lru_cache(maxsize=8)
def _decimal(rel_tol: float) -> Decimal:
    """The tolerance as the decimal it prints as (``1e-3``: ``0.001``)."""
    return Decimal(repr(rel_tol))


def _exact_context(digits: int) -> Context:
    """A context whose precision holds ``digits`` digits (rounded up to a power of two,
    so that few are built): operations within it are exact, or raise Inexact."""
    return _context(1 << max(digits - 1, 1).bit_length())


@lru_cache(maxsize=64)
def _context(prec: int) -> Context:
    return Context(prec=prec, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[Inexact, InvalidOperation])


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

