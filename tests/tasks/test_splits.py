"""A task in parts: its years are its splits' labels, each written once (issue 51).

A task declared with splits and nothing else of years lists them (``mathir tasks``), takes
the last as its default, and runs with ``--data DIR`` alone (it used to fail with
``error: unknown year None``, and list ``--year/--split: -``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest

import mathir
from mathir.cli import main
from mathir.errors import InputError
from mathir.tasks import (
    TASKS,
    Engines,
    Files,
    Formats,
    Measure,
    Need,
    Scoring,
    Split,
    Task,
    TaskData,
    register,
)

DOCS = {"d1": "x squared plus y squared", "d2": "integral of x", "d3": "sum of one over n"}
TOPICS = {"Q.1": "x squared", "Q.2": "integral"}
QRELS = [("Q.1", "d1", 1), ("Q.1", "d3", 0), ("Q.2", "d2", 1), ("Q.2", "d1", 1)]


def _read_topics(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", names=["qid", "query"], dtype=str)


def _build_index(data: TaskData, index_dir: Path, quiet: bool = False) -> pd.DataFrame:
    return pd.read_csv(data.collection, sep="\t", names=["docno", "text"], dtype=str)


def overlap(index: pd.DataFrame, **kwargs):
    """Every document scored by the words it shares with the query."""
    import pyterrier as pt

    def rank(topics: pd.DataFrame) -> pd.DataFrame:
        rows = [(q, d, float(len(set(query.split()) & set(text.split()))))
                for q, query in zip(topics["qid"], topics["query"], strict=True)
                for d, text in zip(index["docno"], index["text"], strict=True)]
        return pt.model.add_ranks(pd.DataFrame(rows, columns=["qid", "docno", "score"]))

    return pt.apply.generic(rank)


def _needs(year: str) -> tuple[Need, ...]:
    return (Need("docs.tsv", "documents", "collection"),
            Need(f"topics-{year}.tsv", "topics", "topics"),
            Need(f"qrels-{year}.txt", "qrels", "qrels"))


#: Splits only: no list of years beside them.
SPLITS_ONLY = Task(
    name="splits-only",
    description="a task declared with splits only",
    files=Files(splits=tuple(Split(y, needs=_needs(y)) for y in ("2015", "2016")),
                dataset="splits-only"),
    formats=Formats(read_topics=_read_topics, read_qrels="mathir.qrels.trec:read_qrels",
                    read_run="mathir.runs.trec:read_run", write_run="mathir.runs.trec:write_run",
                    run_formats=("trec",)),
    scoring=Scoring(measures=(Measure("P@1", "precision at 1", "P@1"),
                              Measure("nDCG@3", "nDCG at 3", "nDCG@3")),
                    primary_measure="nDCG@3"),
    engines=Engines(build_index=_build_index, pipelines={"overlap": overlap},
                    default_pipelines=("overlap",)),
)


@pytest.fixture
def data(tmp_path) -> Path:
    root = tmp_path / "data"
    root.mkdir()
    (root / "docs.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in DOCS.items()))
    for year in ("2015", "2016"):
        (root / f"topics-{year}.tsv").write_text(
            "".join(f"{k}\t{v}\n" for k, v in TOPICS.items()))
        (root / f"qrels-{year}.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS))
    return root


@pytest.fixture
def registered():
    yield register(SPLITS_ONLY)
    dict.pop(TASKS, SPLITS_ONLY.name, None)


def test_the_years_are_the_splits_labels_and_the_last_is_the_default():
    assert SPLITS_ONLY.years == ("2015", "2016")
    assert SPLITS_ONLY.default_year == "2016"
    assert Split("2016").label == "2016" and Split("sample", sample=True).label is None
    assert SPLITS_ONLY.measures is SPLITS_ONLY.scoring.measures  # the flat name reads the part


def test_a_task_with_splits_only_finds_its_data_without_a_year(data):
    found = SPLITS_ONLY.data(data)
    assert (found.label, found.topics.name, found.qrels.name) == \
        ("2016", "topics-2016.tsv", "qrels-2016.txt")
    assert SPLITS_ONLY.data(data, "2015").topics.name == "topics-2015.tsv"
    with pytest.raises(InputError, match=r"unknown year '2014'; expected one of \['2015', '2016'\]"):
        SPLITS_ONLY.data(data, "2014")


def test_a_registered_task_with_splits_only_runs_from_the_cli(data, tmp_path, capsys, registered):
    assert main(["tasks"]) == 0
    assert "  --year/--split: 2015, 2016\n" in capsys.readouterr().out
    out = tmp_path / "runs"
    assert main(["experiment", "splits-only", "--data", str(data), "--out", str(out),
                 "--format", "json", "--quiet"]) == 0
    cli = json.loads(capsys.readouterr().out)["overlap"]
    assert (out / "splits-only" / "2016" / "overlap.tsv").is_file()
    here = mathir.run_experiment(SPLITS_ONLY, SPLITS_ONLY.data(data), ["overlap"],
                                 out=tmp_path / "here", quiet=True).table.loc["overlap"]
    assert here["nDCG@3"] > 0
    for measure, value in here.items():
        assert cli[measure] == pytest.approx(value, abs=1e-4), measure


def test_a_field_of_a_part_is_given_as_the_tasks_own():
    # dataclasses.replace with a part's field replaces it in its part, the rest kept
    p1 = dataclasses.replace(SPLITS_ONLY, name="p1", primary_measure="P@1")
    assert (p1.scoring.primary_measure, p1.scoring.measures) == ("P@1", SPLITS_ONLY.measures)
    assert p1.files is SPLITS_ONLY.files and p1.engines is SPLITS_ONLY.engines
    with pytest.raises(TypeError, match="years are the labels of its splits"):
        dataclasses.replace(SPLITS_ONLY, years=("2016",))
    with pytest.raises(ValueError, match=r"the default year '2014' is not the label"):
        dataclasses.replace(SPLITS_ONLY, default_year="2014")
