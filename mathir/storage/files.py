"""Atomic output: files and directories appear whole or not at all.

A writer works on a temporary sibling and renames it into place, so an interrupted
run or index build leaves the previous output intact. A temporary's name carries its
writer's process id and host (``.run.tsv.4242-1a2b3c4d.k3j_x9q1.tmp``): the next writer
of the same path removes the temporaries of writers that are dead, never those of a
live concurrent process. Writers of the same path take turns under
:func:`exclusive_lock`; file-system errors a user can fix (:data:`USER_OS_ERRORS`)
become an :class:`~mathir.errors.InputError` (:func:`user_os_error`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

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


def temporary_prefix(path: Path) -> str:
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
        fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=".tmp",
                                   dir=path.parent)
    except OSError as e:
        raise user_os_error(e, f"cannot write {path.name!r} here", path.parent) from None
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
        tmp = Path(tempfile.mkdtemp(prefix=temporary_prefix(path), suffix=".tmp",
                                    dir=path.parent))
    except OSError as e:
        raise user_os_error(e, f"cannot write {path.name!r} here", path.parent) from None
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
    tmp = Path(tempfile.mkdtemp(prefix=temporary_prefix(path), suffix=".tmp", dir=path.parent))
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
        raise user_os_error(e, message, path.parent) from None
    with f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def user_os_error(e: OSError, message: str, path: Path) -> InputError:
    """The InputError to raise for ``e`` when the user can fix it; re-raises ``e`` else."""
    if e.errno not in USER_OS_ERRORS:
        raise e
    return InputError(f"{message} ({e.strerror})", path=path)


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
