"""Building blocks of a reranker over answer texts: the text store, the query, the scorer.

A reranker of Task 1 answers reads each retrieved answer's text, with its formulas as
``$LaTeX$`` (the answer index holds them as words), and the query as the topic wrote it
(``query_0`` when a lexical stage rewrote it). :func:`rerank` composes that around any
scorer::

    OriginalQuery() >> AddAnswerText(texts) >> scorer >> DropText()

* :func:`text_store`: the texts of an :class:`~mathir.indexing.answer_index.AnswerIndex`
  (:class:`~mathir.indexing.text_store.AnswerTexts`, an SQLite file beside the index,
  built from its collection on first use), or a ``{docno: text}`` mapping as it is;
* :class:`OriginalQuery`: puts back the query a rewriting stage kept in ``query_0``;
* :class:`AddAnswerText`: adds ``title`` (the question's title) and ``text`` (the
  answer) to each row, fetched in one batch per result frame;
* the scorer: any transformer that reads ``query``, ``title`` and ``text`` and sets
  ``score`` and ``rank`` (e.g. ``pt.apply.doc_score``, a cross-encoder; as in
  PyTerrier, rows keep their order: sort by ``rank`` to read a ranking);
* :class:`DropText`: drops the texts again, so run files and fusion do not carry them.

The neural rerankers (:mod:`mathir.pipelines.neural`) are built from these, and so can
yours (SPLADE, another dense model, a feature you compute).

>>> import pandas as pd
>>> res = pd.DataFrame({"qid": ["1", "1"], "query": ["prime", "prime"], "docno": ["a", "b"],
...                     "score": [2.0, 1.0], "rank": [0, 1]})
>>> words = pt.apply.doc_score(lambda row: len(row["text"].split()))
>>> out = rerank({"a": "one", "b": "two primes"}, words)(res)
>>> out.sort_values("rank")[["docno", "score", "rank"]].values.tolist()
[['b', 2.0, 0], ['a', 1.0, 1]]
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pyterrier as pt

from mathir.errors import InputError
from mathir.indexing.answer_index import AnswerIndex
from mathir.indexing.text_store import AnswerTexts


class OriginalQuery(pt.Transformer):
    """Put back the query a rewriting stage kept in ``query_0`` (no-op without one).

    >>> OriginalQuery()(pd.DataFrame({"qid": ["1"], "query": ["x power 2"], "query_0": ["$x^2$"]}))["query"][0]
    '$x^2$'
    """

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        if "query_0" not in inp.columns:
            return inp
        out = inp.drop(columns=["query"]).rename(columns={"query_0": "query"})
        return out[[c for c in inp.columns if c != "query_0"]]

    def __repr__(self) -> str:
        return "OriginalQuery()"


class AddAnswerText(pt.Transformer):
    """Add ``title`` and ``text`` (formulas as LaTeX) to each retrieved answer.

    The texts of a result frame are fetched from :class:`AnswerTexts` in one batch (a
    query per 900 answers), so the collection is never loaded whole. A plain mapping
    gives the whole text in ``text`` and an empty ``title``. A docno missing from the
    texts is an InputError.

    >>> res = pd.DataFrame({"qid": ["1"], "docno": ["a"]})
    >>> AddAnswerText({"a": "an answer"})(res)[["title", "text"]].values.tolist()
    [['', 'an answer']]
    """

    def __init__(self, texts: AnswerTexts | Mapping[str, str]):
        self.texts = texts

    def __repr__(self) -> str:
        return f"AddAnswerText({getattr(self.texts, 'path', '...')!s})"

    def transform(self, res: pd.DataFrame) -> pd.DataFrame:
        docnos = res["docno"].tolist()
        if isinstance(self.texts, AnswerTexts):
            found = self.texts.fetch(docnos)
        else:
            found = {d: ("", self.texts[d]) for d in set(docnos) if d in self.texts}
        missing = [d for d in dict.fromkeys(docnos) if d not in found]
        if missing:
            raise InputError(f"no text for document {missing[0]!r} ({len(missing)} missing)")
        return res.assign(title=[found[d][0] for d in docnos],
                          text=[found[d][1] for d in docnos])


class DropText(pt.Transformer):
    """Drop the ``text`` and ``title`` columns a scorer read (run files and fusion do
    not need them); a frame without them passes unchanged.

    >>> DropText()(pd.DataFrame({"qid": ["1"], "docno": ["a"], "text": ["t"]})).columns.tolist()
    ['qid', 'docno']
    """

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        return inp.drop(columns=[c for c in ("text", "title") if c in inp.columns])

    def __repr__(self) -> str:
        return "DropText()"


def text_store(index: AnswerIndex | AnswerTexts | Mapping[str, str],
               verbose: bool = False) -> AnswerTexts | Mapping[str, str]:
    """The answer texts a reranker reads: for an :class:`AnswerIndex`, the
    :class:`AnswerTexts` beside it (``<index>-texts``, built from the index's collection
    on first use, with a progress bar when ``verbose``); texts or a mapping as they are.

    >>> text_store({"a": "an answer"})["a"]
    'an answer'
    """
    if isinstance(index, AnswerIndex):
        return AnswerTexts.for_index(index, quiet=not verbose)
    return index


def rerank(texts: AnswerIndex | AnswerTexts | Mapping[str, str], scorer: pt.Transformer,
           cache: str | Path | None = None, verbose: bool = False) -> pt.Transformer:
    """Rerank a result frame with ``scorer`` reading each answer's text.

    ``OriginalQuery() >> AddAnswerText(texts) >> scorer >> DropText()``: ``texts`` is an
    answer index, its :class:`AnswerTexts` or a ``{docno: text}`` mapping
    (:func:`text_store`); ``scorer`` reads ``query``, ``title`` and ``text`` and sets
    ``score`` and ``rank``. ``cache``: a ``pyterrier_caching.ScorerCache`` directory
    keeping the scorer's (query, docno) scores across runs (one per scorer and setting;
    needs pyterrier-caching, in the ``neural`` extra). The query is put back before the
    cache, so that the cache keys scores by the query the scorer reads.

    >>> res = pd.DataFrame({"qid": ["1"], "query": ["x power 2"], "query_0": ["$x^2$"],
    ...                     "docno": ["a"], "score": [1.0], "rank": [0]})
    >>> reads = pt.apply.doc_score(lambda row: float(row["query"] == "$x^2$"))
    >>> rerank({"a": "an answer"}, reads)(res)[["query", "score"]].values.tolist()
    [['$x^2$', 1.0]]
    """
    if cache is not None:
        try:
            from pyterrier_caching import ScorerCache
        except ImportError:
            from mathir.models import EXTRAS

            raise InputError("a reranker cache needs pyterrier-caching (in the `neural` "
                             f"extra): {EXTRAS['neural'][1]}") from None
        scorer = ScorerCache(str(cache), scorer)
    return OriginalQuery() >> AddAnswerText(text_store(texts, verbose)) >> scorer >> DropText()
