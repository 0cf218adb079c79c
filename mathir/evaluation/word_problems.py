"""Word-problem measures: solution, equation and derivation accuracy (Upadhyay & Chang
2017), averaged over every gold problem (an unanswered problem counts 0)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from mathir.answers.derivations import (
    Derivation,
    derivation_correct,
    gold_derivation,
    reference_derivation,
    solution_correct,
    template,
)
from mathir.indexing.word_problems import TextNumber, WordProblem, iter_derivation_problems
from mathir.pipelines.word_problems import problems_file
from mathir.tabular import iter_lines

MEASURES = ("solution_acc", "equation_acc", "derivation_acc")


def read_gold(split_file) -> pd.DataFrame:
    """The gold problems (``qid``, ``problem``) of a split file's ids."""
    ids = list(dict.fromkeys(line.strip() for _, line in iter_lines(split_file)))
    problems = {p.id: p for p in iter_derivation_problems(problems_file(split_file))}
    return pd.DataFrame({"qid": ids, "problem": [problems.get(i) for i in ids]})


def _predicted(row) -> Derivation | None:
    if not row["template"] or not row["alignment"]:
        return None
    alignment = {c: TextNumber(int(s), int(t), float(v)) for c, (s, t, v) in row["alignment"].items()}
    return Derivation(template(tuple(row["template"])), alignment)


def judge(run: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """Per problem: ``solution_acc``, ``equation_acc``, ``derivation_acc`` (0 or 1)."""
    by_qid = {r["qid"]: r for r in run.to_dict("records")}
    rows = []
    for qid, problem in zip(gold["qid"], gold["problem"], strict=True):
        r = by_qid.get(qid)
        scores = dict.fromkeys(MEASURES, 0)
        if r is not None and isinstance(problem, WordProblem):
            pred = _predicted(r)
            scores["solution_acc"] = int(solution_correct(r["solution"], problem.solutions))
            if pred is not None and problem.template:
                scores["derivation_acc"] = int(derivation_correct(
                    pred, gold_derivation(problem), problem.equiv))
                ref = reference_derivation(problem)
                scores["equation_acc"] = int(ref is not None and derivation_correct(pred, ref))
        rows.append({"qid": qid, **scores})
    return pd.DataFrame(rows, columns=["qid", *MEASURES])


def compare(runs: Mapping[str, pd.DataFrame], gold: pd.DataFrame) -> pd.DataFrame:
    """Rows: runs; columns: the three accuracies (means over the gold problems)."""
    table = {name: judge(run, gold)[list(MEASURES)].mean() for name, run in runs.items()}
    return pd.DataFrame(table).T[list(MEASURES)]
