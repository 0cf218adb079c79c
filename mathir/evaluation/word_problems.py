"""Word-problem measures: solution, equation and derivation accuracy (Upadhyay & Chang
2017), averaged over every gold problem (an unanswered problem counts 0)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from mathir.answer_checking.derivations import (
    Derivation,
    derivation_correct,
    gold_derivation,
    reference_derivation,
    solution_correct,
    template,
)
from mathir.answer_checking.templates import TemplateError
from mathir.errors import InputError
from mathir.readers.word_problems import TextNumber, WordProblem

MEASURES = ("solution_acc", "equation_acc", "derivation_acc")


def _predicted(row) -> Derivation | None:
    """The run row's derivation; TemplateError / ValueError on a malformed one."""
    if not row["template"] or not row["alignment"]:
        return None
    if not isinstance(row["template"], list):
        raise TemplateError("template: expected a JSON list of equations")
    if not isinstance(row["alignment"], dict):
        raise ValueError("alignment: expected a JSON object slot -> [SentenceId, TokenId, "
                         "Value]")
    try:
        alignment = {c: TextNumber(int(s), int(t), float(v))
                     for c, (s, t, v) in row["alignment"].items()}
    except (TypeError, ValueError):
        raise ValueError("alignment: expected [SentenceId, TokenId, Value] for each slot"
                         ) from None
    return Derivation(template(tuple(row["template"])), alignment)


def _solution(row) -> list[float]:
    sol = row["solution"]
    if not isinstance(sol, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in sol):
        raise ValueError("solution: expected a JSON list of numbers")
    return sol


def judge(run: pd.DataFrame, gold: pd.DataFrame, name: str | None = None) -> pd.DataFrame:
    """Per problem: ``solution_acc``, ``equation_acc``, ``derivation_acc`` (0 or 1).

    A malformed template, alignment or solution in the run raises InputError naming
    the run (``name``; its file when ``run.attrs["path"]`` is set) and the problem: a
    run file is written by a program, so a template outside the template grammar is
    a broken file, not a wrong answer (judging it 0 would hide the bug in the numbers).
    """
    by_qid = {r["qid"]: r for r in run.to_dict("records")}
    rows = []
    for qid, problem in zip(gold["qid"], gold["problem"], strict=True):
        r = by_qid.get(qid)
        scores = dict.fromkeys(MEASURES, 0)
        if r is not None and isinstance(problem, WordProblem):
            try:
                pred = _predicted(r)
                scores["solution_acc"] = int(solution_correct(_solution(r), problem.solutions))
            except ValueError as e:  # TemplateError is an InputError, a ValueError
                where = f"run {name!r}, problem {qid}" if name else f"problem {qid}"
                raise InputError(f"{where}: {getattr(e, 'message', e)}",
                                 path=run.attrs.get("path")) from None
            if pred is not None and problem.template:
                scores["derivation_acc"] = int(derivation_correct(
                    pred, gold_derivation(problem), problem.equiv))
                ref = reference_derivation(problem)
                scores["equation_acc"] = int(ref is not None and derivation_correct(pred, ref))
        rows.append({"qid": qid, **scores})
    return pd.DataFrame(rows, columns=["qid", *MEASURES])


def compare(runs: Mapping[str, pd.DataFrame], gold: pd.DataFrame) -> pd.DataFrame:
    """Rows: runs; columns: the three accuracies (means over the gold problems)."""
    table = {name: judge(run, gold, name)[list(MEASURES)].mean() for name, run in runs.items()}
    return pd.DataFrame(table).T[list(MEASURES)]
