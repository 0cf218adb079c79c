"""Benchmark: lexical, neural and fused Task 1 pipelines on the judged pool of real answers.

``../shared/data/arqmath/collection_sample/thread_html_arqmath2`` holds 1,444 real
threads whose answers are judged in the ARQMath Task 1 qrels. For each year this runs
``mathir experiment arqmath-task1 --data ../shared/data/arqmath --year Y`` (qrels
restricted to the pool, so a perfect ranking scores 1.0) with every pipeline below,
and measures on this machine's CPU:

* encoding throughput of the bi-encoder (passages/s; best batch size, torch threads);
* reranking latency of BM25's top 100 per topic (bi-encoder; cross-encoder if given).

    python benchmarks/arqmath_judged_pool.py --json                  # 2021
    python benchmarks/arqmath_judged_pool.py --years 2020,2021,2022 --cross-encoder DIR --json

``--json`` prints ``{"systems": {name: {measure: value}}, "speed": {...}, "goal": {...}}``
(``systems`` for the first year; ``by_year`` holds every year). Goal: the best fused
pipeline beats BM25's nDCG' on 2021 by at least 10% relative. The fusion weights were
chosen on 2020 and 2022, not on 2021.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "arqmath"
PIPELINES = ["tfidf", "bm25", "bm25>>biencoder", "dense", "fusion"]
FUSED = ("fusion", "formula-aware", "formula-aware-rrf")


def effectiveness(data: Path, year: str, pipelines: list[str], out: Path, quiet: bool) -> dict:
    from mathir.tasks import get_task, run_experiment

    task = get_task("arqmath-task1")
    res = run_experiment(task, task.data(data, year), pipelines, out=out, quiet=quiet)
    table = res.table.round(4)
    return {"systems": {n: {m: float(v) for m, v in row.items()} for n, row in table.iterrows()},
            "seconds": {k: round(v, 2) for k, v in res.seconds.items()}}


def speed(data: Path, out: Path, cross_encoder: str | None, topics_n: int = 10,
          quiet: bool = True) -> dict:
    import torch

    from mathir.indexing.dense_index import AnswerTexts, PassageSettings
    from mathir.pipelines import neural
    from mathir.pipelines.lexical import bm25
    from mathir.tasks import get_task

    task = get_task("arqmath-task1")
    d = task.data(data, "2021")
    index = task.index(d, quiet=quiet, cache_root=out / ".index")
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(DATA), help="ARQMath data folder (with the pool)")
    ap.add_argument("--years", default="2021", help="comma-separated years (default: 2021)")
    ap.add_argument("--pipelines", help=f"comma-separated (default: {','.join(PIPELINES)}, "
                    "plus bm25>>crossencoder with --cross-encoder)")
    ap.add_argument("--cross-encoder", help="a trained cross-encoder (mathir train-reranker)")
    ap.add_argument("--out", help="run and index folder (default: a temporary one)")
    ap.add_argument("--no-speed", action="store_true", help="skip the speed measurements")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.json:
        os.environ["TQDM_DISABLE"] = "1"
    data = Path(args.data)
    if not data.is_dir():
        print(f"error: {data}: data folder not found", file=sys.stderr)
        return 2
    pipelines = args.pipelines.split(",") if args.pipelines else list(PIPELINES)
    if args.cross_encoder:
        os.environ["MATHIR_CROSS_ENCODER"] = args.cross_encoder
        if not args.pipelines:
            pipelines.append("bm25>>crossencoder")
    out = Path(args.out or tempfile.mkdtemp(prefix="judged-pool-"))
    by_year = {y: effectiveness(data, y, pipelines, out, quiet=args.json)
               for y in args.years.split(",")}
    first = next(iter(by_year.values()))["systems"]
    result = {"systems": first, "by_year": by_year}
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
        result["speed"] = speed(data, out, args.cross_encoder)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for y, r in by_year.items():
            print(f"== {y} ==")
            print(pd.DataFrame(r["systems"]).T.to_markdown(floatfmt=".3f"))
        print(json.dumps({k: v for k, v in result.items() if k in ("goal", "speed")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
