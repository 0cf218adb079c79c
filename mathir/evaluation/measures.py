"""Measures as declarations: a name, what it measures, and how it is computed.

A task's measures (``mathir.Task.measures``) are :class:`Measure` objects: the columns
of its table, the lines of ``mathir tasks`` and of the docs all come from them. This
module imports nothing heavy (ir_measures is imported when a measure is resolved), so
that reading the task registry stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Measure:
    """A measure of a task: its column name, what it measures, and how it is computed.

    ``ir_measure`` is the measure in ir_measures' syntax (``"nDCG@10"``) or an ir_measures
    object (e.g. one made with ``ir_measures.define_byquery``) when it is one: it then
    computes the column, and ``pt.Experiment`` can take it; None when the task's own
    evaluator computes it.

    >>> m = Measure("P'@5", "precision at 5 over judged answers", "P(rel=2,judged_only=True)@5")
    >>> m.resolve()
    P(rel=2,judged_only=True)@5
    """

    name: str
    description: str
    ir_measure: Any = None

    def resolve(self):
        """The ir_measures object (imports ir_measures); ValueError when there is none."""
        if self.ir_measure is None:
            raise ValueError(f"{self.name} is computed by its task, not by ir_measures")
        if not isinstance(self.ir_measure, str):
            return self.ir_measure
        import ir_measures

        return ir_measures.parse_measure(self.ir_measure)


#: The "prime" measures of Tasks 1 and 2: unjudged documents removed, as ARQMath
#: evaluates (:mod:`mathir.evaluation.prime` computes them, averaged over every qrels topic).
PRIME_MEASURES = (
    Measure("nDCG'", "nDCG over judged answers only (graded 0-3, no cutoff)",
            "nDCG(judged_only=True)"),
    Measure("MAP'", "MAP over judged answers only, relevance >= 2 (H+M)",
            "AP(rel=2,judged_only=True)"),
    Measure("P'@10", "precision at 10 over judged answers only, relevance >= 2",
            "P(rel=2,judged_only=True)@10"),
    Measure("bpref", "bpref, relevance >= 2", "Bpref(rel=2)"),
)
