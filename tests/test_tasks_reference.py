"""docs/tasks.md, the reference of mathir's tasks, is scripts/tasks_reference.py's
rendering of the task declarations (mathir.tasks.TASKS): the page cannot drift from the
registry."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tasks.md"


def _script():
    spec = importlib.util.spec_from_file_location("tasks_reference",
                                                  ROOT / "scripts" / "tasks_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_is_the_scripts_rendering():
    assert PAGE.read_text(encoding="utf-8") == _script().render(), \
        "docs/tasks.md is out of date: run python scripts/tasks_reference.py"


def test_the_check_mode_finds_a_stale_page(tmp_path, monkeypatch, capsys):
    script = _script()
    assert script.main(["--check"]) == 0
    monkeypatch.setattr(script, "PAGE", tmp_path / "tasks.md")
    assert script.main(["--check"]) == 1  # absent
    (tmp_path / "tasks.md").write_text("# stale\n", encoding="utf-8")
    assert script.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err


def test_every_task_and_what_it_declares_is_on_the_page():
    tasks = _script().builtin_tasks()
    page = PAGE.read_text(encoding="utf-8")
    assert re.findall(r"^## `([^`]+)`$", page, re.M) == [t.name for t in tasks]
    assert {"arqmath-task1", "worldtree", "word-problems"} <= {t.name for t in tasks}
    for task in tasks:
        section = page.split(f"## `{task.name}`\n")[1].split("\n## ")[0]
        for m in task.measures:
            assert f"`{m.name}`" in section and m.description in section
        for split in task.splits:
            assert f"`mathir:{task.dataset or task.name}/{split.name}`" in section
            for need in split.needs:
                assert all(f"`{p}`" in section for p in need.patterns)
                assert all(f"`{f.sha256}`" in section for f in need.published)
        for variant in task.qrels_variants:
            assert f"| `{variant.name}` | `{variant.pattern}` |" in section


def test_a_task_of_a_plugin_is_not_listed(monkeypatch):
    from mathir.tasks import TASKS, derive_task

    script = _script()
    extra = derive_task("worldtree", "worldtree-extra")
    monkeypatch.setitem(TASKS, extra.name, extra)
    assert extra.name in TASKS and extra not in script.builtin_tasks()
    assert "worldtree-extra" not in script.render()
