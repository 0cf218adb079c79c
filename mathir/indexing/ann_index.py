"""Approximate nearest-neighbour search over a dense answer index (FAISS), exact rescoring.

The ``dense`` pipeline's exhaustive scan reads every passage vector for every batch of
queries (ARQMath: 1.68M passages, 2.6 GB, about 3.3 CPU-seconds a query). An
:class:`AnnIndex` answers from a FAISS graph or inverted file instead, built once beside
the vectors (``<dense index>/ann-<kind>-<parameters>/``, with a manifest, reused while
the vectors are unchanged):

* ``hnsw``: ``faiss.IndexHNSWSQ``, an HNSW graph (``M`` links a node) over 8-bit scalar
  quantised vectors (384 bytes a passage instead of 1,536);
* ``ivf``: ``faiss.IndexIVFScalarQuantizer``, ``nlist`` k-means cells over the same
  8-bit vectors, ``nprobe`` cells searched.

Either way the ``rescore * depth`` best candidates are scored again exactly with the
float32 vectors of the FlexIndex (``vecs.f4``, memory-mapped: only the candidates' rows
are read), so scores equal the exhaustive scan's and only the candidate set is
approximate. Memory: the quantised vectors and the graph or lists are read into memory
(about 0.64 KB a passage for ``hnsw`` with M=32, 0.4 KB for ``ivf``); the float32 vectors
stay on disk, but the pages of them that rescoring reads stay mapped, and a process's
resident set counts them (up to the whole file: 2.58 GB at ARQMath's size).

With the search parameter ``f16=1`` the candidates are rescored from a float16 copy of
the vectors instead (:func:`half_vectors`, written beside the FlexIndex on first use):
half the pages, so a search's resident set stays under 2.1 GB at ARQMath's size, and
scores within about 1e-4 of the exact ones (each component rounded to 11 significant
bits; the query stays float32).

A search is named by a spec, ``KIND[:NAME=VALUE,...]`` (:func:`parse_search`):
``ivf``, ``ivf:nprobe=128``, ``hnsw:ef_search=2048,f16=1``; the dense pipeline's
``search`` argument and ``mathir experiment --dense-search`` take one.

Unlike pyterrier-dr's ``faiss_hnsw_retriever`` (an ``IndexHNSWFlat`` whose float32 storage
is read whole into memory: 2.6 GB at ARQMath's size, plus the graph), nothing here holds
the float32 vectors in memory.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt

from mathir.errors import InputError
from mathir.indexing.identity import writer_identity
from mathir.storage import build_or_reuse, read_manifest

ANN_FORMAT = 1
#: The libraries that write an approximate index (FAISS) and the float16 copy (numpy):
#: their versions are part of its identity (:mod:`mathir.indexing.identity`), as this
#: module's code is.
PACKAGES = ("faiss-cpu", "numpy")
#: kind -> default build parameters and default search parameters
DEFAULTS = {"hnsw": ({"M": 32, "ef_construction": 80}, {"ef_search": 1024, "f16": 0}),
            "ivf": ({"nlist": 0}, {"nprobe": 256, "f16": 0})}
SEARCHES = ("exhaustive", *DEFAULTS)


def require_faiss(what: str = "approximate dense search") -> None:
    """InputError naming the ``neural`` extra when faiss is missing."""
    from mathir.models import require_extra

    require_extra("neural", what, ["faiss"])


def parse_search(search: str | None) -> tuple[str, dict[str, int]]:
    """(kind, parameters) of a search spec ``KIND[:NAME=VALUE,...]`` (None: ``exhaustive``).

    The kind is one of :data:`SEARCHES`; the names are its build or search parameters
    (:data:`DEFAULTS`), the values whole numbers.

    >>> parse_search("ivf:nprobe=128, f16=1")
    ('ivf', {'nprobe': 128, 'f16': 1})
    >>> parse_search("hnsw"), parse_search(None)
    (('hnsw', {}), ('exhaustive', {}))
    >>> parse_search("lsh")
    Traceback (most recent call last):
    mathir.errors.InputError: unknown dense search 'lsh'; expected one of exhaustive, hnsw, ivf
    >>> parse_search("ivf:ef_search=64")
    Traceback (most recent call last):
    mathir.errors.InputError: dense search 'ivf:ef_search=64': unknown ivf parameter 'ef_search'; expected one of nlist, nprobe, f16
    """
    spec = (search or "exhaustive").strip()
    kind, _, rest = spec.partition(":")
    kind = kind.strip()
    if kind not in SEARCHES:
        raise InputError(f"unknown dense search {kind!r}; expected one of {', '.join(SEARCHES)}")
    names = [k for part in DEFAULTS.get(kind, ({}, {})) for k in part]
    params: dict[str, int] = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        name, eq, value = (x.strip() for x in item.partition("="))
        if not names:
            raise InputError(f"dense search {spec!r}: {kind} takes no parameters")
        if name not in names:
            raise InputError(f"dense search {spec!r}: unknown {kind} parameter {name!r}; "
                             f"expected one of {', '.join(names)}")
        if not eq or not value.isdigit():
            raise InputError(f"dense search {spec!r}: {name} needs a whole number "
                             f"({name}=N)")
        params[name] = int(value)
    if params.get("f16", 0) not in (0, 1):
        raise InputError(f"dense search {spec!r}: f16 is 0 or 1")
    return kind, params


def check_search(search: str | None) -> str:
    """The canonical form of a search spec (:func:`parse_search`), parameters by name.

    >>> check_search("hnsw"), check_search(None), check_search("ivf: nprobe=64,f16=1")
    ('hnsw', 'exhaustive', 'ivf:f16=1,nprobe=64')
    """
    kind, params = parse_search(search)
    return kind + (":" + ",".join(f"{k}={v}" for k, v in sorted(params.items()))
                   if params else "")


def flex_meta(flex: Path) -> tuple[int, int]:
    """(passages, dimension) of a pyterrier-dr FlexIndex folder."""
    meta = json.loads((Path(flex) / "pt_meta.json").read_text())
    return int(meta["doc_count"]), int(meta["vec_size"])


def flex_vectors(flex: Path) -> np.memmap:
    """The FlexIndex's float32 vectors, memory-mapped read-only."""
    n, dim = flex_meta(flex)
    return np.memmap(Path(flex) / "vecs.f4", dtype="<f4", mode="r", shape=(n, dim))


def half_vectors(flex: Path, quiet: bool = True) -> np.memmap:
    """A float16 copy of the FlexIndex's vectors, memory-mapped read-only.

    Written on first use to ``<flex>-f16/vecs.f2`` beside the FlexIndex (with a manifest
    naming the float32 file's size and modification time, so a changed ``vecs.f4`` is
    copied again), in blocks: memory stays bounded.
    """
    flex = Path(flex)
    n, dim = flex_meta(flex)
    path = flex.parent / (flex.name + "-f16")
    wanted = {"kind": "half-vectors", "format": ANN_FORMAT, "vectors": _vectors_stamp(flex),
              "writer": writer_identity(__name__, ("numpy",))}

    def build_into(tmp: Path) -> dict:
        from tqdm.auto import tqdm

        source = flex_vectors(flex)
        block = 65_536
        with open(tmp / "vecs.f2", "wb") as out:
            for start in tqdm(range(0, n, block), desc="float16 copy", unit=" blocks",
                              disable=quiet):
                out.write(np.asarray(source[start:start + block], dtype="<f2").tobytes())
        return {"bytes": n * dim * 2}

    build_or_reuse(path, wanted, build_into)
    if n == 0:
        return np.zeros((0, dim), dtype="<f2")
    return np.memmap(path / "vecs.f2", dtype="<f2", mode="r", shape=(n, dim))


def _vectors_stamp(flex: Path) -> dict:
    """What a file derived from ``vecs.f4`` records of it: reused only while it matches."""
    n, dim = flex_meta(flex)
    vecs = Path(flex) / "vecs.f4"
    stat = vecs.stat()
    return {"path": str(vecs.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
            "passages": n, "dim": dim}


def _nlist(n: int) -> int:
    """4 * sqrt(n) cells, a power of two (FAISS's rule of thumb), at least 16."""
    return max(16, 1 << int(np.ceil(np.log2(4 * np.sqrt(max(n, 1))))))


@dataclass
class AnnIndex:
    """A FAISS index over the vectors of the FlexIndex at ``flex`` (see the module doc).

    Build (or reuse) with :meth:`build`; search with :meth:`search` or use
    :meth:`retriever` in a pipeline (``query_vec`` in, ``docno``/``score``/``rank`` out).
    """

    flex: Path
    path: Path
    manifest: dict
    params: dict = field(default_factory=dict)
    _index: object = None
    _vectors: tuple[bool, np.memmap] | None = None
    _docnos: object = None

    @classmethod
    def build(cls, flex: str | Path, kind: str = "hnsw", *, quiet: bool = True,
              threads: int | None = None, **params) -> AnnIndex:
        """The ``kind`` index of ``flex`` (built beside it on first use).

        ``params``: for ``hnsw`` ``M``, ``ef_construction`` (build) and ``ef_search``;
        for ``ivf`` ``nlist`` (0: 4 * sqrt(passages)) and ``nprobe``; for both ``f16``
        (1: rescore from float16 copies of the vectors, :func:`half_vectors`).
        """
        require_faiss()
        if kind not in DEFAULTS:
            raise InputError(f"unknown approximate index {kind!r}; expected one of "
                             f"{', '.join(DEFAULTS)}")
        flex = Path(flex)
        build_defaults, search_defaults = DEFAULTS[kind]
        unknown = set(params) - set(build_defaults) - set(search_defaults)
        if unknown:
            raise InputError(f"unknown {kind} parameter(s): {', '.join(sorted(unknown))}")
        built = {k: int(params.get(k, v)) for k, v in build_defaults.items()}
        n, dim = flex_meta(flex)
        if kind == "ivf" and built["nlist"] == 0:
            built["nlist"] = _nlist(n)
        name = "ann-" + kind + "".join(f"-{k}{v}" for k, v in built.items())
        path = flex.parent / name
        wanted = {"kind": "ann-index", "format": ANN_FORMAT, "index": kind, "params": built,
                  "vectors": _vectors_stamp(flex), "writer": writer_identity(__name__, PACKAGES)}

        def build_into(tmp: Path) -> dict:
            return _build(flex, tmp / "index.faiss", kind, built, quiet, threads)

        build_or_reuse(path, wanted, build_into)
        search = {k: int(params.get(k, v)) for k, v in search_defaults.items()}
        if search["f16"] not in (0, 1):
            raise InputError(f"f16 is 0 or 1, not {search['f16']}")
        if search["f16"]:
            half_vectors(flex, quiet=quiet)
        return cls(flex, path, read_manifest(path), search)

    def __repr__(self) -> str:
        return f"AnnIndex({str(self.path)!r}, {self.params})"

    @property
    def index(self):
        """The FAISS index, read on first use."""
        if self._index is None:
            import faiss

            self._index = faiss.read_index(str(self.path / "index.faiss"))
        return self._index

    @property
    def vectors(self) -> np.memmap:
        """The vectors candidates are rescored with: float32, or float16 with ``f16=1``."""
        f16 = bool(self.params.get("f16"))
        if self._vectors is None or self._vectors[0] != f16:
            self._vectors = (f16, half_vectors(self.flex) if f16 else flex_vectors(self.flex))
        return self._vectors[1]

    @property
    def docnos(self):
        """The FlexIndex's docnos (an ``npids`` lookup: ``docnos.fwd[ids]``)."""
        if self._docnos is None:
            import npids

            self._docnos = npids.Lookup(str(self.flex / "docnos.npids"))
        return self._docnos

    def search(self, queries: np.ndarray, depth: int, rescore: float = 1.0
               ) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids) of the ``depth`` best passages of each query, best first.

        ``rescore`` >= 1: ``ceil(rescore * depth)`` candidates are taken from the
        approximate index and scored exactly with the float32 vectors (or the float16
        copies, with ``f16=1``); 0: the approximate scores are kept. Missing results
        (fewer candidates than ``depth``) have id -1 and score -inf.
        """
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        index = self.index
        kind = self.manifest["index"]
        want = depth if rescore <= 0 else int(np.ceil(max(rescore, 1.0) * depth))
        want = min(want, index.ntotal)
        if kind == "hnsw":
            index.hnsw.efSearch = max(self.params["ef_search"], want)
        else:
            index.nprobe = self.params["nprobe"]
        approx, ids = index.search(queries, want)
        if rescore <= 0:
            return _pad(approx[:, :depth], ids[:, :depth], depth)
        scores_out = np.full((len(queries), depth), -np.inf, dtype=np.float32)
        ids_out = np.full((len(queries), depth), -1, dtype=np.int64)
        vectors = self.vectors
        for i, (row, q) in enumerate(zip(ids, queries, strict=True)):
            row = np.sort(row[row >= 0])  # disk order: fewer page reads
            exact = np.asarray(vectors[row], dtype=np.float32) @ q
            top = np.argsort(-exact, kind="stable")[:depth]
            scores_out[i, :len(top)] = exact[top]
            ids_out[i, :len(top)] = row[top]
        return scores_out, ids_out

    def retriever(self, num_results: int = 1000, rescore: float = 1.0,
                  drop_query_vec: bool = True) -> pt.Transformer:
        """A transformer: ``query_vec`` -> the ``num_results`` best passages (``docno``,
        ``docid``, ``score``, ``rank``), as pyterrier-dr's ``np_retriever`` gives them."""
        return AnnRetriever(self, num_results, rescore, drop_query_vec)


def _pad(scores: np.ndarray, ids: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    scores = np.where(ids >= 0, scores, -np.inf).astype(np.float32)
    if scores.shape[1] < depth:
        extra = depth - scores.shape[1]
        scores = np.pad(scores, ((0, 0), (0, extra)), constant_values=-np.inf)
        ids = np.pad(ids, ((0, 0), (0, extra)), constant_values=-1)
    return scores, ids


def _build(flex: Path, out: Path, kind: str, params: dict, quiet: bool,
           threads: int | None) -> dict:
    import faiss
    from tqdm.auto import tqdm

    if threads:
        faiss.omp_set_num_threads(threads)
    vectors = flex_vectors(flex)
    n, dim = vectors.shape
    if n == 0:
        raise InputError("the dense index holds no vectors", path=flex)
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    sample_n = min(n, 200_000 if kind == "ivf" else 100_000)
    sample = np.ascontiguousarray(vectors[np.sort(rng.choice(n, sample_n, replace=False))])
    qt = faiss.ScalarQuantizer.QT_8bit
    if kind == "hnsw":
        index = faiss.IndexHNSWSQ(dim, qt, params["M"], faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = params["ef_construction"]
    else:
        nlist = min(params["nlist"], max(1, n // 39))
        params["nlist"] = nlist
        index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dim), dim, nlist, qt,
                                              faiss.METRIC_INNER_PRODUCT)
    index.train(sample)
    train_s = time.perf_counter() - t0
    block = 65_536
    for start in tqdm(range(0, n, block), desc=f"building {kind}", unit=" blocks",
                      disable=quiet):
        index.add(np.ascontiguousarray(vectors[start:start + block]))
    faiss.write_index(index, str(out))
    return {"passages": int(n), "train_s": round(train_s, 2),
            "build_s": round(time.perf_counter() - t0, 2), "bytes": out.stat().st_size}


class AnnRetriever(pt.Transformer):
    """Passages of an :class:`AnnIndex` for each ``query_vec`` (one frame in, one out)."""

    def __init__(self, ann: AnnIndex, num_results: int = 1000, rescore: float = 1.0,
                 drop_query_vec: bool = True):
        self.ann = ann
        self.num_results = num_results
        self.rescore = rescore
        self.drop_query_vec = drop_query_vec

    def __repr__(self) -> str:
        return (f"AnnRetriever({self.ann!r}, num_results={self.num_results}, "
                f"rescore={self.rescore})")

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        inp = inp.reset_index(drop=True)
        cols = [c for c in inp.columns if not (self.drop_query_vec and c == "query_vec")]
        if inp.empty:
            return pd.DataFrame(columns=[*cols, "docno", "docid", "score", "rank"])
        scores, ids = self.ann.search(np.stack(inp["query_vec"]), self.num_results,
                                      self.rescore)
        frames = []
        fwd = self.ann.docnos.fwd
        for i in range(len(inp)):
            keep = ids[i] >= 0
            d = ids[i][keep]
            frame = pd.DataFrame({"docno": fwd[d] if len(d) else np.array([], dtype=object),
                                  "docid": d, "score": scores[i][keep].astype(np.float64),
                                  "rank": np.arange(len(d))})
            for c in reversed(cols):
                frame.insert(0, c, [inp.at[i, c]] * len(d))
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)


__all__ = ["ANN_FORMAT", "AnnIndex", "AnnRetriever", "DEFAULTS", "SEARCHES", "check_search",
           "flex_meta", "flex_vectors", "half_vectors", "parse_search", "require_faiss"]
