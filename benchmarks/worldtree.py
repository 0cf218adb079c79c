"""Benchmark: WorldTree explanation regeneration on the real TextGraphs-2019 data.

Runs the task's pipelines on one split through ``run_experiment`` (index, runs,
official evaluation with every breakdown, MAP-by-length histogram) and reports the
numbers and the time each step took.

    python benchmarks/worldtree.py --split dev --json
    python benchmarks/worldtree.py --data ../shared/data/worldtree --split test --pipelines neighbours

The Test split is for reporting only: every parameter was chosen on Train.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from mathir.evaluation.tables import format_table
from mathir.tasks import get_task, run_experiment

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "worldtree"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA), help="WorldTree distribution directory")
    p.add_argument("--split", default="dev", choices=("train", "dev", "test"))
    p.add_argument("--pipelines", help="comma-separated pipelines (default: the task's)")
    p.add_argument("--out", help="output folder (default: a temporary directory)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    task = get_task("worldtree")
    data = task.data(args.data, args.split)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="worldtree-bench-"))
    names = [x.strip() for x in args.pipelines.split(",")] if args.pipelines else None
    t0 = time.perf_counter()
    res = run_experiment(task, data, names, out=out, quiet=True)
    total = time.perf_counter() - t0
    if res.table is None:
        print("error: this split has no gold explanations", file=sys.stderr)
        return 2
    best = res.table["MAP"].idxmax()
    report = {
        "split": data.label,
        "questions": int(len(task.read_topics(data.topics))),
        "measures": {run: {m: round(float(v), 4) for m, v in row.items()}
                     for run, row in res.table.iterrows()},
        "best": {"pipeline": best, "MAP": round(float(res.table.loc[best, "MAP"]), 4)},
        "seconds": {k: round(v, 2) for k, v in res.seconds.items()} | {"total": round(total, 2)},
        "files": {k: str(v) for k, v in res.files.items()},
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(format_table(res.table, "markdown"))
        print(json.dumps({k: report[k] for k in ("best", "seconds", "files")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
