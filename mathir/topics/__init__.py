"""Topic files to PyTerrier topic frames (``qid``, ``query``, ...)."""

from mathir.lazy_exports import attach, by_module

# imported on first use (see mathir.lazy_exports)
__getattr__, __dir__, __all__ = attach(__name__, by_module({
    "mathir.topics.arqmath": "read_task1_topics read_task2_topics read_topic_formulas "
                             "read_topic_metadata",
}))
