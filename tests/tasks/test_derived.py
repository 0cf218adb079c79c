"""Tasks derived from a registered one: another name, a topic selection, other measures,
the parent's index (issue: "the researcher's choices")."""

from __future__ import annotations

import dataclasses
import json
import warnings

import pytest

import mathir
from mathir.cli import main
from mathir.errors import InputError
from mathir.tasks import TASKS, derive_task, get_task
from tests.conftest import real_path


def _indexes(root):
    return sorted(p.name for p in root.iterdir() if not p.name.startswith("."))


@pytest.fixture
def registered():
    """Tasks registered by a test are removed after it."""
    added: list[str] = []
    yield added
    for name in added:
        dict.pop(TASKS, name, None)


def test_a_replaced_task_shares_the_parents_index(tmp_path, monkeypatch):
    """The index is named by collection and builder, not by task (before: a derived task
    indexed the same collection a second time)."""
    monkeypatch.setenv("MATHIR_INDEX_DIR", str(tmp_path / "indexes"))
    parent = get_task("arqmath-task1")
    copy = dataclasses.replace(parent, name="arqmath-task1-copy", dataset="copy")
    a = parent.index(parent.data(), quiet=True)
    b = copy.index(copy.data(), quiet=True)
    assert a.path == b.path
    assert len(_indexes(tmp_path / "indexes")) == 1
    # Task 3 reads the same answers: the same index too
    t3 = get_task("arqmath-task3")
    assert t3.index(t3.data(), quiet=True).path == a.path


def test_a_topic_subset_task_through_every_path(tmp_path, registered, capsys, monkeypatch):
    monkeypatch.setenv("MATHIR_INDEX_DIR", str(tmp_path / "indexes"))
    two = derive_task("arqmath-task1", "arqmath-task1-two", topics=["A.1", "A.2"],
                      measures=["nDCG(judged_only=True)@10", "P(rel=2,judged_only=True)@5"],
                      register=True)
    registered.append(two.name)
    data = two.data()
    assert data.topic_ids == ("A.1", "A.2")
    res = mathir.run_experiment(two, out=tmp_path / "runs", pipelines=["bm25"], quiet=True)
    assert list(res.table.columns) == ["nDCG(judged_only=True)@10",
                                       "P(rel=2,judged_only=True)@5"]
    assert set(res.per_topic["bm25"]["qid"]) == {"A.1", "A.2"}
    assert set(res.topics["qid"]) == {"A.1", "A.2"}
    # the run file holds the two topics only, and mathir evaluate gives the same table
    run = res.runs["bm25"]
    assert set(two.read_run(run)["qid"]) == {"A.1", "A.2"}
    capsys.readouterr()
    assert main(["evaluate", two.name, "--qrels", str(data.qrels), "--format", "json",
                 str(run)]) == 0
    got = json.loads(capsys.readouterr().out)["bm25"]
    for m, v in res.table.loc["bm25"].items():
        assert got[m] == pytest.approx(v)
    # the dataset filters topics and qrels, and its measures are the derived ones
    from mathir.datasets import dataset

    ds = dataset(f"{two.name}/sample")
    assert set(ds.get_topics()["qid"]) == {"A.1", "A.2"}
    assert set(ds.get_qrels()["qid"]) == {"A.1", "A.2"}
    assert [str(m) for m in ds.get_measures()] == list(res.table.columns)
    table = ds.evaluate({"bm25": two.read_run(run)})
    assert table.loc["bm25"].tolist() == pytest.approx(res.table.loc["bm25"].tolist())
    # the command line knows it
    assert main(["experiment", two.name, "--pipelines", "bm25", "--quiet", "--format",
                 "json", "--out", str(tmp_path / "cli")]) == 0
    cli = json.loads(capsys.readouterr().out)["bm25"]
    assert cli == pytest.approx(got)


def test_a_derived_task_reuses_the_index_arqmath_task1_built(tmp_path, monkeypatch):
    monkeypatch.setenv("MATHIR_INDEX_DIR", str(tmp_path / "indexes"))
    mathir.run_experiment("arqmath-task1", out=tmp_path / "a", pipelines=["bm25"], quiet=True)
    built = _indexes(tmp_path / "indexes")
    one = derive_task("arqmath-task1", "one-topic", topics=["A.3"])
    res = mathir.run_experiment(one, out=tmp_path / "b", pipelines=["bm25"], quiet=True)
    assert _indexes(tmp_path / "indexes") == built
    assert set(res.per_topic["bm25"]["qid"]) == {"A.3"}


def test_a_selection_that_keeps_no_topic_is_an_error():
    with pytest.raises(InputError, match="keeps none of the 10 topics"):
        derive_task("arqmath-task1", "none", topics=["A.999"]).data()


def test_registering_a_copy_with_the_parents_dataset_names_is_refused():
    copy = dataclasses.replace(get_task("arqmath-task1"), name="clash")
    with pytest.raises(ValueError, match="give it another dataset="):
        mathir.register_task(copy)


@pytest.mark.realdata
def test_proof_topics_of_2022_by_their_category(tmp_path, monkeypatch):
    """The example of docs/extending.md: Task 1 restricted to the topics whose category in
    the topic metadata is "Proof", on the 2022 judged pool."""
    data_dir = real_path("arqmath")
    threads = real_path("arqmath", "collection_sample", "threads_all")
    proof = derive_task("arqmath-task1", "arqmath-task1-proof",
                        topics=lambda t: t["category"] == "Proof")
    data = proof.data(data_dir, "2022", threads)
    parent = get_task("arqmath-task1")
    meta = parent.topic_groups(data.metadata)
    wanted = set(meta.loc[meta["category"] == "Proof", "qid"])
    assert set(data.topic_ids) == wanted and 0 < len(wanted) < 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mathir.run_experiment(proof, data, ["bm25"], out=tmp_path, quiet=True)
    assert set(res.per_topic["bm25"]["qid"]) <= wanted
    assert parent.index(data, quiet=True).path == proof.index(data, quiet=True).path

