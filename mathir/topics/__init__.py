"""Topic files to PyTerrier topic frames (``qid``, ``query``, ...)."""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports)
_EXPORTS = {
    "read_task1_topics": "mathir.topics.arqmath",
    "read_task2_topics": "mathir.topics.arqmath",
    "read_topic_formulas": "mathir.topics.arqmath",
    "read_topic_metadata": "mathir.topics.arqmath",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
