"""Benchmark: evaluating and comparing many systems, and parallel retrieval speed-up.

    python benchmarks/experiment_overhead.py --json

Part 1: 10 synthetic systems x 100 topics x 1000 documents against synthetic graded
qrels: prime measures per topic and mean, then significance against the first system
(target: under 5 s in all). Part 2: BM25 and TF-IDF over a synthetic answer collection
for many topics, with 1 and 2 worker processes (speed-up reported). The whole run's
wall and CPU seconds (``wall_s``, ``cpu_s``: worker processes included) and
``calibration_ms`` close the report.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

try:  # python benchmarks/experiment_overhead.py
    import machine
except ModuleNotFoundError:  # benchmarks.experiment_overhead, from the repository root
    from benchmarks import machine
from mathir.evaluation.prime import ARQMATH_MEASURES, per_query
from mathir.evaluation.significance import significance_table


def synthetic(n_systems: int, n_topics: int, depth: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    qrels = []
    for t in range(n_topics):
        judged = rng.choice(5000, 300, replace=False)
        qrels += [(f"A.{t}", f"d{d}", int(rng.integers(0, 4))) for d in judged]
    qrels = pd.DataFrame(qrels, columns=["qid", "docno", "label"])
    runs = {}
    for s in range(n_systems):
        rows = []
        for t in range(n_topics):
            docs = rng.choice(5000, depth, replace=False)
            rows.append(pd.DataFrame({"qid": f"A.{t}", "docno": [f"d{d}" for d in docs],
                                      "score": np.sort(rng.random(depth))[::-1]}))
        runs[f"sys{s}"] = pd.concat(rows, ignore_index=True)
    return runs, qrels


def evaluation_overhead(n_systems=10, n_topics=100, depth=1000) -> dict:
    runs, qrels = synthetic(n_systems, n_topics, depth)
    t0 = time.perf_counter()
    tables = {name: per_query(run, qrels) for name, run in runs.items()}
    t1 = time.perf_counter()
    significance_table(tables, list(ARQMATH_MEASURES), baseline="sys0")
    t2 = time.perf_counter()
    return {"systems": n_systems, "topics": n_topics, "depth": depth,
            "evaluate_seconds": round(t1 - t0, 3), "significance_seconds": round(t2 - t1, 3),
            "total_seconds": round(t2 - t0, 3)}


def _pipeline(index_dir: str, name: str):
    from mathir.indexing.answer_index import AnswerIndex
    from mathir.pipelines import lexical

    return getattr(lexical, name)(AnswerIndex(index_dir))


def parallel_speedup(posts: int = 100_000, topics: int = 400) -> dict:
    from mathir.indexing.answer_index import AnswerIndex
    from mathir.pipelines.parallel import ParallelTopics, PipelineSpec

    index_mse = machine.benchmark("index_mse")
    work = Path(tempfile.mkdtemp(prefix="mathir-par-"))
    index_mse.generate_posts(work / "Posts.xml", posts)
    index = AnswerIndex.build(work / "Posts.xml", work / "idx", quiet=True)
    rng = np.random.default_rng(2)
    vocab = index_mse.make_vocabulary(50_000, np.random.default_rng(0))
    frame = pd.DataFrame({"qid": [f"Q.{i}" for i in range(topics)],
                          "query": [" ".join(rng.choice(vocab[:5000], 8))
                                    + f" ${index_mse.FORMULAS[i % 10]}$" for i in range(topics)]})
    out = {"posts": posts, "topics": topics}
    for name in ("tfidf", "bm25"):
        spec = PipelineSpec(_pipeline, (str(index.path), name))
        times = {}
        for workers in (1, 2):
            pipe = ParallelTopics(spec, workers=workers)
            pipe.transform(frame.head(4))  # warm-up (worker start, index load)
            t0 = time.perf_counter()
            pipe.transform(frame)
            times[workers] = time.perf_counter() - t0
        out[name] = {"seconds_1_worker": round(times[1], 3), "seconds_2_workers": round(times[2], 3),
                     "speedup": round(times[1] / times[2], 2)}
    return out


def main(argv=None) -> int:
    ap = machine.parser(__doc__)
    ap.add_argument("--posts", type=int, default=100_000)
    ap.add_argument("--topics", type=int, default=400)
    args = ap.parse_args(argv)
    clock = machine.Clock()
    result = {"evaluation": evaluation_overhead(), "parallel": parallel_speedup(args.posts, args.topics)}
    result.update(clock.seconds(2))
    result["calibration_ms"] = machine.calibration_ms()
    machine.print_report(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
