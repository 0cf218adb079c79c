"""Declare pipelines with PyTerrier operators and compare them with ARQMath's prime measures.

Run from anywhere: ``python examples/compare_pipelines.py`` (uses the embedded sample;
pass ``--data ../shared/data/arqmath --year 2022`` for the real judged pool).
"""

import argparse
import tempfile

import mathir


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="ARQMath data directory (default: embedded sample)")
    ap.add_argument("--year", default=None)
    args = ap.parse_args(argv)

    task = mathir.get_task("arqmath-task1")
    data = task.data(args.data, args.year)
    index = mathir.AnswerIndex.build(data.collection, tempfile.mkdtemp() + "/answers", quiet=True)
    topics = mathir.read_task1_topics(data.topics)
    qrels = mathir.read_qrels(data.qrels)

    bm25 = mathir.bm25(index)                       # Terrier's k1=1.2, b=0.75
    bm25_pisa = mathir.bm25(index, k1=0.9, b=0.4)  # PISA's defaults
    tfidf = mathir.tfidf(index)
    combined = bm25 % 100 + tfidf                   # sum of scores over BM25's top 100

    runs = {name: pipe.transform(topics) for name, pipe in
            {"bm25": bm25, "bm25_k0.9_b0.4": bm25_pisa, "tfidf": tfidf, "bm25+tfidf": combined}.items()}
    print(mathir.format_table(mathir.compare(runs, qrels), "markdown", digits=3))


if __name__ == "__main__":
    main()
