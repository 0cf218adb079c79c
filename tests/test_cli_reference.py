"""docs/cli.md, the command line's one reference, is scripts/cli_reference.py's rendering
of the argument parser, and each of its sections is what ``mathir COMMAND --help`` prints:
the page cannot drift from the command."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "cli.md"
SECTION = re.compile(r"^## `(mathir[^`]*)`\n.*?```text\n(.*?)\n```", re.S | re.M)


def _script():
    spec = importlib.util.spec_from_file_location("cli_reference",
                                                  ROOT / "scripts" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_is_the_scripts_rendering():
    assert PAGE.read_text(encoding="utf-8") == _script().render(), \
        "docs/cli.md is out of date: run python scripts/cli_reference.py"


def test_the_check_mode_finds_a_stale_page(tmp_path, monkeypatch, capsys):
    script = _script()
    assert script.main(["--check"]) == 0
    monkeypatch.setattr(script, "PAGE", tmp_path / "cli.md")
    (tmp_path / "cli.md").write_text("# stale\n", encoding="utf-8")
    assert script.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err


def test_every_command_has_a_section():
    from mathir.cli import COMMANDS, parser

    sections = [name for name, _ in SECTION.findall(PAGE.read_text(encoding="utf-8"))]
    commands = list(_script()._subcommands(parser(overview=False)).choices)
    assert sections == ["mathir", *(f"mathir {c}" for c in commands)]
    assert set(commands) == set(COMMANDS)


@pytest.mark.parametrize("section", SECTION.findall(PAGE.read_text(encoding="utf-8")),
                         ids=lambda s: s[0] if isinstance(s, tuple) else None)
def test_each_section_is_what_help_prints(section, monkeypatch, capsys):
    from mathir.cli import main

    monkeypatch.setenv("COLUMNS", "80")
    command, text = section
    with pytest.raises(SystemExit) as done:
        main([*command.split()[1:], "--help"])
    assert done.value.code == 0
    printed = capsys.readouterr().out
    # experiment --help goes on with the tasks (the page leaves them to `mathir tasks`)
    assert printed.startswith(text + "\n"), f"{command} --help differs from docs/cli.md"
