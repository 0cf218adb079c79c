"""PyTerrier transformers: lexical, formula, neural, fusion, dedup, reranking blocks."""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports)
_EXPORTS = {
    "VisualDedup": "mathir.pipelines.dedup",
    "VisualIdDocno": "mathir.pipelines.dedup",
    "LinearFusion": "mathir.pipelines.fusion",
    "RRFusion": "mathir.pipelines.fusion",
    "minmax_per_query": "mathir.pipelines.fusion",
    "rr_fusion": "mathir.pipelines.fusion",
    "MathWordsQuery": "mathir.pipelines.lexical",
    "PisaBM25": "mathir.pipelines.lexical",
    "TfidfRetriever": "mathir.pipelines.lexical",
    "bm25": "mathir.pipelines.lexical",
    "tfidf": "mathir.pipelines.lexical",
    "AddAnswerText": "mathir.pipelines.reranking",
    "DropText": "mathir.pipelines.reranking",
    "OriginalQuery": "mathir.pipelines.reranking",
    "rerank": "mathir.pipelines.reranking",
    "text_store": "mathir.pipelines.reranking",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
