"""Render docs/cli.md, the reference of the ``mathir`` command, from its argument parser
(mathir/cli/arguments.py): one section per command with the help ``mathir COMMAND
--help`` prints in an 80-column terminal (usage and options). The page is generated, so
the command line is documented once; tests/test_cli_reference.py checks that it is this
script's output.

    python scripts/cli_reference.py           # rewrite docs/cli.md
    python scripts/cli_reference.py --check   # exit 1 (and say so) when it is out of date
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "cli.md"
#: the help's width: what argparse gives an 80-column terminal (its width less 2)
WIDTH = 78

HEADER = """\
# The `mathir` command

Every command and option of `mathir`, as `mathir COMMAND --help` prints them in an
80-column terminal. This page is generated from the argument parser
(`mathir/cli/arguments.py`) by `python scripts/cli_reference.py`: edit the parser, not
this page, and run the script again (`tests/test_cli_reference.py` fails while the page
is out of date). Back to the [README](../README.md).

`mathir experiment --help` ends with the tasks and their pipelines, which `mathir tasks`
lists too. A user error prints one line `error: FILE:LINE: what is wrong` and exits with
status 2; Ctrl-C exits 130 and SIGTERM 143, after removing what was half written.
"""


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _help(parser: argparse.ArgumentParser) -> str:
    """``parser``'s help at :data:`WIDTH` columns, whatever the terminal's width."""
    formatter = parser.formatter_class
    parser.formatter_class = functools.partial(formatter, width=WIDTH)
    try:
        return parser.format_help().rstrip()
    finally:
        parser.formatter_class = formatter


def render() -> str:
    """The text of docs/cli.md: the header, ``mathir --help``, then each command's help."""
    from mathir.cli import parser

    top = parser(overview=False)  # the task list depends on the installed plug-ins
    commands = _subcommands(top)
    summaries = {a.dest: a.help for a in commands._choices_actions}
    sections = [HEADER, f"## `mathir`\n\n```text\n{_help(top)}\n```\n"]
    for name, sub in commands.choices.items():
        sections.append(f"## `mathir {name}`\n\n{summaries[name][0].upper()}"
                        f"{summaries[name][1:]}.\n\n```text\n{_help(sub)}\n```\n")
    return "\n".join(sections)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Render docs/cli.md from mathir's parser.")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 when docs/cli.md is out of date")
    args = p.parse_args(argv)
    text = render()
    if args.check:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is out of date: run python scripts/cli_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(PAGE)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # this checkout's mathir, installed or not
    sys.exit(main())
