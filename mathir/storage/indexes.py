"""The build-or-reuse protocol of every mathir index (:func:`build_or_reuse`): its
``manifest.json``, PyTerrier's artifact metadata (``pt_meta.json``) and the files a
PyTerrier package of an index holds (:func:`package_files`).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from mathir._version import __version__
from mathir.errors import InputError
from mathir.storage.files import USER_OS_ERRORS, atomic_directory, atomic_file, exclusive_lock


def build_or_reuse(path: str | Path, wanted: dict, build_into: Callable[[Path], dict | None], *,
                   overwrite: bool = False, pt_meta: dict | None = None) -> bool:
    """Build the output directory ``path`` unless its manifest already holds ``wanted``.

    The one protocol of every mathir index; returns whether it built. An up-to-date
    directory is reused without locking, so a read-only index opens with no file created
    beside it. Otherwise, under :func:`exclusive_lock`, the manifest is checked again (a
    concurrent process may have built it while this one waited), temporaries of killed
    builds are removed, and ``build_into(tmp)`` writes the files into a temporary
    directory (:func:`atomic_directory`) that replaces ``path`` when it returns;
    ``build_into`` returns the manifest's own fields (counts), and ``manifest.json`` then
    holds ``wanted``, those and ``mathir_version``. ``overwrite`` rebuilds even an up-to-date directory.

    ``pt_meta`` is PyTerrier's artifact metadata (``pt_meta.json``: ``type``, ``format``,
    ``package_hint``), which makes the directory loadable by ``pt.Artifact.load``. It is
    written with every build; an up-to-date directory that lacks it (built by an older
    mathir) gets it added in place rather than rebuilt, or, where its folder cannot be
    written, is reused as it is.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "idx"
    >>> build = lambda tmp: {"num_docs": (tmp / "docs.txt").write_text("a b")}
    >>> build_or_reuse(d, {"kind": "demo", "format": 1}, build)
    True
    >>> build_or_reuse(d, {"kind": "demo", "format": 1}, build), read_manifest(d)["num_docs"]
    (False, 3)
    """
    path = Path(path)

    def stale() -> bool:
        existing = read_manifest(path)
        return overwrite or existing is None or any(existing.get(k) != v
                                                    for k, v in wanted.items())

    def lacks_pt_meta() -> bool:
        return pt_meta is not None and _read_json(path / "pt_meta.json") != pt_meta

    # Checked first without the lock, which would create a file beside the index.
    if not stale():
        if lacks_pt_meta():
            _add_pt_meta(path, pt_meta, stale)
        return False
    message = f"cannot write {path.name!r} here"
    existing = read_manifest(path)
    if existing is not None and not overwrite:  # an index out of date: say what changed
        changed = sorted(k for k, v in wanted.items() if existing.get(k) != v)
        message += f" to rebuild it (changed: {', '.join(changed)})"
    with exclusive_lock(path, message=message):
        if not stale():  # built meanwhile by a concurrent process
            return False
        # atomic_directory first removes what killed builds of ``path`` left behind.
        with atomic_directory(path) as tmp:
            extra = build_into(tmp) or {}
            if pt_meta is not None:
                with open(tmp / "pt_meta.json", "w", encoding="utf-8") as f:
                    json.dump(pt_meta, f)
            write_manifest(tmp, {**wanted, **extra, "mathir_version": __version__})
    return True


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _add_pt_meta(path: Path, pt_meta: dict, stale: Callable[[], bool]) -> None:
    """Write ``pt_meta.json`` into the up-to-date index ``path``; skipped when unwritable."""
    try:
        with exclusive_lock(path):
            # A concurrent rebuild (which writes it too) may have replaced the index.
            if not stale() and _read_json(path / "pt_meta.json") != pt_meta:
                with atomic_file(path / "pt_meta.json") as f:
                    json.dump(pt_meta, f)
    except InputError:
        pass  # a read-only index: searchable through its class, not pt.Artifact.load
    except OSError as e:
        if e.errno not in USER_OS_ERRORS:
            raise


def artifact_meta(artifact: type) -> dict:
    """The ``pt_meta.json`` of a mathir artifact class (``ARTIFACT_TYPE``, ``ARTIFACT_FORMAT``).

    ``pt.Artifact.load(path)`` reads it and opens the class registered as the entry point
    ``TYPE.FORMAT`` of the group ``pyterrier.artifact``.

    >>> class Demo:
    ...     ARTIFACT_TYPE, ARTIFACT_FORMAT = "sparse_index", "mathir.demo"
    >>> artifact_meta(Demo)
    {'type': 'sparse_index', 'format': 'mathir.demo', 'package_hint': 'mathir'}
    """
    return {"type": artifact.ARTIFACT_TYPE, "format": artifact.ARTIFACT_FORMAT,
            "package_hint": "mathir"}


def portable_manifest(manifest: object) -> object:
    """``manifest`` without the absolute paths of the inputs it fingerprints: the
    ``path`` of every :func:`file_fingerprint` (a dict holding ``sha256``) is left out,
    its size and digest kept. What an index package holds (:func:`package_files`).

    >>> portable_manifest({"collection": {"path": "/data/Posts.xml", "size": 3, "sha256": "ab"},
    ...                    "model": "/models/m"})
    {'collection': {'size': 3, 'sha256': 'ab'}, 'model': '/models/m'}
    """
    if isinstance(manifest, dict):
        fingerprint = "sha256" in manifest
        return {k: portable_manifest(v) for k, v in manifest.items()
                if not (fingerprint and k == "path")}
    if isinstance(manifest, list):
        return [portable_manifest(v) for v in manifest]
    return manifest


def package_files(root: str | Path, keep: Callable[[str], bool] = lambda rel: True,
                  pt_meta: dict | None = None) -> Iterator[tuple[str, str | io.BytesIO]]:
    """The files of the index folder ``root`` that a PyTerrier package of it holds, as
    ``pt.Artifact.build_package`` takes them: ``(relative path, file path or bytes)``.

    Left out: hidden names (mathir's locks and temporaries), logs (``*.log``: PISA's
    console output) and what ``keep(relative path)`` refuses; ``manifest.json`` is
    :func:`portable_manifest` of the index's, so that no absolute path of the machine
    that built it travels with the package. ``pt_meta`` (:func:`artifact_meta`) is
    added as ``pt_meta.json`` where the folder lacks one (an index built before mathir
    wrote it).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> for name in (".d.lock", "pisa.log", "data.bin", "manifest.json"):
    ...     _ = (d / name).write_text("{}")
    >>> [rel for rel, _ in package_files(d)]
    ['data.bin', 'manifest.json']
    """
    root = Path(root)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            full = Path(folder) / name
            rel = full.relative_to(root).as_posix()
            if name.startswith(".") or name.endswith(".log") or not keep(rel):
                continue
            if rel == "manifest.json":
                data = json.dumps(portable_manifest(read_manifest(root)), indent=2,
                                  sort_keys=True)
                yield rel, io.BytesIO(data.encode("utf-8"))
            else:
                yield rel, str(full)
    if pt_meta is not None and not (root / "pt_meta.json").is_file():
        yield "pt_meta.json", io.BytesIO(json.dumps(pt_meta).encode("utf-8"))


def read_manifest(directory: str | Path) -> dict | None:
    """The ``manifest.json`` of an output directory, or None when absent or unreadable."""
    p = Path(directory) / "manifest.json"
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_manifest(directory: str | Path, manifest: dict) -> None:
    """Write ``manifest.json`` into ``directory`` (atomically)."""
    with atomic_file(Path(directory) / "manifest.json") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
