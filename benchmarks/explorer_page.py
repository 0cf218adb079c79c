"""Benchmark: the HTML report's run explorer at 100 topics x 3 runs x top 20.

Runs three ARQMath Task 1 pipelines (``tfidf``, ``bm25`` and ``bm25+tfidf``: BM25's top
100 rescored with BM25 + TF-IDF) on a year's topics, writes the report with the explorer
of every topic of the topic file (``all_topics``: the 2022 file has 100, 78 of them
judged), and opens it in headless Chromium: the page's script records when the page was
parsed and scripted (``ready_ms``) and when it loaded (``load_ms``), both measured from
navigation start by ``performance.now()``. Reports the file size, the topics, runs and
depth, the time and CPU seconds spent building the page, the formulas latex2mathml could
not convert, and ``calibration_ms`` (docs/architecture.md).

    python benchmarks/explorer_page.py --data ../shared/data/arqmath --year 2022 \\
        --collection ../shared/data/arqmath/collection_sample/threads_all --json

Without ``--data``: the embedded sample (10 topics).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:  # python benchmarks/explorer_page.py
    import machine
except ModuleNotFoundError:  # benchmarks.explorer_page, from the repository root
    from benchmarks import machine

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def chromium_times(page: Path, repeats: int = 3) -> dict:
    """Median ``ready_ms`` / ``load_ms`` of ``repeats`` fresh Chromium launches."""
    import re
    import statistics

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return {"chromium": None}
    ready, load, wall = [], [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as profile:
            t0 = time.perf_counter()
            dom = subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                                  page.as_uri()], capture_output=True, text=True, timeout=300,
                                 check=True).stdout
            wall.append(time.perf_counter() - t0)
        head = re.search(r'<div id="explorer"[^>]*>', dom).group(0)
        ready.append(int(re.search(r'data-ready-ms="(\d+)"', head).group(1)))
        load.append(int(re.search(r'data-load-ms="(\d+)"', head).group(1)))
    version = subprocess.run([chromium, "--version"], capture_output=True, text=True).stdout
    return {"chromium": version.strip(), "ready_ms": statistics.median(ready),
            "load_ms": statistics.median(load),
            "launch_to_dom_s": round(statistics.median(wall), 2)}


def main(argv: list[str] | None = None) -> int:
    ap = machine.parser(__doc__)
    ap.add_argument("--data", help="ARQMath data folder (default: the embedded sample)")
    ap.add_argument("--year", default="2022")
    ap.add_argument("--collection", help="Task 1 collection (default: found under --data)")
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--out", help="folder for runs and the report (default: a temporary one)")
    args = ap.parse_args(argv)

    import mathir
    from mathir.experiment import run_experiment
    from mathir.experiment.reports import explorer_lookups
    from mathir.report.explorer import explorer_html
    from mathir.report.explorer_views import build_explorer
    from mathir.report.report import html_report, write_report
    from mathir.tasks import get_task

    task = get_task("arqmath-task1")
    data = task.data(args.data, args.year if args.data else None, args.collection)
    out = Path(args.out or tempfile.mkdtemp())
    pipelines = ["tfidf", "bm25", {"bm25+tfidf": lambda index: mathir.bm25(index) % 100
                                   + mathir.tfidf(index)}]
    res = run_experiment(task, data, pipelines, out=out, quiet=True)
    t0, c0 = time.perf_counter(), machine.cpu_seconds()
    ex, renderer = build_explorer(res.evaluation, res.topics, data, baseline=res.baseline,
                                  primary=task.primary_measure, depth=args.depth, all_topics=True,
                                  lookups=explorer_lookups(task, data, res.index))
    page = write_report(out / "explorer.html", html_report(
        "explorer benchmark", res.table, res.baseline, res.significance,
        explorer=explorer_html(ex)))
    built_s, built_cpu = time.perf_counter() - t0, machine.cpu_seconds() - c0
    topic, result = renderer.stats.get("topic"), renderer.stats.get("result")
    report = {
        "benchmark": "explorer_page", "data": data.label, "topics": len(ex.topics),
        "runs": len(ex.runs), "depth": args.depth, "bytes": page.stat().st_size,
        "build_s": round(built_s, 2), "build_cpu_s": round(built_cpu, 2),
        "topic_formulas": topic.formulas if topic else 0,
        "topic_formulas_unconverted": len(topic.unconverted) if topic else 0,
        "result_formulas": result.formulas if result else 0,
        "result_formulas_unconverted": len(result.unconverted) if result else 0,
        **chromium_times(page), "page": str(page), "calibration_ms": machine.calibration_ms(),
    }
    machine.print_report(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
