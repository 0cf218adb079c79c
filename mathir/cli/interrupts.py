"""SIGTERM turned into an exception while a command runs, so that temporaries are
removed and locks released before ``mathir`` exits 143."""

from __future__ import annotations

import contextlib
import os
import signal


class Terminated(BaseException):
    """SIGTERM arrived: unwind (removing temporaries, releasing locks), then exit 143."""


# Seconds a SIGTERM may wait for Python code: while the main thread is inside a long
# native call (PISA compiling an index), the handler cannot run before the call returns.
TERMINATE_GRACE_S = 3.0


def _terminate(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM kills at once
    raise Terminated


@contextlib.contextmanager
def terminate_cleanly():
    """Turn SIGTERM into :class:`Terminated` while a command runs.

    Python's default SIGTERM ends the process without running ``finally`` blocks, and so
    leaves the temporary files of a run or index being written; as an exception it
    unwinds like Ctrl-C. Where the main thread sits in native code, a watchdog thread
    (woken through ``signal.set_wakeup_fd``) ends the process after
    :data:`TERMINATE_GRACE_S`; the next run removes what that leaves. (Only the main
    thread can install a handler.)
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
