"""The Python blocks of docs/*.md run as written (each document's blocks in order, in
one namespace, in a fresh folder), so the task references cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
WITH_CODE = sorted(p.name for p in DOCS.glob("*.md") if BLOCK.search(p.read_text("utf-8")))


def _own_pipelines_scored(namespace: dict) -> None:
    # the own-pipelines example (once in the README): the edited-sign lambda scores far
    # below BM25
    table = namespace["res"].table
    assert table.loc["negated", "nDCG'"] < table.loc["bm25", "nDCG'"] - 0.2


#: what a document's examples must show besides running
SHOWS = {"experiments.md": _own_pipelines_scored}


def test_the_task_references_hold_code():
    # the check below is not vacuous: these documents have Python examples
    assert {"arqmath.md", "experiments.md", "pyterrier.md", "word_problems.md"} <= set(WITH_CODE)


@pytest.mark.parametrize("name", WITH_CODE)
def test_python_blocks_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTERRIER_HOME", str(tmp_path / "pyterrier-home"))
    namespace: dict = {}
    for i, block in enumerate(BLOCK.findall((DOCS / name).read_text("utf-8")), 1):
        exec(compile(block, f"{name} (Python block {i})", "exec"), namespace)
    SHOWS.get(name, lambda namespace: None)(namespace)


def test_readme_python_blocks_run_in_order(tmp_path, monkeypatch):
    # the first block is also checked by tests/test_readme.py, with its printed table
    monkeypatch.chdir(tmp_path)
    blocks = BLOCK.findall((ROOT / "README.md").read_text("utf-8"))
    assert len(blocks) >= 1
    namespace: dict = {}
    for i, block in enumerate(blocks, 1):
        exec(compile(block, f"README.md (Python block {i})", "exec"), namespace)


def test_the_dataset_table_names_every_task_and_where_its_files_are_published():
    # the table of docs/pyterrier.md is written by hand from the declarations: it must
    # name each task's datasets and the page its files are published on
    from mathir.tasks import TASKS

    text = (DOCS / "pyterrier.md").read_text("utf-8")
    table = text[text.index("| name | corpus"):text.index("Every dataset also has")]
    for name, task in TASKS.items():
        assert f"`{task.dataset or name}/" in table, name
        if task.published is not None:
            assert task.published.url in table or "same site" in table, name


# -- reference pages and the measurements log ----------------------------------------------
#: the one page that holds dated runs, the machine's load, calibration and attempts
LOG = "measurements.md"
#: mentions of the machine's load (or of another job sharing it) or of a benchmark's
#: calibration; "load time" (a page's), "loaded from", "quiet=True" are not such mentions
MACHINE_LOAD = re.compile(
    r"\bload(?: average)?(?: of| about| near| at)? ~?\d|\bload average\b|\bunder load\b"
    r"|\bmachines?'s? load\b|\bquiet (?:machine|day)\b|\bloaded (?:machine|at)\b"
    r"|\bmachine was shared\b|\bother engineers' jobs\b|\bnothing else (?:of ours )?running\b"
    r"|\bmachine otherwise idle\b|\bcalibrat\w*", re.I)
#: the int8 quantisation's calibration (how an openvino-int8 export is made: neural.md,
#: architecture.md) is how mathir works, not a measurement: these phrases may stay
INT8_CALIBRATION = re.compile(
    r"calibrated on|calibration texts|calibration_texts|neural\.calibration|calibration\.py"
    r"|calibrated by ``?calibration``?", re.I)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
LINK = re.compile(r"\]\(([^)\s]*?)#([^)\s]+)\)")


def _slugs(text: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown text (duplicates get -1, -2...)."""
    seen: dict[str, int] = {}
    slugs = set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        slugs.add(slug if n == 0 else f"{slug}-{n}")
    return slugs


def test_the_slugs_are_githubs():
    assert _slugs("## One seed per session: `--combine`\n### Answers at 2.4M posts\n"
                  "## Runs and qrels as trec_eval reads them\n## A\n## A\n```\n# not one\n```\n") == {
        "one-seed-per-session---combine", "answers-at-24m-posts",
        "runs-and-qrels-as-trec_eval-reads-them", "a", "a-1"}


def test_the_measurements_log_exists_and_is_linked():
    assert (DOCS / LOG).exists()
    linking = [p.name for p in DOCS.glob("*.md") if f"]({LOG}" in p.read_text("utf-8")]
    assert {"neural.md", "performance.md", "worldtree.md", "results.md"} <= set(linking)


@pytest.mark.parametrize("name", sorted(p.name for p in DOCS.glob("*.md") if p.name != LOG))
def test_reference_pages_do_not_mention_machine_load_or_calibration(name):
    # the issue: reference pages say how things work and give the current figures with
    # their command; the machine's load, calibration_ms, and dated runs go to the log
    text = INT8_CALIBRATION.sub("", (DOCS / name).read_text("utf-8"))
    found = [m.group(0) for m in MACHINE_LOAD.finditer(text)]
    assert not found, f"docs/{name} mentions {found}: move it to docs/{LOG}"


def test_the_load_pattern_finds_what_it_should_and_only_that():
    for said in ("load average 2 to 7", "load 1.5-1.8", "a quiet machine", "on that loaded machine",
                 "nothing else of ours running", "calibration 261 ms", "`calibration_ms` 411",
                 "the shared CPU was loaded at 7-13", "under load"):
        assert MACHINE_LOAD.search(said), said
    for said in ("Size and load time", "`load_ms`: load event", "loaded from the cache",
                 "quiet=True", "--quiet", "Models load from a local path", "loads no heavy library"):
        assert not MACHINE_LOAD.search(said), said
    assert not MACHINE_LOAD.search(INT8_CALIBRATION.sub(
        "", "calibrated on 300 texts (`mathir.neural.calibration.calibration_texts`)"))


def test_links_into_the_measurements_log_resolve():
    anchors = _slugs((DOCS / LOG).read_text("utf-8"))
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    checked = 0
    for page in pages:
        for target, anchor in LINK.findall(page.read_text("utf-8")):
            if Path(target).name == LOG or (page.name == LOG and target == ""):
                assert anchor in anchors, f"{page.name}: {target}#{anchor}"
                checked += 1
    assert checked >= 20


def test_links_between_the_docs_resolve():
    # every docs/*.md#anchor link of the README and the docs names a heading of its page
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for target, anchor in LINK.findall(page.read_text("utf-8")):
            if target.startswith(("http:", "https:")) or (target and not target.endswith(".md")):
                continue
            linked = (page.parent / target).resolve() if target else page
            assert linked.exists(), f"{page.name}: {target}"
            assert anchor in _slugs(linked.read_text("utf-8")), f"{page.name}: {target}#{anchor}"
