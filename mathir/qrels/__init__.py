"""Judgment files to qrels frames (``qid``, ``docno``, ``label``, ...)."""

from mathir.qrels.arqmath import read_qrels

__all__ = ["read_qrels"]
