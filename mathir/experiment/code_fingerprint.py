"""Code fingerprints: the SHA-256 of what a pipeline computes with (its declared state
and the code it reaches), part of a run's identity (:mod:`mathir.experiment.identity`)."""

from __future__ import annotations

import copyreg
import functools
import hashlib
import json
import os
import pickle
import platform
import site
import sys
import sysconfig
import types
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from mathir._version import __version__
from mathir.storage import file_fingerprint, sha256_file


class NotFingerprintable(ValueError):
    """An object whose content cannot be hashed (an open file, a lock, a C object ...)."""


def index_checksum(index_dir: str | Path | None) -> str | None:
    """Checksum of an index directory's ``manifest.json`` (which fingerprints its input)."""
    if index_dir is None:
        return None
    m = Path(index_dir) / "manifest.json"
    return sha256_file(m) if m.exists() else None


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
    'mathir.experiment.code_fingerprint:qualified_name'
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
