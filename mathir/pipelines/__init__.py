"""PyTerrier transformers: lexical, formula, neural, fusion, dedup, reranking blocks."""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports);
# ``mathir`` exports the same names (one table)
EXPORTS = {
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
    "cut_answer": "mathir.pipelines.extractive",
    "extractive": "mathir.pipelines.extractive",
    "formula_aware": "mathir.pipelines.formula",
    "formula_tuples": "mathir.pipelines.formula",
    "formula_words": "mathir.pipelines.formula",
    "WordProblemIndex": "mathir.pipelines.word_problems",
    "template_retrieval": "mathir.pipelines.word_problems",
    "CompleteRanking": "mathir.pipelines.worldtree_lexical",
    "ExplanationNeighbours": "mathir.pipelines.worldtree_lexical",
    "ExplanationQuery": "mathir.pipelines.worldtree_lexical",
    "FactRanker": "mathir.pipelines.worldtree_lexical",
    "IterativeExpansion": "mathir.pipelines.worldtree_lexical",
}
__getattr__, __dir__, __all__ = attach(__name__, EXPORTS)
