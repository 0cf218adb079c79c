"""The build-or-reuse protocol of every mathir index (:func:`build_or_reuse`): its
``manifest.json``, the records of its data files checked at every open
(:func:`data_file_problems`, :func:`verify_index`), PyTerrier's artifact metadata
(``pt_meta.json``) and the files a PyTerrier package of an index holds
(:func:`package_files`).

Every build records each data file's size, modification and change times (ns) and
SHA-256 in the manifest (``data_files``, :func:`record_data_files`). Opening an index
costs one ``stat`` per recorded file: a file whose size differs, or that is missing, is
damaged without reading it; one whose mtime or ctime differs is read and its SHA-256
compared (cached by its stat key, :func:`~mathir.storage.fingerprints.file_fingerprint`,
so a copied index is read once); ``MATHIR_REDIGEST=1`` reads every file at every open
and :func:`verify_index` (``mathir verify``) always. A damaged index is rebuilt by
:func:`build_or_reuse` (with a warning) and an :class:`InputError` where it is opened by
its path (:func:`require_data_files`): never used as it is.
"""

from __future__ import annotations

import io
import json
import os
import stat
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mathir._version import __version__
from mathir.errors import InputError
from mathir.storage.files import USER_OS_ERRORS, atomic_directory, atomic_file, exclusive_lock
from mathir.storage.fingerprints import file_fingerprint, redigest_forced, sha256_file

#: The manifest's record of the index's data files (:func:`record_data_files`).
DATA_FILES = "data_files"
# Top-level files that are not data: written after the records (the manifest) or added
# in place to an index built before mathir wrote it (pt_meta.json).
_NOT_DATA = frozenset({"manifest.json", "pt_meta.json"})


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
    holds ``wanted``, those, ``mathir_version`` and the records of its data files
    (``data_files``, :func:`record_data_files`). ``overwrite`` rebuilds even an up-to-date
    directory. A directory whose manifest holds ``wanted`` but whose data files differ
    from their records (:func:`data_file_problems`: truncated, edited, missing) is rebuilt
    with a warning naming them; one that records none (built before mathir recorded
    them) is rebuilt too.

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

    def stale() -> str | None:
        """Why ``path`` must be built: "" (none there, or ``overwrite``), what changed, or
        its damaged data files; None when it is up to date."""
        existing = read_manifest(path)
        if overwrite or existing is None:
            return ""
        changed = sorted(k for k, v in wanted.items() if existing.get(k) != v)
        if changed:
            return f"changed: {', '.join(changed)}"
        problems = data_file_problems(path, existing)
        if problems is None:  # built before mathir recorded its data files
            return f"changed: {DATA_FILES}"
        return "; ".join(problems) if problems else None

    def lacks_pt_meta() -> bool:
        return pt_meta is not None and _read_json(path / "pt_meta.json") != pt_meta

    # Checked first without the lock, which would create a file beside the index.
    reason = stale()
    if reason is None:
        if lacks_pt_meta():
            _add_pt_meta(path, pt_meta, stale)
        return False
    message = f"cannot write {path.name!r} here"
    if reason:  # an index out of date or damaged: say what changed
        message += f" to rebuild it ({reason})"
    with exclusive_lock(path, message=message):
        reason = stale()
        if reason is None:  # built meanwhile by a concurrent process
            return False
        if reason and not reason.startswith("changed: "):  # damaged: said, as it is rebuilt
            warnings.warn(f"{path}: its data files changed since it was built ({reason}): "
                          "rebuilding it", stacklevel=3)
        # atomic_directory first removes what killed builds of ``path`` left behind.
        with atomic_directory(path) as tmp:
            extra = build_into(tmp) or {}
            if pt_meta is not None:
                with open(tmp / "pt_meta.json", "w", encoding="utf-8") as f:
                    json.dump(pt_meta, f)
            write_manifest(tmp, {**wanted, **extra, "mathir_version": __version__,
                                 DATA_FILES: record_data_files(tmp)})
    return True


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _add_pt_meta(path: Path, pt_meta: dict, stale: Callable[[], str | None]) -> None:
    """Write ``pt_meta.json`` into the up-to-date index ``path``; skipped when unwritable."""
    try:
        with exclusive_lock(path):
            # A concurrent rebuild (which writes it too) may have replaced the index.
            if stale() is None and _read_json(path / "pt_meta.json") != pt_meta:
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
    that built it travels with the package, and records only the data files it ships. ``pt_meta`` (:func:`artifact_meta`) is
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
    for rel, full in _index_files(root):
        if not keep(rel):
            continue
        if rel == "manifest.json":
            manifest = portable_manifest(read_manifest(root))
            if isinstance(manifest, dict) and isinstance(manifest.get(DATA_FILES), dict):
                # the records of the files it ships: what opening the package checks
                manifest[DATA_FILES] = {k: v for k, v in manifest[DATA_FILES].items() if keep(k)}
            data = json.dumps(manifest, indent=2, sort_keys=True)
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


def _index_files(root: Path) -> Iterator[tuple[str, Path]]:
    """``(relative path, path)`` of each file under the index folder ``root``, sorted by
    folder: no hidden name (locks, temporaries) and no log (``*.log``)."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or name.endswith(".log"):
                continue
            full = Path(folder) / name
            yield full.relative_to(root).as_posix(), full


def record_data_files(directory: str | Path) -> dict[str, dict]:
    """The record of each data file of the index folder ``directory`` (every file but
    hidden names, logs and the top-level ``manifest.json`` and ``pt_meta.json``): its size,
    mtime and ctime (ns) and SHA-256, by relative path. :func:`build_or_reuse` writes it
    into the manifest (``data_files``); opening the index checks it
    (:func:`data_file_problems`).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "idf.npy").write_bytes(b"abc")
    >>> record = record_data_files(d)["idf.npy"]
    >>> record["size"], record["sha256"][:12]
    (3, 'ba7816bf8f01')
    """
    records = {}
    for rel, full in _index_files(Path(directory)):
        if rel in _NOT_DATA:
            continue
        st = os.stat(full)
        records[rel] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns,
                        "ctime_ns": st.st_ctime_ns, "sha256": sha256_file(full)}
    return records


def data_file_problems(directory: str | Path, manifest: dict | None = None, *,
                       digests: bool | None = None) -> list[str] | None:
    """How the data files of the index folder ``directory`` differ from the records in its
    manifest (``manifest``: default, read from the folder), one line per damaged file:
    ``"tfidf/idf.npy: 1,234 bytes, recorded 5,678"``, ``"...: missing"``, ``"...: digest
    differs"``; ``[]`` when every file matches; None when the manifest records none (an
    index built before mathir recorded them).

    Costs one ``stat`` per file. A file is read only where its size matches the record
    but its mtime or ctime does not (an edit that kept the size, a ``touch``, a copy); its
    SHA-256 is then cached by its stat key (:func:`file_fingerprint`), so a copied index
    is read once. ``digests=True`` (default: ``MATHIR_REDIGEST``, :func:`redigest_forced`)
    reads every file whatever its stat: an edit that restored both times (only
    ``utime`` restores an mtime, and no program a ctime) or that went through a shared
    memory map (which may not touch them) is seen only so.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "idf.npy").write_bytes(b"abc")
    >>> manifest = {DATA_FILES: record_data_files(d)}
    >>> data_file_problems(d, manifest)
    []
    >>> _ = (d / "idf.npy").write_bytes(b"ab")
    >>> data_file_problems(d, manifest), data_file_problems(d, {})
    (['idf.npy: 2 bytes, recorded 3'], None)
    """
    root = Path(directory)
    manifest = read_manifest(root) if manifest is None else manifest
    records = manifest.get(DATA_FILES) if isinstance(manifest, dict) else None
    if not isinstance(records, dict):
        return None
    every = redigest_forced() if digests is None else digests
    problems = []
    for rel, record in sorted(records.items()):
        problem = _file_problem(root / rel, record, every)
        if problem:
            problems.append(f"{rel}: {problem}")
    return problems


def _file_problem(full: Path, record: object, every: bool) -> str | None:
    """What differs between the file ``full`` and its ``record``; None when it matches."""
    if not isinstance(record, dict) or not isinstance(record.get("size"), int) \
            or not isinstance(record.get("sha256"), str):
        return "its record in manifest.json is unreadable"
    try:
        st = os.stat(full)
    except FileNotFoundError:
        return "missing"
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    if not stat.S_ISREG(st.st_mode):
        return "not a file"
    if st.st_size != record["size"]:
        return f"{st.st_size:,} bytes, recorded {record['size']:,}"
    if not every and (st.st_mtime_ns, st.st_ctime_ns) == (record.get("mtime_ns"),
                                                          record.get("ctime_ns")):
        return None
    try:
        digest = sha256_file(full) if every else file_fingerprint(full)["sha256"]
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    return None if digest == record["sha256"] else "digest differs"


def require_data_files(directory: str | Path, manifest: dict | None = None) -> None:
    """Raise an :class:`InputError` naming each data file of the index folder ``directory``
    that differs from its record (:func:`data_file_problems`); warn when its manifest
    records none (built before mathir recorded them: they are not verified). What every
    index class runs when it is opened by its path (``AnswerIndex(path)``,
    ``pt.Artifact.load(path)``).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "idf.npy").write_bytes(b"abc")
    >>> manifest = {DATA_FILES: record_data_files(d)}
    >>> (d / "idf.npy").unlink()
    >>> require_data_files(d, manifest)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    mathir.errors.InputError: ...: the index's data files differ from those it was built with: idf.npy: missing (...)
    """
    problems = data_file_problems(directory, manifest)
    if problems is None:
        warnings.warn(f"{directory}: the index was built before mathir recorded its data "
                      "files: they are not verified (build it again to record them)",
                      stacklevel=3)
    elif problems:
        raise InputError("the index's data files differ from those it was built with: "
                         f"{'; '.join(problems)} (build it again: its builder, or `mathir "
                         "index`, rebuilds it)", path=directory)


@dataclass
class IndexVerification:
    """What :func:`verify_index` found: each recorded file's relative path and size, the
    damaged ones (one line each, as :func:`data_file_problems` writes them) and the files
    the index holds beyond its records (written after its build: BM25 data of other
    parameters, caches), which are not verified."""

    path: Path
    files: list[tuple[str, int]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every recorded file matches its record."""
        return not self.problems

    @property
    def size(self) -> int:
        """Bytes recorded (and read)."""
        return sum(size for _, size in self.files)


def verify_index(path: str | Path) -> IndexVerification:
    """Read every data file of the index folder ``path`` and compare its size and SHA-256
    with the records its manifest holds (``mathir verify``): unlike opening it, which reads
    a file only where its ``stat`` changed, this sees any edit. An :class:`InputError`
    where ``path`` holds no mathir manifest or no records (an index built before mathir
    recorded them).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "idf.npy").write_bytes(b"abc")
    >>> write_manifest(d, {"kind": "demo", DATA_FILES: record_data_files(d)})
    >>> v = verify_index(d)
    >>> v.ok, v.files
    (True, [('idf.npy', 3)])
    >>> _ = (d / "idf.npy").write_bytes(b"abd")
    >>> verify_index(d).problems
    ['idf.npy: digest differs']
    """
    path = Path(path)
    if not path.is_dir():
        raise InputError("no such index folder", path=path)
    manifest = read_manifest(path)
    if manifest is None:
        raise InputError("not a mathir index (no readable manifest.json)", path=path)
    problems = data_file_problems(path, manifest, digests=True)
    if problems is None:
        raise InputError("the index was built before mathir recorded its data files: nothing "
                         "to verify (build it again to record them)", path=path)
    records = manifest[DATA_FILES]
    files = [(rel, r.get("size", 0) if isinstance(r, dict) else 0)
             for rel, r in sorted(records.items())]
    unrecorded = [rel for rel, _ in _index_files(path)
                  if rel not in records and rel not in _NOT_DATA]
    return IndexVerification(path, files, problems, unrecorded)
