"""Benchmark: formula indexing and search speed and memory at N formulas.

Generates N formulas by perturbing real LaTeX from the derived formula table (renaming
variables, changing numbers, nesting subexpressions in fractions, powers and roots),
writes them as a formula index TSV, builds a :class:`FormulaIndex` (SLT tuples and
LaTeX words), and runs 100 query formulas of the Task 2 topics through the
``formula-tuples`` and ``formula-words`` pipelines, one query at a time.

    python benchmarks/formula_search.py --formulas 1000000 --json

Targets at N = 1,000,000: median query <= 20 ms, indexing >= 5,000 formulas/s, peak
memory <= 4 GB. The parse-fallback rate (formulas indexed as LaTeX words) is reported.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from mathir.indexing.formula_index import FormulaIndex
from mathir.indexing.formula_tsv import iter_formula_index
from mathir.pipelines.formula import formula_tuples, formula_words
from mathir.topics.arqmath import read_task2_topics

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "arqmath"
_VAR = re.compile(r"(?<![\\a-zA-Z])([a-zA-Z])(?![a-zA-Z])")
_NUM = re.compile(r"\d+")
LETTERS = "abcdefghijkmnpqrstuvwxyzABCDEFGHKMNPQRSTUVWXYZ"


def perturb(latex: str, rng: random.Random) -> str:
    """One random variant of a formula: renamed variables, new numbers, or nesting."""
    kind = rng.random()
    if kind < 0.4:
        mapping: dict[str, str] = {}
        return _VAR.sub(lambda m: mapping.setdefault(m.group(1), rng.choice(LETTERS)), latex)
    if kind < 0.7:
        return _NUM.sub(lambda m: str(rng.randint(0, 99)), latex)
    wrap = rng.choice([r"\frac{{{0}}}{{{1}}}", r"\left({0}\right)^{{{1}}}", r"\sqrt{{{0}+{1}}}",
                       r"{0}_{{{1}}}"])
    return wrap.format(latex, rng.choice(["n", "2", "x+1", r"\alpha", "k-1"]))


def generate(source: Path, out: Path, n: int, seed: int = 0) -> None:
    """Write ``n`` perturbed formulas (v3-like 9-column TSV with visual ids)."""
    base = [r.formula for r in iter_formula_index(source) if r.formula.strip()]
    rng = random.Random(seed)
    seen: dict[str, int] = {}
    with open(out, "w", encoding="utf-8") as f:
        f.write("id\tpost_id\tthread_id\ttype\tcomment_id\told_visual_id\tvisual_id\tissue\t"
                "formula\n")
        for i in range(n):
            latex = base[i] if i < len(base) else perturb(rng.choice(base), rng)
            latex = latex.replace("\t", " ").replace("\n", " ")
            vid = seen.setdefault(latex, len(seen) + 1)
            post = i // 5 + 1
            f.write(f"{i + 1}\t{post}\t{post // 3 + 1}\tanswer\t\t{vid}\t{vid}\t\t{latex}\n")


def cpu_seconds() -> float:
    """User + system CPU time of this process (all threads) and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def peak_memory_mb() -> float:
    """Peak resident memory of this process and its children, in MB (Linux: KiB units)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--formulas", type=int, default=100_000, help="N (default 100,000)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--workers", type=int, default=None,
                    help="formula parsing processes (default: FormulaIndex.build's choice)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the arqmath data folder")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    derived = args.data / "collection_sample" / "derived" / "formula_index_from_thread_html.tsv"
    if not derived.is_file():
        print(f"error: derived formula table not found: {derived}", file=sys.stderr)
        return 2
    topics = pd.concat([read_task2_topics(p) for p in
                        sorted((args.data / "topics" / "task2").glob("Topics_Task2_*.xml"))],
                       ignore_index=True).head(args.queries)
    result: dict = {"formulas": args.formulas, "queries": len(topics), "workers": args.workers}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tsv = tmp / "formulas.tsv"
        t0 = time.perf_counter()
        generate(derived, tsv, args.formulas)
        result["generate_seconds"] = round(time.perf_counter() - t0, 1)
        t0, c0 = time.perf_counter(), cpu_seconds()
        index = FormulaIndex.build(tsv, tmp / "index", quiet=True, workers=args.workers)
        seconds, cpu = time.perf_counter() - t0, cpu_seconds() - c0
        result["index_seconds"] = round(seconds, 1)
        result["index_formulas_per_s"] = round(index.num_docs / seconds)
        # CPU time (all threads and worker processes): comparable on a shared machine.
        result["index_cpu_seconds"] = round(cpu, 1)
        result["index_formulas_per_cpu_s"] = round(index.num_docs / cpu)
        result["fallbacks"] = index.fallbacks
        result["fallback_rate"] = round(index.fallbacks / max(1, index.num_docs), 4)
        result["index_mb"] = round(sum(p.stat().st_size for p in (tmp / "index").rglob("*")
                                       if p.is_file()) / 2**20, 1)
        for name, make in (("formula-tuples", formula_tuples), ("formula-words", formula_words)):
            pipe = make(index)
            pipe.transform(topics.head(1))  # PISA compiles its query structures once
            times, cpu_times = [], []
            for i in range(len(topics)):
                t0, c0 = time.perf_counter(), time.thread_time()
                pipe.transform(topics.iloc[i:i + 1])
                times.append(1000 * (time.perf_counter() - t0))
                cpu_times.append(1000 * (time.thread_time() - c0))
            result[name] = {"median_ms": round(statistics.median(times), 2),
                            "median_cpu_ms": round(statistics.median(cpu_times), 2),
                            "p95_ms": round(sorted(times)[int(0.95 * (len(times) - 1))], 2),
                            "mean_ms": round(statistics.fmean(times), 2)}
    result["peak_memory_mb"] = round(peak_memory_mb())
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
