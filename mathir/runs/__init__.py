"""Run files: read, write and validate the TREC / ARQMath formats."""

from mathir.runs.arqmath import MAX_RESULTS, read_run, validate_run, write_run

__all__ = ["MAX_RESULTS", "read_run", "validate_run", "write_run"]
