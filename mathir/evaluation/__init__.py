"""Evaluation: prime measures, task evaluators, significance: scoring only (tables, the
HTML report and the explorer are in :mod:`mathir.report`)."""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports)
_EXPORTS = {
    "ARQMATH_MEASURES": "mathir.evaluation.prime",
    "compare": "mathir.evaluation.prime",
    "evaluate": "mathir.evaluation.prime",
    "per_query": "mathir.evaluation.prime",
    "per_topic_scores": "mathir.evaluation.per_topic",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
