"""Topic files to PyTerrier topic frames (``qid``, ``query``, ...)."""

from mathir.topics.arqmath import (
    read_task1_topics,
    read_task2_topics,
    read_topic_formulas,
    read_topic_metadata,
)

__all__ = ["read_task1_topics", "read_task2_topics", "read_topic_formulas", "read_topic_metadata"]
