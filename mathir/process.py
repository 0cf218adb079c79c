"""The process a ``mathir`` command runs in: SIGTERM unwinds like Ctrl-C (so temporaries
are removed and locks released before the command exits 143), each warning is one
``warning: ...`` line, and every way a command can end has its exit status and, for an
error the user can cause or fix, one ``error: ...`` line (other errors are bugs and keep
their traceback). Imports no heavy library."""

from __future__ import annotations

import contextlib
import os
import signal
import warnings
from collections.abc import Iterator

from mathir.errors import InputError
from mathir.storage import USER_OS_ERRORS


class Terminated(BaseException):
    """SIGTERM arrived: unwind (removing temporaries, releasing locks), then exit 143."""


# Seconds a SIGTERM may wait for Python code: while the main thread is inside a long
# native call (PISA compiling an index), the handler cannot run before the call returns.
TERMINATE_GRACE_S = 3.0


def _terminate(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM kills at once
    raise Terminated


@contextlib.contextmanager
def terminate_cleanly() -> Iterator[None]:
    """Turn SIGTERM into :class:`Terminated` while a command runs.

    Python's default SIGTERM ends the process without running ``finally`` blocks, and so
    leaves the temporary files of a run or index being written; as an exception it
    unwinds like Ctrl-C. Where the main thread sits in native code, a watchdog thread
    (woken through ``signal.set_wakeup_fd``) ends the process after
    :data:`TERMINATE_GRACE_S`; the next run removes what that leaves. (Only the main
    thread can install a handler.)

    >>> with terminate_cleanly():
    ...     signal.getsignal(signal.SIGTERM) is _terminate
    True
    """
    import threading

    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread
        yield
        return
    read, write = os.pipe()
    os.set_blocking(write, False)
    previous_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    done = threading.Event()

    def watchdog() -> None:
        while not done.is_set():
            woken = os.read(read, 512)
            if not woken:  # the pipe was closed: the command is over
                return
            if signal.SIGTERM in woken and not done.wait(TERMINATE_GRACE_S):
                os.write(2, b"error: terminated\n")
                os._exit(128 + signal.SIGTERM)

    thread = threading.Thread(target=watchdog, name="mathir-sigterm", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        signal.set_wakeup_fd(previous_fd)
        signal.signal(signal.SIGTERM, previous)
        os.close(write)
        thread.join()
        os.close(read)


@contextlib.contextmanager
def warnings_as_lines() -> Iterator[None]:
    """Each warning shown once per place, as one ``warning: ...`` line (restored after);
    a library's deprecation notice about another library (e.g. pandas' about
    PyTerrier's ``DataFrame.drop(inplace=True)``) is not the user's to act on, and is not
    shown: only those mathir itself raises.

    >>> with warnings_as_lines():
    ...     print(warnings.formatwarning("no gold fact", UserWarning, "f.py", 1), end="")
    warning: no gold fact
    """
    previous = warnings.formatwarning
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
            warnings.filterwarnings("ignore", category=category)
            warnings.filterwarnings("default", category=category, module=r"mathir(\.|$)")
        warnings.formatwarning = lambda msg, cat, *a, **k: f"warning: {msg}\n"
        try:
            yield
        finally:
            warnings.formatwarning = previous


@contextlib.contextmanager
def command_process(quiet: bool = False) -> Iterator[None]:
    """What a command runs in: SIGTERM unwinds (:func:`terminate_cleanly`), warnings are
    lines (:func:`warnings_as_lines`) and, with ``quiet`` (``--quiet``), the libraries'
    progress bars, warnings and log messages are silenced
    (:func:`mathir.experiment.quiet.quiet_libraries`).

    >>> with command_process():
    ...     signal.getsignal(signal.SIGTERM) is _terminate
    True
    """
    with terminate_cleanly(), warnings_as_lines():
        if not quiet:
            yield
            return
        from mathir.experiment.quiet import quiet_libraries

        with quiet_libraries():
            yield


def exit_status(error: BaseException) -> tuple[int, str | None] | None:
    """The exit status of a command that raised ``error`` and the line it ends with on
    stderr (None: no line); None for an error that is a bug (its traceback is wanted).

    A user's mistake (:class:`~mathir.errors.InputError`, or a read-only or full disk, a
    folder where a file goes: :data:`~mathir.storage.USER_OS_ERRORS`) exits 2, Ctrl-C 130,
    SIGTERM 143 and a closed pipe (``mathir tasks | head``) 0.

    >>> exit_status(InputError("score is not a number", path="run.tsv", line=3))
    (2, 'error: run.tsv:3: score is not a number')
    >>> exit_status(PermissionError(13, "Permission denied", "runs"))
    (2, 'error: runs: Permission denied')
    >>> exit_status(KeyboardInterrupt()), exit_status(BrokenPipeError())
    ((130, 'error: interrupted'), (0, None))
    >>> exit_status(KeyError("bug")) is None
    True
    """
    if isinstance(error, InputError):
        return 2, f"error: {error}"
    if isinstance(error, KeyboardInterrupt):
        return 130, "error: interrupted"
    if isinstance(error, Terminated):
        return 128 + signal.SIGTERM, "error: terminated"
    if isinstance(error, BrokenPipeError):
        return 0, None
    if isinstance(error, OSError) and error.errno in USER_OS_ERRORS:
        where = f"{error.filename}: " if error.filename else ""
        return 2, f"error: {where}{error.strerror}"
    return None
