"""A scikit-learn TF-IDF index built from the term counts of the PISA index.

Tokenising a million answers twice (once for PISA, once for scikit-learn) would double
the indexing time, so the TF-IDF matrix is made from PISA's own uncompressed inverted
files (``inv.docs``/``inv.freqs``: per term, its documents and counts). The weighting is
scikit-learn's ``TfidfTransformer`` (smooth idf, l2-normalised rows), so a score is the
cosine between query and answer. Tokens are PISA's (Porter2 stems); Terrier's stopwords
are removed on both sides. Retrieval multiplies the query's few columns of a CSC
matrix, so a query costs time proportional to its terms' posting lists.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy import sparse

from mathir.errors import InputError


def stop_stems(stemmer: str) -> set[str]:
    """Terrier's stopwords as ``stemmer`` stems them (what PISA's ``terrier`` list drops).

    >>> "the" in stop_stems("porter2")
    True
    """
    import pyterrier_pisa
    from pyterrier_pisa.stopwords import _STOPWORDS

    return set(pyterrier_pisa.tokenize(" ".join(_STOPWORDS["terrier"]), stemmer))


def _read_sequences(path: Path, skip_first: bool) -> tuple[np.ndarray, np.ndarray]:
    """PISA's binary collection format: ``[n, v1..vn]*`` uint32 -> (lengths, values)."""
    arr = np.fromfile(path, dtype=np.uint32)
    pos = 2 if skip_first else 0  # inv.docs starts with the sequence [num_docs]
    heads = []
    # A Python loop over terms (not postings): sequences are self-delimiting.
    n = len(arr)
    while pos < n:
        heads.append(pos)
        pos += int(arr[pos]) + 1
    heads = np.asarray(heads, dtype=np.int64)
    lengths = arr[heads].astype(np.int64)
    mask = np.ones(n, dtype=bool)
    mask[heads] = False
    if skip_first:
        mask[:2] = False
    return lengths, arr[mask]


def _pisa_counts(pisa_dir: Path) -> tuple[int, list[str], sparse.csc_matrix]:
    """A PISA collection's documents, terms and document-term counts (CSC)."""
    num_docs = int(np.fromfile(pisa_dir / "inv.docs", dtype=np.uint32, count=2)[1])
    lengths, docids = _read_sequences(pisa_dir / "inv.docs", skip_first=True)
    _, freqs = _read_sequences(pisa_dir / "inv.freqs", skip_first=False)
    terms = (pisa_dir / "fwd.terms").read_text(encoding="utf-8").split("\n")
    terms = terms[: len(lengths)]
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    counts = sparse.csc_matrix((freqs.astype(np.float32), docids, indptr),
                               shape=(num_docs, len(lengths)))
    return num_docs, terms, counts


def _shard_counts(shards: list[Path]) -> tuple[int, list[str], sparse.csc_matrix]:
    """The counts of consecutive shards as one collection: the union of their sorted
    lexicons (PISA's order), documents one shard after the other."""
    parts = [_pisa_counts(d) for d in shards]
    terms = sorted(set().union(*(p[1] for p in parts)))
    column = {t: j for j, t in enumerate(terms)}
    blocks = []
    for _, shard_terms, counts in parts:
        to_union = np.fromiter((column[t] for t in shard_terms), dtype=np.int64,
                               count=len(shard_terms))
        coo = counts.tocoo()
        blocks.append(sparse.csc_matrix((coo.data, (coo.row, to_union[coo.col])),
                                        shape=(counts.shape[0], len(terms))))
    merged = sparse.vstack(blocks, format="csc")
    merged.sort_indices()
    return sum(p[0] for p in parts), terms, merged


class TfidfIndex:
    """TF-IDF document-term matrix (CSC), vocabulary and docnos, stored in a directory."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.matrix = sparse.load_npz(self.path / "matrix.npz").tocsc()
            terms = (self.path / "terms.txt").read_text(encoding="utf-8").split("\n")[:-1]
            docnos = (self.path / "docnos.txt").read_text(encoding="utf-8").split("\n")[:-1]
        except OSError as e:
            raise InputError(f"incomplete TF-IDF index: {e}", path=self.path) from None
        self.vocabulary = {t: i for i, t in enumerate(terms)}
        self.docnos = np.array(docnos, dtype=object)
        self.idf = np.load(self.path / "idf.npy")
        self.stemmer = (self.path / "stemmer.txt").read_text(encoding="utf-8").strip()
        self._stops = stop_stems(self.stemmer)

    @staticmethod
    def build_from_pisa(pisa_dir: str | Path | list, path: str | Path,
                        stemmer: str = "porter2") -> int:
        """Make the TF-IDF index of a built PISA index, or of the PISA indexes of a
        collection's consecutive shards (a list: one index of them all, in order);
        returns the number of documents."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        shards = [Path(d) for d in pisa_dir] if isinstance(pisa_dir, list) else [Path(pisa_dir)]
        if len(shards) == 1:
            num_docs, terms, counts = _pisa_counts(shards[0])
        else:
            num_docs, terms, counts = _shard_counts(shards)
        lengths = np.diff(counts.indptr)
        from sklearn.feature_extraction.text import TfidfTransformer  # at build only (~1 s)

        tfidf = TfidfTransformer(norm="l2", smooth_idf=True).fit(counts)
        idf = tfidf.idf_.astype(np.float32)
        stops = stop_stems(stemmer)
        idf[[i for i, t in enumerate(terms) if t in stops]] = 0.0
        # TfidfTransformer.transform's weighting (tf * idf, then l2-normalised rows), done
        # in place on the CSC matrix: its CSR round trip costs 4 s and 1 GB per million
        # answers, and retrieval needs CSC.
        counts.data *= np.repeat(idf, lengths)
        norms = np.sqrt(np.bincount(counts.indices, weights=counts.data.astype(np.float64) ** 2,
                                    minlength=num_docs)).astype(np.float32)
        norms[norms == 0] = 1.0
        counts.data /= norms[counts.indices]
        counts.eliminate_zeros()
        matrix = counts
        sparse.save_npz(path / "matrix.npz", matrix, compressed=False)
        np.save(path / "idf.npy", idf)
        (path / "terms.txt").write_text("".join(t + "\n" for t in terms), encoding="utf-8")
        with open(path / "docnos.txt", "w", encoding="utf-8") as f:
            for shard in shards:
                n = int(np.fromfile(shard / "inv.docs", dtype=np.uint32, count=2)[1])
                docnos = (shard / "fwd.documents").read_text(encoding="utf-8").split("\n")[:n]
                f.writelines(d + "\n" for d in docnos)
        (path / "stemmer.txt").write_text(stemmer + "\n", encoding="utf-8")
        return num_docs

    def query_vector(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Column ids and l2-normalised tf-idf weights of a query's known terms."""
        import pyterrier_pisa

        counts: dict[int, int] = {}
        for t in pyterrier_pisa.tokenize(query, self.stemmer):
            j = self.vocabulary.get(t)
            if j is not None and t not in self._stops:
                counts[j] = counts.get(j, 0) + 1
        if not counts:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        cols = np.fromiter(counts, dtype=np.int64)
        w = np.fromiter(counts.values(), dtype=np.float32) * self.idf[cols]
        return cols, w / np.linalg.norm(w)

    def search(self, query: str, num_results: int = 1000) -> tuple[np.ndarray, np.ndarray]:
        """Top ``num_results`` (docnos, cosine scores), best first; ties in index order.

        Documents sharing no term with the query are not returned.
        """
        cols, w = self.query_vector(query)
        if len(cols) == 0:
            return np.empty(0, dtype=object), np.empty(0, dtype=np.float32)
        scores = np.asarray(self.matrix[:, cols] @ w).ravel()
        hits = np.flatnonzero(scores)
        if len(hits) > num_results:
            top = np.argpartition(-scores[hits], num_results - 1)[:num_results]
            hits = hits[top]
        order = np.lexsort((hits, -scores[hits]))
        hits = hits[order]
        return self.docnos[hits], scores[hits]
