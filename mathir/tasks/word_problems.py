"""Algebra word problems (DRAW-1K, Alg-514, Dolphin-L): solved, not ranked.

The "index" of this task is its training set: the problems of ``extras['train']``, or
else every problem outside the evaluated split (the 5-fold cross-validation splits).

>>> from mathir.tasks import get_task
>>> get_task("word-problems").primary_measure
'solution_acc'
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from mathir.samples import word_problems_sample
from mathir.tasks import (
    Need,
    Published,
    Split,
    Task,
    TaskData,
    no_options,
    register,
)

WORD_PROBLEM_MEASURES = {
    "solution_acc": "the solution equals the gold solution (any order of the unknowns)",
    "equation_acc": "the derivation is equivalent to the reference equations' derivation",
    "derivation_acc": "the derivation (template and alignment) is equivalent to the gold one",
}


def _sample(split: str | None, collection: Path | None) -> TaskData:
    s = word_problems_sample()
    return TaskData("sample", collection or s.problems, s.split("test"), s.split("test"),
                    {"train": s.split("train")})


def _build_index(data: TaskData, index_dir: Path, quiet: bool = False):
    """The training problems (nothing is written: ``index_dir`` is not used)."""
    from mathir.pipelines.word_problems import WordProblemIndex

    return WordProblemIndex.build(data.collection, train=data.extras.get("train"),
                                  exclude=data.topics)


def _per_topic(runs: Mapping, qrels, train: str | Path | None = None, **options) -> dict:
    """The one evaluator: per gold problem, 0 or 1 for each accuracy (the table is their
    mean over the gold problems)."""
    from mathir.evaluation.word_problems import judge

    no_options(options)
    return {name: judge(run, qrels, name) for name, run in runs.items()}


def _splits() -> tuple[Split, ...]:
    """DRAW-1K's test and dev splits (trained on its train split), the 5 folds of Alg-514
    and of Dolphin-L (trained on every problem outside the fold), the sample. A split
    file is the topics and the gold (its problems); the problems JSON is beside it."""
    both = ("topics", "qrels")
    out = [Split(f"draw1k/{s}", s, (
        Need(f"draw-{s}.txt", "DRAW-1K split file", both),
        Need("draw-train.txt", "the DRAW-1K train split", "option", option="train",
             beside="topics"),
        Need("draw.json", "the DRAW-1K problems", "collection", beside="topics")),
        data_label=f"draw-{s}") for s in ("test", "dev")]
    for name, fold_file, problems_json, title in (
            ("alg514", "kushman-fold-", "kushman.json", "Alg-514"),
            ("dolphin", "dolphin-t2-fold-new-", "dolphin_t2_final.json", "Dolphin-L")):
        out += [Split(f"{name}/fold-{k}", f"{name}-fold-{k}", (
            Need(f"{fold_file}{k}.txt", f"{title} fold file", both),
            Need(problems_json, f"the {title} problems", "collection", beside="topics")),
            data_label=f"{name}-fold-{k}") for k in range(5)]
    return (*out, Split("sample", "test", sample=True))


SPLITS = _splits()
#: The splits, as ``--year`` takes them.
WORD_PROBLEM_SPLITS = tuple(s.label for s in SPLITS if not s.sample)

def _training_problems(data: TaskData):
    """Training problems as ``{"docno", "text", "equations", "solutions", "template",
    "alignment"}`` (alignment: slot -> ``[SentenceId, TokenId, Value]``): those of the
    train split (DRAW-1K), else every problem outside the fold, never the evaluated
    problems themselves, so that a retriever cannot find the answer key."""
    from mathir.readers.word_problems import iter_derivation_problems, read_split

    train = data.extras.get("train")
    keep = set(read_split(train)) if train else None
    drop = set(read_split(data.topics))
    for p in iter_derivation_problems(data.collection):
        if (keep is None or p.id in keep) and p.id not in drop:
            yield {"docno": p.id, "text": p.text, "equations": list(p.equations),
                   "solutions": list(p.solutions), "template": list(p.template),
                   "alignment": {c: [n.sentence, n.token, n.value]
                                 for c, n in p.alignment.items()}}


_SOLVER = "mathir.pipelines.word_problems"

WORD_PROBLEMS = register(Task(
    name="word-problems",
    description="Algebra word problems (DRAW-1K, Alg-514, Dolphin-L): template-retrieval "
                "solver, solution / equation / derivation accuracy",
    measures=WORD_PROBLEM_MEASURES,
    primary_measure="solution_acc",
    pipelines={"nearest-template": f"{_SOLVER}:nearest_template",
               "template-retrieval": f"{_SOLVER}:template_retrieval",
               "trained-template-retrieval": f"{_SOLVER}:trained_template_retrieval"},
    default_pipelines=("nearest-template", "template-retrieval", "trained-template-retrieval"),
    sample=_sample,
    read_topics="mathir.topics.word_problems:read_problem_topics",
    read_qrels="mathir.qrels.word_problems:read_gold",
    read_run="mathir.runs.word_problems:read_run",
    write_run="mathir.runs.word_problems:write_run",
    build_index=_build_index,
    per_topic=_per_topic,
    order="given",
    explorer="mathir.evaluation.explorer_worldtree:word_problems",
    years=WORD_PROBLEM_SPLITS,
    published=Published("the DRAW-1K, Alg-514 and Dolphin-L derivation release (their "
                        "problems JSON and split files)",
                        "https://aka.ms/derivationpaper"),
    default_year="test",
    year_name="word-problem split",
    corpus=_training_problems,
    splits=SPLITS,
))
