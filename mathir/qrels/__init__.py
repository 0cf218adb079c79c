"""Judgment files to qrels frames (``qid``, ``docno``, ``label``, ...)."""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports)
_EXPORTS = {
    "read_qrels": "mathir.qrels.trec",
    "read_task3_qrels": "mathir.qrels.arqmath",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
