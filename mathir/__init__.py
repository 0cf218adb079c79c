"""mathir: math-aware retrieval experiments on PyTerrier.

>>> import mathir
>>> {'arqmath-task1', 'arqmath-task3'} <= set(mathir.TASKS)
True
"""

__version__ = "0.1.0"

from mathir.errors import InputError  # noqa: E402
from mathir.evaluation import ARQMATH_MEASURES, compare, evaluate, format_table, per_query  # noqa: E402

# Formula search (ARQMath Task 2) and formula-aware answer retrieval.
from mathir.evaluation.formula_search import evaluate_task2  # noqa: E402

# Open-domain answers (ARQMath-3 Task 3).
from mathir.evaluation.open_answers import AnswerModel, evaluate_open_answers  # noqa: E402

# WorldTree explanation regeneration (TextGraphs 2019).
from mathir.evaluation.worldtree import lexical_overlap, plot_map_by_length  # noqa: E402
from mathir.indexing import (  # noqa: E402
    AnswerCollection,
    AnswerIndex,
    iter_formula_index,
    iter_posts,
    iter_thread_posts,
    latex_to_words,
    read_formula_index,
)
from mathir.indexing.formula_index import FormulaIndex  # noqa: E402
from mathir.indexing.slt import slt_from_latex, slt_from_mathml  # noqa: E402
from mathir.indexing.worldtree import FactIndex, read_lemmas, read_tablestore  # noqa: E402
from mathir.pipelines import MathWordsQuery, TfidfRetriever, bm25, tfidf  # noqa: E402
from mathir.pipelines.dedup import VisualDedup  # noqa: E402
from mathir.pipelines.extractive import cut_answer, extractive  # noqa: E402
from mathir.pipelines.formula import formula_aware, formula_tuples, formula_words  # noqa: E402
from mathir.pipelines.worldtree import (  # noqa: E402
    CompleteRanking,
    ExplanationNeighbours,
    ExplanationQuery,
    FactRanker,
    IterativeExpansion,
)
from mathir.qrels import read_qrels  # noqa: E402
from mathir.qrels.worldtree import missing_gold  # noqa: E402
from mathir.runs import read_run, write_run  # noqa: E402
from mathir.runs.arqmath_task2 import read_task2_run, write_task2_run  # noqa: E402
from mathir.runs.arqmath_task3 import read_assignments, read_task3_run, write_task3_run  # noqa: E402
from mathir.samples import (
    arqmath_sample,  # noqa: E402
    worldtree_sample,  # noqa: E402
)
from mathir.tasks import TASKS, evaluate_runs, get_task, run_experiment  # noqa: E402
from mathir.topics import read_task1_topics, read_task2_topics, read_topic_formulas  # noqa: E402
from mathir.topics.worldtree import read_questions  # noqa: E402

__all__ = [
    "ARQMATH_MEASURES", "AnswerCollection", "AnswerIndex", "InputError", "MathWordsQuery",
    "TASKS", "TfidfRetriever", "arqmath_sample", "bm25", "compare", "evaluate",
    "evaluate_runs", "format_table", "get_task", "iter_formula_index", "iter_posts",
    "iter_thread_posts", "latex_to_words", "per_query", "read_formula_index", "read_qrels",
    "read_run", "read_task1_topics", "read_task2_topics", "read_topic_formulas",
    "run_experiment", "tfidf", "write_run",
]
__all__ += ["FormulaIndex", "VisualDedup", "evaluate_task2", "formula_aware", "formula_tuples",
            "formula_words", "read_task2_run", "slt_from_latex", "slt_from_mathml",
            "write_task2_run"]
__all__ += ["AnswerModel", "cut_answer", "evaluate_open_answers", "extractive",
            "read_assignments", "read_task3_run", "write_task3_run"]
__all__ += ["CompleteRanking", "ExplanationNeighbours", "ExplanationQuery", "FactIndex",
            "FactRanker", "IterativeExpansion", "lexical_overlap", "missing_gold",
            "plot_map_by_length", "read_lemmas", "read_questions", "read_tablestore",
            "worldtree_sample"]
# Math answers, derivations and the word-problem solver.
from mathir.answers import check_answer, dolphin_check, extract_answer, latex_check  # noqa: E402
from mathir.answers.derivations import derivation_correct, reconcile_templates  # noqa: E402
from mathir.indexing.word_problems import iter_derivation_problems, iter_dolphin1878  # noqa: E402
from mathir.pipelines.word_problems import WordProblemIndex, template_retrieval  # noqa: E402
from mathir.samples import word_problems_sample  # noqa: E402

__all__ += ["WordProblemIndex", "check_answer", "derivation_correct", "dolphin_check",
            "extract_answer", "iter_derivation_problems", "iter_dolphin1878", "latex_check",
            "reconcile_templates", "template_retrieval", "word_problems_sample"]
