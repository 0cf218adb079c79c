"""Atomic output: files and directories appear whole or not at all.

A writer works on a temporary sibling and renames it into place, so an interrupted
run or index build leaves the previous output intact. A temporary's name carries its
writer's process id and host (``.run.tsv.4242-1a2b3c4d.k3j_x9q1.tmp``): the next writer
of the same path removes the temporaries of writers that are dead, never those of a
live concurrent process.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import hashlib
import io
import json
import marshal
import os
import re
import shutil
import socket
import stat as stat_module
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from mathir._version import __version__
from mathir.errors import InputError

# Errors of the file system a user can cause or fix (a read-only or full disk, a
# directory where a file is expected): the CLI reports them in one line.
USER_OS_ERRORS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT,
                            errno.EISDIR, errno.ENOTDIR, errno.EEXIST, errno.ENAMETOOLONG})


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _host() -> str:
    return hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]


def _owner() -> str:
    """``PID-HOST`` of this process: the part of a temporary's name that tells its writer."""
    return f"{os.getpid()}-{_host()}"


def _temporary_prefix(path: Path) -> str:
    return f".{path.name}.{_owner()}."


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _stale_temporaries(path: Path) -> list[Path]:
    """Temporaries of ``path`` whose writer is dead (or that an older mathir left, unnamed)."""
    name = re.escape(path.name)
    # mkstemp/mkdtemp's random part has no "." or "-" (tempfile._RandomNameSequence).
    ours = re.compile(rf"\.{name}\.(\d+)-([0-9a-f]{{8}})\.(?:[a-z0-9_]+\.tmp|old)")
    legacy = re.compile(rf"\.{name}\.(?:[a-z0-9_]{{8}}\.tmp|\d+\.old)")
    host = _host()
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    stale = []
    for n in names:
        m = ours.fullmatch(n)
        if m:
            # A temporary of another host cannot be judged from here: left alone.
            if m.group(2) == host and not _pid_alive(int(m.group(1))):
                stale.append(path.parent / n)
        elif legacy.fullmatch(n):
            stale.append(path.parent / n)
    return stale


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


@contextlib.contextmanager
def atomic_file(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it over ``path`` on success.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "run.tsv"
    >>> with atomic_file(p) as f:
    ...     _ = f.write("A.1\\t1\\t1\\t1.0\\tx\\n")
    >>> p.read_text().startswith("A.1")
    True
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path)
        fd, tmp = tempfile.mkstemp(prefix=_temporary_prefix(path), suffix=".tmp",
                                   dir=path.parent)
    except OSError as e:
        raise _user_os_error(e, f"cannot write {path.name!r} here", path.parent) from None
    os.chmod(tmp, 0o666 & ~_umask())
    kwargs = {} if "b" in mode else {"encoding": encoding, "newline": ""}
    try:
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Yield a temporary directory that replaces ``path`` when the block succeeds.

    The old directory (if any) is removed only after the new one is in place.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path)
        tmp = Path(tempfile.mkdtemp(prefix=_temporary_prefix(path), suffix=".tmp",
                                    dir=path.parent))
    except OSError as e:
        raise _user_os_error(e, f"cannot write {path.name!r} here", path.parent) from None
    os.chmod(tmp, 0o777 & ~_umask())
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if path.exists():
        old = path.parent / f".{path.name}.{_owner()}.old"
        shutil.rmtree(old, ignore_errors=True)
        os.replace(path, old)
    os.replace(tmp, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def scratch_directory(path: str | Path) -> Iterator[Path]:
    """A temporary folder beside ``path`` (named like its temporaries), removed at the end.

    >>> import tempfile, pathlib
    >>> with scratch_directory(pathlib.Path(tempfile.mkdtemp()) / "pisa") as d:
    ...     d.name.startswith(".pisa.")
    True
    """
    path = Path(path)
    remove_stale_temporaries(path)
    tmp = Path(tempfile.mkdtemp(prefix=_temporary_prefix(path), suffix=".tmp", dir=path.parent))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def exclusive_lock(path: str | Path, message: str = "folder not writable") -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` + ``.lock`` (waits for other holders).

    Two experiments building the same index wait for each other; the second then finds
    the index up to date instead of racing to replace it. Only writers lock: a reader
    of a finished index or run never creates the lock file (its folder may be read-only).
    A folder where the lock cannot be created is an :class:`InputError` (``message``).
    """
    import fcntl

    path = Path(path)
    lock = path.parent / f".{path.name}.lock"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        f = open(lock, "a+")  # noqa: SIM115 - closed by the with below
    except OSError as e:
        raise _user_os_error(e, message, path.parent) from None
    with f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


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


def _user_os_error(e: OSError, message: str, path: Path) -> InputError:
    """The InputError to raise for ``e`` when the user can fix it; re-raises ``e`` else."""
    if e.errno not in USER_OS_ERRORS:
        raise e
    return InputError(f"{message} ({e.strerror})", path=path)


def require_writable_dir(path: str | Path, what: str = "output folder") -> Path:
    """Create the folder ``path`` if needed and check that files can be written in it.

    Checked before any work, so that a bad ``--out`` fails at once, not after an hour of
    retrieval; an existing file, a read-only or full disk is an :class:`InputError`.

    >>> require_writable_dir(__file__)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: .../storage.py: output folder is a file, not a folder
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(f"{what} is a file, not a folder", path=p)
    for parent in p.parents:
        if parent.exists() and not parent.is_dir():
            raise InputError(f"{what} {str(p)!r} lies under a file", path=parent)
    try:
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=p):
            pass
    except OSError as e:
        raise _user_os_error(e, f"{what} not writable", p) from None
    return p


def require_output_file(path: str | Path, what: str = "output file") -> Path:
    """Check, before any work, that the file ``path`` can be written (atomically).

    >>> import tempfile
    >>> require_output_file(tempfile.mkdtemp())  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: /tmp/...: output file is a folder; name the file to write
    """
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{what} is a folder; name the file to write", path=p)
    require_writable_dir(p.parent, f"folder of the {what}")
    return p


def remove_stale_temporaries(path: str | Path) -> int:
    """Delete temporaries that killed writers of ``path`` left behind; returns how many.

    A temporary whose writer (the process id in its name) is still alive on this host,
    or that another host wrote, is kept; so is everything when the folder is unwritable.
    :func:`atomic_file` and :func:`atomic_directory` call this before they write.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / ".run.tsv.999999999-00000000.abc.tmp").write_text("other host")
    >>> remove_stale_temporaries(d / "run.tsv")
    0
    """
    n = 0
    for tmp in _stale_temporaries(Path(path)):
        try:
            _remove(tmp)
        except OSError:
            continue
        n += 1
    return n


def _walk_once(root: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(root)`` following links, entering each folder once (a link loop is
    walked one time round) and skipping folders that cannot be read; pruning or sorting
    the yielded ``dirs`` steers the walk, as with ``os.walk``."""
    seen: set[tuple[int, int]] = set()
    for d, dirs, files in os.walk(root, followlinks=True):
        try:
            st = os.stat(d)
        except OSError:
            dirs[:] = []
            continue
        if (st.st_dev, st.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        yield d, dirs, files


def walk_glob(root: str | Path, pattern: str) -> list[Path]:
    """Like ``sorted(Path(root).rglob(pattern))``, but following symbolic links to folders.

    ``Path.rglob`` does not enter a linked folder (Python < 3.13), so a data directory
    made of links would find nothing. ``os.walk(followlinks=True)`` does; a link back to
    an ancestor (a loop) is entered once, by remembering each real folder's device and
    inode. Matches are files and folders whose name matches ``pattern``.

    >>> from mathir.samples import arqmath_sample
    >>> [p.name for p in walk_glob(arqmath_sample().posts.parent, "Posts.V1.3.xml")]
    ['Posts.V1.3.xml']
    """
    root = Path(root)
    hits: list[Path] = []
    for d, dirs, files in _walk_once(root):
        dirs.sort()
        for n in (*dirs, *files):
            if fnmatch.fnmatchcase(n, pattern):
                hits.append(Path(d) / n)
    return sorted(hits)


# --- fingerprints of input files ---------------------------------------------------------
# A fingerprint is the SHA-256 of every byte of the input (of each file of a folder), so
# that any edit is noticed, also one that keeps the size and the modification time, as
# ``cp -p`` and ``rsync -a`` deliveries do (the first and last MiB, sizes and mtimes used
# to be hashed, and a stale index was reused). Reading a 15 GB collection on every open
# would cost minutes, so each file's digest is cached on disk, keyed by the file's
# device, inode, size, mtime and ctime: an unchanged file is not read again.
#
# The ctime is what makes the cache sound. ``cp -p``, ``rsync -a`` and ``touch -d`` can set
# a file's mtime back, but no program can set its ctime: the kernel sets it to the current
# time on every write, every ``utime`` and every rename into place, and a new file (rsync
# writes one and renames it, which may reuse a freed inode number) gets a new one. So a
# cached entry whose key still matches describes an unchanged file -- unless the file
# changed within the same tick of the file system's clock as the ctime we saw (git's
# "racy" entries): a file whose ctime is less than :data:`RACY_NS` older than the moment
# we started reading it is hashed but not cached, and is hashed again on the next open.
#
# What the key cannot see: a write through a shared memory map (``mmap`` MAP_SHARED) to a
# page that is already dirty does not update mtime or ctime on Linux (the kernel stamps
# them when a clean page is first written, and tmpfs not at all), so such an edit keeps
# the cached digest. ``MATHIR_REDIGEST=1`` (:data:`REDIGEST_ENV`) reads every byte again
# and replaces the cache; so does deleting ``fingerprints/`` under :func:`cache_dir`.
#
# Reopening: a folder's cache also holds the digest of its *listing* -- every file's
# relative name and key, in the order the folders list them -- and the fingerprint it
# gave. When the listing is the same, the fingerprint is (each key matches an entry that
# gave it), so an unchanged folder costs one ``stat`` per file and no read of the cached
# digests. The listing is recorded only when no file was racy.

#: Environment variable naming the folder of mathir's caches (default below).
CACHE_ENV = "MATHIR_CACHE_DIR"
#: Environment variable: set (not to "" or "0"), every fingerprint reads every byte again
#: and replaces its cached digests (after edits the stat key cannot see, see above).
REDIGEST_ENV = "MATHIR_REDIGEST"
#: A file changed this recently (ns) before it was hashed is not cached (see above).
RACY_NS = 2_000_000_000
_CACHE_HEADER = b"mathir-file-digests 2"
# Files' stat records (relative name, device, inode, size, mtime, ctime) marshalled and
# hashed per this many (version 2: no back-references, so equal records give equal bytes).
_CHUNK = 65_536
_MARSHAL = 2


def cache_dir() -> Path:
    """The folder of mathir's caches: ``$MATHIR_CACHE_DIR``, else ``$XDG_CACHE_HOME/mathir``,
    else ``~/.cache/mathir``. File digests (:func:`file_fingerprint`) live in its
    ``fingerprints`` folder, one file per fingerprinted file or folder; deleting it
    is always safe (the next open reads the collection once more).

    >>> (cache_dir() / "fingerprints").is_absolute() or "MATHIR_CACHE_DIR" in os.environ
    True
    """
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "mathir"


INDEX_ENV = "MATHIR_INDEX_DIR"


def index_root() -> Path:
    """Where every path builds and reuses indexes unless told another folder:
    ``$MATHIR_INDEX_DIR``, else ``indexes`` under :func:`cache_dir`. ``pt.get_dataset(...)
    .get_index()``, :func:`mathir.run_experiment`, ``mathir experiment``, ``mathir run``
    and ``mathir index`` without ``--index`` share it, so one collection is indexed once
    (an index is rebuilt when its collection's content or its parameters change).

    >>> index_root().name == "indexes" or INDEX_ENV in os.environ
    True
    """
    if os.environ.get(INDEX_ENV):
        return Path(os.environ[INDEX_ENV]).expanduser()
    return cache_dir() / "indexes"


def redigest_forced() -> bool:
    """Whether ``$MATHIR_REDIGEST`` (:data:`REDIGEST_ENV`) asks every fingerprint to read
    every byte again instead of trusting the cached digests.

    >>> os.environ.get(REDIGEST_ENV, "") in ("", "0") or redigest_forced()
    True
    """
    return os.environ.get(REDIGEST_ENV, "") not in ("", "0")


def _root_id(root: Path) -> str:
    """Hex SHA-256 of the path's bytes (any name: newlines, undecodable bytes)."""
    return hashlib.sha256(os.fsencode(str(root))).hexdigest()


def _digest_cache_path(root: Path) -> Path:
    return cache_dir() / "fingerprints" / f"{_root_id(root)[:32]}.digests"


def _cache_head(root: Path) -> bytes:
    return _CACHE_HEADER + b"\t" + _root_id(root).encode() + b"\n"


# A cache file: the head (format, the root's id); the summary line (its SHA-256, then
# JSON: the listing's digest or null, the fingerprint it gave, the payload's SHA-256); the
# payload: marshalled (device, inode, size, mtime, ctime, 32-byte digest) records. Both
# checksums are verified before anything is believed or unmarshalled.
_CACHE_ERRORS = (OSError, ValueError, KeyError, TypeError, IndexError, EOFError)


def _read_digest_cache(root: Path, digests: bool = True) -> tuple[dict | None, dict[tuple, str]]:
    """The summary and the ``stat key -> hex digest`` entries cached for ``root`` (the
    entries only with ``digests``); None and no entries when the cache is absent,
    unreadable, written for another path, truncated or otherwise corrupt (it is only a
    cache; a corrupt payload under a sound summary loses the entries only)."""
    try:
        with open(_digest_cache_path(root), "rb") as f:
            head = f.readline()
            if head != _cache_head(root):
                return None, {}
            line = f.readline()
            check, _, text = line[:-1].partition(b"\t")
            if not line.endswith(b"\n") or hashlib.sha256(head + text).hexdigest().encode() != check:
                return None, {}
            summary = json.loads(text)
            if not isinstance(summary, dict):
                return None, {}
            if not digests:
                return summary, {}
            payload = f.read()
    except _CACHE_ERRORS:
        return None, {}
    try:
        if hashlib.sha256(payload).hexdigest() != summary["payload"]:
            return summary, {}
        return summary, {tuple(r[:5]): r[5].hex() for r in marshal.loads(payload)}
    except _CACHE_ERRORS:
        return summary, {}


def _write_digest_cache(root: Path, summary: dict, entries: dict[tuple, str]) -> None:
    """Replace ``root``'s cache file (temporary file, then rename: concurrent writers
    each leave a whole file, the last one wins). A cache that cannot be written (a
    read-only home) is skipped: fingerprints stay right, only slower."""
    path = _digest_cache_path(root)
    payload = marshal.dumps([(*k, bytes.fromhex(v)) for k, v in entries.items()], _MARSHAL)
    text = json.dumps({**summary, "entries": len(entries),
                       "payload": hashlib.sha256(payload).hexdigest()}, sort_keys=True).encode()
    head = _cache_head(root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=_temporary_prefix(path), suffix=".tmp",
                                   dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(head + hashlib.sha256(head + text).hexdigest().encode() + b"\t"
                        + text + b"\n")
                f.write(payload)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        with contextlib.suppress(OSError):  # the text cache of mathir before 2
            path.with_suffix(".tsv").unlink()
    except OSError:
        pass


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, streamed (bounded memory).

    >>> len(sha256_file(__file__))
    64
    """
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _stat_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _list_folder(root: Path) -> tuple[list[bytes], str]:
    """The stat records ``(relative name, device, inode, size, mtime_ns, ctime_ns)`` of
    every regular file under the folder ``root`` -- links to files and folders followed,
    each real folder entered once (a loop walked one time round, in ``os.walk``'s order,
    as :func:`walk_glob`), folders that cannot be read and dangling links skipped -- in
    the order the folders list them, marshalled in chunks; and their SHA-256.

    One ``stat`` per entry, relative to its open folder, and a tuple: what reopening an
    unchanged folder costs (``os.listdir`` and ``os.stat(name, dir_fd=)`` measured
    cheaper than ``os.scandir`` and ``DirEntry.stat`` with the tuple built).
    """
    h = hashlib.sha256()
    blobs: list[bytes] = []
    chunk: list[tuple] = []
    seen: set[tuple[int, int]] = set()
    folders = [(str(root), "")]
    stat, is_reg, is_dir = os.stat, stat_module.S_ISREG, stat_module.S_ISDIR
    while folders:
        folder, prefix = folders.pop()
        subfolders = []
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:  # a folder that cannot be read (as os.walk skips it)
            continue
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            names = os.listdir(fd)
            for name in names:
                try:
                    st = stat(name, dir_fd=fd)
                except OSError:  # a dangling link, or removed meanwhile: not content
                    continue
                if is_reg(st.st_mode):
                    chunk.append((prefix + name, st.st_dev, st.st_ino, st.st_size,
                                  st.st_mtime_ns, st.st_ctime_ns))
                    if len(chunk) == _CHUNK:
                        blobs.append(marshal.dumps(chunk, _MARSHAL))
                        h.update(blobs[-1])
                        chunk = []
                elif is_dir(st.st_mode):
                    subfolders.append((os.path.join(folder, name), prefix + name + os.sep))
        except OSError:
            continue
        finally:
            os.close(fd)
        folders.extend(reversed(subfolders))
    if chunk:
        blobs.append(marshal.dumps(chunk, _MARSHAL))
        h.update(blobs[-1])
    return blobs, h.hexdigest()


def file_fingerprint(path: str | Path) -> dict:
    """The identity of a file or folder's content: the SHA-256 of every byte.

    A file: ``{"path", "size", "sha256"}`` (``sha256`` as ``sha256sum`` prints it). A
    folder: ``{"path", "size", "files", "sha256"}``, the digest of each file's relative
    name, size and SHA-256. Any edit changes it, also one that keeps sizes and
    modification times (``cp -p``, ``rsync -a``); modification times alone do not.
    Each file's digest is cached by device, inode, size, mtime and ctime under
    :func:`cache_dir` (see the comment above), so an unchanged collection is not read
    again: reopening costs a ``stat`` per file. ``MATHIR_REDIGEST=1`` reads every byte
    again (after a write through a shared memory map, which the ``stat`` may not show).

    >>> fp = file_fingerprint(__file__)
    >>> sorted(fp), fp["sha256"] == sha256_file(__file__)
    (['path', 'sha256', 'size'], True)
    """
    p = Path(path).resolve()
    is_dir = p.is_dir()
    if is_dir:
        blobs, listing = _list_folder(p)
    else:
        blobs = [marshal.dumps([("", *_stat_key(os.stat(p)))], _MARSHAL)]
        listing = hashlib.sha256(blobs[0]).hexdigest()
    reread = redigest_forced()
    summary, cached = (None, {}) if reread else _read_digest_cache(p, digests=False)
    if summary is not None and summary.get("listing") == listing \
            and isinstance(summary.get("fingerprint"), dict):
        return _fingerprint_dict(p, summary["fingerprint"])  # every key as when it was cached
    if not reread:
        summary, cached = _read_digest_cache(p)
    records = [r for blob in blobs for r in marshal.loads(blob)]
    records.sort()  # by relative name (each name once)
    entries: dict[tuple, str] = {}
    complete = True  # every digest cached: the listing can stand for them
    h = hashlib.sha256()
    size = count = 0
    digest = ""
    for record in records:
        rel, key = record[0], record[1:]
        digest = cached.get(key)
        if digest is None:
            full = os.path.join(p, rel) if rel else str(p)
            started = time.time_ns()
            try:
                digest = sha256_file(full)
            except FileNotFoundError:
                if not is_dir:
                    raise
                complete = False  # removed meanwhile: not content
                continue
            try:
                after = _stat_key(os.stat(full))
            except OSError:
                after = None
            # Cached only when unchanged while read and not changed recently (racy).
            if after == key and key[4] < started - RACY_NS:
                entries[key] = digest
            else:
                complete = False
        else:
            entries[key] = digest
        size += key[2]
        count += 1
        if is_dir:
            h.update(f"{rel}\0{key[2]}\0{digest}\n".encode("utf-8", "surrogateescape"))
    fingerprint = ({"size": size, "files": count, "sha256": h.hexdigest()} if is_dir
                   else {"size": size, "sha256": digest})
    wanted = {"listing": listing if complete else None, "fingerprint": fingerprint}
    if summary is None or any(summary.get(k) != v for k, v in wanted.items()) \
            or entries.keys() != cached.keys():
        _write_digest_cache(p, wanted, entries)
    return _fingerprint_dict(p, fingerprint)


def _fingerprint_dict(path: Path, fingerprint: dict) -> dict:
    """``{"path", "size", ["files",] "sha256"}`` in this order, however the cache stored
    it: the order is part of every fingerprint that hashes the dict (run identities
    pickle it), so a fingerprint read from the cache must equal one just computed."""
    order = ("size", "files", "sha256")
    return {"path": str(path), **{k: fingerprint[k] for k in order if k in fingerprint},
            **{k: v for k, v in fingerprint.items() if k not in order}}


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
