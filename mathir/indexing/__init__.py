"""Collection readers and index builders."""

from mathir.indexing.answer_index import AnswerCollection, AnswerIndex
from mathir.indexing.formula_tsv import FormulaRecord, iter_formula_index, read_formula_index
from mathir.indexing.html_text import Formula, extract_formulas, html_to_text
from mathir.indexing.latex_words import latex_to_words, math_to_words
from mathir.indexing.mse_posts import Post, iter_posts
from mathir.indexing.tfidf import TfidfIndex
from mathir.indexing.thread_html import (
    ThreadFile,
    iter_thread_files,
    iter_thread_posts,
    read_thread_file,
)

__all__ = [
    "AnswerCollection", "AnswerIndex", "Formula", "FormulaRecord", "Post", "TfidfIndex",
    "ThreadFile", "extract_formulas", "html_to_text", "iter_formula_index", "iter_posts",
    "iter_thread_files", "iter_thread_posts", "latex_to_words", "math_to_words",
    "read_formula_index", "read_thread_file",
]
