"""Collection readers and index builders."""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports)
_EXPORTS = {
    "AnswerCollection": "mathir.indexing.answer_collection",
    "AnswerIndex": "mathir.indexing.answer_index",
    "AnswerTexts": "mathir.indexing.text_store",
    "FormulaRecord": "mathir.readers.formula_tsv",
    "iter_formula_index": "mathir.readers.formula_tsv",
    "read_formula_index": "mathir.readers.formula_tsv",
    "Formula": "mathir.readers.html_text",
    "extract_formulas": "mathir.readers.html_text",
    "html_to_text": "mathir.readers.html_text",
    "latex_to_words": "mathir.readers.latex_words",
    "math_to_words": "mathir.readers.latex_words",
    "Post": "mathir.readers.mse_posts",
    "iter_posts": "mathir.readers.mse_posts",
    "TfidfIndex": "mathir.indexing.tfidf",
    "verify_index": "mathir.storage.indexes",
    "ThreadFile": "mathir.readers.thread_html",
    "iter_thread_files": "mathir.readers.thread_html",
    "iter_thread_posts": "mathir.readers.thread_html",
    "read_thread_file": "mathir.readers.thread_html",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
