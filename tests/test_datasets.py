"""PyTerrier datasets of mathir's tasks (``pt.get_dataset("mathir:...")``)."""

from __future__ import annotations

import importlib.metadata
import re

import pandas as pd
import pyterrier as pt
import pytest
from pyterrier.datasets import _core as pt_datasets_core

from mathir import datasets
from mathir.errors import InputError
from mathir.indexing.fact_index import read_lemmas, read_tablestore
from mathir.readers.word_problems import iter_derivation_problems, read_split
from mathir.samples import arqmath_sample, word_problems_sample, worldtree_sample
from mathir.tasks import get_task
from tests.conftest import install_distribution, real_path


@pytest.fixture
def provider(monkeypatch):
    """``pt.get_dataset("mathir:...")`` through our provider, entry point installed or not."""
    monkeypatch.setitem(pt_datasets_core._loaded_providers, "mathir", datasets.MathirDatasets())
    monkeypatch.delenv(datasets.DATA_ENV, raising=False)


def _sample_files():
    a, w, p = arqmath_sample(), worldtree_sample(), word_problems_sample()
    # name -> (task, topics file, qrels file): written out here, not taken from the code
    return {
        "arqmath/task1/sample": ("arqmath-task1", a.task1_topics, a.task1_qrels),
        "arqmath/task2/sample": ("arqmath-task2", a.task2_topics, a.task2_qrels_visual_id),
        "arqmath/task3/sample": ("arqmath-task3", a.task1_topics, a.task3_qrels),
        "worldtree/sample": ("worldtree", w.questions("Dev"), w.questions("Dev")),
        "worldtree/sample/train": ("worldtree", w.questions("Train"), w.questions("Train")),
        "worldtree/sample/dev": ("worldtree", w.questions("Dev"), w.questions("Dev")),
        "worldtree/sample/test": ("worldtree", w.questions("Test"), w.questions("Test")),
        "word-problems/sample": ("word-problems", p.split("test"), p.split("test")),
    }


@pytest.mark.parametrize("name", sorted(_sample_files()))
def test_sample_topics_and_qrels_are_the_task_readers_on_the_sample_files(provider, name):
    task_name, topics_file, qrels_file = _sample_files()[name]
    task = get_task(task_name)
    ds = pt.get_dataset(f"mathir:{name}")
    pd.testing.assert_frame_equal(ds.get_topics(), task.read_topics(topics_file))
    got, want = ds.get_qrels(), task.read_qrels(qrels_file)
    if task_name == "word-problems":  # gold problems: objects, compared by value
        assert got["qid"].tolist() == want["qid"].tolist()
        assert got["problem"].tolist() == want["problem"].tolist()
    else:
        pd.testing.assert_frame_equal(got, want)
    assert len(got) > 0 and ds.get_corpus_lang() == "en"


def test_every_sample_has_a_test():
    assert set(_sample_files()) == {n for n in datasets.dataset_names() if "sample" in n}


def test_answer_corpus_is_every_answer_of_the_posts_file(provider):
    posts = arqmath_sample().posts.read_text(encoding="utf-8")
    answer_ids = re.findall(r'<row Id="(\d+)" PostTypeId="2"', posts)
    assert len(answer_ids) == 250
    for name in ("mathir:arqmath/task1/sample", "mathir:arqmath/task3/sample"):
        docs = list(pt.get_dataset(name).get_corpus_iter(verbose=False))
        assert sorted(d["docno"] for d in docs) == sorted(answer_ids)
        assert all(d["text"] and d["thread_id"] for d in docs)


def test_answer_corpus_text_options(provider):
    ds = pt.get_dataset("mathir:arqmath/task1/sample")
    latex = next(iter(ds.get_corpus_iter(verbose=False)))
    words = next(iter(ds.get_corpus_iter(verbose=False, math_words=True, with_title=False)))
    assert latex["docno"] == words["docno"]
    assert "$" in latex["text"] and "$" not in words["text"]


def test_formula_corpus_is_every_formula_instance(provider):
    from mathir.readers.formula_tsv import read_formula_index

    ds = pt.get_dataset("mathir:arqmath/task2/sample")
    want = read_formula_index(arqmath_sample().formulas)
    docs = list(ds.get_corpus_iter(verbose=False))
    assert [d["docno"] for d in docs] == want["formula_id"].tolist()
    assert [d["text"] for d in docs] == want["formula"].tolist()
    assert [d["visual_id"] for d in docs] == want["visual_id"].tolist()
    assert ds.get_formula_index() == arqmath_sample().formulas


def test_formula_corpus_yields_a_repeated_formula_id_once(provider, tmp_path):
    tsv = tmp_path / "latex_representation_v3_x.tsv"
    tsv.write_text("id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n"
                   "7\t1\t1\tquestion\t70\tx^2\n"
                   "7\t2\t1\tquestion\t70\tx^2\n"
                   "8\t2\t1\tanswer\t80\ty\n", encoding="utf-8")
    ds = pt.get_dataset("mathir:arqmath/task2/sample", collection=tsv)
    docs = list(ds.get_corpus_iter(verbose=False))
    assert [(d["docno"], d["post_id"], d["text"]) for d in docs] == [("7", "1", "x^2"),
                                                                     ("8", "2", "y")]


def test_worldtree_corpus_is_the_tablestore_facts(provider):
    ds = pt.get_dataset("mathir:worldtree/sample")
    facts = read_tablestore(worldtree_sample().tables).facts
    docs = list(ds.get_corpus_iter(verbose=False))
    assert [(d["docno"], d["text"], d["table"]) for d in docs] == \
        list(zip(facts["docno"], facts["text"], facts["table"], strict=True))
    assert ds.get_lemmas() == read_lemmas(worldtree_sample().lemmas)
    assert len(ds.get_tablestore().facts) == len(docs)


def test_word_problem_corpus_is_the_training_problems_only(provider):
    s = word_problems_sample()
    ds = pt.get_dataset("mathir:word-problems/sample")
    docs = list(ds.get_corpus_iter(verbose=False))
    train, test = read_split(s.split("train")), read_split(s.split("test"))
    assert sorted(d["docno"] for d in docs) == sorted(train)
    assert not {d["docno"] for d in docs} & set(test)
    first = next(p for p in iter_derivation_problems(s.problems) if p.id == docs[0]["docno"])
    assert docs[0]["text"] == first.text and docs[0]["solutions"] == list(first.solutions)
    assert docs[0]["alignment"] == {c: [n.sentence, n.token, n.value]
                                    for c, n in first.alignment.items()}


def test_task3_extras(provider):
    from mathir.runs.arqmath_task3 import read_assignments

    ds = pt.get_dataset("mathir:arqmath/task3/sample")
    a = arqmath_sample()
    pd.testing.assert_frame_equal(ds.get_assignments(), read_assignments(a.task3_assignments))
    pd.testing.assert_frame_equal(ds.get_task1_qrels(),
                                  get_task("arqmath-task1").read_qrels(a.task1_qrels))


def test_topic_variant_picks_the_query_column(provider):
    ds = pt.get_dataset("mathir:arqmath/task1/sample")
    topics = ds.get_topics("title")
    assert topics["query"].tolist() == topics["title"].tolist()
    with pytest.raises(ValueError, match="no topic variant 'nope'"):
        ds.get_topics("nope")


def test_names_follow_the_task_registry():
    for name in datasets.dataset_names():
        spec = datasets._specs()[name]
        task = get_task(spec.task)
        if spec.split is not None:
            assert spec.split in task.years, name
    # every registry year / split has a dataset
    covered = {(s.task, s.split) for s in datasets._specs().values() if not s.sample}
    for task_name in ("arqmath-task1", "arqmath-task2", "arqmath-task3", "worldtree",
                      "word-problems"):
        assert {(task_name, y) for y in get_task(task_name).years} <= covered


@pytest.mark.parametrize("alias, name", [
    ("arqmath-task1/2022", "arqmath/task1/2022"), ("arqmath-task3/sample", "arqmath/task3/sample"),
    ("worldtree/Dev", "worldtree/dev"), ("word-problems/test", "word-problems/draw1k/test"),
    ("word-problems/dolphin-fold-3", "word-problems/dolphin/fold-3"),
])
def test_registry_spellings_are_accepted(provider, alias, name):
    assert pt.get_dataset(f"mathir:{alias}").name == name


def test_unknown_name_is_mathirs_error_with_suggestions(provider):
    # mathir's own words, not PyTerrier's bare "not found in provider" KeyError
    with pytest.raises(InputError, match="unknown mathir dataset 'arqmath/task1/2019'; did "
                                         "you mean arqmath/task1/20"):
        pt.get_dataset("mathir:arqmath/task1/2019")


def test_listing_every_dataset_needs_no_data(provider):
    # pt.list_datasets() builds every dataset and asks for its components: nothing may
    # touch the (absent) files before they are used.
    for name in datasets.MathirDatasets().list_dataset_names():
        ds = pt.get_dataset(f"mathir:{name}")
        assert ds._describe_component("topics") is True
        assert ds.info_url().startswith("http")


@pytest.mark.parametrize("name, files", [
    ("arqmath/task1/2022", ["Topics_Task1_2022*.xml", "qrel_task1_2022_official.tsv",
                            "Posts.V1.3.xml or threads_all or thread_html*"]),
    ("arqmath/task2/2021", ["Topics_Task2_2021*.xml", "qrel_task2_2021_visual_id*official.tsv",
                            "latex_representation_v3*.tsv"]),
    ("arqmath/task3/2022", ["Topics_Task1_2022*.xml", "qrel_task3_2022*.tsv"]),
    ("worldtree/dev", ["tables", "ARC-Elementary*EXPL-Dev*.tsv"]),
    ("word-problems/draw1k/test", ["draw-test.txt", "draw-train.txt", "draw.json"]),
    ("word-problems/alg514/fold-2", ["kushman-fold-2.txt", "kushman.json"]),
])
def test_an_empty_data_folder_names_every_missing_file(provider, tmp_path, name, files):
    ds = pt.get_dataset(f"mathir:{name}", data=tmp_path)  # data= reaches _configure
    with pytest.raises(InputError) as info:
        ds.get_topics()
    msg = str(info.value)
    assert msg.startswith(f"{tmp_path}: mathir:{name}: missing ")
    for f in files:
        assert f in msg
    assert re.search(r"https?://", msg) and "cannot be downloaded" in msg


def test_a_partial_data_folder_names_only_what_is_missing(provider, tmp_path):
    (tmp_path / "topics").mkdir()
    (tmp_path / "topics" / "Topics_Task1_2022_V0.1.xml").write_text("<Topics/>")
    with pytest.raises(InputError, match="missing qrel_task1_2022_official.tsv") as info:
        pt.get_dataset("mathir:arqmath/task1/2022", data=tmp_path).get_qrels()
    assert "Topics_Task1" not in str(info.value)
    assert "https://www.cs.rit.edu/~dprl/ARQMath/" in str(info.value)


def test_a_located_file_that_is_absent_is_named(provider, tmp_path):
    # The registry finds the split file but does not check the problems JSON beside it.
    (tmp_path / "draw-test.txt").write_text("1\n")
    (tmp_path / "draw-train.txt").write_text("2\n")
    with pytest.raises(InputError, match=r"missing draw.json \(the DRAW-1K problems\)"):
        pt.get_dataset("mathir:word-problems/draw1k/test", data=tmp_path).get_topics()


def test_no_data_folder_says_how_to_give_one(provider):
    ds = pt.get_dataset("mathir:worldtree/dev")
    with pytest.raises(InputError, match="no data folder is set") as info:
        ds.get_corpus_iter()
    msg = str(info.value)
    assert "data=DIR" in msg and "MATHIR_DATA" in msg and "mathir:worldtree/sample" in msg
    assert "http://cognitiveai.org/explanationbank/" in msg


def test_a_missing_data_folder_is_named(provider, tmp_path):
    with pytest.raises(InputError, match="data folder of mathir:arqmath/task2/2020 not found"):
        pt.get_dataset("mathir:arqmath/task2/2020", data=tmp_path / "nope").get_topics()


def test_samples_take_no_data_folder(provider, tmp_path):
    with pytest.raises(InputError, match="embedded sample"):
        pt.get_dataset("mathir:arqmath/task1/sample", data=tmp_path)


def test_unknown_configure_argument_is_refused(provider):
    # named with the keywords it takes (it was Python's TypeError on _configure())
    with pytest.raises(InputError, match=r"takes the keywords data= and collection=, not "
                                         r"user=$"):
        pt.get_dataset("mathir:arqmath/task1/sample", user="x")


def test_get_index_builds_where_every_path_does(provider, tmp_path, monkeypatch, capsys):
    # one rule: MATHIR_INDEX_DIR, else indexes/ under the cache folder; mathir experiment
    # then reuses the dataset's index instead of building its own
    monkeypatch.setenv("MATHIR_INDEX_DIR", str(tmp_path / "idx"))
    index = pt.get_dataset("mathir:worldtree/sample").get_index()
    assert index.path.is_relative_to(tmp_path / "idx")
    from mathir.cli import main

    assert main(["experiment", "worldtree", "--pipelines", "tfidf", "--out",
                 str(tmp_path / "runs"), "--quiet"]) == 0
    assert [p.name for p in (tmp_path / "idx").iterdir() if p.is_dir()] == [index.path.name]
    monkeypatch.delenv("MATHIR_INDEX_DIR")
    monkeypatch.setenv("MATHIR_CACHE_DIR", str(tmp_path / "cache"))
    index = pt.get_dataset("mathir:worldtree/sample").get_index()
    assert index.path.is_relative_to(tmp_path / "cache" / "indexes")
    assert index.num_docs == len(read_tablestore(worldtree_sample().tables).facts)


def test_experiment_on_the_task1_sample(provider, tmp_path):
    import mathir

    ds = pt.get_dataset("mathir:arqmath/task1/sample")
    index = ds.get_index(index_dir=tmp_path / "idx")
    assert index.num_docs == 250
    qrels = ds.get_qrels()
    table = pt.Experiment([mathir.bm25(index)], ds.get_topics(), qrels,
                          eval_metrics=["ndcg_cut_10"], names=["bm25"], perquery=True)
    assert set(table["qid"]) == set(qrels["qid"])
    # The sample's topics paraphrase collection questions (see tests/tasks/test_arqmath_task1.py).
    assert table["value"].mean() > 0.5


def test_task2_sample_is_scored_through_visual_ids(provider, tmp_path):
    import mathir

    ds = pt.get_dataset("mathir:arqmath/task2/sample")
    index = ds.get_index(index_dir=tmp_path / "formulas")
    run = mathir.formula_words(index)(ds.get_topics())
    qrels = ds.get_qrels()
    table = mathir.evaluate_task2({"words": run}, qrels, ds.get_formula_index())
    assert table.loc["words", "nDCG'"] > 0.5


def test_the_installed_entry_point_loads_the_provider(monkeypatch):
    eps = {ep.name: ep for ep in importlib.metadata.entry_points(group="pyterrier.dataset_provider")}
    if "mathir" not in eps:
        pytest.skip("the 'mathir' pyterrier.dataset_provider entry point is not installed "
                    "(pip install -e . once pyproject.toml declares it)")
    assert eps["mathir"].value == "mathir.datasets:MathirDatasets"
    monkeypatch.delitem(pt_datasets_core._loaded_providers, "mathir", raising=False)
    ds = pt.get_dataset("mathir:arqmath/task1/sample")
    assert isinstance(ds, datasets.MathirDataset) and len(ds.get_topics()) == 10
    assert ds.task().name == "arqmath-task1"


def test_the_entry_point_line_loads_the_provider(monkeypatch, tmp_path):
    # The line pyproject.toml declares, in an installed distribution's metadata on sys.path
    # (what `pip install` writes), found by PyTerrier as it finds every provider.
    install_distribution(tmp_path, "mathir-entry-point-check", "pyterrier.dataset_provider",
                         "mathir = mathir.datasets:MathirDatasets\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(pt_datasets_core._loaded_providers, "mathir", raising=False)
    ds = pt.get_dataset("mathir:worldtree/sample")
    assert isinstance(pt_datasets_core._loaded_providers["mathir"], datasets.MathirDatasets)
    assert isinstance(ds, datasets.MathirDataset) and len(ds.get_topics()) == 6
    assert ds.get_tablestore() is not None  # a method the task declares


# --- real data ---------------------------------------------------------------------------

REAL = ["arqmath/task1/2022", "arqmath/task2/2021", "worldtree/dev", "word-problems/draw1k/test"]


@pytest.mark.realdata
@pytest.mark.parametrize("name", [n for n, s in datasets._specs().items() if not s.sample])
def test_the_declared_files_are_those_of_the_real_data(name):
    # The names in the missing-files message must be the files the registry finds.
    root = real_path()
    ds = datasets.dataset(name, data=root)
    assert [n.describe() for n in ds._spec.needs if not n.optional and not n.found(root)] == []
    files = ds.files()
    # an optional file the data has is taken (ARQMath-2 and -3's topic information)
    assert all(getattr(files, r, None) or files.extras.get(n.option)
               for n in ds._spec.needs if n.optional and n.found(root) for r in n.roles
               if r != "option")


@pytest.mark.realdata
@pytest.mark.slow
def test_real_arqmath_task1_2022(provider):
    ds = pt.get_dataset("mathir:arqmath/task1/2022", data=real_path("arqmath"))
    topics, qrels = ds.get_topics(), ds.get_qrels("official")
    # MANIFEST.md: 100 topics A.301-A.400; 34,847 judgments of 78 topics
    assert len(topics) == 100 and topics["qid"].iloc[0] == "A.301"
    assert len(qrels) == 34847 and qrels["qid"].nunique() == 78
    # by default, the judgments of the documents the pool holds (as mathir experiment)
    with pytest.warns(UserWarning, match="the collection holds 723 of the 34,847"):
        assert len(ds.get_qrels()) == 723
    # the judged pool: all 3,395 thread files (threads_all, no cut), one answer each
    docs = list(ds.get_corpus_iter(verbose=False))
    assert len(docs) == len({d["docno"] for d in docs}) == 3395
    # thread files are named {question id}_{answer id}.html
    folder = real_path("arqmath", "collection_sample", "threads_all")
    assert {d["docno"] for d in docs} == {p.stem.split("_")[1] for p in folder.glob("*.html")}
    assert set(ds.get_topic_metadata()["qid"]) == set(qrels["qid"])  # the 78 judged topics


@pytest.mark.realdata
def test_real_arqmath_task2_2021(provider, monkeypatch):
    monkeypatch.setenv(datasets.DATA_ENV, str(real_path()))  # MATHIR_DATA, no data=
    ds = pt.get_dataset("mathir:arqmath/task2/2021")
    assert len(ds.get_topics()) == 100
    qrels = ds.get_qrels()
    assert len(qrels) == 8115 and qrels["qid"].nunique() == 58  # the v3 visual-id qrels
    assert ds.get_formula_index().name == "formula_index_from_thread_html.tsv"
    assert sum(1 for _ in ds.get_corpus_iter(verbose=False)) == 76970


@pytest.mark.realdata
def test_real_worldtree_dev(provider):
    ds = pt.get_dataset("mathir:worldtree/dev", data=real_path("worldtree"))
    topics = ds.get_topics()
    assert len(topics) == 226  # MANIFEST.md: 226 dev questions with an explanation
    with pytest.warns(UserWarning, match="repeated gold UID"):
        qrels = ds.get_qrels()
    assert set(qrels["qid"]) == set(topics["qid"])
    with pytest.warns(UserWarning, match="1 UID.s. with two different texts"):
        docs = list(ds.get_corpus_iter(verbose=False))
    # MANIFEST.md: 4,950 fact rows, 4,947 distinct UIDs (ids are lower-cased; 4,947 here too)
    assert len(docs) == len({d["docno"] for d in docs}) == 4947
    # MANIFEST.md: 41,883 lines of lemma<TAB>word; a word listed twice keeps its first lemma
    lemmas = ds.get_lemmas()
    assert len(lemmas) == 41664 and (lemmas["was"], lemmas["melting"]) == ("be", "melt")


@pytest.mark.realdata
def test_real_draw1k_test(provider):
    ds = pt.get_dataset("mathir:word-problems/draw1k/test", data=real_path("word_problems"))
    topics = ds.get_topics()
    assert len(topics) == 200  # MANIFEST.md: 600 / 199 / 200 ids
    docs = list(ds.get_corpus_iter(verbose=False))
    assert len(docs) == 600 and not {d["docno"] for d in docs} & set(topics["qid"])
    assert ds.get_qrels()["qid"].tolist() == topics["qid"].tolist()
