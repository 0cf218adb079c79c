import pytest

from mathir.errors import InputError
from mathir.experiment import run_experiment
from mathir.tasks import TASKS, get_task
from tests.conftest import real_path


def test_registry_declares_task1():
    t = get_task("arqmath-task1")
    assert set(t.measure_names) == {"nDCG'", "MAP'", "P'@10", "bpref"}
    assert set(t.default_pipelines) <= set(t.pipelines)
    assert "arqmath-task1" in TASKS


def test_sample_experiment_finds_relevant_answers(tmp_path):
    res = run_experiment("arqmath-task1", out=tmp_path, quiet=True)
    assert list(res.table.index) == ["tfidf", "bm25"]
    # The sample's topics paraphrase collection questions: both systems must do well.
    assert res.table["nDCG'"].round(4).to_dict() == {"tfidf": 0.9344, "bm25": 0.9336}
    assert all(p.exists() for p in res.runs.values())


def test_index_is_reused_and_rebuilt_when_input_changes(tmp_path, sample):
    import shutil

    from mathir.indexing.answer_index import AnswerIndex

    posts = tmp_path / "Posts.V1.3.xml"
    shutil.copy(sample.posts, posts)
    idx = AnswerIndex.build(posts, tmp_path / "idx", quiet=True)
    stamp = (tmp_path / "idx" / "manifest.json").stat().st_mtime_ns
    AnswerIndex.build(posts, tmp_path / "idx", quiet=True)
    assert (tmp_path / "idx" / "manifest.json").stat().st_mtime_ns == stamp
    text = posts.read_text().replace("</posts>", '  <row Id="999999" PostTypeId="2" ParentId="1001" Body="new" />\n</posts>')
    posts.write_text(text)
    assert AnswerIndex.build(posts, tmp_path / "idx", quiet=True).num_docs == idx.num_docs + 1


def test_failed_build_keeps_previous_index(tmp_path, sample):
    from mathir.indexing.answer_index import AnswerIndex

    good = AnswerIndex.build(sample.posts, tmp_path / "idx", quiet=True)
    bad = tmp_path / "bad.xml"
    rows = "".join(f'<row Id="{i}" PostTypeId="2" ParentId="1" Body="answer {i}" />\n' for i in range(2, 500))
    bad.write_text(f'<posts>\n<row Id="1" PostTypeId="1" Body="x" />\n{rows}<row Id="9" PostTypeId="2" Body="y" />\n')
    with pytest.raises(InputError, match=r"bad.xml:501: answer 9 has no ParentId"):
        AnswerIndex.build(bad, tmp_path / "idx", quiet=True)
    assert AnswerIndex(tmp_path / "idx").num_docs == good.num_docs
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == ["bad.xml", "idx"]


def _data_folder(tmp_path, *collections: str):
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "Topics_Task1_2022_V0.1.xml").write_text("<Topics/>")
    (tmp_path / "qrel_task1_2022_official.tsv").write_text("")
    for name in collections:
        p = tmp_path / "collection" / name
        p.parent.mkdir(exist_ok=True)
        p.write_text("<posts/>") if name.endswith(".xml") else p.mkdir()
    return tmp_path


def test_the_collection_is_chosen_explicitly_and_a_choice_among_several_is_said(tmp_path):
    import warnings

    task = get_task("arqmath-task1")
    # "thread_html_a" sorts first, but the uncut threads_all folder is preferred
    root = _data_folder(tmp_path, "thread_html_a", "threads_all")
    with pytest.warns(UserWarning, match=r"2 collections .*took .*threads_all over "
                      r".*thread_html_a \(preferred in the order Posts.V1.3.xml, threads_all, "
                      r"thread_html\*\); choose another with collection=$"):  # Python's words
        assert task.data(root, "2022").collection.name == "threads_all"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one candidate, or an explicit one: nothing to say
        warnings.filterwarnings("ignore", ".*: not the published")  # the fake topics, qrels
        chosen = root / "collection" / "thread_html_a"
        assert task.data(root, "2022", chosen).collection == chosen
    # the official posts come before any folder of thread files
    (root / "collection" / "Posts.V1.3.xml").write_text("<posts/>")
    with pytest.warns(UserWarning, match=r"3 collections .*took .*Posts.V1.3.xml"):
        assert task.data(root, "2022").collection.name == "Posts.V1.3.xml"


def test_a_single_thread_folder_is_taken_without_a_warning(tmp_path):
    import warnings

    root = _data_folder(tmp_path, "thread_html_only")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", ".*: not the published")  # the fake topics, qrels
        assert get_task("arqmath-task1").data(root, "2022").collection.name == "thread_html_only"
    empty = _data_folder(tmp_path / "empty")
    with pytest.raises(InputError, match=r"no collection \(Posts.V1.3.xml, threads_all, "
                       r"thread_html\*\).*pass collection="):
        get_task("arqmath-task1").data(empty, "2022")


@pytest.mark.realdata
def test_real_pool_experiment(tmp_path):
    root = real_path("arqmath")
    task = get_task("arqmath-task1")
    data = task.data(root, "2022")
    assert data.collection.name == "threads_all"
    res = run_experiment(task, data, out=tmp_path, quiet=True)
    # Qrels are restricted to the pool (the 3,395 uncut thread files); on 2022 a random
    # order of each topic's judged answers scores 0.603 nDCG' and answer length alone 0.638.
    # docs/arqmath.md's judged-pool table, 2022 rows (three decimals)
    assert res.table["nDCG'"].round(3).to_dict() == {"tfidf": 0.611, "bm25": 0.674}
    assert res.table["P'@10"].round(3).to_dict() == {"tfidf": 0.168, "bm25": 0.196}
