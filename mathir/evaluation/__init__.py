"""Evaluation: prime measures, task evaluators, comparison tables."""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports)
_EXPORTS = {
    "ARQMATH_MEASURES": "mathir.evaluation.prime",
    "compare": "mathir.evaluation.prime",
    "evaluate": "mathir.evaluation.prime",
    "per_query": "mathir.evaluation.prime",
    "format_table": "mathir.evaluation.tables",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
