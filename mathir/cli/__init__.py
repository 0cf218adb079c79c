"""The ``mathir`` command: it parses arguments (:mod:`mathir.cli.arguments`) and calls the
library (:mod:`mathir.cli.commands`); errors a user can cause are one ``error:`` line and
exit status 2, SIGTERM unwinds (:mod:`mathir.cli.interrupts`)."""

from __future__ import annotations

import contextlib
import signal
import sys
import warnings

from mathir.cli.arguments import BACKEND_NAMES, FORMATS, parser
from mathir.cli.commands import COMMANDS
from mathir.cli.interrupts import Terminated, terminate_cleanly
from mathir.errors import CALLER, InputError
from mathir.storage import USER_OS_ERRORS

__all__ = ["BACKEND_NAMES", "COMMANDS", "FORMATS", "main", "parser"]


@contextlib.contextmanager
def _warnings_as_lines():
    """Each warning shown once per place, as one ``warning: ...`` line (restored after)."""
    previous = warnings.formatwarning
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.formatwarning = lambda msg, cat, *a, **k: f"warning: {msg}\n"
        try:
            yield
        finally:
            warnings.formatwarning = previous


def _quiet(quiet: bool):
    """``--quiet``: no progress bar, and no warning or log message of the libraries."""
    if not quiet:
        return contextlib.nullcontext()
    from mathir.experiment import quiet_libraries

    return quiet_libraries()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mathir`` console script; returns the exit status."""
    token = CALLER.set("cli")  # messages name options as --flags
    try:
        return _main(argv)
    finally:
        CALLER.reset(token)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    arguments = parser(overview=any(a in ("-h", "--help") for a in argv))
    args, extra = arguments.parse_known_args(argv)
    if extra:
        # evaluate's RUN ... may be empty (nargs="*"), so argparse matches it before the
        # options and leaves run files written after them over: they are runs too.
        if args.command == "evaluate" and not any(e.startswith("-") for e in extra):
            args.runs = [*args.runs, *extra]
        else:
            arguments.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.version:
        from mathir import __version__

        print(__version__)
        return 0
    if not args.command:
        parser().print_help()
        return 2
    try:
        with terminate_cleanly(), _warnings_as_lines(), _quiet(getattr(args, "quiet", False)):
            COMMANDS[args.command](args)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("error: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except BrokenPipeError:
        return 0
    except OSError as e:
        # A read-only or full disk, a folder where a file goes: the user's to fix. Other
        # OS errors (a missing internal file) are bugs and keep their traceback.
        if e.errno not in USER_OS_ERRORS:
            raise
        where = f"{e.filename}: " if e.filename else ""
        print(f"error: {where}{e.strerror}", file=sys.stderr)
        return 2
    return 0
