"""Evaluation: prime measures, task evaluators, comparison tables."""

from mathir.evaluation.prime import ARQMATH_MEASURES, compare, evaluate, per_query
from mathir.evaluation.tables import format_table

__all__ = ["ARQMATH_MEASURES", "compare", "evaluate", "format_table", "per_query"]
