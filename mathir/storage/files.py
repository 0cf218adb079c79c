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
    if path.is_dir():  # before the work, and named as the user knows it
        raise InputError("a folder stands where this file is written", path=path)
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
        try:
            os.replace(tmp, path)
        except OSError as e:  # e.g. a folder made there meanwhile: the user's file, named
            raise user_os_error(e, "cannot replace the file", path) from None
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
    old = path.parent / f".{path.name}.{_owner()}.old"
    moved = False  # whether the previous directory is at ``old``
    try:
        # SIGTERM or Ctrl-C between the renames would leave ``tmp`` and ``path`` missing:
        # their exception waits until both are done (an error of one undoes the first).
        with _signals_deferred():
            if path.exists():
                shutil.rmtree(old, ignore_errors=True)
                os.replace(path, old)
                moved = True
            os.replace(tmp, path)
    finally:
        if tmp.exists():  # not in place (a rename failed): the previous one back
            shutil.rmtree(tmp, ignore_errors=True)
            if moved and not path.exists():
                with contextlib.suppress(OSError):
                    os.replace(old, path)
                    moved = False
        if moved and path.exists():
            shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """SIGTERM and SIGINT handled after the block: their Python handlers (which raise
    :class:`~mathir.process.Terminated`, ``KeyboardInterrupt``) run when it ends, not in
    it. In the main thread only (the only one that runs them); a handler that is not a
    Python function (the default, ignored) is left as it is."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[tuple[int, object]] = []
    previous = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        handler = signal.getsignal(signum)
        if callable(handler):
            previous[signum] = handler
            signal.signal(signum, lambda n, frame: pending.append((n, frame)))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum, frame in pending[:1]:
            previous[signum](signum, frame)


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
    while True:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            f = open(lock, "a+")  # noqa: SIM115 - closed below
        except OSError as e:
            raise user_os_error(e, message, path.parent) from None
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:  # the lock is ours only if its file is still the one on disk (see below)
            held = os.fstat(f.fileno()).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            held = False
        if held:
            break
        f.close()  # a holder removed it as we waited: lock the new one
    try:
        yield
    finally:
        # The holder removes the lock file before it unlocks, so that no lock file is left
        # behind (a finished or failed run leaves its folder as it found it); a waiter that
        # then gets the removed file sees it is gone and locks a new one.
        with contextlib.suppress(OSError):
            lock.unlink()
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        f.close()


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
