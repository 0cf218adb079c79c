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



# --- issue 49: a derived task's topics are in its runs' identity; its name is its own ------

def _bm25(task, out, index_dir, data=None):
    res = mathir.run_experiment(task, data, ["bm25"], out=out, index_dir=index_dir, quiet=True)
    return round(float(res.table.loc["bm25", "nDCG'"]), 4), res


@pytest.mark.parametrize("select", [
    lambda ids: ids,
    lambda ids: (lambda t: t["qid"].isin(ids)),  # a predicate: the ids it selects count
], ids=["ids", "predicate"])
def test_growing_and_shrinking_a_selection_recomputes(select, tmp_path, sample_index):
    """Before: the two-topic run was reused for three topics (nDCG' 0.6448, a fresh run
    0.9543), and reusing three for two failed or scored the wrong topics."""
    out, index = tmp_path / "runs", sample_index.path
    two = derive_task("arqmath-task1", "mine", topics=select(["A.1", "A.2"]))
    three = derive_task("arqmath-task1", "mine", topics=select(["A.1", "A.2", "A.3"]))
    assert _bm25(two, out, index)[0] == 0.9672
    score, res = _bm25(three, out, index)
    assert score == 0.9543 and res.recomputed["bm25"] == \
        "the topic selection changed (2 -> 3 topics)"
    assert _bm25(three, tmp_path / "fresh", index)[0] == 0.9543
    score, res = _bm25(two, out, index)
    assert score == 0.9672 and res.recomputed["bm25"] == \
        "the topic selection changed (3 -> 2 topics)"
    assert _bm25(two, out, index)[1].reused == ["bm25"]  # the same selection: reused


def test_the_parent_never_reuses_a_derived_tasks_run(tmp_path, sample_index):
    """Before: a task derived under the parent's name wrote into the parent's folder, and
    ``mathir experiment arqmath-task1`` then printed its one-topic nDCG' 0.0961 for 0.9336.
    derive_task refuses the name; a copy made by hand still never passes for the parent."""
    with pytest.raises(InputError, match="is the name of a registered task"):
        derive_task("arqmath-task1", "arqmath-task1", topics=["A.1"])
    with pytest.raises(InputError, match="is the name of a registered task"):
        derive_task("arqmath-task1", "worldtree", topics=["A.1"])
    parent = get_task("arqmath-task1")
    one = dataclasses.replace(parent, topic_filter=("A.1",))  # the parent's name kept
    out = tmp_path / "runs"
    assert _bm25(one, out, sample_index.path)[0] == 0.9611
    score, res = _bm25(parent, out, sample_index.path)
    assert score == 0.9336 and res.recomputed["bm25"] == \
        "the topic selection changed (1 -> all topics)"


def test_a_derived_tasks_runs_live_in_its_own_folder(tmp_path, sample_index):
    mine = derive_task("arqmath-task1", "mine", topics=["A.1"])
    _, res = _bm25(mine, tmp_path, sample_index.path)
    assert res.runs["bm25"] == tmp_path / "mine" / "sample" / "bm25.tsv"
    assert not (tmp_path / "arqmath-task1").exists()


@pytest.mark.parametrize("name", ["../../../escape", "/abs", "", ".", "..", "a\x00b", "a/b",
                                  ".hidden", "a b", "a\\b", 3])
def test_a_derived_task_name_is_one_path_component(name, tmp_path):
    """Before: "../../../escape" wrote escape/sample/bm25.tsv three folders above --out,
    "/abs" replaced --out, "" and "." wrote into OUT/sample, a NUL was a raw ValueError."""
    with pytest.raises(InputError, match="derived task name .*one path component"):
        derive_task("arqmath-task1", name, topics=["A.1"])


def test_a_task_declared_with_a_path_for_a_name_is_refused():
    with pytest.raises(InputError, match="task name '../x': it names the folder of its runs"):
        dataclasses.replace(get_task("arqmath-task1"), name="../x", dataset="x")


def _predicate_error(predicate) -> str:
    task = derive_task("arqmath-task1", "picked", topics=predicate)
    with pytest.raises(InputError) as caught:
        task.data()
    return str(caught.value)


@pytest.mark.parametrize("predicate,message", [
    (lambda t: t["qid"].map({"A.1": "True"}).fillna("False"), "gave 'True' (str), not a boolean"),
    (lambda t: t["qid"].map({"A.1": True}), "gave nan (float), not a boolean"),  # the others
    (lambda t: t["qid"].eq("A.1").astype(float), "gave 1.0 (float), not a boolean"),
    (lambda t: t["category"] == "Proof", "raised KeyError: 'category'"),
    (lambda t: True, "gave bool, not one boolean per topic"),
    (lambda t: "False", "gave str, not one boolean per topic"),
    (lambda t: [True, False], "gave 2 values for 10 topics"),
])
def test_a_predicate_gives_one_boolean_per_topic(predicate, message):
    """Before: "False" and NaN counted as true (every topic kept), a scalar or a raising
    predicate was a raw exception."""
    said = _predicate_error(predicate)
    assert said.startswith("derived task 'picked': its topic predicate ") and message in said


def test_a_predicates_series_is_read_by_its_index():
    reordered = derive_task("arqmath-task1", "picked",
                            topics=lambda t: t.sort_values("qid", ascending=False)["qid"]
                            .isin(["A.1", "A.2"]))
    assert reordered.data().topic_ids == ("A.1", "A.2")


def test_empty_measures_or_topics_are_refused_in_words():
    """Before: measures=[] was an IndexError; topics="A.1" selected the topics 'A', '.'
    and '1' (so none)."""
    with pytest.raises(InputError, match="measures= is empty"):
        derive_task("arqmath-task1", "m", measures=[])
    with pytest.raises(InputError, match="topics= is empty"):
        derive_task("arqmath-task1", "m", topics=[])
    assert derive_task("arqmath-task1", "m", topics="A.1").data().topic_ids == ("A.1",)


def test_a_derived_tasks_measures_are_checked_where_it_is_made():
    """Before: derive_task(measures=["P@0"]) was accepted, and aborted the process when
    scored (an assertion inside pytrec_eval)."""
    with pytest.raises(InputError, match="'P@0': the cutoff must be"):
        mathir.derive_task("arqmath-task1", "checked-p0", measures=["P@0"])
