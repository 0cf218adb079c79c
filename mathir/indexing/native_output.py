"""Where the output of PISA's C++ code goes: a log file, not the terminal."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path


@contextlib.contextmanager
def native_output_to(log: Path):
    """Send the C++ library's own progress output (fd 1 and 2) to a log file.

    PISA prints hundreds of progress lines to the terminal; we show one tqdm bar instead
    (written to a duplicate of the original stderr, so it stays visible). Where the log
    cannot be written (a read-only index being searched), the output is discarded.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError:
        fd = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(1), os.dup(2)
    visible = os.fdopen(os.dup(saved[1]), "w", buffering=1)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield visible
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for x in (*saved, fd):
            os.close(x)
        visible.close()
