"""Run files: read, write and validate the TREC / ARQMath formats."""

from mathir.lazy_exports import attach, by_module

# imported on first use (see mathir.lazy_exports)
__getattr__, __dir__, __all__ = attach(__name__, by_module({
    "mathir.runs.trec": "MAX_RESULTS read_run validate_run",
    "mathir.runs.formats": "write_run",
}))
