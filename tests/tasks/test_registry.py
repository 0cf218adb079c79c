"""The registry (mathir.tasks.registry): mathir's families in order, then the tasks of the
``mathir.tasks`` entry points, which may use the registry while they are loaded."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

from mathir.tasks import TASKS, derive_task, get_task, registry
from tests.conftest import install_distribution

PLUGIN = '''
from mathir.tasks import derive_task

# derived while the registry loads its entry points
TASK = derive_task("arqmath-task1", "plugin-a1", topics=["A.1"])
'''


def _installed(root: Path, entry_points: str) -> None:
    """A package declaring ``entry_points`` in the group ``mathir.tasks``, as pip leaves it."""
    (root / "h8_plugin.py").write_text(PLUGIN)
    install_distribution(root, "h8-plugin", "mathir.tasks", entry_points)


def test_the_families_are_registered_in_order():
    ours = [t.name for f in registry.FAMILIES
            for t in importlib.import_module(f"mathir.tasks.{f}").DECLARED]
    assert list(TASKS)[:len(ours)] == ours
    assert ours[:3] == ["arqmath-task1", "arqmath-task2", "arqmath-task3"]


def test_a_plugin_derives_its_task_from_a_registered_one_while_it_is_loaded(tmp_path):
    _installed(tmp_path, "plugin-a1 = h8_plugin:TASK\nbroken = h8_plugin:MISSING\n")
    code = ("import json, warnings\nwarnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as said:\n"
            "    import mathir\n"
            "    task = mathir.get_task('plugin-a1')\n"
            "print(json.dumps({'topics': task.data().topic_ids, 'last': list(mathir.TASKS)[-1],"
            " 'warned': [str(w.message) for w in said]}))\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["topics"] == ["A.1"] and out["last"] == "plugin-a1"
    # a broken entry point is said, once, and the others load
    assert len(out["warned"]) == 1 and "entry point broken (h8_plugin:MISSING) not loaded" \
        in out["warned"][0]


def test_registering_twice_the_same_task_is_one_registration():
    task = derive_task("arqmath-task1", "twice-a1", topics=["A.1"])
    try:
        assert registry.register(task) is registry.register(task) is get_task("twice-a1")
    finally:
        dict.pop(TASKS, "twice-a1", None)
