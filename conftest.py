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
  of ``tests/conftest.py``) built there: each sample is indexed once per run, whichever
  xdist worker asks first.
* Speed, no value changed: statsmodels' Holm correction does not run a full garbage
  collection in this process; under pytest-xdist the ``slow`` tests start first and each
  worker's PyTorch uses one thread.
* Order: every test (doctests too) must leave the process as it found it (see
  :func:`process_state`): one that changes the environment, ``sys.path``, the working
  folder, the root logger's level, PyTorch's default dtype or thread count, or the
  handling of subnormal floats errors at its teardown, naming what it changed.
  pytest-randomly runs the tests in a random order (its seed in the header); rerun one
  with ``-p randomly --randomly-seed=N``, or keep the files' order with ``-p no:randomly``.
"""

from __future__ import annotations

import functools
import gc
import logging
import multiprocessing.util
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
from _pytest.doctest import DoctestItem

#: Names the run's temporary folder; inherited by xdist workers and by the processes the
#: tests start, so they use the folder of the process that made it.
TMP_ENV = "MATHIR_TESTS_TMP"
_OWNED: dict[str, object] = {}
#: what :func:`mathir.models.offline` sets (the tests never download a model)
OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is not None:
        factory.getbasetemp()  # pytest's tmp_path root, chosen before tempfile is redirected
    root = os.environ.get(TMP_ENV)
    if not root or not os.path.isdir(root):
        # multiprocessing's own temporary folder (a fork server's socket) outside the run's
        # folder: this process removes that folder before multiprocessing removes its own at
        # exit (the workers, which remove theirs when they end, may keep it inside)
        multiprocessing.util.get_temp_dir()
        # a short name: Ray's socket paths under it must stay within 107 characters
        root = tempfile.mkdtemp(prefix="mathir-tests-")
        _OWNED.update(root=root, env={k: os.environ.get(k) for k in
                                      (TMP_ENV, "TMPDIR", "MATHIR_CACHE_DIR",
                                       "MATHIR_EXPORT_DIR", *OFFLINE)},
                      tempdir=tempfile.tempdir)
        os.environ[TMP_ENV] = root
        # Collection fingerprints cache file digests (and run_experiment builds indexes)
        # in mathir's cache folder: the tests keep theirs in the run's folder.
        os.environ.setdefault("MATHIR_CACHE_DIR", str(Path(root) / "cache"))
        # The encoders' ONNX/OpenVINO exports too, not beside the installed model: one
        # folder the xdist workers share, so each export is made once per run (under a
        # lock: a worker wanting one that another is making waits, then reuses it).
        os.environ["MATHIR_EXPORT_DIR"] = str(Path(root) / "exports")
        # mathir.models.offline() sets these in the process on its first model load: set
        # for the whole run, every test sees the same environment in any order.
        for key in OFFLINE:
            os.environ.setdefault(key, "1")
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


#: Variables that a library sets once per process, in whichever test first imports it
#: (scikit-learn and Ray, on import; PyTorch, on its first compiled or exported model).
_SET_ON_IMPORT = frozenset({"KMP_DUPLICATE_LIB_OK", "KMP_INIT_AT_FORK", "RAY_CLIENT_MODE",
                            "TORCHINDUCTOR_CACHE_DIR"})


_START_PATH = frozenset(sys.path)
_LIBRARIES = tuple({sysconfig.get_paths()[k] for k in ("purelib", "platlib")})


def process_state() -> dict[str, object]:
    """What a test must leave as it found it, the same in any order the tests run.

    Not here: ``warnings.filters`` (pytest restores them after every test itself) and the
    random generators' state (pytest-randomly reseeds ``random`` and NumPy before every
    test). PyTorch's settings only once a test has imported it (never imported here).

    >>> process_state()["subnormal floats"]
    'kept'
    """
    state: dict[str, object] = {
        "os.environ": {k: v for k, v in os.environ.items() if k not in _SET_ON_IMPORT},
        # Each folder once, without those that libraries add inside their own on import
        # (Ray's third-party folder at the front, onnxruntime.transformers, setuptools'
        # vendored packages): pytest puts the tests' root at the front again then.
        "sys.path": list(dict.fromkeys(p for p in sys.path
                                       if p in _START_PATH or not p.startswith(_LIBRARIES))),
        "working folder": os.getcwd(),
        "root logger level": logging.getLevelName(logging.getLogger().level),
        "logging.disable": logging.root.manager.disable,
        "subnormal floats": _subnormals(),
    }
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "get_default_dtype"):
        state["torch default dtype"] = str(torch.get_default_dtype())
        state["torch threads"] = torch.get_num_threads()
    return state


def _subnormals() -> str:
    """``kept``, or which arithmetic flushes subnormal floats to zero in this thread (a
    runtime that sets the CPU's FTZ/DAZ flags in the caller's thread: OpenVINO did)."""
    tiny = sys.float_info.min  # the smallest normal double; half of it is subnormal
    flushed = [] if tiny / 2 > 0 else ["Python floats"]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if not (numpy.array([tiny]) / 2 > 0).all():
            flushed.append("NumPy float64")
        if not (numpy.array([numpy.finfo(numpy.float32).tiny], numpy.float32) / 2 > 0).all():
            flushed.append("NumPy float32")
    return "flushed to zero: " + ", ".join(flushed) if flushed else "kept"


def state_changes(before: dict[str, object], after: dict[str, object]) -> list[str]:
    """What differs between two :func:`process_state` snapshots, one line each.

    >>> state_changes({"sys.path": ["a"], "os.environ": {"A": "1", "B": "2"}},
    ...               {"sys.path": ["a", "b"], "os.environ": {"A": "3", "C": "4"}})
    ["sys.path: 'b' added", "os.environ: B removed, A '1' -> '3', C='4' added"]
    """
    out = []
    for key, was in before.items():
        now = after.get(key)
        if now == was:
            continue
        if key == "os.environ":
            parts = [f"{k} removed" for k in was if k not in now]
            parts += [f"{k} {was[k]!r} -> {now[k]!r}" for k in was if k in now and now[k] != was[k]]
            parts += [f"{k}={now[k]!r} added" for k in now if k not in was]
            out.append("os.environ: " + ", ".join(parts))
        elif isinstance(was, list) and isinstance(now, list):
            parts = [f"{p!r} removed" for p in was if p not in now]
            parts += [f"{p!r} added" for p in now if p not in was]
            out.append(f"{key}: " + (", ".join(parts) or f"reordered: {now!r}"))
        else:
            out.append(f"{key}: {was!r} -> {now!r}")
    return out


_BEFORE = pytest.StashKey[dict]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item):
    item.stash[_BEFORE] = process_state()  # before any fixture of the test is set up
    return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """After every fixture's teardown: the test errors (at teardown) if the process is
    not as it was before its setup, naming what changed."""
    result = yield
    before = item.stash.get(_BEFORE, None)
    if before is not None:
        after = process_state()
        if "torch default dtype" in after and "torch default dtype" not in before:
            before["torch default dtype"] = "torch.float32"  # imported by this test
        changes = state_changes(before, after)
        if changes:
            pytest.fail("the test left process-wide state changed (tests must pass in any "
                        "order):\n  " + "\n  ".join(changes), pytrace=False)
    return result


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
    patched in statsmodels, where mathir's significance module takes it from when it runs,
    before the first test, for the rest of the run.
    """
    multitest = sys.modules.get("statsmodels.stats.multitest")
    if multitest is None:
        try:
            import statsmodels.stats.multitest as multitest
        except ImportError:  # not installed: nothing to patch
            return
    if not getattr(multitest.multipletests, "without_garbage_collections", False):
        multitest.multipletests = _without_garbage_collections(multitest.multipletests)


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    """The folder where the sample indexes are built once per run (the doctests' working
    folder: ``AnswerIndex.build(arqmath_sample().posts, "sample-answers")`` lands here).

    It lies in the run's folder, which the pytest-xdist workers share: an index one worker
    built, another reuses (each build holds the index's lock, so a second worker waits for
    the first rather than building beside it). Before, each worker built every sample index
    (the dense one twice: about 10 CPU-seconds per worker)."""
    folder = Path(os.environ[TMP_ENV]) / "samples"
    folder.mkdir(exist_ok=True)
    return folder


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
