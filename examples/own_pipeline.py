"""Bring your own pipeline: compare it with the task's pipelines, runs reused safely.

From Python: ``python examples/own_pipeline.py`` (the embedded sample; ``--data
../shared/data/arqmath --year 2022`` for the real judged pool; ``--out runs`` keeps the
runs, and a second call reuses every run whose pipeline, arguments and code are unchanged).

From the command line, this file is a pipelines file (it defines ``PIPELINES``)::

    mathir experiment arqmath-task1 --pipelines-file examples/own_pipeline.py
    cd examples && mathir experiment arqmath-task1 --pipeline fused=own_pipeline:fused

The first runs the task's default pipelines and the three below; the second adds one
factory by ``NAME=module:factory`` (importable from the current folder).
"""

import argparse
import functools
import sys
import tempfile

import pyterrier as pt

import mathir


def fused(index, depth: int = 100, tfidf_weight: float = 1.0) -> pt.Transformer:
    """BM25's top ``depth`` answers, scored by BM25 + ``tfidf_weight`` x TF-IDF.

    A factory: called with the task's index and its keyword arguments. Its identity is
    its code (this function is not part of mathir, so its bytecode is hashed) and its
    arguments: edit it, and the next experiment recomputes its run.
    """
    return mathir.bm25(index) % depth + tfidf_weight * mathir.tfidf(index)


PIPELINES = {
    # a library factory with arguments: identity = mathir.bm25 + {k1, b}
    "bm25_k0.9_b0.4": functools.partial(mathir.bm25, k1=0.9, b=0.4),
    # a factory of this file
    "bm25+tfidf": fused,
    # a lambda: its code (and the code of the lambda inside it) is hashed
    "bm25_top10": lambda index: mathir.bm25(index) % 10 >> pt.apply.doc_score(
        lambda row: row.score),
}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="ARQMath data directory (default: embedded sample)")
    ap.add_argument("--year", default=None)
    ap.add_argument("--out", help="folder for runs (default: a new temporary folder)")
    args = ap.parse_args(argv)

    task = mathir.get_task("arqmath-task1")
    res = mathir.run_experiment(task, task.data(args.data, args.year),
                                ["bm25", PIPELINES],  # a task's pipeline, and ours
                                out=args.out or tempfile.mkdtemp(), quiet=True)
    print(mathir.format_table(res.table, "markdown", digits=3, significance=res.significance,
                              footnote=f"significantly different from {res.baseline}"))
    for name, path in res.runs.items():
        how = "reused" if name in res.reused else f"computed: {res.recomputed[name]}"
        print(f"{name}: {path} ({how})", file=sys.stderr)


if __name__ == "__main__":
    main()
