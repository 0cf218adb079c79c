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

from mathir.errors import InputError
from mathir.samples import word_problems_sample
from mathir.tasks import (
    Need,
    Published,
    Split,
    Task,
    TaskData,
    choose,
    data_root,
    find_file,
    no_options,
    register,
)

WORD_PROBLEM_SPLITS = ("test", "dev") + tuple(f"alg514-fold-{k}" for k in range(5)) \
    + tuple(f"dolphin-fold-{k}" for k in range(5))
WORD_PROBLEM_MEASURES = {
    "solution_acc": "the solution equals the gold solution (any order of the unknowns)",
    "equation_acc": "the derivation is equivalent to the reference equations' derivation",
    "derivation_acc": "the derivation (template and alignment) is equivalent to the gold one",
}


def _locate(root: Path | None, split: str | None, collection: Path | None) -> TaskData:
    from mathir.topics.word_problems import problems_file

    split = choose(split, WORD_PROBLEM_SPLITS, "test", "word-problem split")
    if root is None:
        if split != "test":
            raise InputError("the embedded word-problem sample has only the test split")
        s = word_problems_sample()
        return TaskData("sample", collection or s.problems, s.split("test"), s.split("test"),
                        {"train": s.split("train")})
    root = data_root(root)
    extras: dict[str, Path] = {}
    if split in ("test", "dev"):  # DRAW-1K: train on its train split
        topics = find_file(root, f"draw-{split}.txt", "DRAW-1K split file")
        extras["train"] = topics.parent / "draw-train.txt"
        label = f"draw-{split}"
    else:  # 5-fold cross-validation: train on every problem outside the fold
        name, k = split.rsplit("-fold-", 1)
        pattern = f"kushman-fold-{k}.txt" if name == "alg514" else f"dolphin-t2-fold-new-{k}.txt"
        topics = find_file(root, pattern, "fold file")
        label = split
    return TaskData(label, collection or problems_file(topics), topics, topics, extras)


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
    """DRAW-1K's test and dev splits, the 5 folds of Alg-514 and of Dolphin-L, the sample."""
    problems = Need(("draw.json",), "the DRAW-1K problems", collection=True)
    out = [Split(f"draw1k/{s}", s, (Need((f"draw-{s}.txt",), f"the DRAW-1K {s} split"),
                                     Need(("draw-train.txt",), "the DRAW-1K train split"),
                                     problems))
           for s in ("test", "dev")]
    for name, fold_file, problems_json, title in (
            ("alg514", "kushman-fold-", "kushman.json", "Alg-514"),
            ("dolphin", "dolphin-t2-fold-new-", "dolphin_t2_final.json", "Dolphin-L")):
        out += [Split(f"{name}/fold-{k}", f"{name}-fold-{k}",
                      (Need((f"{fold_file}{k}.txt",), f"{title} fold {k}"),
                       Need((problems_json,), f"the {title} problems", collection=True)))
                for k in range(5)]
    return (*out, Split("sample", "test", sample=True))


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
    locate=_locate,
    read_topics="mathir.topics.word_problems:read_problem_topics",
    read_qrels="mathir.qrels.word_problems:read_gold",
    read_run="mathir.runs.word_problems:read_run",
    write_run="mathir.runs.word_problems:write_run",
    build_index=_build_index,
    per_topic=_per_topic,
    order="given",
    explorer="mathir.evaluation.explorer_worldtree:word_problems",
    years=WORD_PROBLEM_SPLITS,
    published=Published("the DRAW-1K, Alg-514 and Dolphin-L derivation release (draw.json, "
                        "kushman.json, dolphin_t2_final.json and the split files)",
                        "https://aka.ms/derivationpaper"),
    dataset_class="mathir.datasets:WordProblemDataset",
    splits=_splits(),
))
