"""Extractive open-domain answers (ARQMath Task 3) from any answer-retrieval pipeline.

:class:`ExtractiveAnswer` takes the top-ranked answer of each topic from a Task 1
result frame, fetches its text (formulas as ``$LaTeX$``) and cuts it to at most 1,200
Unicode characters at a sentence boundary, never inside a formula. ``extractive(bm25)``
is the whole system: ``bm25 % 1 >> ExtractiveAnswer(...)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pandas as pd
import pyterrier as pt

from mathir.errors import InputError
from mathir.pipelines.parameters import Cache

MAX_ANSWER_CHARS = 1200  # the Task 3 limit (mathir.runs.arqmath_task3.MAX_ANSWER_CHARS)
_FORMULA = re.compile(r"(?<!\\)(\$\$?)(.+?)(?<!\\)\1", re.S)
# A sentence ends with . ! or ? (optionally closed by a quote or bracket) before a space.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)")


def _formula_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _FORMULA.finditer(text)]


def cut_answer(text: str, max_chars: int = MAX_ANSWER_CHARS) -> str:
    """``text`` cut to at most ``max_chars`` characters at a sentence boundary.

    Boundaries inside ``$...$`` formulas do not count. Without a sentence boundary the
    cut falls at the last space outside formulas; a first word or formula longer than
    the limit is cut hard (the only case that can break a formula).

    >>> cut_answer("One $x.y$ two. Three four. Five six seven.", 28)
    'One $x.y$ two. Three four.'
    >>> cut_answer("Short.", 28)
    'Short.'
    """
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    spans = _formula_spans(text)

    def outside(i: int) -> bool:
        return not any(a <= i < b for a, b in spans)

    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, max_chars + 1)
            if m.end() <= max_chars and outside(m.start())]
    if ends:
        return text[:ends[-1]].rstrip()
    spaces = [i for i, c in enumerate(text[:max_chars + 1]) if c == " " and outside(i)]
    if spaces and spaces[-1] > 0:
        return text[:spaces[-1]].rstrip()
    return text[:max_chars]


class ExtractiveAnswer(pt.Transformer):
    """Top answer of each topic as a Task 3 answer: ``qid, docno, score, rank, answer, sources``.

    ``texts`` maps answer post ids to their text (``$LaTeX$`` formulas), or is a
    callable that returns such a mapping for an iterable of ids (so that a large
    collection is read only for the answers needed).

    >>> res = pd.DataFrame({"qid": ["A.1", "A.1"], "docno": ["7", "8"], "score": [2.0, 1.0]})
    >>> ExtractiveAnswer({"7": "Yes. Because.", "8": "No."}, max_chars=5)(res)[["qid", "answer"]].values.tolist()
    [['A.1', 'Yes.']]
    """

    def __init__(self, texts: Mapping[str, str] | Callable[[Iterable[str]], Mapping[str, str]],
                 max_chars: int = MAX_ANSWER_CHARS):
        self.texts = texts
        self.max_chars = max_chars

    def __repr__(self) -> str:
        return f"ExtractiveAnswer(max_chars={self.max_chars})"

    def transform(self, results: pd.DataFrame) -> pd.DataFrame:
        cols = ["qid", "docno", "score", "rank", "answer", "sources"]
        if results.empty:
            return pd.DataFrame(columns=cols)
        missing = {"qid", "docno", "score"} - set(results.columns)
        if missing:
            raise InputError(f"results lack columns {sorted(missing)}")
        top = (results.assign(docno=results["docno"].astype(str))
               .sort_values(["qid", "score"], ascending=[True, False], kind="stable")
               .drop_duplicates("qid", keep="first"))
        texts = self.texts(top["docno"]) if callable(self.texts) else self.texts
        rows = []
        for row in top.itertuples(index=False):
            text = texts.get(row.docno)
            if text is None:
                raise InputError(f"no text for answer {row.docno} (topic {row.qid})")
            answer = cut_answer(text, self.max_chars)
            if answer:
                rows.append((row.qid, row.docno, float(row.score), 1, answer, row.docno))
        return pd.DataFrame(rows, columns=cols)


class CollectionTexts:
    """Answer texts fetched on demand from a collection (one streaming pass per request).

    Fetched texts are kept, so a topic set is read once.
    """

    def __init__(self, collection):
        self.collection = collection
        self._cache: dict[str, str] = Cache()

    def __repr__(self) -> str:
        return f"CollectionTexts({getattr(self.collection, 'path', self.collection)!s})"

    def __call__(self, docnos: Iterable[str]) -> dict[str, str]:
        from mathir.indexing.answer_collection import answer_texts

        wanted = {str(d) for d in docnos}
        todo = wanted - set(self._cache)
        if todo:
            self._cache.update(answer_texts(self.collection, todo))
        return {d: self._cache[d] for d in wanted if d in self._cache}


def index_collection_texts(index) -> CollectionTexts:
    """The answer texts of the collection an :class:`AnswerIndex` was built from."""
    from mathir.indexing.answer_collection import AnswerCollection

    meta = index.manifest["collection"]
    return CollectionTexts(AnswerCollection(Path(meta["path"]), meta["kind"]))


def extractive(retriever: pt.Transformer, texts, max_chars: int = MAX_ANSWER_CHARS
               ) -> pt.Transformer:
    """A Task 3 system from a Task 1 pipeline: its top answer, cut to ``max_chars``.

    >>> from mathir.indexing.answer_index import AnswerIndex
    >>> from mathir.pipelines.lexical import bm25
    >>> from mathir.samples import arqmath_sample
    >>> idx = AnswerIndex.build(arqmath_sample().posts, "sample-answers", quiet=True)
    >>> system = extractive(bm25(idx), index_collection_texts(idx))
    >>> res = system.search("derivative of $x^x$")
    >>> len(res), len(res.answer[0]) <= 1200
    (1, True)
    """
    return (retriever % 1) >> ExtractiveAnswer(texts, max_chars)
