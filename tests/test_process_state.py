"""The check that every test leaves the process as it found it (../conftest.py): each kind
of change it looks for is seen and named."""

from __future__ import annotations

import logging
import os
import sys

import pytest

conftest = sys.modules["conftest"]  # the repository's root conftest.py


def _changes(change, monkeypatch) -> list[str]:
    before = conftest.process_state()
    with monkeypatch.context() as mp:
        change(mp)
        return conftest.state_changes(before, conftest.process_state())


@pytest.mark.parametrize("change,named", [
    (lambda mp: mp.setenv("MATHIR_LEAK", "1"), "os.environ: MATHIR_LEAK='1' added"),
    (lambda mp: mp.delenv("MATHIR_EXPORT_DIR"), "os.environ: MATHIR_EXPORT_DIR removed"),
    (lambda mp: mp.syspath_prepend("/nowhere"), "sys.path: '/nowhere' added"),
    (lambda mp: mp.chdir("/"), "working folder: "),
    (lambda mp: mp.setattr(logging.getLogger(), "level", logging.ERROR),
     "root logger level: 'WARNING' -> 'ERROR'"),
    (lambda mp: mp.setattr(logging.root.manager, "disable", logging.INFO),
     "logging.disable: 0 -> 20"),
], ids=["env added", "env removed", "sys.path", "cwd", "logger level", "logging.disable"])
def test_each_change_is_named(monkeypatch, change, named):
    changes = _changes(change, monkeypatch)
    assert len(changes) == 1 and changes[0].startswith(named), changes


def test_variables_libraries_set_on_import_and_repeated_folders_are_not_changes(monkeypatch):
    root = conftest.process_state()["sys.path"][0]
    assert _changes(lambda mp: mp.setenv("KMP_INIT_AT_FORK", "FALSE"), monkeypatch) == []
    # pytest puts the tests' root at the front again when a library put a folder there
    assert _changes(lambda mp: mp.setattr(sys, "path", [root] + sys.path), monkeypatch) == []


def test_torch_settings_are_compared_once_torch_is_imported(monkeypatch):
    torch = pytest.importorskip("torch")
    assert _changes(lambda mp: mp.setattr(torch, "get_num_threads", lambda: 99),
                    monkeypatch)[0].startswith("torch threads: ")
    assert _changes(lambda mp: mp.setattr(torch, "get_default_dtype", lambda: torch.float64),
                    monkeypatch) == ["torch default dtype: 'torch.float32' -> 'torch.float64'"]


def test_subnormal_floats_are_kept_here():
    assert conftest.process_state()["subnormal floats"] == "kept"
    assert os.environ.get("MATHIR_TESTS_TMP")  # the root conftest.py is the one loaded
