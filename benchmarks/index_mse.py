"""Benchmark: end-to-end indexing and retrieval on a synthetic Posts.V1.3.xml.

Generates N posts in the official ARQMath format (a question followed by answers,
escaped HTML bodies with ``math-container`` spans, Zipf-distributed vocabulary), then
measures ``AnswerIndex.build`` (XML parsing, HTML/LaTeX extraction, PISA and TF-IDF)
and BM25 / TF-IDF retrieval of the top 1000 for synthetic topics.

    python benchmarks/index_mse.py --posts 1000000 --json
    python benchmarks/index_mse.py --posts 2400000 --pisa-batch-size 100000 --json

``--pisa-batch-size`` and ``--pisa-threads`` set PISA's parsing and inverting batch and its
threads for this run (defaults: ``mathir.indexing.answer_index.PISA_BATCH_SIZE`` and
``PISA_THREADS``). ``--scoring bm25-impacts --shards N`` builds the index as N shards of
BM25 impacts side by side, N local processes (``AnswerIndex.build(shards=N,
scoring="bm25-impacts")``), and searches them side by side: ``--shards 1`` and ``2`` give
the sharded build's time with one and two workers. CPU seconds (this process and its
children) are reported beside the wall time (of indexing, and a query's CPU milliseconds
beside its wall milliseconds), with the machine's calibration figure.

Targets (2-core machine, N = 1,000,000): indexing >= 20,000 posts/s end to end, peak
memory <= 2 GB, BM25 <= 5 ms/query, TF-IDF <= 50 ms/query.
"""

from __future__ import annotations

import resource
import shutil
import sys
import time
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np
import pandas as pd

try:  # python benchmarks/index_mse.py
    import machine
except ModuleNotFoundError:  # benchmarks.index_mse, from the repository root
    from benchmarks import machine
from mathir.indexing import answer_index
from mathir.indexing.answer_index import AnswerIndex
from mathir.pipelines.lexical import bm25, tfidf

FORMULAS = [r"x^{2}+y^{2}=1", r"\int_0^1 f(x)\,dx", r"\sum_{n=1}^\infty \frac{1}{n^2}",
            r"\|A\|_2", r"\binom{n}{k}", r"a<b", r"\frac{\partial f}{\partial x}",
            r"\lim_{x\to 0}\frac{\sin x}{x}", r"e^{i\pi}+1=0", r"\mathbb{R}^n"]


def make_vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = set()
    while len(words) < size:
        n = int(rng.integers(3, 10))
        words.add("".join(rng.choice(letters, n)))
    return sorted(words)


def generate_posts(path: Path, n_posts: int, seed: int = 0, words_per_post: int = 60) -> None:
    """Write ``n_posts`` rows: each question is followed by 1-3 answers."""
    rng = np.random.default_rng(seed)
    vocab = np.array(make_vocabulary(50_000, rng), dtype=object)
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks
    p /= p.sum()
    fid = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n<posts>\n')
        post_id = 0
        question = 0
        chunk = 10_000
        while post_id < n_posts:
            words = rng.choice(vocab, size=(chunk, words_per_post), p=p)
            kinds = rng.random(chunk)
            for i in range(chunk):
                if post_id >= n_posts:
                    break
                post_id += 1
                fid += 1
                formula = FORMULAS[fid % len(FORMULAS)].replace("<", "&lt;")
                body = ("<p>" + " ".join(words[i, :30]) + ' <span class="math-container" id="'
                        + str(fid) + '">$' + formula + "$</span> " + " ".join(words[i, 30:])
                        + "</p>")
                if question == 0 or kinds[i] < 0.35:
                    question = post_id
                    title = " ".join(words[i, :8])
                    f.write(f'  <row Id="{post_id}" PostTypeId="1" Score="1" '
                            f'Title={quoteattr(title)} Body={quoteattr(body)} '
                            f'Tags="&lt;calculus&gt;" />\n')
                else:
                    f.write(f'  <row Id="{post_id}" PostTypeId="2" ParentId="{question}" '
                            f'Score="0" Body={quoteattr(body)} />\n')
        f.write("</posts>\n")


def peak_rss_mb() -> float:
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(self_kb, kids_kb) / 1024


def main(argv=None) -> int:
    ap = machine.parser(__doc__)
    ap.add_argument("--posts", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--workdir", help="keep the generated collection and index here")
    ap.add_argument("--pisa-batch-size", type=int, default=None,
                    help="documents per PISA parsing batch (default: "
                         f"{answer_index.PISA_BATCH_SIZE:,})")
    ap.add_argument("--pisa-threads", type=int, default=None,
                    help="PISA's parsing threads (default: one per core)")
    ap.add_argument("--scoring", choices=("bm25", "bm25-impacts"), default="bm25",
                    help="bm25-impacts: shards of BM25 impacts, built and searched side by side")
    ap.add_argument("--shards", type=int, default=1,
                    help="with --scoring bm25-impacts: shards built side by side (1)")
    args = ap.parse_args(argv)
    if args.shards < 1:
        ap.error("--shards must be at least 1")
    if args.shards > 1 and args.scoring != "bm25-impacts":
        ap.error("--shards needs --scoring bm25-impacts (shards of float BM25 are not merged)")
    if args.pisa_threads is not None:
        if args.pisa_threads < 1:
            ap.error("--pisa-threads must be at least 1")
        answer_index.PISA_THREADS = args.pisa_threads
    if args.pisa_batch_size is not None:
        if args.pisa_batch_size < 1:
            ap.error("--pisa-batch-size must be at least 1")
        answer_index.PISA_BATCH_SIZE = args.pisa_batch_size

    with machine.work_folder(args.workdir) as work:
        posts = work / f"Posts.synthetic.{args.posts}.xml"
        t0 = time.perf_counter()
        if not posts.exists():
            generate_posts(posts, args.posts)
        gen_s = time.perf_counter() - t0

        index_dir = work / f"index-{args.posts}"
        shutil.rmtree(index_dir, ignore_errors=True)
        t0, c0 = time.perf_counter(), machine.cpu_seconds()
        index = AnswerIndex.build(posts, index_dir, quiet=True, scoring=args.scoring,
                                  shards=args.shards)
        index_s, index_cpu = time.perf_counter() - t0, machine.cpu_seconds() - c0
        rss_index = peak_rss_mb()

        rng = np.random.default_rng(1)
        vocab = make_vocabulary(50_000, np.random.default_rng(0))
        qwords = [" ".join(rng.choice(vocab[:5000], 6)) + f" ${FORMULAS[i % len(FORMULAS)]}$"
                  for i in range(args.queries)]
        topics = pd.DataFrame({"qid": [f"Q.{i}" for i in range(args.queries)], "query": qwords})
        timings = {}
        for name, pipe in (("bm25", bm25(index, 1000)), ("tfidf", tfidf(index, 1000))):
            pipe.transform(topics.head(5))  # warm-up (PISA compiles, TF-IDF loads)
            t0, c0 = time.perf_counter(), machine.cpu_seconds()
            res = pipe.transform(topics)
            timings[name] = (time.perf_counter() - t0) * 1000 / len(topics)
            timings[name + "_cpu"] = (machine.cpu_seconds() - c0) * 1000 / len(topics)
            timings[name + "_results_per_query"] = len(res) / len(topics)

        result = {
            "posts": args.posts,
            "answers_indexed": index.num_docs,
            "generate_seconds": round(gen_s, 2),
            "index_seconds": round(index_s, 2),
            "index_cpu_seconds": round(index_cpu, 2),
            "index_posts_per_second": round(args.posts / index_s),
            "pisa_batch_size": answer_index.PISA_BATCH_SIZE,
            # a shard process gives PISA one thread (AnswerIndex.build)
            "pisa_threads": answer_index._pisa_threads() if args.shards == 1 else 1,
            "scoring": args.scoring,
            "shards": args.shards,
            "peak_rss_mb": round(max(rss_index, peak_rss_mb())),
            "bm25_ms_per_query": round(timings["bm25"], 3),
            "tfidf_ms_per_query": round(timings["tfidf"], 3),
            "bm25_cpu_ms_per_query": round(timings["bm25_cpu"], 3),
            "tfidf_cpu_ms_per_query": round(timings["tfidf_cpu"], 3),
            "bm25_results_per_query": timings["bm25_results_per_query"],
            "tfidf_results_per_query": timings["tfidf_results_per_query"],
            "queries": args.queries,
            "index_bytes": sum(f.stat().st_size for f in index_dir.rglob("*") if f.is_file()),
            "calibration_ms": machine.calibration_ms(),
        }
    machine.print_report(result, args.json, machine.key_values)
    return 0


if __name__ == "__main__":
    sys.exit(main())
