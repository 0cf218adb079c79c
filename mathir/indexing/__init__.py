"""Collection readers and index builders."""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports)
_EXPORTS = {
    "AnswerCollection": "mathir.indexing.answer_collection",
    "AnswerIndex": "mathir.indexing.answer_index",
    "AnswerTexts": "mathir.indexing.text_store",
    "FormulaRecord": "mathir.indexing.formula_tsv",
    "iter_formula_index": "mathir.indexing.formula_tsv",
    "read_formula_index": "mathir.indexing.formula_tsv",
    "Formula": "mathir.indexing.html_text",
    "extract_formulas": "mathir.indexing.html_text",
    "html_to_text": "mathir.indexing.html_text",
    "latex_to_words": "mathir.indexing.latex_words",
    "math_to_words": "mathir.indexing.latex_words",
    "Post": "mathir.indexing.mse_posts",
    "iter_posts": "mathir.indexing.mse_posts",
    "TfidfIndex": "mathir.indexing.tfidf",
    "ThreadFile": "mathir.indexing.thread_html",
    "iter_thread_files": "mathir.indexing.thread_html",
    "iter_thread_posts": "mathir.indexing.thread_html",
    "read_thread_file": "mathir.indexing.thread_html",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
