"""What the tests (``tests/``) and the doctests (``mathir/``) share.

* Temporary files: everything made through :mod:`tempfile` during a run (the doctests'
  ``tempfile.mkdtemp()``, the processes the tests start, Ray's session folders, the
  digest cache ``$MATHIR_CACHE_DIR`` and the indexes built under it) lies in one folder,
  removed when the run ends. pytest's own ``tmp_path`` folders keep pytest's rules
  (``/tmp/pytest-of-<user>``, the last three runs kept). With pytest-xdist the workers
  share the folder of the process that started them, which removes it.
* The encoders' exports (``$MATHIR_EXPORT_DIR``) lie in that folder too, made once per run.
* The sample indexes: the doctests run in :func:`samples_dir`, so a doctest that builds
  ``"sample-answers"`` reuses the index an earlier one (or the ``sample_index`` fixture
  of ``tests/conftest.py``) built there: each sample is indexed once per run.
* Speed, no value changed: statsmodels' Holm correction does not run a full garbage
  collection in this process; under pytest-xdist the ``slow`` tests start first and each
  worker's PyTorch uses one thread.
"""

from __future__ import annotations

import functools
import gc
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from _pytest.doctest import DoctestItem

#: Names the run's temporary folder; inherited by xdist workers and by the processes the
#: tests start, so they use the folder of the process that made it.
TMP_ENV = "MATHIR_TESTS_TMP"
_OWNED: dict[str, object] = {}


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is not None:
        factory.getbasetemp()  # pytest's tmp_path root, chosen before tempfile is redirected
    root = os.environ.get(TMP_ENV)
    if not root or not os.path.isdir(root):
        # a short name: Ray's socket paths under it must stay within 107 characters
        root = tempfile.mkdtemp(prefix="mathir-tests-")
        _OWNED.update(root=root, env={k: os.environ.get(k) for k in
                                      (TMP_ENV, "TMPDIR", "MATHIR_CACHE_DIR",
                                       "MATHIR_EXPORT_DIR")},
                      tempdir=tempfile.tempdir)
        os.environ[TMP_ENV] = root
        # Collection fingerprints cache file digests (and run_experiment builds indexes)
        # in mathir's cache folder: the tests keep theirs in the run's folder.
        os.environ.setdefault("MATHIR_CACHE_DIR", str(Path(root) / "cache"))
        # The encoders' ONNX/OpenVINO exports too, not beside the installed model: one
        # folder the xdist workers share, so each export is made once per run (under a
        # lock: a worker wanting one that another is making waits, then reuses it).
        os.environ["MATHIR_EXPORT_DIR"] = str(Path(root) / "exports")
    os.environ["TMPDIR"] = root
    tempfile.tempdir = root
    if hasattr(config, "workerinput"):
        # A pytest-xdist worker shares the CPUs with the others: PyTorch's default of one
        # thread per core makes its threads wait for each other (spinning) whenever another
        # worker holds a core; one thread each encodes faster and with a quarter less CPU.
        # Set before torch is imported; the processes the tests start inherit it.
        os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_unconfigure(config: pytest.Config) -> None:
    if not _OWNED:
        return
    tempfile.tempdir = _OWNED["tempdir"]
    for key, value in _OWNED["env"].items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    shutil.rmtree(_OWNED["root"], ignore_errors=True)
    _OWNED.clear()


def _without_garbage_collections(multipletests):
    """``multipletests`` whose ``gc.collect()`` calls collect nothing (see below)."""

    @functools.wraps(multipletests)
    def wrapper(*args, **kwargs):
        collect = gc.collect
        gc.collect = lambda generation=2: 0
        try:
            return multipletests(*args, **kwargs)
        finally:
            gc.collect = collect

    wrapper.without_garbage_collections = True
    return wrapper


@pytest.fixture(autouse=True)
def _holm_without_full_garbage_collections():
    """statsmodels' Holm correction (``multipletests(method="holm")``, the default
    correction of mathir's significance tests) calls ``gc.collect()`` on every call: a full
    collection of the test process's 700,000 objects, 0.1 to 0.5 s, four times per
    experiment (one per measure): a quarter of the time of the tests that run experiments.
    In this process it collects nothing (a collection frees memory, it changes no value);
    patched once mathir's significance module is imported, for the rest of the run.
    """
    significance = sys.modules.get("mathir.evaluation.significance")
    if significance is not None and not getattr(significance.multipletests,
                                                "without_garbage_collections", False):
        significance.multipletests = _without_garbage_collections(significance.multipletests)


@pytest.fixture(scope="session")
def samples_dir(tmp_path_factory) -> Path:
    """The folder where the sample indexes are built once per run (the doctests' working
    folder: ``AnswerIndex.build(arqmath_sample().posts, "sample-answers")`` lands here)."""
    return tmp_path_factory.mktemp("samples")


@pytest.fixture(autouse=True)
def _doctests_run_in_the_samples_folder(request):
    if isinstance(request.node, DoctestItem):
        request.getfixturevalue("monkeypatch").chdir(request.getfixturevalue("samples_dir"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the tests marked ``slow`` run first (real data and slow first of
    all), so the longest ones start while the other workers take the quick ones, rather
    than one of them ending the run alone. A plain run keeps the collection order.

    Every worker sorts its collection alike (xdist needs the same order in all of them).
    """
    if not hasattr(config, "workerinput"):
        return

    def key(item: pytest.Item) -> int:
        slow = item.get_closest_marker("slow") is not None
        realdata = item.get_closest_marker("realdata") is not None
        return 0 if slow and realdata else 1 if slow else 2

    items.sort(key=key)  # stable: the collection order within each group
