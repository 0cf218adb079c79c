"""Answer extraction from a model's response (the math answer-checking tool's rules).

``strict`` takes the text after the answer patterns only; ``flex`` adds the content
of the last ``\\boxed{}`` / ``\\mbox{}`` and, failing that, the last number or
``$...$`` formula of the response. Written by hand: no library implements these
exact rules, and parity with the reference tool's judgments depends on them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Patterns of rule 1, matched case-sensitively.
ANSWER_PATTERNS: tuple[str, ...] = ("####", "The answer is: ", "The answer is")
EXTRACT_POLICIES = ("strict", "flex")

# Rule 3 scanner: at each position try, in this order, a $...$ segment, scientific
# notation, int/int, a decimal, a comma-grouped integer, then an integer.
#: The reference tool's scanner as it writes it (the oracle of the tests).
REFERENCE_LAST_NUMBER = (
    r"\$(?P<latex>[^$]*)\$"
    r"|-?\d+[eE][+-]?\d+"
    r"|-?\d+/\d+"
    r"|-?\d*\.\d+"
    r"|-?\d{1,3}(?:,\d{3})+(?![,\d])"
    r"|-?\d+"
)
# The same in linear time. On "1,234,567,...,890," the comma-grouped branch, tried at
# each group, rescans the rest of the chain and fails at its end each time (quadratic).
# It is skipped at a group of three digits that follows ",", when the group before
# (1-3 digits) started where the scanner had tried it (not after e, E, +, -, /, or .,
# which end numbers of the other branches): that try saw the same chain end and failed,
# or it would have taken this group too. tests/answer_checking/test_extraction.py checks the
# two scanners agree on random text. (?=\d{1,3},\d{3}) only fails fast what the branch
# cannot match.
_CHAIN_TRIED = "|".join(rf"(?<=^\d{{{k}}},)|(?<=[^\deE+\-/.]\d{{{k}}},)" for k in (1, 2, 3))
_LAST_NUMBER = re.compile(
    r"\$(?P<latex>[^$]*)\$"
    r"|-?\d+[eE][+-]?\d+"
    r"|-?\d+/\d+"
    r"|-?\d*\.\d+"
    rf"|-?(?=\d{{1,3}},\d{{3}})(?!(?<=,)(?=\d{{3}})(?:{_CHAIN_TRIED}))\d{{1,3}}(?:,\d{{3}})+(?![,\d])"
    r"|-?\d+"
)
_BOX = re.compile(r"\\(?:boxed|mbox)\s*\{")
_BRACE = re.compile(r"[{}]")


def brace_partners(text: str) -> dict[int, int]:
    """The index of the ``}`` that closes each ``{`` of ``text`` (unclosed ones absent).

    One pass with a stack; a ``}`` with nothing open closes nothing.

    >>> brace_partners("{a{b}}}{")
    {2: 4, 0: 5}
    """
    partners: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACE.finditer(text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            partners[stack.pop()] = m.start()
    return partners


def _last_box(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` or ``\\mbox{...}`` (balanced braces).

    Linear time: the braces are matched once (counting from each box in turn took
    quadratic time on many boxes).
    """
    boxes = list(_BOX.finditer(text))
    if not boxes:
        return None
    partners = brace_partners(text)
    for m in reversed(boxes):
        close = partners.get(m.end() - 1)
        if close is not None:
            return text[m.end():close]
    return None


def extract_answer(response: str, policy: str = "flex",
                   patterns: Sequence[str] = ANSWER_PATTERNS) -> str | None:
    """The answer part of ``response``, or None when nothing can be extracted.

    Rule 1 (both policies): for every pattern present, the text after its last
    occurrence; the shortest of these candidates wins. Rules 2 and 3 (``flex`` only):
    the last boxed content, else the last number or ``$...$`` segment.

    >>> extract_answer("70 - 27 = 43\\n\\nThe answer is: 43.")
    '43.'
    >>> extract_answer("so the graph has $\\\\boxed{2}$ asymptotes")
    '2'
    >>> extract_answer("Solving gives $x=5$"), extract_answer("Solving gives $x=5$", "strict")
    ('x=5', None)
    >>> extract_answer("In total 140+192=332 legs.")
    '332'
    """
    if policy not in EXTRACT_POLICIES:
        raise ValueError(f"unknown extraction policy {policy!r}; expected one of {EXTRACT_POLICIES}")
    if response is None:
        return None
    candidates = [response.rsplit(p, 1)[1] for p in patterns if p in response]
    if candidates:
        return min(candidates, key=len)
    if policy == "strict":
        return None
    boxed = _last_box(response)
    if boxed is not None:
        return boxed
    last = None
    for m in _LAST_NUMBER.finditer(response):
        last = m.group("latex") if m.group("latex") is not None else m.group(0)
    return last
