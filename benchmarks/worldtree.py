"""Benchmark: WorldTree explanation regeneration on the real TextGraphs-2019 data.

Runs the task's pipelines on one split through ``run_experiment`` (index, runs,
official evaluation with every breakdown, MAP-by-length histogram) and reports the
numbers and the time each step took (wall ``seconds`` beside ``cpu_seconds``, and
``calibration_ms``).

    python benchmarks/worldtree.py --split dev --json
    python benchmarks/worldtree.py --split test --bi-encoder models/wt-bi \
        --cross-encoder models/wt-ce --json
    python benchmarks/worldtree.py --data ../shared/data/worldtree --split test --pipelines neighbours

Without ``--pipelines`` it runs every registered pipeline, the neural ``ltr-*`` ones
when their models are given (train them with ``mathir train-reranker worldtree
--split train``, see the README). The Test split is for reporting only: models and the
ranker are trained on Train, weights and depths chosen on Dev.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

try:  # python benchmarks/worldtree.py
    import machine
except ModuleNotFoundError:  # benchmarks.worldtree, from the repository root
    from benchmarks import machine
from mathir.experiment import run_experiment
from mathir.report.tables import format_table
from mathir.tasks import get_task


def _threads() -> dict[str, int]:
    from mathir.pipelines.worldtree_lambdamart import RANKER_THREADS

    out = {"lightgbm": RANKER_THREADS}
    if "torch" in sys.modules:
        out["torch"] = sys.modules["torch"].get_num_threads()
    return out


def main(argv: list[str] | None = None) -> int:
    p = machine.parser(__doc__, data="worldtree", data_help="WorldTree distribution directory")
    p.add_argument("--split", default="dev", choices=("train", "dev", "test"))
    p.add_argument("--pipelines", help="comma-separated pipelines (default: the task's)")
    p.add_argument("--bi-encoder", help="Train-fine-tuned bi-encoder (enables ltr-dense*)")
    p.add_argument("--cross-encoder", help="Train-trained cross-encoder (enables *crossencoder)")
    p.add_argument("--out", help="output folder (default: a temporary directory)")
    p.add_argument("--plot", help="also write the MAP-by-explanation-length table and PNG "
                   "of --plot-pipelines into this folder (the README's figure)")
    p.add_argument("--plot-pipelines", default="tfidf,neighbours,ltr,ltr-dense-crossencoder",
                   help="pipelines in --plot (default: %(default)s, those that ran)")
    args = p.parse_args(argv)
    task = get_task("worldtree")
    data = task.data(args.data, args.split)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="worldtree-bench-"))
    if args.pipelines:
        names = [x.strip() for x in args.pipelines.split(",")]
    else:
        names = [n for n in task.pipelines
                 if not ("dense" in n and not args.bi_encoder)
                 and not ("crossencoder" in n and not args.cross_encoder)]
    t0, cpu0 = time.perf_counter(), time.process_time()
    options = {k: v for k, v in (("bi_encoder", args.bi_encoder),
                                 ("cross_encoder", args.cross_encoder)) if v}
    res = run_experiment(task, data, names, out=out, quiet=True, options=options)
    total, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if res.table is None:
        print("error: this split has no gold explanations", file=sys.stderr)
        return 2
    best = res.table["MAP"].idxmax()
    questions = int(len(task.read_topics(data.topics)))
    report = {
        "split": data.label,
        "questions": questions,
        "measures": {run: {m: round(float(v), 4) for m, v in row.items()}
                     for run, row in res.table.iterrows()},
        "best": {"pipeline": best, "MAP": round(float(res.table.loc[best, "MAP"]), 4)},
        "seconds": {k: round(v, 2) for k, v in res.seconds.items()} | {"total": round(total, 2)},
        "cpu_seconds": round(cpu, 2),
        # What the figures may depend on: LambdaMART's threads are fixed (RANKER_THREADS);
        # torch's only change timings (the MiniLM features are the same on 1 or 2).
        "threads": _threads(),
        # A pipeline's run time (training of the LTR ranker included) per question.
        "ms_per_question": {k: round(1000 * v / max(questions, 1), 1)
                            for k, v in res.seconds.items() if k in res.runs},
        "files": {k: str(v) for k, v in res.files.items()},
    }
    if args.plot:
        # The task's own report (what `experiment` writes), for fewer runs.
        chosen = [n for n in args.plot_pipelines.split(",") if n in res.runs]
        plot_dir = Path(args.plot)
        plot_dir.mkdir(parents=True, exist_ok=True)
        report["files"] |= {f"plot: {k}": str(v) for k, v in task.report(
            {n: task.read_run(res.runs[n]) for n in chosen}, task.read_qrels(data.qrels),
            plot_dir, **data.extras).items()}
    report["calibration_ms"] = machine.calibration_ms()
    machine.print_report(report, args.json, lambda r: format_table(res.table, "markdown") + "\n"
                         + json.dumps({k: r[k] for k in ("best", "seconds", "cpu_seconds",
                                                         "calibration_ms", "files")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
