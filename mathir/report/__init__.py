"""Presentation: comparison tables, the HTML report and its charts, the run explorer and
LaTeX to MathML. A stage after :mod:`mathir.evaluation`: it reads the evaluated runs
(:class:`mathir.evaluation.evaluated.EvaluatedRuns`) and what the index holds (the texts
:func:`mathir.experiment.reports.explorer_lookups` looks up), never a collection file."""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports)
_EXPORTS = {
    "format_table": "mathir.report.tables",
    "html_report": "mathir.report.report",
    "write_report": "mathir.report.report",
    "build_explorer": "mathir.report.explorer_views",
    "explorer_html": "mathir.report.explorer",
    "Lookups": "mathir.report.explorer_views",
    "MathRenderer": "mathir.report.mathml",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
