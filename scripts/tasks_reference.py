"""Render docs/tasks.md, the reference of mathir's tasks, from their declarations
(:data:`mathir.tasks.TASKS`, the tasks of mathir's own families): for each task its
evaluations (years or splits, and their ``mathir:`` datasets), the files each needs (the
patterns, preferred first, and the role each file plays), the published files known by
their digest, the measures (name, description, ir_measures form), the qrels variants and
the evaluation's options. The page is generated, so a task is documented where it is
declared; tests/test_tasks_reference.py checks that it is this script's output.

    python scripts/tasks_reference.py           # rewrite docs/tasks.md
    python scripts/tasks_reference.py --check   # exit 1 (and say so) when it is out of date
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tasks.md"

HEADER = """\
# Tasks

Every task of mathir, as its declaration (`mathir/tasks/`) says it: its evaluations (the
years or splits `--year` / `--split` takes, each also a PyTerrier dataset
`pt.get_dataset("mathir:NAME")`), the files each one needs under `--data` (the first
pattern found is taken; a pattern without a suffix names a folder), the published files
known by their size and SHA-256 (a file found under one of their names that differs is
said in a warning: [robustness](robustness.md#published-files); a folder's digest is
the one `mathir.storage.file_fingerprint` gives), the measures, the
published judgment variants (`--qrels NAME`) and the evaluation's options. This page is
generated from `mathir.tasks.TASKS` by `python scripts/tasks_reference.py`: edit the
declarations, not this page, and run the script again (`tests/test_tasks_reference.py`
fails while the page is out of date). Tasks added by plug-ins are not listed here
(`mathir tasks` lists them). Back to the [README](../README.md).
"""

#: how the page names a need's role
ROLE_NAMES = {"topics": "topics", "qrels": "qrels", "collection": "collection",
              "metadata": "topic information", "option": "option"}


def builtin_tasks() -> list:
    """The tasks of mathir's own families (not those of plug-ins), in ``TASKS`` order."""
    from mathir.tasks import FAMILIES, TASKS, Task

    ours = {id(v) for family in FAMILIES
            for v in vars(importlib.import_module(f"mathir.tasks.{family}")).values()
            if isinstance(v, Task)}
    return [t for t in TASKS.values() if id(t) in ours]


def _cell(text: object) -> str:
    """Text for a Markdown table cell (``|`` escaped, one line)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def _roles(need) -> str:
    roles = [ROLE_NAMES[r] for r in need.roles if r != "option"]
    if need.option:
        roles.append(f"option {_code(need.option)}")
    return ", ".join(roles) + (" (optional)" if need.optional else "")


def _where(need) -> str:
    notes = []
    if need.beside:
        notes.append(f"beside the {ROLE_NAMES[need.beside]} file")
    if need.contains:
        notes.append(f"holding {_code(need.contains)}")
    if need.exclude:
        notes.append(f"not named *{need.exclude}*")
    return f" ({'; '.join(notes)})" if notes else ""


def _evaluations(task) -> list[str]:
    family = task.dataset or task.name
    rows = ["| dataset | `--year` / `--split` | files |", "| --- | --- | --- |"]
    for split in task.splits or ():
        label = _code(split.label) if split.label is not None else "(none)"
        files = "the embedded sample" if split.sample else f"{len(split.needs)} (below)"
        rows.append(f"| `mathir:{family}/{split.name}` | {label} | {files} |")
    return rows


def _needs(task) -> list[str]:
    rows = ["| evaluation | role | file (patterns, preferred first) | what | published |",
            "| --- | --- | --- | --- | --- |"]
    evaluations: dict = {}  # a need the same in several evaluations: one row
    for split in task.splits or ():
        for need in split.needs:
            evaluations.setdefault(need, []).append(split.name)
    for need, names in evaluations.items():
        patterns = " or ".join(_code(p) for p in need.patterns) + _where(need)
        published = ", ".join(_code(f.name) for f in need.published) or "—"
        rows.append(f"| {_cell(', '.join(names))} | {_roles(need)} | {patterns} | "
                    f"{_cell(need.what)} | {published} |")
    return rows


def _published_files(task) -> list[str]:
    files: dict[str, object] = {}
    for split in task.splits or ():
        for need in split.needs:
            files.update((f.name, f) for f in need.published)
    for variant in task.qrels_variants:
        files.update((f.name, f) for f in variant.published)
    if not files:
        return []
    rows = ["| file | size (bytes) | SHA-256 |", "| --- | ---: | --- |"]
    for name in sorted(files):
        f = files[name]
        size = f"{f.size:,}" + (f" ({f.files} files)" if f.files is not None else "")
        rows.append(f"| {_code(name)} | {size} | `{f.sha256}` |")
    return rows


def _measures(task) -> list[str]:
    rows = ["| measure | what | ir_measures | aggregated |", "| --- | --- | --- | --- |"]
    for m in task.measures:
        form = _code(str(m.ir_measure)) if m.ir_measure is not None else \
            "— (the task's evaluator)"
        primary = " (primary)" if m.name == task.primary_measure else ""
        rows.append(f"| {_code(m.name)}{primary} | {_cell(m.description)} | {form} | "
                    f"{m.aggregate} |")
    return rows


def _variants(task) -> list[str]:
    if not task.qrels_variants:
        return []
    rows = ["| `--qrels` | file | what | options |", "| --- | --- | --- | --- |"]
    for v in task.qrels_variants:
        options = ", ".join(f"`{k}={val}`" for k, val in v.options.items()) or "—"
        rows.append(f"| `{v.name}` | {_code(v.pattern)} | {_cell(v.what)} | {options} |")
    return rows


def _options(task) -> list[str]:
    if not task.options:
        return []
    rows = ["| flag | keyword | what |", "| --- | --- | --- |"]
    for o in task.options:
        choices = f" (one of {', '.join(o.choices)})" if o.choices else ""
        rows.append(f"| `{o.flag}` | `{o.name}=` | {_cell(o.help)}{choices} |")
    return rows


def _section(task) -> str:
    out = [f"## `{task.name}`", "", f"{task.description}."]
    if task.published is not None:
        out += ["", f"Data: {task.published.what}, published at <{task.published.url}>."]
    defaults = set(task.default_pipelines)
    pipelines = ", ".join(f"`{p}`" + (" (default)" if p in defaults else "")
                          for p in task.pipelines)
    out += ["", f"Pipelines: {pipelines}.", ""]
    default = f" (default {_code(task.default_year)})" if task.default_year else ""
    out += [f"### Evaluations: {task.year_name}{default}", "", *_evaluations(task), ""]
    if any(split.needs for split in task.splits or ()):
        out += ["### Files", "", *_needs(task), ""]
    for title, rows in (("Published files", _published_files(task)),
                        ("Measures", _measures(task)),
                        ("Qrels variants", _variants(task)),
                        ("Options of the evaluation", _options(task))):
        if rows:
            out += [f"### {title}", "", *rows, ""]
    return "\n".join(out)


def render() -> str:
    """The text of docs/tasks.md: the header, then one section per task."""
    return "\n".join([HEADER, *(_section(t) for t in builtin_tasks())]).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Render docs/tasks.md from mathir's tasks.")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 when docs/tasks.md is out of date")
    args = p.parse_args(argv)
    text = render()
    if args.check:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is out of date: run python scripts/tasks_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(PAGE)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # this checkout's mathir, installed or not
    sys.exit(main())
