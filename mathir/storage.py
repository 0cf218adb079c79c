"""Atomic output: files and directories appear whole or not at all.

A writer works on a temporary sibling and renames it into place, so an interrupted
run or index build leaves the previous output intact.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    os.chmod(tmp, 0o777 & ~_umask())
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if path.exists():
        old = path.parent / f".{path.name}.{os.getpid()}.old"
        shutil.rmtree(old, ignore_errors=True)
        os.replace(path, old)
    os.replace(tmp, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def exclusive_lock(path: str | Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` + ``.lock`` (waits for other holders).

    Two experiments building the same index wait for each other; the second then finds
    the index up to date instead of racing to replace it.
    """
    import fcntl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.parent / f".{path.name}.lock"
    with open(lock, "a+") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def remove_stale_temporaries(path: str | Path) -> int:
    """Delete temporaries that a killed writer of ``path`` left behind; returns how many.

    Call it only while holding :func:`exclusive_lock` on ``path``, so that no live
    writer's temporary is removed.
    """
    path = Path(path)
    n = 0
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        n += 1
    return n


def file_fingerprint(path: str | Path, sample_bytes: int = 1 << 20) -> dict:
    """A cheap identity of a file or directory: size, mtime and a hash of its ends.

    Hashing a whole 15 GB collection on every run would cost minutes; size, modification
    time and the first and last MiB catch every realistic change.

    >>> sorted(file_fingerprint(__file__))
    ['mtime_ns', 'path', 'sha256_ends', 'size']
    """
    p = Path(path).resolve()
    if p.is_dir():
        files = sorted(x for x in p.rglob("*") if x.is_file())
        h = hashlib.sha256()
        size = 0
        mtime = 0
        for f in files:
            st = f.stat()
            size += st.st_size
            mtime = max(mtime, st.st_mtime_ns)
            h.update(f"{f.relative_to(p)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        return {"path": str(p), "size": size, "mtime_ns": mtime, "sha256_ends": h.hexdigest()}
    st = p.stat()
    h = hashlib.sha256()
    with open(p, "rb") as f:
        h.update(f.read(sample_bytes))
        if st.st_size > 2 * sample_bytes:
            f.seek(-sample_bytes, os.SEEK_END)
        h.update(f.read(sample_bytes))
    return {"path": str(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256_ends": h.hexdigest()}


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
