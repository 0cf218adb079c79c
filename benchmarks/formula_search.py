"""Benchmark: formula indexing and search at N formulas, up to ARQMath's 28 million.

Generates N formula instances from the real LaTeX of the derived formula table, repeating
formulas at the rate measured on that table (below), writes them as a formula index TSV,
builds a :class:`FormulaIndex` (SLT tuples and LaTeX words) in a child process, then opens
it in another child process and runs 100 query formulas of the Task 2 topics through the
``formula-tuples`` and ``formula-words`` pipelines, one query at a time.

    python benchmarks/formula_search.py --formulas 28000000 --json
    python benchmarks/formula_search.py --formulas 1000000,4000000,16000000,28000000 \\
        --out runs/bench/formulas --plot docs/formula_scaling.png --json
    python benchmarks/formula_search.py --formulas 1000000 --shards 2 --workers 1 --json
    python benchmarks/formula_search.py --formulas 4000000 --shards 2 --scoring bm25-impacts --json

**Repetition.** In the derived table (76,943 instances), the number of distinct LaTeX
strings among the first n instances follows Heaps' law, d(n) = 1.182 n^0.922 (log-log
fit over n = 1,000 ... 76,943 in file order; 39,090 distinct at the end). The generator
makes instance n a new formula with probability d(n) - d(n-1) and otherwise repeats the
formula of a uniformly drawn earlier instance (Simon's model: common formulas get
commoner, as ``n``, ``x`` and ``f`` are in the table). New formulas are the table's own
distinct formulas first, then perturbations of them (renamed variables, new numbers,
nesting). Extrapolated, 28M instances hold about 8.7M distinct formulas (31%).

Measured: build wall and CPU seconds (the child and its parsing workers), the peak
resident memory of the whole build process tree (sampled every 0.2 s from /proc; shared
pages are counted once per process, so this overstates), and of its anonymous memory
alone (``RssAnon``: without the pages of memory-mapped files, which the kernel can drop),
the index's size on disk, time to open the index and to answer the first query, resident
(and anonymous) memory of a process that opens the index and runs only the default
``formula-tuples`` over the queries (``default_resident_mb``, ``default_anon_rss_mb``),
resident memory after opening and after every pipeline's queries, and median / p95 query
times: ``formula-tuples`` with its default first-stage pruning, and beside it other
pruning (none among them) and PISA's block-max algorithms. ``--scoring bm25-impacts`` keeps the build's ``--shards`` and searches them side by
side (:mod:`mathir.indexing.pisa_impacts`). Smaller N of a list are prefixes of the
largest one's formulas. With ``--out``, each N's result is saved there and not measured
again (a long scaling run resumes).

Targets on the 2-core, 24 GB machine at N = 28,000,000: build <= 90 min wall and
>= 5,000 formulas/s, build peak <= 6 GB, opened index <= 3 GB resident, open <= 5 s,
``formula-tuples`` median <= 100 ms and p95 <= 400 ms (top 1,000 visual ids). Resident
memory here counts whole page-cache folios of the mapped files; what the search needs is
measured by ``benchmarks/formula_memory_cap.py`` (the index searched inside a memory limit).
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import multiprocessing
import os
import random
import re
import shutil
import statistics
import sys
import threading
import time
from array import array
from pathlib import Path

try:  # python benchmarks/formula_search.py
    import machine
except ModuleNotFoundError:  # benchmarks.formula_search, from the repository root
    from benchmarks import machine

DERIVED = Path("collection_sample") / "derived" / "formula_index_from_thread_html.tsv"
HEAPS_K, HEAPS_BETA = 1.182, 0.922  # fitted on the derived table (see the docstring)
GENERATOR_VERSION = 3
#: PISA's other exact algorithms, timed on ``formula-tuples`` beside its default (maxscore).
ALGORITHMS = ("block_max_maxscore", "block_max_wand")
#: Other first-stage pruning of the tuple query (max_df, max_terms: PruneQuery, at any
#: N; ``formula-tuples`` prunes from 1M formulas), timed beside ``formula-tuples``; their
#: effectiveness is measured by ``benchmarks/arqmath_formula_pool.py --prune``.
PRUNES = ((None, None), (0.05, None), (None, 64), (0.02, 64), (0.01, 64))
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


def heaps_distinct(n: float) -> float:
    """Expected distinct formulas among the first ``n`` instances (the fitted Heaps law)."""
    return HEAPS_K * n ** HEAPS_BETA if n > 0 else 0.0


def generate(source: Path, out: Path, n: int, seed: int = 0) -> dict:
    """Write ``n`` formula instances (v3-like 9-column TSV with visual ids); the counts."""
    from mathir.readers.formula_tsv import iter_formula_index

    base = list(dict.fromkeys(r.formula.replace("\t", " ").replace("\n", " ")
                              for r in iter_formula_index(source) if r.formula.strip()))
    rng = random.Random(seed)
    formulas: list[str] = []  # distinct, in order of first use
    known: dict[str, int] = {}
    of_instance = array("i")  # each instance's index in ``formulas``
    with open(out, "w", encoding="utf-8") as f:
        f.write("id\tpost_id\tthread_id\ttype\tcomment_id\told_visual_id\tvisual_id\tissue\t"
                "formula\n")
        for i in range(n):
            p_new = heaps_distinct(i + 1) - heaps_distinct(i)
            if i == 0 or rng.random() < p_new:
                if len(formulas) < len(base):
                    latex = base[len(formulas)]
                else:  # perturbed again until new: a new formula must be new
                    latex = perturb(rng.choice(base), rng)
                    while latex in known:
                        latex = perturb(latex, rng)
                k = known.setdefault(latex, len(formulas))
                if k == len(formulas):
                    formulas.append(latex)
            else:
                k = of_instance[rng.randrange(i)]
            of_instance.append(k)
            post = i // 5 + 1
            f.write(f"{i + 1}\t{post}\t{post // 3 + 1}\tanswer\t\t{k + 1}\t{k + 1}\t\t"
                    f"{formulas[k]}\n")
    return {"instances": n, "distinct": len(formulas)}


def _generate_job(source: str, out: str, n: int, queue) -> None:
    queue.put(generate(Path(source), Path(out), n))


def _prefix(src: Path, dst: Path, n: int) -> None:
    """The header and first ``n`` rows of a TSV."""
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as g:
        for i, line in enumerate(f):
            if i > n:
                break
            g.write(line)


def task2_queries(data: Path, n: int) -> list[str] | None:
    """The first ``n`` query formulas of the Task 2 topic files under ``data``
    (``topics/task2/Topics_Task2_*.xml``, in name order); None when there are none."""
    files = sorted((data / "topics" / "task2").glob("Topics_Task2_*.xml"))
    if not files:
        return None
    import pandas as pd

    from mathir.topics.arqmath import read_task2_topics

    topics = pd.concat([read_task2_topics(p) for p in files], ignore_index=True)
    return [str(q) for q in topics["query"].head(n)]


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of one process, in MB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, IndexError, ValueError):
        return 0.0


def anon_rss_mb(pid: int | str = "self") -> float:
    """Anonymous resident memory of one process (``RssAnon``: not file pages), in MB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) / 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0.0


def tree_rss_mb(root: int, rss=rss_mb) -> float:
    """Resident memory (``rss``: or another per-process measure) of ``root`` and all its
    descendants, in MB."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        total += rss(pid)
        stack.extend(children.get(pid, []))
    return total


def _build_job(tsv: str, index: str, workers: int | None, shards: int, scoring: str,
               queue) -> None:
    from mathir.indexing.formula_index import FormulaIndex

    t0, c0 = time.perf_counter(), machine.cpu_seconds()
    idx = FormulaIndex.build(tsv, index, quiet=True, workers=workers, shards=shards,
                             scoring=scoring)
    queue.put({"seconds": time.perf_counter() - t0, "cpu_seconds": machine.cpu_seconds() - c0,
               "manifest": idx.manifest})


def _query_job(index: str, queries: list[str], queue, prunes=PRUNES) -> None:
    import pandas as pd

    from mathir.indexing.formula_index import FormulaIndex
    from mathir.pipelines.formula import formula_tuples, formula_words

    defaults = inspect.signature(formula_tuples).parameters
    out: dict = {"rss_before_open_mb": round(rss_mb()),
                 "formula_tuples_pruning": {k: defaults[k].default
                                            for k in ("max_df", "max_terms", "prune_from")}}
    t0 = time.perf_counter()
    idx = FormulaIndex(index)
    out["open_seconds"] = round(time.perf_counter() - t0, 3)
    out["rss_after_open_mb"] = round(rss_mb())
    out["anon_rss_after_open_mb"] = round(anon_rss_mb())
    topics = pd.DataFrame({"qid": [str(i) for i in range(len(queries))], "query": queries})
    pipelines = [("formula-tuples", formula_tuples, "maxscore"),
                 ("formula-words", formula_words, "maxscore")]
    pipelines += [(f"formula-tuples[{a}]", formula_tuples, a) for a in ALGORITHMS]
    pipelines += [(f"formula-tuples[max_df={d},max_terms={t}]",
                   functools.partial(formula_tuples, max_df=d, max_terms=t, prune_from=0),
                   "maxscore")
                  for d, t in prunes]
    for name, make, algorithm in pipelines:
        pipe = make(idx, query_algorithm=algorithm)
        t0 = time.perf_counter()
        pipe.transform(topics.head(1))  # PISA opens its files and compiles its structures
        first = time.perf_counter() - t0
        times, cpu_times = [], []
        for i in range(len(topics)):
            # process_time: every thread's CPU (impact shards are searched in threads)
            t0, c0 = time.perf_counter(), time.process_time()
            pipe.transform(topics.iloc[i:i + 1])
            times.append(1000 * (time.perf_counter() - t0))
            cpu_times.append(1000 * (time.process_time() - c0))
        out[name] = {"first_query_seconds": round(first, 3),
                     "median_ms": round(statistics.median(times), 2),
                     "median_cpu_ms": round(statistics.median(cpu_times), 2),
                     "p95_ms": round(sorted(times)[math.ceil(0.95 * len(times)) - 1], 2),
                     "mean_ms": round(statistics.fmean(times), 2)}
    out["rss_after_queries_mb"] = round(rss_mb())
    out["anon_rss_after_queries_mb"] = round(anon_rss_mb())
    queue.put(out)


def _resident_job(index: str, queries: list[str], queue) -> None:
    """Resident memory of an opened index used as a researcher uses it: a fresh process
    opens it and runs the default ``formula-tuples`` over every query (one at a time)."""
    import pandas as pd

    from mathir.indexing.formula_index import FormulaIndex
    from mathir.pipelines.formula import formula_tuples

    pipe = formula_tuples(FormulaIndex(index))
    for i, query in enumerate(queries):
        pipe.transform(pd.DataFrame({"qid": [str(i)], "query": [query]}))
    queue.put({"default_resident_mb": round(rss_mb()),
               "default_anon_rss_mb": round(anon_rss_mb())})


def _in_child(target, *args, sample_rss: bool = False) -> tuple[dict, tuple[float, float]]:
    """Run ``target(*args, queue)`` in a spawned process; its result and the peaks of its
    process tree's resident and anonymous resident memory."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    peak = [0.0, 0.0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss_mb(proc.pid))
            peak[1] = max(peak[1], tree_rss_mb(proc.pid, anon_rss_mb))
            done.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    if sample_rss:
        sampler.start()
    result = queue.get()
    proc.join()
    done.set()
    if sample_rss:
        sampler.join()
    if proc.exitcode:
        raise SystemExit(f"error: the benchmark's child process failed ({proc.exitcode})")
    return result, (peak[0], peak[1])


def measure(tsv: Path, n: int, work: Path, queries: list[str], workers: int | None,
            shards: int = 1, scoring: str = "bm25") -> dict:
    """Build and search the index of ``tsv`` (``n`` formulas); the figures."""
    index = work / f"index-{n}"
    shutil.rmtree(index, ignore_errors=True)
    built, (peak, peak_anon) = _in_child(_build_job, str(tsv), str(index), workers, shards,
                                         scoring, sample_rss=True)
    manifest = built["manifest"]
    sizes = {p.relative_to(index).as_posix(): p.stat().st_size
             for p in index.rglob("*") if p.is_file()}
    raw = sum(v for k, v in sizes.items() if k.split("/")[-1].startswith("inv."))
    result = {
        "formulas": n,
        "indexed": manifest["num_formulas"],
        "distinct_parsed": manifest["distinct_parsed"],
        "postings": manifest["postings"],
        "terms": manifest["terms"],
        "fallback_rate": round(manifest["fallback_rate"], 4),
        "build_seconds": round(built["seconds"], 1),
        "build_cpu_seconds": round(built["cpu_seconds"], 1),
        "formulas_per_s": round(manifest["num_formulas"] / built["seconds"]),
        "formulas_per_cpu_s": round(manifest["num_formulas"] / built["cpu_seconds"]),
        "build_peak_rss_mb": round(peak),
        "build_peak_anon_rss_mb": round(peak_anon),
        "index_mb": round(sum(sizes.values()) / 2**20),
        "index_mb_without_raw_postings": round((sum(sizes.values()) - raw) / 2**20),
    }
    # First, in a process of its own: the index as its default pipeline uses it.
    resident, _ = _in_child(_resident_job, str(index), queries)
    result.update(resident)
    searched, _ = _in_child(_query_job, str(index), queries)
    result.update(searched)
    return result


def growth(results: list[dict]) -> dict:
    """Least-squares exponent b of cost ~ N^b for each measure (log-log fit)."""
    measures = {"build_seconds": lambda r: r["build_seconds"],
                "build_cpu_seconds": lambda r: r["build_cpu_seconds"],
                "build_peak_rss_mb": lambda r: r["build_peak_rss_mb"],
                "index_mb": lambda r: r["index_mb"],
                "rss_after_queries_mb": lambda r: r["rss_after_queries_mb"],
                "open_seconds": lambda r: r["open_seconds"],
                "tuples_median_ms": lambda r: r["formula-tuples"]["median_ms"],
                "tuples_p95_ms": lambda r: r["formula-tuples"]["p95_ms"],
                "words_median_ms": lambda r: r["formula-words"]["median_ms"]}
    if len(results) < 2:
        return {}
    xs = [math.log(r["formulas"]) for r in results]
    out = {}
    for name, get in measures.items():
        ys = [math.log(max(get(r), 1e-6)) for r in results]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        out[name] = round(sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
                          / sum((x - mx) ** 2 for x in xs), 2)
    return out


def plot(results: list[dict], exponents: dict, path: Path) -> None:
    """Cost against N (log-log): build time, peak memory, query times."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = [r["formulas"] / 1e6 for r in results]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    panels = [
        ("build (min)", [("wall", [r["build_seconds"] / 60 for r in results], "build_seconds"),
                         ("CPU", [r["build_cpu_seconds"] / 60 for r in results],
                          "build_cpu_seconds")]),
        ("memory (GB)", [("build peak", [r["build_peak_rss_mb"] / 1024 for r in results],
                          "build_peak_rss_mb"),
                         ("opened, after queries",
                          [r["rss_after_queries_mb"] / 1024 for r in results],
                          "rss_after_queries_mb")]),
        ("query (ms)", [("tuples median", [r["formula-tuples"]["median_ms"] for r in results],
                         "tuples_median_ms"),
                        ("tuples p95", [r["formula-tuples"]["p95_ms"] for r in results],
                         "tuples_p95_ms"),
                        ("words median", [r["formula-words"]["median_ms"] for r in results],
                         "words_median_ms")]),
    ]
    for ax, (title, series) in zip(axes, panels, strict=True):
        for label, ys, key in series:
            ax.plot(ns, ys, marker="o", label=f"{label} (N^{exponents.get(key, float('nan'))})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("formulas (millions)")
        ax.set_title(title)
        ax.legend(fontsize=7)
    fig.suptitle("FormulaIndex cost against collection size (2 cores, 24 GB)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = machine.parser(__doc__, data="arqmath")
    ap.add_argument("--formulas", default="100000",
                    help="N, or several as a comma list (default 100,000)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--workers", type=int, default=None,
                    help="formula parsing processes (default: FormulaIndex.build's choice)")
    ap.add_argument("--shards", type=int, default=1,
                    help="build in this many shards side by side (FormulaIndex.build(shards=))")
    ap.add_argument("--scoring", choices=("bm25", "bm25-impacts"), default="bm25",
                    help="bm25-impacts: keep the shards and search them side by side")
    ap.add_argument("--work", type=Path, default=None,
                    help="folder for the generated TSV and the index (default: a temporary one)")
    ap.add_argument("--out", type=Path, default=None,
                    help="save each N's result here and skip the N already saved")
    ap.add_argument("--plot", type=Path, default=None, help="write the scaling plot (PNG)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the largest N's index in --work (to search it again later)")
    args = ap.parse_args(argv)
    # In the order given (the largest first gets the headline figure soonest).
    ns = list(dict.fromkeys(int(x.replace("_", "")) for x in args.formulas.split(",")
                            if x.strip()))
    derived = args.data / DERIVED
    if not derived.is_file():
        print(f"error: derived formula table not found: {derived}", file=sys.stderr)
        return 2
    queries = task2_queries(args.data, args.queries)
    if queries is None:
        print(f"error: no Task 2 topics under {args.data / 'topics' / 'task2'}", file=sys.stderr)
        return 2
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    results = []
    with machine.work_folder(args.work, prefix="formula-bench-") as work:
        largest = max(ns)
        full = work / f"formulas-{largest}-g{GENERATOR_VERSION}.tsv"
        generated = None
        for n in ns:
            variant = "" if args.scoring == "bm25" else f"_{args.scoring}_{args.shards}shards"
            saved = args.out / f"formula_search_{n}{variant}.json" if args.out else None
            if saved and saved.is_file():
                results.append(json.loads(saved.read_text()))
                continue
            if not full.is_file():
                t0 = time.perf_counter()
                partial = full.with_suffix(".partial")
                generated, _ = _in_child(_generate_job, str(derived), str(partial), largest)
                partial.rename(full)
                generated["seconds"] = round(time.perf_counter() - t0, 1)
            tsv = full
            if n != largest:
                tsv = work / f"formulas-{n}.tsv"
                _prefix(full, tsv, n)
            result = measure(tsv, n, work, queries, args.workers, args.shards, args.scoring)
            if tsv != full:
                tsv.unlink()
            if not (args.keep and n == largest):
                shutil.rmtree(work / f"index-{n}", ignore_errors=True)
            result["workers"], result["shards"] = args.workers, args.shards
            result["scoring"] = args.scoring
            result["load_average_after"] = round(os.getloadavg()[0], 2)
            results.append(result)
            if saved:
                saved.write_text(json.dumps(result) + "\n")
    results.sort(key=lambda r: r["formulas"])
    calibration = machine.calibration_ms()
    exponents = growth(results)
    if args.plot and len(results) > 1:
        plot(results, exponents, args.plot)
    report = results[0] if len(results) == 1 else {"runs": results, "growth": exponents}
    report["calibration_ms"] = calibration
    if generated:
        report["generated"] = generated
    machine.print_report(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
