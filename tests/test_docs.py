"""The Python blocks of docs/*.md run as written (each document's blocks in order, in
one namespace, in a fresh folder), so the task references cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
WITH_CODE = sorted(p.name for p in DOCS.glob("*.md") if BLOCK.search(p.read_text("utf-8")))


def _own_pipelines_scored(namespace: dict) -> None:
    # the own-pipelines example (once in the README): the edited-sign lambda scores far
    # below BM25
    table = namespace["res"].table
    assert table.loc["negated", "nDCG'"] < table.loc["bm25", "nDCG'"] - 0.2


#: what a document's examples must show besides running
SHOWS = {"experiments.md": _own_pipelines_scored}


def test_the_task_references_hold_code():
    # the check below is not vacuous: these documents have Python examples
    assert {"arqmath.md", "experiments.md", "pyterrier.md", "word_problems.md"} <= set(WITH_CODE)


@pytest.mark.parametrize("name", WITH_CODE)
def test_python_blocks_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTERRIER_HOME", str(tmp_path / "pyterrier-home"))
    namespace: dict = {}
    for i, block in enumerate(BLOCK.findall((DOCS / name).read_text("utf-8")), 1):
        exec(compile(block, f"{name} (Python block {i})", "exec"), namespace)
    SHOWS.get(name, lambda namespace: None)(namespace)


def test_readme_python_blocks_run_in_order(tmp_path, monkeypatch):
    # the first block is also checked by tests/test_readme.py, with its printed table
    monkeypatch.chdir(tmp_path)
    blocks = BLOCK.findall((ROOT / "README.md").read_text("utf-8"))
    assert len(blocks) >= 1
    namespace: dict = {}
    for i, block in enumerate(blocks, 1):
        exec(compile(block, f"README.md (Python block {i})", "exec"), namespace)


def test_the_dataset_table_names_every_task_and_where_its_files_are_published():
    # the table of docs/pyterrier.md is written by hand from the declarations: it must
    # name each task's datasets and the page its files are published on
    from mathir.tasks import TASKS

    text = (DOCS / "pyterrier.md").read_text("utf-8")
    table = text[text.index("| name | corpus"):text.index("Every dataset also has")]
    for name, task in TASKS.items():
        assert f"`{task.dataset or name}/" in table, name
        if task.published is not None:
            assert task.published.url in table or "same site" in table, name
