"""Check model responses against gold answers: extraction, then a simple, LaTeX or
Dolphin check; JSON-lines in, JSON-lines out (``mathir answers``).

Every check takes time linear in the length of its texts (the symbolic step has its
own time limit). Absurd inputs are judged incorrect without being read, and the
judgment says why (``skipped``): a response or gold answer longer than
:data:`MAX_CHARS` characters, or answers whose numbers would take more than
``numeric.MAX_COMPARISONS`` comparisons.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mathir.answer_checking.dolphin import dolphin_check
from mathir.answer_checking.extraction import EXTRACT_POLICIES, extract_answer
from mathir.answer_checking.latex import LATEX_MODES, latex_check, symbolic_timeout
from mathir.answer_checking.numeric import CHECK_POLICIES, TooManyNumbers, simple_check
from mathir.errors import InputError
from mathir.readers.json_input import loads
from mathir.readers.tabular import iter_lines

CHECKS = {"simple": CHECK_POLICIES, "latex": LATEX_MODES, "dolphin": ("strict",)}
DEFAULT_POLICY = {"simple": "strict", "latex": "aggressive", "dolphin": "strict"}
#: Longest response or gold answer that is checked (real model outputs hold at most a
#: few thousand characters, long chains of thought some 100,000); longer ones are
#: judged incorrect without being read.
MAX_CHARS = 1_000_000


@dataclass(frozen=True)
class Judgment:
    """The extracted answer, whether it is correct and, for an input too large to
    judge, why it was not checked (``skipped``; ``correct`` is then False)."""

    extracted: str | None
    correct: bool
    skipped: str | None = None


def check_answer(response: str, gold: str, extract: str = "flex", check: str = "simple",
                 policy: str | None = None, timeout: float | None = None) -> Judgment:
    """Extract the answer of ``response`` and check it against ``gold``.

    ``check`` is ``simple`` (policies strict, model_include_gt, gt_include_model),
    ``latex`` (modes aggressive, conservative; ``timeout`` seconds per symbolic step,
    ``inf`` for no limit: :func:`mathir.answer_checking.latex.symbolic_timeout`)
    or ``dolphin`` (the Dolphin gold-answer format).

    A response or gold longer than :data:`MAX_CHARS` is not read: the judgment is
    incorrect with the reason in ``skipped``.

    >>> check_answer("9 * 2 = 18\\n#### 18", "18")
    Judgment(extracted=' 18', correct=True, skipped=None)
    >>> check_answer("7" * (MAX_CHARS + 1), "7").skipped
    'response longer than 1,000,000 characters'
    >>> check_answer("The answer is: 9; 14", "{9; 14}", check="dolphin").correct
    True
    """
    if check not in CHECKS:
        raise ValueError(f"unknown check {check!r}; expected one of {tuple(CHECKS)}")
    policy = policy or DEFAULT_POLICY[check]
    if policy not in CHECKS[check]:
        raise ValueError(f"policy {policy!r} does not apply to the {check} check; "
                         f"expected one of {CHECKS[check]}")
    if extract not in EXTRACT_POLICIES:
        raise ValueError(f"unknown extraction {extract!r}; expected one of {EXTRACT_POLICIES}")
    timeout = symbolic_timeout(timeout)
    for name, text in (("response", response), ("gold answer", gold)):
        if text is not None and len(text) > MAX_CHARS:
            return Judgment(None, False, f"{name} longer than {MAX_CHARS:,} characters")
    extracted = extract_answer(response, extract)
    if check == "simple":
        try:
            ok = simple_check(extracted, gold, policy)
        except TooManyNumbers as e:
            return Judgment(extracted, False, str(e))
    elif check == "latex":
        ok = latex_check(extracted, gold, policy, timeout=timeout)
    else:
        ok = extracted is not None and dolphin_check(extracted.strip(), gold)
    return Judgment(extracted, ok)


def check_records(records: Iterable[dict], source: str | Path = "<input>",
                  timeout: float | None = None) -> Iterator[dict]:
    """Add ``extracted`` and ``correct`` to each record (what ``mathir answers`` writes).

    A record holds ``response`` and ``gold``, optionally ``extract`` (strict|flex,
    default flex), ``check`` (simple|latex|dolphin, default simple) and ``policy``.
    Records are ``(line, dict)`` pairs or dicts; errors name the source and line.
    A record too large to judge (see :func:`check_answer`) gets ``"correct": false``
    and ``"skipped"``: the reason. ``timeout``: seconds per symbolic step, ``inf`` for
    no limit; any other value that is no number above 0 is an InputError, raised before
    the first record is read (:func:`mathir.answer_checking.latex.symbolic_timeout`).

    >>> next(check_records([{"response": "The answer is 7", "gold": "7"}]))["correct"]
    True
    """
    timeout = symbolic_timeout(timeout)
    for i, item in enumerate(records, 1):
        line, rec = item if isinstance(item, tuple) else (i, item)
        if not isinstance(rec, dict):
            raise InputError("expected a JSON object", path=source, line=line)
        for key in ("response", "gold"):
            if not isinstance(rec.get(key), str):
                raise InputError(f"field {key!r} missing or not a string", path=source, line=line)
        for key in ("extract", "check", "policy"):
            if rec.get(key) is not None and not isinstance(rec[key], str):
                raise InputError(f"field {key!r} is not a string", path=source, line=line)
        try:
            j = check_answer(rec["response"], rec["gold"], rec.get("extract", "flex"),
                             rec.get("check", "simple"), rec.get("policy"), timeout=timeout)
        except ValueError as e:
            raise InputError(str(e), path=source, line=line) from None
        out = {**rec, "extracted": j.extracted, "correct": j.correct}
        if j.skipped is not None:
            out["skipped"] = j.skipped
        yield out


def read_answer_records(path: str | Path) -> Iterator[tuple[int, dict]]:
    """``(line, record)`` for each JSON line of ``path``; InputError naming the line
    (also for nesting deeper than ``json_input.MAX_DEPTH``)."""
    for line, text in iter_lines(path):
        yield line, loads(text, path, line)
