import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mathir.answer_checking import extraction
from mathir.answer_checking.extraction import brace_partners, extract_answer

NUMBER_PIECES = ["1", "12", "123", "1234", ",", ",123", ",12", ".", "e", "E", "-", "+", "/",
                 ":", " ", "x", "$", "\n", "5e", "e-"]
BOX_PIECES = ["\\boxed{", "\\mbox{", "\\boxed {", "\\box{", "{", "}", "x", "\\", " "]


@pytest.mark.parametrize("response,policy,expected", [
    ("70 - 27 = 43\n\nThe answer is: 43.", "strict", "43."),
    ("So she gave 43 away. The answer is 43", "strict", " 43"),
    ("16-3-4=9 eggs, 9*2=18\n#### 18", "strict", " 18"),
    ("The answer is: 12. Wait. The answer is: 13.", "strict", "13."),   # last occurrence
    ("#### 7\nThe answer is: 5", "strict", "5"),                        # shortest candidate
    ("the graph has $\\boxed{2}$ asymptotes at $x=3$", "flex", "2"),
    ("the graph has $\\boxed{2}$ asymptotes", "strict", None),
    ("nested \\boxed{\\frac{1}{2}} here", "flex", "\\frac{1}{2}"),
    ("Solving gives $x=5$", "flex", "x=5"),
    ("costs 1,234,567 dollars", "flex", "1,234,567"),
    ("ratio 3/4 then -2.5", "flex", "-2.5"),
    ("value 2e10", "flex", "2e10"),
    ("I am not sure.", "flex", None),
])
def test_extract(response, policy, expected):
    assert extract_answer(response, policy) == expected


def test_unknown_policy():
    with pytest.raises(ValueError):
        extract_answer("x", "loose")


@given(st.lists(st.sampled_from(NUMBER_PIECES), max_size=16).map("".join))
def test_last_number_scanner_agrees_with_the_reference(text):
    # The guard that makes comma groups linear skips only tries that must fail.
    reference = re.compile(extraction.REFERENCE_LAST_NUMBER)
    assert ([m.group(0) for m in extraction._LAST_NUMBER.finditer(text)]
            == [m.group(0) for m in reference.finditer(text)])


def _last_box_reference(text):  # _last_box as first written (quadratic)
    found = None
    for m in extraction._BOX.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            found = text[m.end():i - 1]
    return found


@given(st.lists(st.sampled_from(BOX_PIECES), max_size=14).map("".join))
def test_last_box_agrees_with_the_reference(text):
    assert extraction._last_box(text) == _last_box_reference(text)


def test_last_balanced_box_wins():
    assert extract_answer("\\boxed{1} \\boxed{2} \\boxed{3") == "2"
    assert extract_answer("\\boxed{\\boxed{4}} then \\mbox{5}}") == "5"
    assert brace_partners("}{{}") == {2: 3}
