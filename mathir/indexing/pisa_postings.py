"""Write a PISA index from documents given as term counts, in bounded memory.

pyterrier-pisa's ``toks_indexer`` inverts in Python: every batch of 100,000 documents
loops over the whole lexicon so far, writing one small numpy array per term, and keeps
a Python list per posting. Its cost grows with batches x lexicon, which is hours at
ARQMath's 28M formulas (whose tuple lexicon has millions of terms). No library writes
PISA's files from term counts otherwise, so this module does it by hand, with numpy:

* a document arrives as one ``uint32`` array of its term ids and counts
  (:meth:`PostingsWriter.encode` maps the strings once; a caller that sees the same
  document again, e.g. a repeated formula, passes the cached array);
* postings are buffered as arrays and spilled to disk in runs;
* at the end the runs are put in the order of the sorted lexicon and merged a range of
  terms at a time, so memory stays bounded whatever the collection's size.

The files are those pyterrier-pisa's indexer writes, byte for byte
(``tests/indexing/test_pisa_postings.py`` compares them): PISA's binary collection
(``inv.docs``, ``inv.freqs``, ``inv.sizes``), the lexicons (``fwd.documents``,
``fwd.terms`` and their ``.doclex``/``.termlex`` forms) and ``pt_meta.json``, so the
folder opens as a ``pyterrier_pisa.PisaIndex`` (which compresses it on its first
``bm25()``).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

_RUN_POSTINGS = 1 << 24  # postings buffered before a run is spilled (~200 MB of arrays)
_MERGE_POSTINGS = 1 << 24  # postings merged at a time at the end


class PostingsWriter:
    """Build a PISA index in ``path`` from documents of term counts.

    >>> import tempfile
    >>> w = PostingsWriter(tempfile.mkdtemp() + "/pisa")
    >>> w.add("d1", w.encode({"a": 2, "b": 1})); w.add("d2", w.encode({"b": 3}))
    >>> w.close()
    {'num_docs': 2, 'num_terms': 2, 'num_postings': 3}
    """

    def __init__(self, path: str | Path, run_postings: int = _RUN_POSTINGS):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.run_postings = run_postings
        self.num_docs = 0
        self.num_postings = 0
        self._lexicon: dict[str, int] = {}
        self._docnos = open(self.path / "fwd.documents", "w", encoding="utf-8")
        self._lengths = array("I")
        self._docs: list[np.ndarray] = []
        self._buffered = 0
        self._runs: list[Path] = []
        self._df = np.zeros(0, dtype=np.int64)

    def encode(self, toks: Mapping[str, float]) -> np.ndarray:
        """One document's term ids then counts (``uint32``), new terms added to the lexicon.

        Counts are truncated to integers and terms counting 0 or less are left out, as
        pyterrier-pisa's ``toks`` indexer (with ``scale=1``) does.
        """
        lexicon = self._lexicon
        terms = [(t, int(c)) for t, c in toks.items() if int(c) > 0]
        out = np.empty(2 * len(terms), dtype=np.uint32)
        # setdefault gives a new term the next id: one dict operation per token.
        out[:len(terms)] = [lexicon.setdefault(t, len(lexicon)) for t, _ in terms]
        out[len(terms):] = [c for _, c in terms]
        return out

    def add(self, docno: str, doc: np.ndarray) -> None:
        """Append a document (its :meth:`encode` array) with identifier ``docno``."""
        if not docno or any(ch.isspace() for ch in docno):
            raise ValueError(f"a PISA docno must be a non-empty word: {docno!r}")
        self._docnos.write(docno + "\n")
        self._docs.append(doc)
        self._buffered += len(doc) // 2
        self.num_docs += 1
        if self._buffered >= self.run_postings:
            self._spill()

    def _spill(self) -> None:
        """Write the buffered documents' postings as a run (doc order) and their lengths."""
        docs, self._docs = self._docs, []
        if not docs:
            return
        first = self.num_docs - len(docs)
        sizes = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs)) // 2
        flat = np.concatenate(docs) if docs else np.zeros(0, dtype=np.uint32)
        total = int(sizes.sum())
        doc_of = np.repeat(np.arange(len(docs), dtype=np.int64), sizes)
        # Position of each posting's term id in ``flat``: its document's start plus its
        # index within the document; the count sits ``size`` further on.
        starts = np.cumsum(2 * sizes) - 2 * sizes
        within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        at = np.repeat(starts, sizes) + within
        ids = flat[at]
        freqs = flat[at + np.repeat(sizes, sizes)]
        lengths = np.bincount(doc_of, weights=freqs, minlength=len(docs))
        self._lengths.extend(lengths.astype(np.uint32).tolist())
        df = np.bincount(ids, minlength=len(self._lexicon))
        df[:len(self._df)] += self._df
        self._df = df
        run = self.path / f"run.{len(self._runs)}.npz"
        np.savez(run, ids=ids, docids=(doc_of + first).astype(np.uint32), freqs=freqs)
        self._runs.append(run)
        self.num_postings += total
        self._buffered = 0

    def close(self) -> dict:
        """Write the index files; the counts (documents, terms, postings)."""
        from pyterrier_pisa import _pisathon

        self._spill()
        self._docnos.close()
        terms = list(self._lexicon)  # in id order
        order = np.array(sorted(range(len(terms)), key=terms.__getitem__), dtype=np.int64)
        rank = np.empty(len(terms), dtype=np.int64)
        rank[order] = np.arange(len(terms))
        with open(self.path / "fwd.terms", "w", encoding="utf-8") as f:
            f.writelines(terms[i] + "\n" for i in order)
        df = self._df[order] if len(terms) else self._df
        # Each run in lexicon order (stable: documents stay in order within a term).
        runs = []
        for i, run in enumerate(self._runs):
            with np.load(run) as z:
                ranks = rank[z["ids"]]
                by_term = np.argsort(ranks, kind="stable")
                sorted_run = self.path / f"run.{i}.sorted"
                sorted_run.mkdir()
                for name, values in (("ranks", ranks[by_term].astype(np.uint32)),
                                     ("docids", z["docids"][by_term]),
                                     ("freqs", z["freqs"][by_term])):
                    np.save(sorted_run / f"{name}.npy", values)
            run.unlink()
            runs.append(sorted_run)
        with open(self.path / "inv.docs", "wb") as f_docs, \
                open(self.path / "inv.freqs", "wb") as f_freqs:
            f_docs.write(np.array([1, self.num_docs], dtype=np.uint32).tobytes())
            self._merge(runs, df, f_docs, f_freqs)
        with open(self.path / "inv.sizes", "wb") as f:
            f.write(np.array([self.num_docs], dtype=np.uint32).tobytes())
            f.write(np.frombuffer(self._lengths, dtype=np.uint32).tobytes())
        for run in runs:
            for p in run.iterdir():
                p.unlink()
            run.rmdir()
        _pisathon.build_binlex(str(self.path / "fwd.documents"), str(self.path / "fwd.doclex"))
        _pisathon.build_binlex(str(self.path / "fwd.terms"), str(self.path / "fwd.termlex"))
        with open(self.path / "pt_meta.json", "w") as f:
            json.dump({"type": "sparse_index", "format": "pisa",
                       "package_hint": "pyterrier-pisa", "stemmer": "none"}, f)
        return {"num_docs": self.num_docs, "num_terms": len(terms),
                "num_postings": self.num_postings}

    @staticmethod
    def _merge(runs: list[Path], df: np.ndarray, f_docs, f_freqs) -> None:
        """Write every term's postings (a count, then the values), a range of terms at a time."""
        ends = np.cumsum(df)
        opened = [{n: np.load(r / f"{n}.npy", mmap_mode="r") for n in ("ranks", "docids", "freqs")}
                  for r in runs]
        lo = 0
        while lo < len(df):
            # The next range of terms holding about _MERGE_POSTINGS postings (one at least).
            base = ends[lo - 1] if lo else 0
            hi = max(lo + 1, int(np.searchsorted(ends, base + _MERGE_POSTINGS, side="right")))
            ranks, docids, freqs = [], [], []
            for run in opened:  # runs are in document order: concatenated, docids ascend
                a, b = np.searchsorted(run["ranks"], [lo, hi])
                ranks.append(run["ranks"][a:b])
                docids.append(run["docids"][a:b])
                freqs.append(run["freqs"][a:b])
            by_term = np.argsort(np.concatenate(ranks), kind="stable")
            counts = df[lo:hi].astype(np.uint32)
            for values, f in ((docids, f_docs), (freqs, f_freqs)):
                f.write(_with_counts(np.concatenate(values)[by_term], counts).tobytes())
            lo = hi


def _with_counts(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``[n0, v..., n1, v..., ...]``: each term's postings preceded by their number."""
    out = np.empty(len(values) + len(counts), dtype=np.uint32)
    heads = np.cumsum(counts, dtype=np.int64) - counts + np.arange(len(counts))
    body = np.ones(len(out), dtype=bool)
    body[heads] = False
    out[heads] = counts
    out[body] = values
    return out


def write_pisa_index(path: str | Path, docs: Iterable[tuple[str, Mapping[str, float]]]) -> dict:
    """Index ``(docno, term counts)`` pairs into a PISA index at ``path``; the counts.

    >>> import tempfile
    >>> write_pisa_index(tempfile.mkdtemp() + "/p", [("a", {"x": 1}), ("b", {"x": 2, "y": 1})])
    {'num_docs': 2, 'num_terms': 2, 'num_postings': 3}
    """
    writer = PostingsWriter(path)
    for docno, toks in docs:
        writer.add(docno, writer.encode(toks))
    return writer.close()
