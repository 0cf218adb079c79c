"""BM25 impacts from a whole collection's statistics: search shards that merge exactly.

A PISA index scores BM25 from its own statistics (its number of documents, each term's
document frequency, the average document length). The shards of a collection, each
searched on its own, would score a document otherwise than the whole collection's index
does, and no merge of their rankings could give the unsharded one. Here each shard's term
frequencies are replaced by *impacts*: every posting's BM25 term score computed from the
statistics of all the shards together, with PISA's own BM25 formula::

    idf(t)    = max(1e-6, ln((N - df + 0.5) / (df + 0.5))) * (1 + k1)
    score(t,d) = idf(t) * tf / (tf + k1 * (1 - b + b * len(d) / avg_len))

quantised linearly to the integers 1 .. ``levels`` (the largest idf maps to ``levels``).
PISA's ``quantized`` scorer then adds these integers, once per distinct query term (as
its BM25 search does: query term counts are not used). A document's score is the same
integer sum whatever the shard layout and whatever the order of the additions (PISA adds
in float32, exact below 2**24: :func:`check_query_weight` refuses a query that could
reach it), so the shards' top k, merged by score and then by position in the collection,
are the unsharded index's top k, hit for hit (:class:`ImpactShards`;
tests/indexing/test_pisa_impacts.py compares run files of 1 and 3 shards byte for byte).

Impacts fix ``k1`` and ``b`` at build time, and quantisation rounds each term score to
``max_idf / levels`` (6e-5 of the largest term score with the default 16,383 levels). On
the judged formula pool (benchmarks/arqmath_formula_pool.py) impacts give the float BM25
figures to the fourth decimal, with 255 levels as with 16,383.

PISA's binary collection (``inv.docs``, ``inv.freqs``, ``inv.sizes``, ``fwd.terms``)
has no library that rewrites it, so :func:`write_impacts` does so by hand, with numpy,
a range of terms at a time.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from mathir.errors import InputError
from mathir.indexing.pisa_postings import list_heads

#: ``bm25``: one PISA index, BM25 computed when searching (any k1, b); ``bm25-impacts``:
#: shards of BM25 impacts from the whole collection, searched side by side.
SCORINGS = ("bm25", "bm25-impacts")
#: Impacts are the integers 1 .. LEVELS (14 bits).
LEVELS = (1 << 14) - 1
#: PISA accumulates scores in float32: integer sums are exact below this.
EXACT_SUM = 1 << 24
_CHUNK = 1 << 24  # postings rewritten at a time


def resolve_scoring(path: str | Path, scoring: str | None, shards: int,
                    what: str) -> tuple[str, int]:
    """The scoring and shards an index build at ``path`` uses: ``scoring=None`` keeps
    those of the index already there (``bm25`` where there is none); an unknown scoring
    is refused (``what``: the kind of index, for the message).

    >>> resolve_scoring("/no/index", None, 1, "answer")
    ('bm25', 1)
    """
    from mathir.storage import read_manifest

    if scoring is None:
        params = (read_manifest(path) or {}).get("params") or {}
        scoring = params.get("scoring", "bm25")
        if scoring != "bm25" and shards == 1:
            shards = params.get("shards", 1)
    if scoring not in SCORINGS:
        raise InputError(f"unknown {what} index scoring {scoring!r}; expected one of "
                         f"{list(SCORINGS)}")
    return scoring, shards


def _terms(path: Path) -> list[str]:
    with open(path / "fwd.terms", encoding="utf-8") as f:
        return f.read().splitlines()


def idf_weights(df: np.ndarray, num_docs: int, k1: float) -> np.ndarray:
    """PISA's BM25 term weight: ``max(1e-6, ln((N - df + .5) / (df + .5))) * (1 + k1)``.

    >>> idf_weights(np.array([1, 50]), 100, 1.2).round(3).tolist()
    [9.228, 0.0]
    """
    df = np.asarray(df, dtype=np.float64)
    return np.maximum(1e-6, np.log((num_docs - df + 0.5) / (df + 0.5))) * (1.0 + k1)


def write_impacts(shards: Sequence[str | Path], k1: float, b: float,
                  levels: int = LEVELS) -> dict:
    """Replace the term frequencies of PISA collections ``shards`` (the parts of one
    collection, in order) by BM25 impacts from their statistics together; the
    statistics and quantisation, for the index's manifest.

    >>> import tempfile
    >>> from mathir.indexing.pisa_postings import write_pisa_index
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = write_pisa_index(d / "a", [("x", {"p": 2, "q": 1})])
    >>> _ = write_pisa_index(d / "b", [("y", {"p": 1}), ("z", {"r": 3})])
    >>> write_impacts([d / "a", d / "b"], 1.2, 0.75)["num_docs"]
    3
    """
    if not 1 <= levels < EXACT_SUM:
        raise InputError(f"impact levels must be from 1 to {EXACT_SUM - 1}, not {levels}")
    shards = [Path(s) for s in shards]
    terms, dfs, heads, lengths = [], [], [], []
    for shard in shards:
        t = _terms(shard)
        freqs = np.memmap(shard / "inv.freqs", dtype=np.uint32, mode="r")
        h = list_heads(freqs, len(t))
        terms.append(t)
        heads.append(h)
        dfs.append(np.asarray(freqs[h], dtype=np.int64))
        lengths.append(np.fromfile(shard / "inv.sizes", dtype=np.uint32)[1:])
        del freqs
    num_docs = sum(len(x) for x in lengths)
    total_length = sum(int(x.sum(dtype=np.int64)) for x in lengths)
    if num_docs == 0:
        raise InputError("no documents to compute impacts over", path=shards[0])
    avg_length = total_length / num_docs
    if len(shards) == 1:
        global_dfs, num_terms = dfs, terms[0]
    else:
        merged: dict[str, int] = {}
        for t, df in zip(terms, dfs, strict=True):
            for term, n in zip(t, df.tolist(), strict=True):
                merged[term] = merged.get(term, 0) + n
        global_dfs = [np.fromiter((merged[x] for x in t), dtype=np.int64, count=len(t))
                      for t in terms]
        num_terms = merged
    idfs = [idf_weights(df, num_docs, k1) for df in global_dfs]
    max_idf = max((float(w.max()) for w in idfs if len(w)), default=1.0)
    scale = levels / max_idf
    for shard, h, idf, doc_lengths in zip(shards, heads, idfs, lengths, strict=True):
        _rewrite(shard, h, idf, doc_lengths, avg_length, k1, b, scale, levels)
    return {"scoring": "bm25-impacts", "k1": k1, "b": b, "levels": levels, "scale": scale,
            "num_docs": num_docs, "avg_length": avg_length,
            "num_terms": len(terms[0]) if len(shards) == 1 else len(num_terms),
            "shard_docs": [len(x) for x in lengths],
            "max_query_weight": (EXACT_SUM - 1) // levels}


def _rewrite(shard: Path, heads: np.ndarray, idf: np.ndarray, doc_lengths: np.ndarray,
             avg_length: float, k1: float, b: float, scale: float, levels: int) -> None:
    """Write ``shard``'s impacts in place of its frequencies, a range of terms at a time."""
    docs = np.memmap(shard / "inv.docs", dtype=np.uint32, mode="r")
    freqs = np.memmap(shard / "inv.freqs", dtype=np.uint32, mode="r")
    norm = k1 * (1.0 - b + b * doc_lengths.astype(np.float64) / avg_length)
    tmp = shard / "inv.freqs.impacts"
    with open(tmp, "wb") as out:
        lo = 0
        while lo < len(heads):
            hi = max(lo + 1, int(np.searchsorted(heads, heads[lo] + _CHUNK, side="right")))
            start = heads[lo]
            end = heads[hi] if hi < len(heads) else len(freqs)
            values = np.array(freqs[start:end], dtype=np.uint32)
            counts = values[heads[lo:hi] - start].astype(np.int64)
            body = np.ones(len(values), dtype=bool)
            body[heads[lo:hi] - start] = False
            tf = values[body].astype(np.float64)
            # inv.docs holds the same lists after a header of two values.
            doc = np.asarray(docs[2 + start:2 + end])[body]
            weight = np.repeat(idf[lo:hi], counts)
            impact = np.rint(weight * tf / (tf + norm[doc]) * scale)
            values[body] = np.clip(impact, 1, levels).astype(np.uint32)
            out.write(values.tobytes())
            lo = hi
    del docs, freqs
    os.replace(tmp, shard / "inv.freqs")


_WORDS = re.compile(r"[^\W_]+")


def check_query_weight(toks: dict[str, float] | str, levels: int) -> None:
    """Refuse a query whose score could leave the range where float32 sums are exact:
    more than ``(2**24 - 1) // levels`` distinct terms (1,024 for 16,383 levels).

    >>> check_query_weight({"a": 3.0}, LEVELS)
    >>> check_query_weight({str(i): 1.0 for i in range(1025)}, LEVELS)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: ...
    """
    if isinstance(toks, str):  # a text query: at most one term per run of letters or digits
        terms = len(set(_WORDS.findall(toks.lower())))
    else:
        terms = sum(1 for w in toks.values() if w >= 1)  # pyterrier-pisa drops weights < 1
    if terms * levels >= EXACT_SUM:
        raise InputError(f"a query of {terms} distinct terms could score beyond 2**24 on "
                         f"impacts of {levels} levels, where PISA's float32 sums are no "
                         f"longer exact: at most {(EXACT_SUM - 1) // levels} terms")


class ImpactShards:
    """Search the impact shards of one collection side by side and merge their hits into
    the unsharded ranking: by score, then by position in the collection. Queries are
    ``query_toks`` (term weights) or, without that column, ``query`` text (tokenised and
    stemmed by PISA with ``stemmer``, Terrier's stopwords removed).

    ``shards``: the PISA folders, in collection order (their impacts written together by
    :func:`write_impacts`); ``positions``: maps hit docnos (an object array) to their
    positions in the whole collection. Each shard is searched with PISA's ``quantized``
    scorer in its own thread (PISA releases the GIL while it searches).

    A PISA top k is exact in its scores, but which of several documents tied at the
    k-th score it keeps is not defined. Each shard is therefore asked for more than k
    until its last hit scores below its k-th (or it has no more hits), so that every
    document tied at the cut is seen, and the merge keeps the lowest positions: the
    result depends on neither the shard layout nor PISA's heap.
    """

    def __init__(self, shards: Sequence[str | Path], positions: Callable[[np.ndarray], np.ndarray],
                 levels: int, stemmer: str = "none", query_algorithm: str = "maxscore"):
        self.shards = [Path(s) for s in shards]
        self.positions = positions
        self.levels = levels
        self.stemmer = stemmer
        self.query_algorithm = query_algorithm
        self._retrievers: list | None = None
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def __repr__(self) -> str:
        return f"ImpactShards({len(self.shards)} shards, {self.query_algorithm!r})"

    def __getstate__(self) -> dict:
        # PISA's contexts and the threads stay here: a copy opens its own.
        return self.__dict__ | {"_retrievers": None, "_pool": None}

    def _open(self) -> list:
        """Each shard's PISA retriever (opened here, in the calling thread: redirecting
        PISA's output from several threads at once would race on the file descriptors)."""
        if self._retrievers is None:
            from pyterrier_pisa import PisaIndex, PisaRetrieve

            from mathir.indexing.native_output import native_output_to

            with native_output_to(self.shards[0].parent / "pisa.log"):
                # threads=2: pyterrier-pisa releases the GIL only when it runs threads,
                # and the shards' searches then overlap.
                self._retrievers = [PisaRetrieve(
                    PisaIndex(str(shard), stemmer=self.stemmer, threads=2), "quantized",
                    num_results=1000, threads=2, toks_scale=1.0, query_weighted=False,
                    query_algorithm=self.query_algorithm) for shard in self.shards]
        return self._retrievers

    def _shard_top(self, i: int, queries: pd.DataFrame, k: int) -> tuple[np.ndarray, ...]:
        """One shard's hits for every query: every document scoring at least its k-th
        hit's score (query row, docno, score), asking again with a deeper cut where
        ties reach it."""
        retriever = self._open()[i]
        rows, docnos, scores = [], [], []
        todo = np.arange(len(queries))
        depth = k + max(16, k // 8)
        while len(todo):
            retriever.num_results = depth
            column = "query_toks" if "query_toks" in queries.columns else "query"
            res = retriever.transform(queries.iloc[todo][["qid", column]]
                                      .assign(qid=[str(j) for j in range(len(todo))]))
            which = res["qid"].astype(np.int64).to_numpy()
            score = res["score"].to_numpy(dtype=np.float64)
            rank = res["rank"].to_numpy(dtype=np.int64)
            n = np.bincount(which, minlength=len(todo))
            # The k-th and the last score of each query that filled its cut.
            kth = np.full(len(todo), -np.inf)
            last = np.full(len(todo), np.inf)
            kth[which[rank == k - 1]] = score[rank == k - 1]
            last[which[rank == depth - 1]] = score[rank == depth - 1]
            again = (n == depth) & (last >= kth)
            done = ~again[which]
            rows.append(todo[which[done]])
            docnos.append(res["docno"].to_numpy(dtype=object)[done])
            scores.append(score[done])
            todo = todo[again]
            depth *= 2
        return np.concatenate(rows), np.concatenate(docnos), np.concatenate(scores)

    def search(self, queries: pd.DataFrame, k: int) -> pd.DataFrame:
        """The top ``k`` of every query (``qid`` and ``query_toks`` or ``query``): ``qid``,
        ``docno``, ``score``, ``rank`` and ``position``, by query in input order, then rank."""
        column = "query_toks" if "query_toks" in queries.columns else "query"
        for query in queries[column]:
            check_query_weight(query, self.levels)
        if not len(queries) or k < 1:
            return pd.DataFrame({"qid": [], "docno": [], "score": [], "rank": [],
                                 "position": []})
        queries = queries.reset_index(drop=True)
        self._open()
        if len(self.shards) == 1:
            parts = [self._shard_top(0, queries, k)]
        else:
            if self._pool is None:  # kept: starting threads for every query costs
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    min(len(self.shards), os.cpu_count() or 1), thread_name_prefix="shard")
            parts = list(self._pool.map(lambda i: self._shard_top(i, queries, k),
                                        range(len(self.shards))))
        row = np.concatenate([p[0] for p in parts])
        docno = np.concatenate([p[1] for p in parts])
        score = np.concatenate([p[2] for p in parts])
        position = np.asarray(self.positions(docno), dtype=np.int64)
        order = np.lexsort((position, -score, row))
        row, docno, score, position = row[order], docno[order], score[order], position[order]
        starts = np.searchsorted(row, row, side="left")
        rank = np.arange(len(row)) - starts
        keep = rank < k
        return pd.DataFrame({
            "qid": queries["qid"].to_numpy(dtype=object)[row[keep]],
            "docno": docno[keep], "score": score[keep], "rank": rank[keep],
            "position": position[keep]})

