"""Benchmark: effectiveness of the Task 2 formula pipelines on real judged formulas.

The pool is every formula instance of the derived formula table
(``collection_sample/derived/formula_index_from_thread_html.tsv``, 3,395 real threads)
whose visual id is judged in a Task 2 visual-id qrels file (v3 numbering). Each
pipeline indexes the pool and ranks it for every Task 2 topic with at least one judged
visual id in it; runs are evaluated the official way (visual-id dedup, prime measures)
against the visual-id qrels restricted to the pool, so a perfect ranking scores 1.

    python benchmarks/arqmath_formula_pool.py --json [--data ../shared/data/arqmath]
        [--scoring bm25-impacts [--shards 3]] [--prune 0.05:64 --prune 0.02:none]

``formula-tuples`` prunes its queries in indexes of 1M formulas or more only, so not the
pool's; ``--prune MAX_DF:MAX_TERMS`` adds ``formula-tuples`` with first-stage pruning on
the pool (:class:`mathir.pipelines.formula.PruneQuery` with ``prune_from=0``; ``none``
switches a rule off) as the pipeline ``formula-tuples[max_df=...,max_terms=...]``.

Prints per year and overall nDCG', MAP', P'@10 per pipeline, and the parse-fallback
counts of the pool and of the query formulas; wall and CPU seconds (``wall_s``,
``cpu_s``) and ``calibration_ms``.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pandas as pd

try:  # python benchmarks/arqmath_formula_pool.py
    import machine
except ModuleNotFoundError:  # benchmarks.arqmath_formula_pool, from the repository root
    from benchmarks import machine
from mathir.evaluation.formula_search import evaluate_task2, visual_id_map
from mathir.indexing.formula_index import FormulaIndex
from mathir.indexing.pisa_impacts import SCORINGS
from mathir.pipelines.formula import formula_tuples, formula_words
from mathir.qrels.trec import read_qrels
from mathir.readers.formula_tsv import iter_formula_index
from mathir.topics.arqmath import read_task2_topics

QRELS = {"2020": "qrel_task2_2020_visual_id_v3_official.tsv",
         "2021": "qrel_task2_2021_visual_id_v3_official.tsv",
         "2022": "qrel_task2_2022_visual_id_official.tsv"}
PIPELINES = {"formula-words": formula_words, "formula-tuples": formula_tuples}


def build_pool(data: Path, out: Path) -> tuple[Path, dict[str, pd.DataFrame]]:
    """Write the pool TSV; return it and the pool-restricted qrels of each year."""
    qrels = {y: read_qrels(data / "qrels" / "task2" / f) for y, f in QRELS.items()}
    judged = set().union(*(set(q["docno"]) for q in qrels.values()))
    derived = data / "collection_sample" / "derived" / "formula_index_from_thread_html.tsv"
    pool = out / "pool.tsv"
    present: set[str] = set()
    with open(pool, "w", encoding="utf-8") as f:
        f.write("id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n")
        for r in iter_formula_index(derived):
            if r.visual_id in judged:
                present.add(r.visual_id)
                f.write(f"{r.formula_id}\t{r.post_id}\t{r.thread_id}\t{r.type}\t{r.visual_id}\t"
                        f"{r.formula}\n")
    return pool, {y: q[q["docno"].isin(present)] for y, q in qrels.items()}


def _prune(text: str) -> tuple[float | None, int | None]:
    """``MAX_DF:MAX_TERMS`` (either ``none``) as PruneQuery's two parameters."""
    try:
        max_df, max_terms = text.split(":")
        return (None if max_df.lower() == "none" else float(max_df),
                None if max_terms.lower() == "none" else int(max_terms))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MAX_DF:MAX_TERMS, e.g. 0.05:64, not {text!r}"
                                         ) from None


def main(argv: list[str] | None = None) -> int:
    ap = machine.parser(__doc__, data="arqmath")
    ap.add_argument("--scoring", choices=SCORINGS, default="bm25",
                    help="the formula index's scoring (bm25-impacts: BM25 impacts in shards)")
    ap.add_argument("--shards", type=int, default=1,
                    help="with --scoring bm25-impacts: shards of the pool (the same ranking)")
    ap.add_argument("--prune", action="append", default=[], metavar="MAX_DF:MAX_TERMS",
                    type=_prune, help="also formula-tuples with this query pruning "
                    "(repeatable; 'none' switches a rule off)")
    args = ap.parse_args(argv)
    pipelines = dict(PIPELINES)
    for max_df, max_terms in args.prune:
        pipelines[f"formula-tuples[max_df={max_df},max_terms={max_terms}]"] = \
            functools.partial(formula_tuples, max_df=max_df, max_terms=max_terms, prune_from=0)
    if not (args.data / "collection_sample").is_dir():
        print(f"error: no ARQMath data at {args.data}", file=sys.stderr)
        return 2
    clock = machine.Clock()
    result: dict = {"pipelines": {}, "topics": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        pool, qrels = build_pool(args.data, tmp)
        t0 = time.perf_counter()
        index = FormulaIndex.build(pool, tmp / "index", quiet=True, scoring=args.scoring,
                                   shards=args.shards)
        result["scoring"], result["shards"] = args.scoring, args.shards
        result["index_seconds"] = round(time.perf_counter() - t0, 2)
        result["pool_formulas"] = index.num_docs
        result["pool_fallbacks"] = index.fallbacks
        vids = visual_id_map(pool)
        topics = {}
        for year in QRELS:
            t = read_task2_topics(next((args.data / "topics" / "task2").glob(
                f"Topics_Task2_{year}*.xml")))
            topics[year] = t[t["qid"].isin(set(qrels[year]["qid"]))].reset_index(drop=True)
            result["topics"][year] = len(topics[year])
        all_qrels = pd.concat(qrels.values(), ignore_index=True)
        for name, make in pipelines.items():
            pipe = make(index)
            scores: dict[str, dict] = {}
            runs = {}
            t0 = time.perf_counter()
            for year, t in topics.items():
                runs[year] = pipe.transform(t)
            seconds = time.perf_counter() - t0
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for year in topics:
                    table = evaluate_task2({name: runs[year]}, qrels[year], visual_ids=vids)
                    scores[year] = {m: round(float(v), 4) for m, v in table.loc[name].items()}
                table = evaluate_task2({name: pd.concat(runs.values())}, all_qrels,
                                       visual_ids=vids)
            scores["all"] = {m: round(float(v), 4) for m, v in table.loc[name].items()}
            n_topics = sum(len(t) for t in topics.values())
            scores["ms_per_query"] = round(1000 * seconds / max(1, n_topics), 2)
            result["pipelines"][name] = scores
    result.update(clock.seconds(1))
    result["calibration_ms"] = machine.calibration_ms()
    machine.print_report(result, args.json, lambda r: "\n".join(
        [f"{name} {s}" for name, s in r["pipelines"].items()]
        + [str({k: v for k, v in r.items() if k != "pipelines"})]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
