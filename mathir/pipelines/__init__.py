"""PyTerrier transformers: lexical, formula, neural, fusion, dedup."""

from mathir.pipelines.fusion import LinearFusion, RRFusion, minmax_per_query, rr_fusion
from mathir.pipelines.lexical import MathWordsQuery, PisaBM25, TfidfRetriever, bm25, tfidf

__all__ = ["LinearFusion", "RRFusion", "MathWordsQuery", "PisaBM25", "TfidfRetriever", "bm25",
           "minmax_per_query", "rr_fusion", "tfidf"]
