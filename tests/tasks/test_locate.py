"""The one locate (mathir.tasks.locate): a task's files are its needs, each written once."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pytest

from mathir.errors import InputError
from mathir.tasks import Measure, Need, Split, Task, TaskData, get_task
from mathir.tasks.locate import find_need, locate


def _task(*needs: Need, **fields) -> Task:
    return Task(name="t", description="t", measures=(Measure("P@5", "p", "P@5"),), primary_measure="P@5",
                pipelines={}, default_pipelines=(), read_topics=str, read_qrels=str,
                read_run=str, write_run=str, build_index=str,
                splits=(Split("1", needs=needs),), **fields)


def _touch(root: Path, *names: str) -> None:
    for name in names:
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.mkdir() if name.endswith("/") else p.write_text("x")


def test_roles_build_the_data_and_the_first_pattern_is_preferred(tmp_path):
    _touch(tmp_path, "a/topics.tsv", "b/qrels_v1.tsv", "b/qrels_v3.tsv", "c/docs/", "meta.csv",
           "extra.txt")
    task = _task(Need("topics.tsv", "topics", "topics"),
                 Need(("qrels_v3.tsv", "qrels_v*.tsv"), "qrels", "qrels"),
                 Need("docs", "docs", "collection", option="docs_folder"),
                 Need("meta.csv", "meta", "metadata", optional=True),
                 Need("extra.txt", "extra", "option", option="extra"),
                 Need("absent.txt", "absent", "option", option="absent", optional=True))
    data = task.data(tmp_path)
    assert (data.label, data.topics.name, data.qrels.name, data.collection.name) == \
        ("1", "topics.tsv", "qrels_v3.tsv", "docs")  # v3 first although v1 sorts first
    assert data.metadata.name == "meta.csv" and data.root == tmp_path
    assert {k: v.name for k, v in data.extras.items()} == {"docs_folder": "docs",
                                                           "extra": "extra.txt"}


def test_a_required_file_missing_is_named_and_an_optional_one_is_not(tmp_path):
    _touch(tmp_path, "topics.tsv", "docs/")
    task = _task(Need("topics.tsv", "topics", "topics"), Need("docs", "docs", "collection"),
                 Need("q.tsv", "the judgments", "qrels"))
    with pytest.raises(InputError, match=r"no the judgments matching 'q.tsv' under the data"):
        task.data(tmp_path)
    optional = _task(Need("topics.tsv", "topics", "topics"), Need("docs", "docs", "collection"),
                     Need("q.tsv", "the judgments", "qrels", optional=True))
    assert optional.data(tmp_path).qrels is None
    with pytest.raises(InputError, match=r"no collection \(papers\) under the data directory; "
                                         r"pass collection="):
        _task(Need("topics.tsv", "topics", "topics"),
              Need("papers", "papers", "collection")).data(tmp_path)


def test_suffix_folder_contains_exclude_and_beside(tmp_path):
    # a pattern with a suffix matches files only, one without folders only
    _touch(tmp_path, "x/topics.tsv/", "y/topics.tsv", "empty/tables/", "full/tables/t.tsv",
           "q/Q-Dev-Masked.tsv", "q/Q-Dev.tsv", "y/problems.json", "z/problems.json")
    assert find_need(Need("topics.tsv", "t", "topics"), tmp_path).parent.name == "y"
    tables = Need("tables", "tables", "collection", contains="*.tsv")
    assert find_need(tables, tmp_path).parent.name == "full"
    plain = Need("Q-Dev*.tsv", "questions", "topics", exclude="Masked")
    assert find_need(plain, tmp_path).name == "Q-Dev.tsv"
    # beside: in the folder of the topics, not the first of the data folder (z sorts later)
    task = _task(Need("topics.tsv", "topics", "topics"),
                 Need("problems.json", "problems", "collection", beside="topics"))
    assert task.data(tmp_path).collection == tmp_path / "y" / "problems.json"


def test_a_role_is_given_by_the_first_need_found(tmp_path):
    # WorldTree: the questions with their gold (topics and qrels), else the masked ones
    _touch(tmp_path, "docs/", "Q-Test-Masked.tsv")
    task = _task(Need("docs", "docs", "collection"),
                 Need("Q-Test*.tsv", "questions", ("topics", "qrels"), optional=True,
                      exclude="Masked"),
                 Need("Q-Test-Masked*.tsv", "masked questions", "topics", optional=True))
    data = task.data(tmp_path)
    assert data.topics.name == "Q-Test-Masked.tsv" and data.qrels is None
    _touch(tmp_path, "Q-Test.tsv")
    data = task.data(tmp_path)
    assert data.topics.name == data.qrels.name == "Q-Test.tsv"


def test_several_collections_are_said_and_a_given_one_is_taken(tmp_path):
    _touch(tmp_path, "topics.tsv", "a/docs/", "b/docs/")
    task = _task(Need("topics.tsv", "topics", "topics"), Need("docs", "docs", "collection",
                                                               option="docs"))
    with pytest.warns(UserWarning, match=r"2 collections .*took .*a/docs over .*b/docs"):
        task.data(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = task.data(tmp_path, collection=tmp_path / "b" / "docs")
    assert data.collection == data.extras["docs"] == tmp_path / "b" / "docs"


def test_years_are_chosen_case_aside_and_an_unknown_one_is_named(tmp_path):
    task = get_task("worldtree")
    assert locate(task, None, "dev", None).topics.name.endswith("Dev.tsv")
    with pytest.raises(InputError, match=r"unknown WorldTree split 'valid'"):
        locate(task, tmp_path, "valid", None)
    with pytest.raises(InputError, match=r"only the test split"):
        get_task("word-problems").data(None, "dev")
    with pytest.raises(InputError, match=r"ARQMath year 2021 needs the real files.*no years"):
        get_task("arqmath-task1").data(None, "2021")


def test_a_task_has_no_sample_unless_it_declares_one(tmp_path):
    task = _task(Need("topics.tsv", "topics", "topics"), Need("docs", "docs", "collection"))
    assert task.has_sample is False
    with pytest.raises(InputError, match=r"t has no embedded sample"):
        task.data()
    sampled = _task(sample=lambda year, collection: TaskData("sample", Path("c"), Path("t"),
                                                            None))
    assert sampled.has_sample and sampled.data().label == "sample"


def test_a_need_says_its_mistakes():
    with pytest.raises(ValueError, match=r"role is one of"):
        Need("x.tsv", "x", "topic")
    with pytest.raises(ValueError, match=r"name it \(option=\)"):
        Need("x.tsv", "x", "option")


# --- each file written once ----------------------------------------------------------------

_FILE_NAME = re.compile(r"[\w*{}+\-.]+\.(?:xml|tsv|txt|json|csv)\b")


def _file_names(source: str) -> list[str]:
    """The file names and patterns written in the code of ``source`` (docstrings, which
    are prose, aside)."""
    tree = ast.parse(source)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
                  and n.body and isinstance(n.body[0], ast.Expr)
                  and isinstance(n.body[0].value, ast.Constant)}
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    # a published file's digest row names one version of it: data, not a pattern
    inner |= {id(c) for n in ast.walk(tree) if isinstance(n, ast.Call)
              and getattr(n.func, "id", None) == "published_files" for c in ast.walk(n)}
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings | inner:
            names += _FILE_NAME.findall(node.value)
        elif isinstance(node, ast.JoinedStr):  # f"Topics_Task1_{year}*.xml"
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            names += _FILE_NAME.findall(text)
    return names


def _repeated(names: list[str]) -> list[str]:
    return sorted(n for n in set(names) if names.count(n) > 1)


def test_each_file_pattern_is_written_once_in_the_task_declarations():
    import mathir.tasks

    folder = Path(mathir.tasks.__file__).parent
    # "*.tsv" (any TSV, e.g. of a run folder) is a suffix, not a file's name
    names = [n for f in sorted(folder.glob("*.py")) for n in _file_names(f.read_text())
             if not n.startswith("*.")]
    assert "Topics_Task1_{}*.xml" in names and "draw-train.txt" in names  # the check sees them
    assert _repeated(names) == []


def test_the_extending_example_writes_each_file_name_once():
    page = (Path(__file__).parents[2] / "docs" / "extending.md").read_text()
    module = page.split("<!-- file: ntcir12_wfb/__init__.py -->\n```python\n")[1].split("```")[0]
    names = _file_names(module)
    assert sorted(names) == ["wfb_formulas.tsv", "wfb_qrels.txt", "wfb_topics.tsv"]


def test_the_repetition_check_can_fail():
    assert _repeated(_file_names('A = Need("x.tsv", "x", "topics")\nB = f"{A}x.tsv"\n'
                                 'C = "x.tsv"')) == ["x.tsv"]
