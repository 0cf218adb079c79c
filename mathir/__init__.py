"""mathir: math-aware retrieval experiments on PyTerrier.

>>> import mathir
>>> sorted(mathir.TASKS)
['arqmath-task1']
"""

__version__ = "0.1.0"

from mathir.errors import InputError  # noqa: E402
from mathir.evaluation import ARQMATH_MEASURES, compare, evaluate, format_table, per_query  # noqa: E402
from mathir.indexing import (  # noqa: E402
    AnswerCollection,
    AnswerIndex,
    iter_formula_index,
    iter_posts,
    iter_thread_posts,
    latex_to_words,
    read_formula_index,
)
from mathir.pipelines import MathWordsQuery, TfidfRetriever, bm25, tfidf  # noqa: E402
from mathir.qrels import read_qrels  # noqa: E402
from mathir.runs import read_run, write_run  # noqa: E402
from mathir.samples import arqmath_sample  # noqa: E402
from mathir.tasks import TASKS, evaluate_runs, get_task, run_experiment  # noqa: E402
from mathir.topics import read_task1_topics, read_task2_topics, read_topic_formulas  # noqa: E402

__all__ = [
    "ARQMATH_MEASURES", "AnswerCollection", "AnswerIndex", "InputError", "MathWordsQuery",
    "TASKS", "TfidfRetriever", "arqmath_sample", "bm25", "compare", "evaluate",
    "evaluate_runs", "format_table", "get_task", "iter_formula_index", "iter_posts",
    "iter_thread_posts", "latex_to_words", "per_query", "read_formula_index", "read_qrels",
    "read_run", "read_task1_topics", "read_task2_topics", "read_topic_formulas",
    "run_experiment", "tfidf", "write_run",
]
