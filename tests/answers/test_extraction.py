import pytest

from mathir.answers.extraction import extract_answer


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
