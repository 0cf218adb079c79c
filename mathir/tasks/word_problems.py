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
from mathir.tasks.declarations import (
    Need,
    Published,
    Split,
    TaskData,
    no_options,
    published_files,
)
from mathir.tasks.parts import Engines, Files, Formats, Scoring, Views
from mathir.tasks.task import Task

#: The files of the published derivation release (aka.ms/derivationpaper, as
#: rlebras/wordproblems-dataset copies it), known by size and SHA-256 (and that of their
#: text with LF line endings, for those written with CRLF): one found under these names
#: that differs is said in a warning (docs/robustness.md).
DERIVATION_RELEASE = published_files(
    ("dolphin-t2-fold-new-0.txt", 1_072,
     "6b536b7904770ed9b8bbb03d57664c5e9c6b3120c0565d5b9b9f2b2bb3ff85a2"),
    ("dolphin-t2-fold-new-1.txt", 1_048,
     "7180e704c8b6d5ee1fe8d0759f4fa916ececc556ff546186725e92383ad36510"),
    ("dolphin-t2-fold-new-2.txt", 1_056,
     "78c9bfe39290039259e9a58aa3fb631ae9ec53de7a318483b57ce852cadaa377"),
    ("dolphin-t2-fold-new-3.txt", 1_056,
     "26e5422131693004e160ef3dc51741308e1ac929b3bef6722b099c3c4a072e5f"),
    ("dolphin-t2-fold-new-4.txt", 1_040,
     "0c1ea6c9619b57eb44754dcf5e97dd2d27fdcfa97bf3368feaae89b9533be0a1"),
    ("dolphin_t2_final.json", 469_986,
     "93da8d1dccb3697f48458cacfaa4371a365b8cb1ff24108236d6581628059063"),
    ("draw-dev.txt", 1_566,
     "708b675588b98d84c256aa787140c4e34528802f1ce5a72494ab0c7188e1fa7e",
     "386068930bdb5f534f16baf278acc2463602c846eecfd7a46f16fd9734710c0a"),
    ("draw-test.txt", 1_571,
     "3abc7f65a2ab2cd2d2cdad5c6f1d253255f3eb79505927ace54e68cdf1051360",
     "54bc43d53101b7a82ba55bc9e783c4a9c3f5d7d65c51691b8dad0b9dd89a783a"),
    ("draw-train.txt", 4_697,
     "24f1ead8d45e2a85b3931354bca13903da0f208863aee660931d7b2470c85364",
     "2d6f7ab5fcd7bda1d7ae54ab40eb7b97d95f2eaf012f4dc6cc412300aff95aa9"),
    ("draw.json", 707_788,
     "2cd6712178633730ca13fe10769d83dd129dbb873d97f2e2c436bca2c68404e2"),
    ("kushman-fold-0.txt", 592,
     "a9103b149e8321ef21a46f79efc320e2b884781914ff0fd4f3f7442c1cfe177a",
     "2cf0c6f10a61c29049fed8b94c6923d2a547696bbc6ecf2e581ef265949c77bb"),
    ("kushman-fold-1.txt", 605,
     "64033b15be6796c43738a67adc6e95d17c4d47116d7bd86c052c9a1e0b188135",
     "107ff7fdf76aec50de4fec791ed6d937cec490078b99c64c7544f5f2c3e0011b"),
    ("kushman-fold-2.txt", 593,
     "0719913cb87a10f1375656ce09d3c3cca9997c9f8627198470080997c68b29e8",
     "3b9167ad7ed3d9c17ae94685c8569999cb735135100fbdce2a78401aa580e3e0"),
    ("kushman-fold-3.txt", 596,
     "5ccac8eaeca721a2f92715b27251b6cd389ae5aefb6a813be17df35ce8a8bc26",
     "dbfc0a94112f5abe9abfb42468c1b7070810539e7b5a606ec620a4fe1b1fe309"),
    ("kushman-fold-4.txt", 618,
     "eb4ede63c5caa04b134105c47ab361b43d5fceaa6500c92c0dde80806e43d9c0",
     "a8202e4191b80f1b66a9ce64da080f9496e0afb4e8075968c672e647fb75d800"),
    ("kushman.json", 416_581,
     "2fab56979c5011491d17dd7e1da8e4e09a14867874cfd83ada89afabdf64dcb8"),
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

    def need(*args, **kwargs) -> Need:
        return Need(*args, **kwargs, published=DERIVATION_RELEASE)

    out = [Split(f"draw1k/{s}", s, (
        need(f"draw-{s}.txt", "DRAW-1K split file", both),
        need("draw-train.txt", "the DRAW-1K train split", "option", option="train",
             beside="topics"),
        need("draw.json", "the DRAW-1K problems", "collection", beside="topics")),
        data_label=f"draw-{s}") for s in ("test", "dev")]
    for name, fold_file, problems_json, title in (
            ("alg514", "kushman-fold-", "kushman.json", "Alg-514"),
            ("dolphin", "dolphin-t2-fold-new-", "dolphin_t2_final.json", "Dolphin-L")):
        out += [Split(f"{name}/fold-{k}", f"{name}-fold-{k}", (
            need(f"{fold_file}{k}.txt", f"{title} fold file", both),
            need(problems_json, f"the {title} problems", "collection", beside="topics")),
            data_label=f"{name}-fold-{k}") for k in range(5)]
    return (*out, Split("sample", "test", sample=True))


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

WORD_PROBLEMS = Task(
    name="word-problems",
    description="Algebra word problems (DRAW-1K, Alg-514, Dolphin-L): template-retrieval "
                "solver, solution / equation / derivation accuracy",
    files=Files(splits=_splits(), default_year="test", year_name="word-problem split",
                sample=_sample, corpus=_training_problems,
                published=Published("the DRAW-1K, Alg-514 and Dolphin-L derivation release "
                                    "(their problems JSON and split files)",
                                    "https://aka.ms/derivationpaper")),
    formats=Formats(read_topics="mathir.topics.word_problems:read_problem_topics",
                    read_qrels="mathir.qrels.word_problems:read_gold",
                    read_run="mathir.runs.word_problems:read_run",
                    write_run="mathir.runs.word_problems:write_run"),
    scoring=Scoring(measures=WORD_PROBLEM_MEASURES, primary_measure="solution_acc",
                    per_topic=_per_topic, order="given"),
    engines=Engines(build_index=_build_index,
                    pipelines={"nearest-template": f"{_SOLVER}:nearest_template",
                               "template-retrieval": f"{_SOLVER}:template_retrieval",
                               "trained-template-retrieval":
                                   f"{_SOLVER}:trained_template_retrieval"},
                    default_pipelines=("nearest-template", "template-retrieval",
                                       "trained-template-retrieval")),
    views=Views(explorer="mathir.report.explorer_worldtree:word_problems"),
)

#: The tasks this module declares (registered by :mod:`mathir.tasks.registry`).
DECLARED = (WORD_PROBLEMS,)
