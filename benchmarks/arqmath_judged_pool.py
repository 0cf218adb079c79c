"""Benchmark: lexical, neural and fused Task 1 pipelines on the judged pool of real answers.

``../shared/data/arqmath/collection_sample/threads_all`` holds all 3,395 real thread files
of MathDowsers' renderings of the ARQMath collection (one answer each, no cut; 2,295 of
the answers are judged in a Task 1 qrels file). The collection is the one the task's
data finder takes (:func:`mathir.tasks.arqmath.find_task1_collection`: ``threads_all``
before any other thread folder), or ``--collection PATH``; the JSON names it. For each
year this runs ``mathir experiment arqmath-task1 --data ../shared/data/arqmath --year Y``
(qrels restricted to the pool, so a perfect ranking scores 1.0) with every pipeline
below, and measures on this machine's CPU:

* encoding throughput of the bi-encoder (passages/s; best batch size, torch threads);
* reranking latency of BM25's top 100 per topic (bi-encoder; cross-encoder if given).

    python benchmarks/arqmath_judged_pool.py --json                  # 2021
    python benchmarks/arqmath_judged_pool.py --years 2020,2021,2022 --cross-encoder DIR --json

``--json`` prints ``{"systems": {name: {measure: value}}, "speed": {...}, "goal": {...}}``
(``systems`` for the first year; ``by_year`` holds every year). Goal: the best fused
pipeline beats BM25's nDCG' on 2021 by at least 10% relative. The library's fusion
weights were chosen on 2020 and 2022, not on 2021.

Every table has two rows that no system makes, so that what the pool rewards by itself
is visible beside the systems: ``length-only`` (each topic's judged pool answers ranked
by the length of the answer's text alone, min-max normalised per topic: under the prime
measures the same as ranking the whole pool by length, with no cutoff) and ``random
order (floor)`` (the mean over 20 seeds of random orders of each topic's judged pool
answers). ``checks`` also holds the ranking by thread-file size alone, the figure of the
data's MANIFEST.

``--peers`` (instead of the above) puts the ARQMath-1 participants' runs
(``DATA/runs/arqmath1``) beside mathir's pipelines on the 2020 pool, by the protocol of
:mod:`mathir.evaluation.pool_completion`: qrels restricted to the pool; every run,
mathir's included, restricted to the pool's answers, with each topic's judged pool
answers it did not retrieve appended after its own ranking in a random order; scores
averaged over 20 seeds (spread reported); the random-order floor (an empty run,
completed) and the length-only ranking as rows. What each participant run covers of the
pool (``coverage``: its rows, those of pool answers, those judged in the pool's qrels,
and the share of the pool's judged answers it retrieved) is reported beside it.
mathir's ``fusion`` is re-tuned WITHOUT 2020: the (BM25, dense, formulas) weights are
chosen over a grid (steps of 0.1, summing to 1: 66 points) by nDCG' over the 2021 and
2022 pool topics pooled, from the stored component runs, then the library's ``fusion``
pipeline runs on 2020 with those weights (``fusion-tuned-2021-2022``).
``fusion-default`` (the library's weights, chosen on 2020 and 2022) is shown for
reference and is never the "best mathir" row. A paired t-test and a Wilcoxon test over
the 2020 topics compare mathir's best pipeline that did not see 2020 with the best
submitted participant run. Goal: +0.03 nDCG', p < 0.05 (t-test).

    python benchmarks/arqmath_judged_pool.py --peers --out runs/peers --json

Runs, the answer index and the dense index go under ``--out`` and are reused while
unchanged. Every result carries ``wall_s`` and ``cpu_s`` (this process's CPU time) and
``calibration_ms``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

try:  # python benchmarks/arqmath_judged_pool.py
    import machine
except ModuleNotFoundError:  # benchmarks.arqmath_judged_pool, from the repository root
    from benchmarks import machine

PIPELINES = ["tfidf", "bm25", "bm25>>biencoder", "dense", "fusion"]
FUSED = ("fusion", "formula-aware", "formula-aware-rrf")


def effectiveness(data: Path, year: str, pipelines: list[str], out: Path, quiet: bool,
                  options: dict | None = None, collection: Path | None = None) -> dict:
    """One year's table: ``pipelines`` by ``run_experiment``, then the length-only and
    random-order rows (:func:`reference_rows`) on the same pool qrels."""
    from mathir.experiment import run_experiment
    from mathir.tasks import get_task

    task = get_task("arqmath-task1")
    d = task.data(data, year, collection)
    res = run_experiment(task, d, pipelines, out=out, quiet=quiet, options=options)
    table = res.table.round(4)
    systems = {n: {m: float(v) for m, v in row.items()} for n, row in table.iterrows()}
    qrels, _ = pool_qrels(task, d)
    rows, checks = reference_rows(qrels, Path(d.collection))
    systems.update(rows)
    return {"systems": systems, "checks": checks, "pool": pool_summary(qrels),
            "seconds": {k: round(v, 2) for k, v in res.seconds.items()}}


def pool_qrels(task, d):
    """``d``'s qrels restricted to the answers of its collection (as ``run_experiment``
    restricts them), and those answers."""
    from mathir.evaluation.evaluated import qrels_in_collection

    index = task.index(d, quiet=True)
    docnos = set(index.docnos())
    return qrels_in_collection(task.read_qrels(d.qrels), docnos), docnos


def pool_summary(qrels: pd.DataFrame) -> dict:
    """Topics, judged answers and relevant (>= 2) answers per topic of pool qrels."""
    judged = qrels.groupby("qid")["label"]
    answers = judged.size()
    relevant = judged.agg(lambda x: int((x >= 2).sum()))
    return {"topics": int(qrels["qid"].nunique()), "judged_pool_answers": int(len(qrels)),
            "answers_per_topic": {"mean": round(float(answers.mean()), 2),
                                  "median": float(answers.median()), "max": int(answers.max()),
                                  "topics_with_at_most_10": int((answers <= 10).sum())},
            "relevant_per_topic": {"mean": round(float(relevant.mean()), 2),
                                   "max": int(relevant.max()),
                                   "topics_with_none": int((relevant == 0).sum())}}


_LENGTHS: dict[str, dict[str, int]] = {}


def answer_lengths(collection: Path) -> dict[str, int]:
    """docno -> characters of the answer's own text (formulas as ``$LaTeX$``, no title),
    as mathir's reader makes it; read once per collection."""
    from mathir.indexing.answer_collection import AnswerCollection

    key = str(Path(collection).resolve())
    if key not in _LENGTHS:
        _LENGTHS[key] = {a["docno"]: len(a["text"]) for a in
                         AnswerCollection.at(collection).iter_answers(with_title=False)}
    return _LENGTHS[key]


def reference_rows(qrels: pd.DataFrame, collection: Path) -> tuple[dict, dict]:
    """The rows no system makes, on pool ``qrels``: ``length-only``
    (:func:`~mathir.evaluation.pool_completion.length_run` over the answers' text lengths)
    and ``random order (floor)`` (the mean over the protocol's seeds of random orders;
    ``nDCG'_seed_sd`` its spread); and, in the second dict, the ranking by thread-file size
    alone (the data MANIFEST's figure)."""
    from mathir.evaluation.pool_completion import (
        DEFAULT_SEEDS,
        length_run,
        random_floor,
        seed_summary,
        thread_file_sizes,
    )
    from mathir.evaluation.prime import per_query

    def means(table: pd.DataFrame) -> dict:
        return {m: round(float(v), 4) for m, v in table.drop(columns="qid").mean().items()}

    rows = {"length-only": means(per_query(length_run(qrels, answer_lengths(collection)),
                                           qrels))}
    summary = seed_summary(random_floor(qrels, DEFAULT_SEEDS)[1])
    rows["random order (floor)"] = {m: round(v["mean"], 4) for m, v in summary.items()}
    rows["random order (floor)"]["nDCG'_seed_sd"] = round(summary["nDCG'"]["sd"], 4)
    checks = {}
    if Path(collection).is_dir():
        checks["thread-file-size-only"] = means(
            per_query(length_run(qrels, thread_file_sizes(collection)), qrels))
    return rows, checks


def speed(data: Path, cross_encoder: str | None, topics_n: int = 10,
          quiet: bool = True, collection: Path | None = None) -> dict:
    import torch

    from mathir.indexing.dense_index import AnswerTexts, PassageSettings
    from mathir.pipelines import neural
    from mathir.pipelines.lexical import bm25
    from mathir.tasks import get_task

    task = get_task("arqmath-task1")
    d = task.data(data, "2021", collection)
    index = task.index(d, quiet=quiet)
    texts = AnswerTexts.for_index(index)
    passages = PassageSettings().transformer()(texts.frame())["text"].tolist()[:512]
    enc = neural.load_bi_encoder()
    enc.encode(passages[:32])  # warm up
    throughput = {}
    for bs in (16, 32, 64):
        t0 = time.perf_counter()
        enc.st.encode_docs(passages, batch_size=bs)
        throughput[bs] = len(passages) / (time.perf_counter() - t0)
    best = max(throughput, key=throughput.get)
    topics = task.read_topics(d.topics).head(topics_n)
    first = (bm25(index, num_results=100)).transform(topics)
    result = {"encoding": {"passages": len(passages), "threads": torch.get_num_threads(),
                           "passages_per_s_by_batch": {str(k): round(v, 1) for k, v in throughput.items()},
                           "batch_size": best, "passages_per_s": round(throughput[best], 1)},
              "rerank_top100": {"topics": len(topics)}}
    # No embedding cache: every topic's 100 answers are encoded (cold latency).
    rerankers = {"biencoder": neural.bi_encoder_reranker(texts, batch_size=best, cache_size=0)}
    if cross_encoder:
        rerankers["crossencoder"] = neural.cross_encoder_reranker(texts, cross_encoder)
    for name, rr in rerankers.items():
        rr.transform(first[first["qid"] == topics["qid"].iloc[0]])  # warm up
        t0 = time.perf_counter()
        for qid in topics["qid"]:
            rr.transform(first[first["qid"] == qid])
        result["rerank_top100"][f"{name}_ms_per_topic"] = round(
            1000 * (time.perf_counter() - t0) / len(topics), 1)
    return result


# --- ARQMath-1 participants beside mathir (--peers) ------------------------------------------

EVAL_YEAR = "2020"
TUNE_YEARS = ("2021", "2022")
#: the fusion weight grid: (BM25, dense, formulas) in steps of WEIGHT_STEP summing to 1
WEIGHT_STEP = 0.1
#: runs/arqmath1 files (stem) that are not teams' submitted runs
NOT_SUBMITTED = {"Linked_MSE_baseline": "organisers' baseline (linked MSE posts)",
                 "MIRMU-posthoc-ensemble-all-runs-task1": "post-hoc fusion of ARQMath-1 runs"}
#: what each mathir row saw of the ARQMath qrels
SAW = {"tfidf": "none", "bm25": "none", "dense": "none (pretrained all-MiniLM-L6-v2)",
       "formulas": "none"}


def weight_grid(step: float = WEIGHT_STEP) -> list[tuple[float, float, float]]:
    """(BM25, dense, formulas) weights in steps of ``step``, summing to 1.

    >>> len(weight_grid()), weight_grid()[:2]
    (66, [(0.0, 0.0, 1.0), (0.0, 0.1, 0.9)])
    """
    n = round(1 / step)
    return [(round(i * step, 10), round(j * step, 10), round((n - i - j) * step, 10))
            for i in range(n + 1) for j in range(n + 1 - i)]


def _year_runs(task, data: Path, year: str, out: Path, quiet: bool,
               collection: Path | None = None) -> dict:
    """The component runs of one year (reused from ``out`` while unchanged), the pool's
    qrels and topics."""
    from mathir.experiment import run_experiment
    from mathir.tasks.arqmath import answer_formulas

    d = task.data(data, year, collection)
    res = run_experiment(task, d, ["tfidf", "bm25", "dense", {"formulas": answer_formulas}],
                         out=out, quiet=quiet)
    qrels, docnos = pool_qrels(task, d)
    topics = task.read_topics(d.topics)
    runs = {n: task.read_run(p) for n, p in res.runs.items()}
    return {"data": d, "runs": runs, "qrels": qrels, "topics": topics, "docnos": docnos,
            "seconds": {k: round(v, 1) for k, v in res.seconds.items()}}


def _fused(runs: dict, topics, weights) -> pd.DataFrame:
    import pyterrier as pt

    from mathir.pipelines.fusion import LinearFusion

    parts = [pt.Transformer.from_df(runs[n][["qid", "docno", "score"]])
             for n in ("bm25", "dense", "formulas")]
    return LinearFusion(parts, list(weights), num_results=1000)(topics)


def tune_fusion(years: dict) -> dict:
    """The grid's best (BM25, dense, formulas) weights by nDCG' over the topics of
    ``years`` (all their qrels topics pooled; the first best in grid order wins)."""
    from mathir.evaluation.prime import per_query

    scores = []
    for w in weight_grid():
        per = [per_query(_fused(y["runs"], y["topics"], w), y["qrels"])["nDCG'"]
               for y in years.values()]
        scores.append((float(pd.concat(per).mean()), w))
    best = max(scores, key=lambda s: s[0])  # max keeps the first of equal scores
    top = sorted(scores, key=lambda s: -s[0])[:5]
    return {"weights": list(best[1]), "ndcg": round(best[0], 4), "tuned_on": list(years),
            "grid": f"(bm25, dense, formulas) in steps of {WEIGHT_STEP}, summing to 1 "
                    f"({len(scores)} points)",
            "top5": [{"weights": list(w), "ndcg": round(s, 4)} for s, w in top]}


def peers(data: Path, out: Path, quiet: bool, collection: Path | None = None) -> dict:
    """ARQMath-1 participants' runs and mathir's pipelines on the 2020 judged pool, by
    the pool-completion protocol (:mod:`mathir.evaluation.pool_completion`)."""
    from mathir.tasks import get_task

    task = get_task("arqmath-task1")
    stage: dict[str, dict] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    years = {y: _year_runs(task, data, y, out, quiet, collection)
             for y in (*TUNE_YEARS, EVAL_YEAR)}
    stage["component_runs"] = {"wall_s": round(time.perf_counter() - t0, 1),
                               "cpu_s": round(time.process_time() - c0, 1)}
    result = _peers_on(task, data, out, quiet, years, stage)
    # What the library's default weights (chosen on 2020 + 2022) would be on this pool:
    # reported only, never used for the goal.
    t0, c0 = time.perf_counter(), time.process_time()
    result["tuning_2020_2022"] = tune_fusion({y: years[y] for y in ("2020", "2022")})
    stage["tuning_2020_2022"] = {"wall_s": round(time.perf_counter() - t0, 1),
                                 "cpu_s": round(time.process_time() - c0, 1)}
    result["seconds"] = stage
    result["component_run_seconds"] = {y: v["seconds"] for y, v in years.items()}
    return result


def _peers_on(task, data: Path, out: Path, quiet: bool, years: dict, stage: dict) -> dict:
    """The --peers table, tuning and tests on the pools of ``years`` (their qrels and
    answers): every run scored by :func:`mathir.evaluation.pool_completion.completed_row`."""
    import functools

    from mathir.evaluation.pool_completion import (
        DEFAULT_SEEDS,
        completed_row,
        completed_scores,
        length_run,
        random_floor,
        seed_row,
    )
    from mathir.evaluation.prime import per_query
    from mathir.evaluation.significance import significance_table
    from mathir.experiment import run_experiment
    from mathir.pipelines.neural import FUSION_WEIGHTS_WITH_FORMULAS
    from mathir.tasks.arqmath import fusion

    def clock(name: str, t0: float, c0: float) -> None:
        stage[name] = {"wall_s": round(time.perf_counter() - t0, 1),
                       "cpu_s": round(time.process_time() - c0, 1)}

    t0, c0 = time.perf_counter(), time.process_time()
    tuning = tune_fusion({y: years[y] for y in TUNE_YEARS})
    clock("tuning", t0, c0)

    t0, c0 = time.perf_counter(), time.process_time()
    ev = years[EVAL_YEAR]
    tuned_w = tuple(tuning["weights"])
    default_w = tuple(FUSION_WEIGHTS_WITH_FORMULAS)
    tuned_name = "fusion-tuned-" + "-".join(TUNE_YEARS)
    # The library's own fusion pipeline with the weights chosen on 2021+2022 (run files
    # and manifests under `out`, like every run of this benchmark).
    res = run_experiment(task, ev["data"], [{tuned_name: functools.partial(fusion, weights=tuned_w),
                                             "fusion-default": "fusion"}], out=out, quiet=quiet)
    mathir_runs = {n: ev["runs"][n] for n in ("tfidf", "bm25", "dense", "formulas")}
    mathir_runs.update({n: task.read_run(p) for n, p in res.runs.items()})
    # the tuned fusion of the stored component runs must be the pipeline's own ranking
    check = per_query(_fused(ev["runs"], ev["topics"], tuned_w), ev["qrels"])["nDCG'"].mean()
    saw = {**SAW, tuned_name: "+".join(TUNE_YEARS) + f" (weights {list(tuned_w)})",
           "fusion-default": f"2020+2022 (library default weights {list(default_w)})"}
    qrels, docnos = ev["qrels"], ev["docnos"]
    rows, per_topic = [], {}
    for n, run in mathir_runs.items():
        row, per_topic[n] = completed_row(run, qrels, docnos, DEFAULT_SEEDS)
        rows.append({"run": n, "kind": "mathir", "saw": saw[n], **row})
    folder = data / "runs" / "arqmath1"
    peer_names = []
    for path in sorted(folder.glob("*.tsv")):
        if "task2" in path.stem:
            continue
        run = task.read_run(path)
        row, per_topic[path.stem] = completed_row(run, qrels, docnos, DEFAULT_SEEDS)
        kind = NOT_SUBMITTED.get(path.stem, "ARQMath-1 submitted run")
        saw_peer = ("made after the 2020 judgments" if path.stem in NOT_SUBMITTED
                    and "posthoc" in path.stem else "none (made before the 2020 judgments)")
        rows.append({"run": path.stem, "kind": kind, "saw": saw_peer, **row})
        peer_names.append(path.stem)
    length = length_run(qrels, answer_lengths(Path(ev["data"].collection)))
    _, lps = completed_scores(length, qrels, DEFAULT_SEEDS, docnos)
    rows.append({"run": "length-only", "kind": "reference", "saw": "none (answer length alone)",
                 **seed_row(lps, per_query(length, qrels))})
    _, fps = random_floor(qrels, DEFAULT_SEEDS)
    rows.append({"run": "random order (floor)", "kind": "floor", "saw": "none",
                 **seed_row(fps)})
    clock("evaluation", t0, c0)

    def ndcg(n: str) -> float:
        return float(per_topic[n]["nDCG'"].mean())

    blind = [n for n in mathir_runs if n != "fusion-default"]  # did not see 2020
    best_mathir = max(blind, key=ndcg)
    submitted = [n for n in peer_names if n not in NOT_SUBMITTED]
    best_peer = max(submitted, key=ndcg)
    best_any = max(peer_names, key=ndcg)
    tests = {}
    pairs = (("best_submitted", best_mathir, best_peer),
             ("best_of_all_peer_rows", best_mathir, best_any),
             # for reference only: these weights were chosen on 2020 (and 2022)
             ("fusion_default_saw_2020_vs_best_submitted", "fusion-default", best_peer))
    for label, ours, other in pairs:
        entry = {"peer": other, "mathir": ours, "delta_ndcg": round(ndcg(ours) - ndcg(other), 4),
                 "topics": int(len(per_topic[other]))}
        for test in ("t", "wilcoxon"):
            sig = significance_table({other: per_topic[other], ours: per_topic[ours]},
                                     ["nDCG'"], baseline=other, test=test)
            p = float(sig.loc[(ours, "nDCG'"), "p"])
            entry[f"p_{test}"] = float(f"{p:.3g}")
            if test == "t":  # the paired difference's 95% t interval
                lo_hi = sig.loc[(ours, "nDCG'"), ["ci_low", "ci_high"]].tolist()
                entry["delta_ci95"] = [round(float(x), 4) for x in lo_hi]
        tests[label] = entry
    g = tests["best_submitted"]
    return {
        "protocol": {
            "year": EVAL_YEAR, "collection": str(ev["data"].collection),
            "pool_answers": len(docnos), **pool_summary(qrels),
            "qrels": "official 2020 qrels restricted to the pool's answers",
            "completion": "every run (mathir's too) restricted to the pool's answers; each "
                          "topic's judged pool answers it did not retrieve appended after "
                          "its own ranking in a random order",
            "seeds": len(DEFAULT_SEEDS),
            "scores": "mean over seeds; nDCG'_seed_sd and _range over the seeds",
        },
        "table": rows,
        "tuning": tuning,
        "tuned_fusion_check": {"from_component_runs": round(float(check), 4),
                               "pipeline_not_completed": next(
                                   r["nDCG'_not_completed"] for r in rows
                                   if r["run"] == tuned_name)},
        "tests": tests,
        "goal": {"best_mathir": best_mathir, "best_submitted_peer": best_peer,
                 "delta_ndcg": g["delta_ndcg"], "p_t": g["p_t"], "p_wilcoxon": g["p_wilcoxon"],
                 "met": bool(g["delta_ndcg"] >= 0.03 and g["p_t"] < 0.05)},
    }


def peers_markdown(result: dict) -> str:
    """The --peers table as markdown."""
    # Written here: pandas' to_markdown needs tabulate, which mathir does not install,
    # and mathir's format_table renders numeric tables only.
    cols = ["run", "kind", "saw", "nDCG'", "nDCG'_seed_sd", "MAP'", "P'@10", "bpref",
            "nDCG'_not_completed", "judged_pool_answers_retrieved"]
    lines = ["| " + " | ".join(cols) + " |",
             "|" + "|".join(":--" if c in ("run", "kind", "saw") else "--:" for c in cols) + "|"]
    for row in result["table"]:
        cov = row.get("coverage")
        row = {**row, "judged_pool_answers_retrieved":
               f"{cov['judged_in_pool']} of {cov['of_pool_judged']}" if cov else ""}
        cells = [f"{row[c]:.4f}" if isinstance(row.get(c), float) else str(row.get(c, ""))
                 for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = machine.parser(__doc__, data="arqmath", data_help="ARQMath data folder (with the pool)")
    ap.add_argument("--years", default="2021", help="comma-separated years (default: 2021)")
    ap.add_argument("--pipelines", help=f"comma-separated (default: {','.join(PIPELINES)}, "
                    "plus bm25>>crossencoder with --cross-encoder)")
    ap.add_argument("--cross-encoder", help="a trained cross-encoder (mathir train-reranker)")
    ap.add_argument("--out", help="run and index folder (default: a temporary one)")
    ap.add_argument("--collection", help="the pool's collection (default: the one the task "
                    "finds under --data: threads_all before any other thread folder)")
    ap.add_argument("--no-speed", action="store_true", help="skip the speed measurements")
    ap.add_argument("--peers", action="store_true",
                    help="the ARQMath-1 participants' runs beside mathir's on the 2020 pool")
    args = ap.parse_args(argv)
    from mathir.report.tables import format_table
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.json:
        os.environ["TQDM_DISABLE"] = "1"
    data = args.data
    if not data.is_dir():
        print(f"error: {data}: data folder not found", file=sys.stderr)
        return 2
    pipelines = args.pipelines.split(",") if args.pipelines else list(PIPELINES)
    options = {"cross_encoder": args.cross_encoder} if args.cross_encoder else None
    if args.cross_encoder:
        if not args.pipelines:
            pipelines.append("bm25>>crossencoder")
    out = Path(args.out or tempfile.mkdtemp(prefix="judged-pool-"))
    # the indexes under OUT, for every path of this run (run_experiment's too)
    os.environ.setdefault("MATHIR_INDEX_DIR", str(out / ".index"))
    from mathir.tasks.arqmath import find_task1_collection

    collection = Path(args.collection) if args.collection else find_task1_collection(data)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    if args.peers:
        result = peers(data, out, quiet=args.json, collection=collection)
        result["collection"] = str(collection)
        result["wall_s"] = round(time.perf_counter() - wall0, 1)
        result["cpu_s"] = round(time.process_time() - cpu0, 1)
        result["calibration_ms"] = machine.calibration_ms()
        machine.print_report(result, args.json, lambda r: peers_markdown(r) + "\n" + json.dumps(
            {k: r[k] for k in ("collection", "tuning", "tests", "goal", "wall_s", "cpu_s",
                               "calibration_ms")}, indent=1))
        return 0
    by_year = {y: effectiveness(data, y, pipelines, out, quiet=args.json, options=options,
                                collection=collection)
               for y in args.years.split(",")}
    first = next(iter(by_year.values()))["systems"]
    result = {"collection": str(collection), "systems": first, "by_year": by_year}
    if "2021" in by_year:
        s = by_year["2021"]["systems"]
        fused = {n: v["nDCG'"] for n, v in s.items() if n in FUSED}
        if fused and "bm25" in s:
            best = max(fused, key=fused.get)
            base = s["bm25"]["nDCG'"]
            result["goal"] = {"bm25_ndcg": base, "best_fused": best, "best_fused_ndcg": fused[best],
                              "relative_gain": round(fused[best] / base - 1, 4),
                              "met": fused[best] >= 1.1 * base}
    if not args.no_speed:
        result["speed"] = speed(data, args.cross_encoder, collection=collection)
    result["wall_s"] = round(time.perf_counter() - wall0, 1)
    result["cpu_s"] = round(time.process_time() - cpu0, 1)
    result["calibration_ms"] = machine.calibration_ms()

    def text(r: dict) -> str:
        tables = [f"== {y} ==\n" + format_table(pd.DataFrame(v["systems"]).T, "markdown",
                                                 digits=3) for y, v in r["by_year"].items()]
        return "\n".join([*tables, json.dumps({k: v for k, v in r.items()
                                                if k in ("goal", "speed")}, indent=1)])

    machine.print_report(result, args.json, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
