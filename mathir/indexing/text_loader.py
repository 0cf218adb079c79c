"""PyTerrier's text loader protocol for mathir's indexes: ``pt.text.get_text(index, fields)``.

Every index offers ``text_loader(fields='*', *, verbose=False)`` (PyTerrier's
``pt.text.HasTextLoader``), a transformer that adds the named fields of each row's
document by ``docno``:

* :class:`~mathir.indexing.answer_index.AnswerIndex` and
  :class:`~mathir.indexing.dense_index.DenseAnswerIndex`: ``title`` (the question's
  title) and ``text`` (the answer, formulas as ``$LaTeX$``), from the answer texts beside
  the index (built from its collection on first use);
* :class:`~mathir.indexing.fact_index.FactIndex`: ``text`` and ``table``;
* :class:`~mathir.indexing.formula_index.FormulaIndex`: ``text`` (the formula's LaTeX,
  read from the source the index was built from: one pass over it per call) and the id
  columns ``post_id``, ``thread_id``, ``visual_id``.

:class:`TextLoader` is that transformer, given the index's lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import pandas as pd
import pyterrier as pt
from tqdm.auto import tqdm

from mathir.errors import InputError

#: ``(docnos, fields) -> {docno: values in fields' order}`` for the docnos found.
Lookup = Callable[[list[str], list[str]], dict[str, tuple]]


def requested_fields(fields: str | Sequence[str] | Literal["*"],
                     available: Sequence[str]) -> list[str]:
    """The fields a loader adds: ``'*'`` all ``available``, a name, or a list of names.

    >>> requested_fields("*", ["title", "text"]), requested_fields("text", ["title", "text"])
    (['title', 'text'], ['text'])
    >>> requested_fields(["body"], ["title", "text"])
    Traceback (most recent call last):
    mathir.errors.InputError: no field 'body' here: the fields are title, text
    """
    if fields == "*":
        return list(available)
    wanted = [fields] if isinstance(fields, str) else list(fields)
    unknown = [f for f in wanted if f not in available]
    if unknown:
        raise InputError(f"no field {unknown[0]!r} here: the fields are {', '.join(available)}")
    return wanted


class TextLoader(pt.Transformer):
    """Add ``fields`` of each row's document (by ``docno``) to a frame.

    ``lookup(docnos, fields)`` returns the values of the distinct docnos it finds, read
    ``chunk_size`` docnos at a time (a progress bar over them with ``verbose``). Columns
    of those names already in the frame are replaced; rows keep their order. A docno the
    index does not hold is an :class:`~mathir.errors.InputError`.

    >>> facts = {"f1": ("a fact", "KINDOF")}
    >>> loader = TextLoader(lambda d, f: {k: facts[k] for k in d if k in facts},
    ...                     ["text", "table"], "text", name="facts")
    >>> loader(pd.DataFrame({"qid": ["1"], "docno": ["f1"]}))["text"].tolist()
    ['a fact']
    """

    schematic = {"label": "TextLoader"}

    def __init__(self, lookup: Lookup, available: Sequence[str],
                 fields: str | Sequence[str] | Literal["*"] = "*", *, verbose: bool = False,
                 name: str = "index", chunk_size: int = 10_000):
        self.lookup = lookup
        self.available = list(available)
        self.fields = requested_fields(fields, self.available)
        self.verbose = verbose
        self.name = name
        self.chunk_size = chunk_size

    def __repr__(self) -> str:
        return f"TextLoader({self.name}, {self.fields!r})"

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        if "docno" not in inp.columns:
            raise InputError(f"a text loader reads the docno column; the frame has "
                             f"{', '.join(map(str, inp.columns)) or 'no column'}")
        docnos = [str(d) for d in inp["docno"]]
        wanted = list(dict.fromkeys(docnos))
        found: dict[str, tuple] = {}
        starts = range(0, len(wanted), self.chunk_size)
        for start in tqdm(starts, desc=f"loading {self.name} texts", unit=" chunks",
                          disable=not self.verbose or len(starts) < 2):
            found.update(self.lookup(wanted[start:start + self.chunk_size], self.fields))
        missing = [d for d in wanted if d not in found]
        if missing:
            raise InputError(f"{self.name}: no document {missing[0]!r} "
                             f"({len(missing)} of {len(wanted)} not found)")
        out = inp.drop(columns=[f for f in self.fields if f in inp.columns])
        values = [found[d] for d in docnos]
        return out.assign(**{f: [v[i] for v in values] for i, f in enumerate(self.fields)})

    def fuse_rank_cutoff(self, k: int) -> pt.Transformer:
        """``pt.RankCutoff(k) >> self``: cut before loading texts (as PyTerrier's loaders)."""
        return pt.RankCutoff(k) >> self
