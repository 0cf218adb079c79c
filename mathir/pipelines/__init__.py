"""PyTerrier transformers: lexical, formula, neural, fusion, dedup."""

from mathir.pipelines.lexical import MathWordsQuery, PisaBM25, TfidfRetriever, bm25, tfidf

__all__ = ["MathWordsQuery", "PisaBM25", "TfidfRetriever", "bm25", "tfidf"]
