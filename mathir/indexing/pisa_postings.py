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
import shutil
from array import array
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from mathir.errors import InputError

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

    def flush(self) -> Path:
        """Spill what is buffered and save this writer's part (lexicon, counts, runs) in
        its folder; the part's folder, for :func:`write_index`.

        A part is what one process indexed: several parts (shards of a collection,
        indexed in parallel) make one index, in the order given to :func:`write_index`.
        """
        self._spill()
        self._docnos.close()
        with open(self.path / "part.terms", "w", encoding="utf-8") as f:
            f.writelines(t + "\n" for t in self._lexicon)  # in id order
        np.save(self.path / "part.df.npy", self._df)
        np.save(self.path / "part.lengths.npy", np.frombuffer(self._lengths, dtype=np.uint32))
        with open(self.path / "part.json", "w") as f:
            json.dump({"num_docs": self.num_docs, "num_postings": self.num_postings,
                       "runs": [r.name for r in self._runs]}, f)
        return self.path

    def close(self) -> dict:
        """Write the index files in this writer's folder; the counts."""
        return write_index(self.path, [self.flush()])


def _read_terms(part: Path) -> list[str]:
    with open(part / "part.terms", encoding="utf-8") as f:
        return f.read().splitlines()


def write_index(path: str | Path, parts: list[Path], df_file: str | Path | None = None
                ) -> dict:
    """Write the PISA index made of ``parts`` (from :meth:`PostingsWriter.flush`) at ``path``.

    Documents keep the parts' order, so parts of consecutive slices of a collection give
    the index one writer would have written for the whole of it, byte for byte. The
    parts' files are removed. Returns the counts (documents, terms, postings). With
    ``df_file``, each term's document frequency (in lexicon order) is saved there as a
    ``.npy`` array (:func:`document_frequencies` reads it).
    """
    from pyterrier_pisa import _pisathon

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    infos = [json.loads((p / "part.json").read_text()) for p in parts]
    if len(parts) == 1:
        terms = _read_terms(parts[0])
        order = np.array(sorted(range(len(terms)), key=terms.__getitem__), dtype=np.int64)
        to_rank = [np.empty(len(terms), dtype=np.int64)]
        to_rank[0][order] = np.arange(len(terms))
        lexicon = [terms[i] for i in order]
    else:
        # The union of the parts' lexicons, sorted; each part's ids mapped into it.
        lexicon = sorted(set().union(*(_read_terms(p) for p in parts)))
        rank_of = {t: i for i, t in enumerate(lexicon)}
        to_rank = [np.fromiter((rank_of[t] for t in _read_terms(p)), dtype=np.int64)
                   for p in parts]
        del rank_of
    df = np.zeros(len(lexicon), dtype=np.int64)
    for part, ranks in zip(parts, to_rank, strict=True):
        df[ranks] += np.load(part / "part.df.npy")
    with open(path / "fwd.terms", "w", encoding="utf-8") as f:
        f.writelines(t + "\n" for t in lexicon)
    del lexicon
    if df_file is not None:
        np.save(df_file, df.astype(np.uint32))
    # Each run in lexicon order (stable: documents stay in order within a term), its
    # document ids offset by the documents of the parts before it.
    runs, first = [], 0
    for part, info, ranks_of in zip(parts, infos, to_rank, strict=True):
        for name in info["runs"]:
            with np.load(part / name) as z:
                ranks = ranks_of[z["ids"]]
                by_term = np.argsort(ranks, kind="stable")
                sorted_run = path / f"merge.{len(runs)}"
                sorted_run.mkdir()
                for key, values in (("ranks", ranks[by_term].astype(np.uint32)),
                                    ("docids", z["docids"][by_term] + np.uint32(first)),
                                    ("freqs", z["freqs"][by_term])):
                    np.save(sorted_run / f"{key}.npy", values)
            (part / name).unlink()
            runs.append(sorted_run)
        first += info["num_docs"]
    num_docs = first
    with open(path / "inv.docs", "wb") as f_docs, open(path / "inv.freqs", "wb") as f_freqs:
        f_docs.write(np.array([1, num_docs], dtype=np.uint32).tobytes())
        _merge(runs, df, f_docs, f_freqs)
    with open(path / "inv.sizes", "wb") as f:
        f.write(np.array([num_docs], dtype=np.uint32).tobytes())
        for part in parts:
            f.write(np.load(part / "part.lengths.npy").tobytes())
    for run in runs:
        for p in run.iterdir():
            p.unlink()
        run.rmdir()
    docnos = path / "fwd.documents"
    if [p.resolve() for p in parts] != [path.resolve()]:
        with open(docnos, "wb") as out:
            for part in parts:
                with open(part / "fwd.documents", "rb") as f:
                    shutil.copyfileobj(f, out)
                (part / "fwd.documents").unlink()
    for part in parts:
        for name in ("part.terms", "part.df.npy", "part.lengths.npy", "part.json"):
            (part / name).unlink()
    _pisathon.build_binlex(str(docnos), str(path / "fwd.doclex"))
    _pisathon.build_binlex(str(path / "fwd.terms"), str(path / "fwd.termlex"))
    with open(path / "pt_meta.json", "w") as f:
        json.dump({"type": "sparse_index", "format": "pisa",
                   "package_hint": "pyterrier-pisa", "stemmer": "none"}, f)
    return {"num_docs": num_docs, "num_terms": len(df),
            "num_postings": sum(i["num_postings"] for i in infos)}


def _merge(runs: list[Path], df: np.ndarray, f_docs, f_freqs) -> None:
    """Write every term's postings (a count, then the values), a range of terms at a time.

    Each range's slice of each run is read into memory and dropped after it is written
    (``np.fromfile`` at an offset), not memory-mapped: mapped pages would stay resident
    until the end, so the build's memory would grow with the collection.
    """
    ends = np.cumsum(df)
    # The ranges of terms, each holding about _MERGE_POSTINGS postings (one term at least).
    bounds, lo = [0], 0
    while lo < len(df):
        base = ends[lo - 1] if lo else 0
        lo = max(lo + 1, int(np.searchsorted(ends, base + _MERGE_POSTINGS, side="right")))
        bounds.append(lo)
    # Where each range starts and ends in each run (runs are sorted by term rank).
    opened = []
    for run in runs:
        ranks = np.load(run / "ranks.npy", mmap_mode="r")
        cuts = np.searchsorted(ranks, bounds).astype(np.int64)
        del ranks  # (a binary search touches a few pages per range)
        opened.append({"cuts": cuts, **{n: _npy_data(run / f"{n}.npy")
                                        for n in ("ranks", "docids", "freqs")}})
    for i in range(len(bounds) - 1):
        lo, hi = bounds[i], bounds[i + 1]
        ranks, docids, freqs = [], [], []
        for run in opened:  # runs are in document order: concatenated, docids ascend
            a, b = int(run["cuts"][i]), int(run["cuts"][i + 1])
            ranks.append(_read_slice(run["ranks"], a, b))
            docids.append(_read_slice(run["docids"], a, b))
            freqs.append(_read_slice(run["freqs"], a, b))
        by_term = np.argsort(np.concatenate(ranks), kind="stable")
        counts = df[lo:hi].astype(np.uint32)
        for values, f in ((docids, f_docs), (freqs, f_freqs)):
            f.write(_with_counts(np.concatenate(values)[by_term], counts).tobytes())


def _npy_data(path: Path) -> tuple[Path, int, np.dtype]:
    """Where the array of a ``.npy`` file starts, and its type."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        _, fortran, dtype = read_header(f)
        if fortran:
            raise ValueError(f"{path}: a Fortran-ordered array")
        return path, f.tell(), dtype


def _read_slice(where: tuple[Path, int, np.dtype], a: int, b: int) -> np.ndarray:
    path, offset, dtype = where
    return np.fromfile(path, dtype=dtype, count=b - a, offset=offset + a * dtype.itemsize)


def _with_counts(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``[n0, v..., n1, v..., ...]``: each term's postings preceded by their number."""
    out = np.empty(len(values) + len(counts), dtype=np.uint32)
    heads = np.cumsum(counts, dtype=np.int64) - counts + np.arange(len(counts))
    body = np.ones(len(out), dtype=bool)
    body[heads] = False
    out[heads] = counts
    out[body] = values
    return out


def list_heads(values: np.ndarray, num_terms: int) -> np.ndarray:
    """Position of each term's count in a PISA ``inv.docs`` or ``inv.freqs`` array without
    its ``inv.docs`` header (each list is a count, then its values).

    >>> list_heads(np.array([2, 7, 9, 1, 4], dtype=np.uint32), 2).tolist()
    [0, 3]
    """
    heads = np.empty(num_terms, dtype=np.int64)
    pos = 0
    for t in range(num_terms):  # a walk: a list's start depends on every list before it
        heads[t] = pos
        pos += int(values[pos]) + 1
    if pos != len(values):
        raise InputError(f"PISA collection with {num_terms} terms in fwd.terms but lists "
                         f"that end at {pos} of {len(values)} values")
    return heads


def document_frequencies(path: str | Path) -> np.ndarray:
    """Each term's document frequency in the PISA index at ``path``, in lexicon order.

    Read from ``df.npy`` where the index has one (:func:`write_index`'s ``df_file``),
    else counted by walking the heads of ``inv.freqs``, which reads a page of the
    postings per term: seconds for an index of millions of terms, once per opening.

    >>> import tempfile
    >>> d = tempfile.mkdtemp() + "/p"
    >>> _ = write_pisa_index(d, [("a", {"x": 1}), ("b", {"x": 2, "y": 1})])
    >>> document_frequencies(d).tolist()
    [2, 1]
    """
    path = Path(path)
    if (path / "df.npy").is_file():
        return np.load(path / "df.npy", mmap_mode="r")
    freqs = np.memmap(path / "inv.freqs", dtype=np.uint32, mode="r")
    heads = list_heads(freqs, PisaLexicon(path).num_terms)
    df = np.asarray(freqs[heads], dtype=np.uint32)
    del freqs
    return df


class PisaLexicon:
    """The sorted term lexicon of a PISA index (``fwd.termlex``), memory-mapped: a term's
    id by binary search, without reading the lexicon into Python strings (an index of
    millions of terms would hold hundreds of MB of them).

    ``fwd.termlex`` is PISA's payload vector: the number of terms n, n + 1 byte offsets
    (``uint64``), then the terms' bytes in sorted order.

    >>> import tempfile
    >>> d = tempfile.mkdtemp() + "/p"
    >>> _ = write_pisa_index(d, [("a", {"x": 1}), ("b", {"x": 2, "y": 1})])
    >>> PisaLexicon(d).ids(["y", "z", "x"]).tolist()
    [1, -1, 0]
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        raw = np.memmap(self.path / "fwd.termlex", dtype=np.uint8, mode="r")
        self.num_terms = int(raw[:8].view(np.uint64)[0])
        self._offsets = raw[8:8 * (self.num_terms + 2)].view(np.uint64)
        self._data = raw[8 * (self.num_terms + 2):]

    def __len__(self) -> int:
        return self.num_terms

    def term(self, i: int) -> bytes:
        """The UTF-8 bytes of term ``i``."""
        return self._data[int(self._offsets[i]):int(self._offsets[i + 1])].tobytes()

    def ids(self, terms) -> np.ndarray:
        """Each term's id (its rank in the lexicon), -1 for a term not in the index."""
        out = np.full(len(terms), -1, dtype=np.int64)
        for k, term in enumerate(terms):
            key, lo, hi = term.encode("utf-8"), 0, self.num_terms
            while lo < hi:  # bisect (the lexicon is sorted by code point, as UTF-8 bytes are)
                mid = (lo + hi) // 2
                if self.term(mid) < key:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < self.num_terms and self.term(lo) == key:
                out[k] = lo
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
