"""The ``mathir`` command: it parses arguments (:mod:`mathir.cli.arguments`) and calls the
library (:mod:`mathir.cli.commands`), in the process :mod:`mathir.process` sets up: errors
a user can cause are one ``error:`` line and exit status 2, SIGTERM unwinds."""

from __future__ import annotations

import sys

from mathir.cli.arguments import FORMATS, parser
from mathir.cli.commands import COMMANDS
from mathir.errors import CALLER
from mathir.neural.backends import BACKENDS
from mathir.process import command_process, exit_status

BACKEND_NAMES = tuple(BACKENDS)  # --backend's choices

__all__ = ["BACKEND_NAMES", "COMMANDS", "FORMATS", "main", "parser"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mathir`` console script; returns the exit status."""
    token = CALLER.set("cli")  # messages name options as --flags
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    finally:
        CALLER.reset(token)


def _main(argv: list[str]) -> int:
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
        with command_process(getattr(args, "quiet", False)):
            COMMANDS[args.command](args)
    except BaseException as e:  # a bug (None) keeps its traceback
        ended = exit_status(e)
        if ended is None:
            raise
        if ended[1] is not None:
            print(ended[1], file=sys.stderr)
        return ended[0]
    return 0
