"""Lexical retrieval over an answer index: BM25 (PISA) and TF-IDF (scikit-learn).

Queries keep formulas as ``$LaTeX$``; :class:`MathWordsQuery` rewrites them into the
words the index holds (``x^2`` -> ``x power 2``), keeping the original in ``query_0``.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pyterrier as pt
from tqdm.auto import tqdm

from mathir.errors import InputError
from mathir.indexing.answer_index import AnswerIndex
from mathir.indexing.native_output import native_output_to
from mathir.pipelines.parameters import derived
from mathir.readers.latex_words import math_to_words

RESULT_COLUMNS = ["qid", "query", "docno", "score", "rank"]


class MathWordsQuery(pt.Transformer):
    """Rewrite the ``$...$`` formulas of each query as words (ARQMath baseline mapping).

    >>> MathWordsQuery()(pd.DataFrame({"qid": ["1"], "query": ["is $a<b$"]}))["query"][0]
    'is a less than b'
    """

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        out = topics.copy()
        if "query_0" not in out.columns:
            out["query_0"] = out["query"]
        out["query"] = [math_to_words(q) for q in out["query"]]
        return out

    def __repr__(self) -> str:
        return "MathWordsQuery()"


class TfidfRetriever(pt.Transformer):
    """Cosine TF-IDF retrieval over an :class:`AnswerIndex` (or a TfidfIndex).

    Output: the topic columns plus ``docno``, ``score`` and ``rank`` (from 0, as in
    PyTerrier).
    """

    def __init__(self, index, num_results: int = 1000, verbose: bool = False):
        self.index = index
        self.num_results = num_results
        self.verbose = verbose

    def __repr__(self) -> str:
        return f"TfidfRetriever({getattr(self.index, 'path', '?')!s}, num_results={self.num_results})"

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        pt.validate.query_frame(topics, extra_columns=["query"])
        tfidf = self.index.tfidf if isinstance(self.index, AnswerIndex) else self.index
        frames = []
        rows = topics.to_dict("records")
        for row in tqdm(rows, desc="tf-idf", unit=" topics", disable=not self.verbose):
            docnos, scores = tfidf.search(row["query"], self.num_results)
            res = pd.DataFrame({"docno": docnos.astype(str), "score": scores.astype(np.float64),
                                "rank": np.arange(len(docnos))})
            for k, v in row.items():
                res[k] = v
            frames.append(res)
        if not frames:
            return pd.DataFrame(columns=list(topics.columns) + ["docno", "score", "rank"])
        out = pd.concat(frames, ignore_index=True)
        first = [c for c in topics.columns if c in out.columns]
        return out[first + ["docno", "score", "rank"]]


class PisaBM25(pt.Transformer):
    """PISA's BM25 retriever with its native console output sent to the index's log.

    PISA compiles a block-max index on first use and prints hundreds of progress lines;
    they go to ``pisa.log`` in the index directory instead of the terminal.

    ``k1``, ``b``, ``num_results`` and ``threads`` may change between calls
    (``set_parameter``, as ``pt.GridScan`` does): PISA's retriever is built again for
    the new values.
    """

    def __init__(self, index: AnswerIndex, num_results: int = 1000, k1: float = 1.2,
                 b: float = 0.75, threads: int | None = None):
        self.index = index
        self.threads = threads or os.cpu_count() or 1
        self.num_results = num_results
        self.k1 = k1
        self.b = b

    def __repr__(self) -> str:
        return f"PisaBM25({self.index.path!s}, k1={self.k1}, b={self.b}, num_results={self.num_results})"

    def _retriever(self) -> pt.Transformer:
        """PISA's retriever for the current parameters (PISA compiles its block-max data
        for each k1, b)."""
        # MaxScore is exact like PISA's default block-max WAND, and 3x faster for the top
        # 1000 of long math queries (benchmarks/index_mse.py).
        return derived(self, "_pisa", (self.index, self.k1, self.b, self.num_results,
                                       self.threads),
                       lambda: self.index.pisa.bm25(
                           k1=self.k1, b=self.b, num_results=self.num_results, verbose=False,
                           query_algorithm="maxscore", threads=self.threads))

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        if self.index.scoring == "bm25-impacts":
            return self._impacts(topics)
        with native_output_to(self.index.path / "pisa.log"):
            res = self._retriever().transform(topics)
        # PISA's threads finish queries in any order: restore the topics' order.
        order = {q: i for i, q in enumerate(dict.fromkeys(topics["qid"]))}
        res = res.assign(_topic=res["qid"].map(order))
        res = res.sort_values(["_topic", "rank"], kind="stable").drop(columns="_topic")
        return res.reset_index(drop=True)


    def _impacts(self, topics: pd.DataFrame) -> pd.DataFrame:
        """Search an index of BM25 impact shards (AnswerIndex.build's ``bm25-impacts``)."""
        impacts = self.index.impacts
        if (self.k1, self.b) != (impacts["k1"], impacts["b"]):
            raise InputError(f"this answer index holds BM25 impacts of k1={impacts['k1']}, "
                             f"b={impacts['b']}: they cannot be searched with k1={self.k1}, "
                             f"b={self.b} (build it with scoring='bm25' to vary them)",
                             path=self.index.path)
        shards = derived(self, "_shards", (self.index,), self.index.impact_shards)
        topics = topics.reset_index(drop=True)
        hits = shards.search(topics[["qid", "query"]], self.num_results)
        which = pd.Index(topics["qid"]).get_indexer(hits["qid"])
        res = topics.iloc[which].reset_index(drop=True)
        for column in ("docno", "score", "rank"):
            res[column] = hits[column].to_numpy()
        return res


def bm25(index: AnswerIndex, num_results: int = 1000, k1: float = 1.2, b: float = 0.75,
         verbose: bool = False) -> pt.Transformer:
    """BM25 over the answer index with formulas as words (Terrier's k1=1.2, b=0.75).

    >>> from mathir.samples import arqmath_sample
    >>> idx = AnswerIndex.build(arqmath_sample().posts, "sample-answers", quiet=True)
    >>> res = bm25(idx, 5).search("integration by parts $\\\\int x e^x dx$")
    >>> len(res)
    5
    """
    return MathWordsQuery() >> PisaBM25(index, num_results=num_results, k1=k1, b=b)


def tfidf(index: AnswerIndex, num_results: int = 1000, verbose: bool = False) -> pt.Transformer:
    """TF-IDF (cosine) over the answer index with formulas as words."""
    return MathWordsQuery() >> TfidfRetriever(index, num_results=num_results, verbose=verbose)
