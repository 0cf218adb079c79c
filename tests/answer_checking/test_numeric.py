import math
import re
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mathir.answer_checking import numeric
from mathir.answer_checking.numeric import (
    MAX_COMPARISONS,
    DecimalRatio,
    Number,
    TooManyNumbers,
    UnreadableNumber,
    numbers_equal,
    read_number,
    read_numbers,
    simple_check,
)

# Pieces that make the number patterns work hard: digit runs of every length around
# their guards, the any-character ".", signs, exponents, ratios and comma groups.
PIECES = ["1", "12", "123", "1234", "0", ",", ",123", ",12", ".", "e", "E", "-", "+", "/",
          ":", " ", "\n", "x", "$", "5e", "e-"]
piece_text = st.lists(st.sampled_from(PIECES), max_size=16).map("".join)


@pytest.mark.parametrize("answer,gold,policy,expected", [
    ("43.", "43", "strict", True),
    ("2125", "2,125", "strict", True),
    ("1001", "1000", "strict", False),          # integers compare exactly
    ("1.0035", "1", "strict", False),           # 3.5e-3 relative difference
    ("1.0005", "1", "strict", True),            # 5e-4
    ("3/4", "0.75", "strict", True),
    ("1:2", "0.5", "strict", True),
    ("10 3/4", "10.75", "strict", False),       # one unreadable token, as in the tool
    ("16 - 3 - 4 = 9", "9", "strict", False),   # -3 and -4 read as negatives
    ("16 - 3 - 4 = 9", "9", "model_include_gt", True),
    ("200 ml and 400 ml.", "400, 200", "strict", True),
    ("200 ml of 5% alcohol and 400ml of 10% alcohol.", "400, 200", "strict", False),
    ("200 ml of 5% alcohol and 400ml of 10% alcohol.", "400, 200", "model_include_gt", True),
    ("400", "400, 200", "gt_include_model", True),
    ("400", "400, 200", "model_include_gt", False),
    ("40 and 29", "{40;29}", "strict", True),
    ("no solution", "ans_no_result", "strict", False),
    ("Yes", "yes", "strict", True),
    ("five", "5", "strict", False),             # numbers on one side only
    ("1.5e3", "1500", "strict", True),
    ("-10", "-10", "strict", True),
])
def test_simple_check(answer, gold, policy, expected):
    assert simple_check(answer, gold, policy) is expected


def test_readme_over_tool_money_rounding():
    """README: "$1.33" and "1.333333" must be tolerated. The reference tool says False
    (relative difference 2.5e-3 > 1e-3); we follow the README: a value written with
    k >= 2 decimals matches the other side rounded to k decimals."""
    assert simple_check("$1.33", "1.333333") is True
    assert simple_check("15.97 ml", "15.9699") is True      # README's other example
    assert simple_check("$1.34", "1.333333") is False
    assert simple_check("1.3", "1.333333") is False          # one decimal: no rounding rule
    assert simple_check("1", "1.0035") is False              # README warning case stays False


def test_numbers_equal_rounding_needs_more_precise_other_side():
    assert numbers_equal(Number(1.33, 2), Number(4 / 3, None))   # fraction: infinite precision
    assert not numbers_equal(Number(1.33, 2), Number(1.34, 2))


def test_long_digit_runs_do_not_backtrack():
    # A model wrote 1,500 threes; the tool's regexes backtrack cubically on this.
    assert read_numbers("0." + "3" * 1500)[0].value == pytest.approx(1 / 3)


def test_unknown_policy():
    with pytest.raises(ValueError):
        simple_check("1", "1", "loose")


def _tokens(patterns, text):
    out = []
    for pat in patterns:
        out.append([m.group(0) for m in pat.finditer(text)])
        text = pat.sub("", text)
    return out


@given(piece_text)
def test_linear_patterns_find_what_the_reference_patterns_find(text):
    # The guards that make the patterns linear skip only starts that cannot match.
    reference = [re.compile(p) for p in numeric.REFERENCE_PATTERNS]
    assert _tokens(numeric._NUMBER_PATTERNS, text) == _tokens(reference, text)


def _greedy_covered(needles, haystack):  # _covered as first written (quadratic)
    free = list(haystack)
    for n in needles:
        for i, h in enumerate(free):
            if numbers_equal(n, h):
                del free[i]
                break
        else:
            return False
    return True


@given(st.lists(st.integers(-3, 3), max_size=6), st.lists(st.integers(-3, 3), max_size=6),
       st.booleans())
def test_integers_compare_as_multisets_like_the_greedy_matching(a, b, floats):
    # floats: one side holds a non-integer too, which takes the greedy path
    needles = [Number(v, 0) for v in a] + ([Number(0.5, 1)] if floats else [])
    haystack = [Number(v, 0) for v in b] + ([Number(0.5, 1)] if floats else [])
    assert numeric._covered(needles, haystack) == _greedy_covered(needles, haystack)


def test_many_non_integers_are_refused_not_compared_for_minutes():
    # Each needle matches only the last free number: n^2 / 2 comparisons.
    n = 2 * int(MAX_COMPARISONS ** 0.5)
    model = " ".join(f"{i}.5" for i in range(n))
    gold = " ".join(f"{i}.5" for i in reversed(range(n)))
    with pytest.raises(TooManyNumbers, match="number comparisons"):
        simple_check(model, gold)
    assert simple_check(model, gold.replace(".5", "")) is False  # integers: 0.5 != 0
    ints = " ".join(str(i) for i in range(20_000))
    assert simple_check(ints, " ".join(reversed(ints.split())))  # integers: linear, exact


# Issue 30 (5): integers above 2**53 are one float with their neighbours; they compare
# exactly, at any size, as the module's doc says. 20! = 2432902008176640000.
@pytest.mark.parametrize("answer,gold,expected", [
    ("2432902008176640001", "2432902008176640000", False),
    ("2432902008176640000", "2432902008176640000", True),
    ("2,432,902,008,176,640,001", "2432902008176640000", False),
    ("100000000000000000001", "1e20", False),             # 10**20 + 1 against 10**20
    ("100000000000000000000", "1e20", True),
    ("9" * 5000, "9" * 4999 + "8", False),                # past int()'s 4,300 digits
    ("9" * 5000, "9" * 5000, True),
    ("1e999999", "1e999999", True),                       # no 10**999999 is built
    ("1e999999", "2e999999", False),
    ("9007199254740993/1", "9007199254740992", False),    # 2**53 + 1: fractions exact
    ("4/2", "2", True),
    ("2/3", "4:6", True),
    ("1000/1001", "1", False),                            # both exact: no tolerance
    ("2432902008176640001.0", "2432902008176640000", False),
    ("2.43290200817664e18", "2432902008176640000", True),  # a float keeps its tolerance
    ("0.999", "999/1000", True),
    ("1.0005", "1", True),
])
def test_integers_and_fractions_compare_exactly_at_any_size(answer, gold, expected):
    assert simple_check(answer, gold) is expected


def test_many_large_integers_use_the_exact_linear_path():
    big = [str(2 ** 60 + i) for i in range(300)]
    assert simple_check(" ".join(big), " ".join(reversed(big))) is True
    assert simple_check(" ".join(big), " ".join(big[:-1] + [str(2 ** 60 + 300)])) is False


def test_a_huge_integer_against_a_float_does_not_overflow():
    assert simple_check("1" + "0" * 400, "0.5") is False
    assert simple_check("$1.33", "1" + "0" * 400) is False


# --- past the float range ----------------------------------------------------------------
# The tool's floats turn every number past ~1.8e308 into inf (math.isclose(inf, inf) is
# True) and every one below ~2.2e-308 into 0: 1e400 "equals" 2e400. Here such numbers
# stay exact; non-integers compare with the tolerance, computed exactly:
# |a - b| <= 1e-3 * max(|a|, |b|).
TEN_400 = "1" + "0" * 400  # 10**400
NEAR = str(999 * 10**397)  # 0.999 * 10**400: the tolerance's edge below 10**400


@pytest.mark.parametrize("answer,gold,expected", [
    ("1e400", "2e400", False),                              # integers: exact
    ("1e400", "1e400", True),
    ("1e400", "1.0e400", True),
    (TEN_400, TEN_400, True),
    (TEN_400, "1e400", True),
    (TEN_400, "9" * 399 + ".5", False),                     # a tenth of it; both were inf
    (TEN_400, "2" + "0" * 400 + ".5", False),
    ("9" * 400 + ".5", "9" * 400 + ".5", True),
    ("-" + "9" * 400 + ".5", "-" + "8" * 400 + ".5", False),  # negative: both were -inf
    ("-" + "9" * 400 + ".5", "-" + "9" * 400 + ".4", True),
    ("-" + "9" * 400 + ".5", "9" * 400 + ".5", False),
    # the tool's tolerance: 10**400 - 0.5 is within 1e-3 of 10**400 (they differ by 0.5)
    (TEN_400, "9" * 400 + ".5", True),
    ("1000" + "0" * 400 + ".5", "1001" + "0" * 400 + ".5", True),   # 1/1001 < 1e-3
    ("1000" + "0" * 400 + ".5", "1002" + "0" * 400 + ".5", False),  # 2/1002 > 1e-3
    (TEN_400 + ".5", NEAR + ".4995", True),                 # exactly 1e-3 * max: isclose's <=
    (TEN_400 + ".5", NEAR + ".4994", False),                # 1e-4 past it (of 10**400)
    (TEN_400 + ".5", str(999 * 10**397 - 1) + ".4995", False),
    ("1e-400", "2e-400", False),                            # underflow: both were 0
    ("1.5e-400", "1.5e-400", True),
    ("1.5e-400", "1.5001e-400", True),                      # 6.7e-5 relative
    ("1.5e-400", "1.51e-400", False),
    ("-1.5e-400", "1.5e-400", False),
    ("1.5e-400", "0", False),                               # only 0 is close to 0
    ("5e-324", "7e-324", False),                            # subnormal floats: one float
    ("9" * 5000 + "/3", "9" * 5000 + "/7", False),          # past MAX_INT_DIGITS: were inf
    ("9" * 5000 + "/3", "3" * 5000, True),
    ("9" * 5000 + "/" + "9" * 5000, "1", True),             # was inf / inf = nan
    ("0.5/0." + "0" * 400 + "1", "5e400", True),            # was float division by zero
    ("1/" + "3" * 400, "1/" + "3" * 399 + "4", False),      # exact fractions of integers
    ("1e999999999", "1.5e999999999", False),
    ("1.5e-999999999", "1.5001e-999999999", True),
    ("1.5e999999999999999999", "1.5e-999999999999999999", False),
    ("1e" + "9" * 19, "2e" + "9" * 19, False),              # past Decimal's exponents:
    ("1e" + "9" * 19, "1e" + "9" * 19, False),              # unreadable, never inf == inf
])
def test_numbers_past_the_float_range_compare_exactly(answer, gold, expected):
    assert simple_check(answer, gold) is expected
    assert simple_check(gold, answer) is expected


def test_within_the_float_range_the_tools_floats_stay():
    assert simple_check("1.7976931348623157e308", "1.7976931348623157e308") is True
    assert simple_check("1.5e308", "1.5014e308") is False  # integers (as in the tool)
    assert simple_check("1.5e-300", "1.5014e-300") is True  # isclose on floats, as the tool
    assert simple_check("1.5e-300", "1.5016e-300") is False
    assert read_number("1.5e-300").value == 1.5e-300                 # the tool's float
    assert isinstance(read_number("2.2250738585072014e-308").value, float)  # smallest normal


def test_read_number_past_the_float_range():
    n = read_number("9" * 400 + ".5")
    assert (n.value, n.decimals, n.exact) == (Decimal("9" * 400 + ".5"), 1, False)
    assert read_number("1e400") == Number(10**400, 0)                    # a whole number
    assert read_number("1.5e-400").value == Decimal("1.5e-400")
    assert read_number("9" * 5000 + "/3").value == DecimalRatio(Decimal("9" * 5000), Decimal(3))
    assert repr(read_number("1/" + "3" * 400)) == "1/" + "3" * 400       # no float overflow
    with pytest.raises(UnreadableNumber):
        read_number("1e" + "9" * 19)


def test_infinity_is_equal_only_to_infinity_as_written():
    inf, ninf = Number(math.inf, 0), Number(-math.inf, 0)
    assert numbers_equal(inf, inf) and numbers_equal(ninf, ninf)
    assert not numbers_equal(inf, ninf)
    assert not numbers_equal(inf, read_number("1e400"))                  # exact integer
    assert not numbers_equal(inf, read_number("9" * 400 + ".5"))         # tolerant Decimal
    assert not numbers_equal(Number(math.nan, 0), Number(math.nan, 0))
    assert simple_check("inf", "inf") and not simple_check("inf", "infinity")  # literal


def test_rel_tol_must_be_below_one():
    with pytest.raises(ValueError, match="rel_tol"):
        numbers_equal(Number(1.5, 1), Number(1.5, 1), rel_tol=1.0)


def _sci(m: int, exp: int) -> str:
    """m * 10**exp written d.ddde+-N (the tool's scientific pattern: one leading digit)."""
    s = str(abs(m))
    return ("-" if m < 0 else "") + s[0] + ("." + s[1:] if len(s) > 1 else "") \
        + f"e{exp + len(s) - 1}"


def _plain(m: int, exp: int) -> str:
    """m * 10**exp written with a decimal point where it has a fractional part."""
    s = str(abs(m))
    if exp >= 0:
        s += "0" * exp
    else:
        s = s.rjust(-exp + 1, "0")
        s = s[:exp] + "." + s[exp:]
    return ("-" if m < 0 else "") + s


@st.composite
def _past_float_range(draw):
    """(text, exact value) of a number past the float range, and a second one: the same
    value, a neighbour at or near the tolerance's edge, or an unrelated number."""
    digits = draw(st.integers(1, 40))
    m = draw(st.integers(10 ** (digits - 1), 10**digits - 1)) * draw(st.sampled_from([1, -1]))
    lead = draw(st.one_of(st.integers(309, 700), st.integers(-700, -310)))  # 10**lead <= |a|
    exp = lead - digits + 1
    a = Fraction(m) * Fraction(10) ** exp
    how = draw(st.sampled_from(["same", "edge", "near", "other"]))
    if how == "other":
        m2 = draw(st.integers(-10**40, 10**40))
        exp2 = draw(st.integers(-720, 720))
    else:  # b = a * (1 - 1/1000 + k / 10**j): at the edge (k = 0), or near it
        j = draw(st.integers(3, 30))
        k = 0 if how == "edge" else draw(st.integers(-50, 50))
        factor = {"same": 10**j, "edge": 10**j - 10 ** (j - 3)}.get(how, 10**j - 10 ** (j - 3) + k)
        m2, exp2 = m * factor, exp - j
    b = Fraction(m2) * Fraction(10) ** exp2
    write = draw(st.sampled_from([_plain, _sci]))
    write2 = draw(st.sampled_from([_plain, _sci]))
    return write(m, exp), a, write2(m2, exp2), b


@given(_past_float_range())
def test_past_the_float_range_agrees_with_exact_comparison(case):
    a_text, a, b_text, b = case
    if a.denominator == 1 and b.denominator == 1:
        expected = a == b  # integers: exact
    else:  # math.isclose's rule with REL_TOL, in exact arithmetic
        expected = abs(a - b) <= Fraction(1, 1000) * max(abs(a), abs(b))
    assert simple_check(a_text, b_text) is expected
    assert simple_check(b_text, a_text) is expected
