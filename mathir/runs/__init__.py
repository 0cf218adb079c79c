"""Run files: read, write and validate the TREC / ARQMath formats."""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports)
_EXPORTS = {
    "MAX_RESULTS": "mathir.runs.trec",
    "read_run": "mathir.runs.trec",
    "validate_run": "mathir.runs.trec",
    "write_run": "mathir.runs.formats",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
