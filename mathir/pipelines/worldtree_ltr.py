"""WorldTree learning to rank: the named pipelines (``ltr``, ``ltr-minilm``, ``ltr-dense``,
``ltr-crossencoder``, ``ltr-dense-crossencoder``) and the ranker they share.

The lexical first stages of :mod:`mathir.pipelines.worldtree_lexical` see one question at a
time; the explanations of the Train split say much more about which facts a question
needs. :func:`trained_ranker` describes every (question, fact) pair by its features
(:mod:`mathir.pipelines.worldtree_features`) and fits LambdaMART on Train
(:mod:`mathir.pipelines.worldtree_lambdamart`); :func:`ltr` ranks with it, and
:func:`ltr_reranked` fuses its top facts with a bi-encoder's and a cross-encoder's scores
(:mod:`mathir.pipelines.worldtree_fusion`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pyterrier as pt

from mathir.errors import InputError
from mathir.indexing.fact_index import FactIndex
from mathir.pipelines.parameters import derived
from mathir.pipelines.worldtree_features import (
    ExplanationStatistics,
    FactFeatures,
    FeatureSettings,
    lemmas_of,
)
from mathir.pipelines.worldtree_fusion import (
    DenseCandidates,
    EnsembleBiEncoder,
    MeanScore,
    ScoreFusion,
)
from mathir.pipelines.worldtree_lambdamart import LearnedRanker, RankerSettings, train_ranker


class AddFactText(pt.Transformer):
    """Add each fact's ``text`` (for a cross-encoder) to a result frame."""

    def __init__(self, index: FactIndex):
        self.index = index

    def __repr__(self) -> str:
        return "AddFactText()"

    def transform(self, res: pd.DataFrame) -> pd.DataFrame:
        texts = derived(self, "_texts", (self.index,), self.index.texts)
        return res.assign(text=res["docno"].map(texts).fillna(""))


# --- named pipelines (what tasks.py registers) -----------------------------------------

_RANKERS: dict[tuple, tuple[FactFeatures, object]] = {}
DENSE_WEIGHT = 2.0  # chosen on Dev
CROSS_WEIGHT = 1.0  # chosen on Dev
RERANK_DEPTH = 100  # chosen on Dev
DENSE_CANDIDATES = 50  # the bi-encoder's own top k, reranked too; chosen on Dev


def trained_ranker(index: FactIndex, train: str | Path | None = None,
                   features: FeatureSettings | None = None, ranker: RankerSettings | None = None,
                   semantic: bool = False, verbose: bool = False) -> tuple[FactFeatures, object]:
    """The feature transformer and a LambdaMART booster trained on the Train split.

    ``train`` is the Train question TSV (default: found beside the tablestore).
    ``semantic`` adds the ``minilm`` feature (needs ``mathir[neural]``). Training takes
    under a minute on the full Train split; both are kept for the process, so that the
    ltr* pipelines of one experiment share one trained ranker (keyed by the index's
    manifest, so an index rebuilt at the same path trains anew).
    """
    from mathir.qrels.worldtree import qrels_from_topics
    from mathir.storage import file_fingerprint
    from mathir.topics.worldtree import find_split_file, read_questions

    path = Path(train) if train else find_split_file(index.tablestore, "Train")
    features, ranker = features or FeatureSettings(), ranker or RankerSettings()
    manifest = Path(index.path) / "manifest.json"
    key = (str(Path(index.path).resolve()),
           manifest.read_bytes() if manifest.is_file() else None,
           str(file_fingerprint(path)), repr(features), repr(ranker), semantic)
    if key not in _RANKERS:
        topics = read_questions(path, explained_only=True)
        if topics.empty:
            raise InputError("no question with a gold explanation to learn from", path=path)
        qrels = qrels_from_topics(topics, path)
        encoder = None
        if semantic:
            from mathir.neural.bi_encoder import load_bi_encoder

            encoder = load_bi_encoder()
        ff = FactFeatures(index, ExplanationStatistics(index, topics, qrels), lemmas_of(index),
                          features, encoder=encoder, verbose=verbose)
        _RANKERS[key] = ff, train_ranker(ff.transform(topics), qrels, ranker, names=ff.names)
    return _RANKERS[key]


def ltr(index: FactIndex, train: str | Path | None = None, semantic: bool = False,
        verbose: bool = False) -> pt.Transformer:
    """LambdaMART over :class:`FactFeatures`, trained on Train, then the full ranking."""
    from mathir.pipelines.worldtree_lexical import CompleteRanking, ExplanationQuery

    ff, booster = trained_ranker(index, train, semantic=semantic, verbose=verbose)
    return ExplanationQuery() >> ff >> LearnedRanker(booster) >> CompleteRanking(index)


def ltr_minilm(index: FactIndex, train: str | Path | None = None,
               verbose: bool = False) -> pt.Transformer:
    """:func:`ltr` with the packaged MiniLM's cosine as one more feature (``ltr-minilm``)."""
    return ltr(index, train, semantic=True, verbose=verbose)


def _model(model: str | Path | Sequence[str | Path] | None, pipeline: str,
           kind: str) -> str | tuple[str, ...]:
    """A model path, or a tuple of them (a seed ensemble); InputError when there is none."""
    if not model:
        option = "--cross-encoder" if kind == "cross-encoder" else "--bi-encoder"
        raise InputError(f"{pipeline} needs a {kind} model: pass {option} PATH (train one with "
                         f"`mathir train-reranker worldtree --split train --kind {kind}`)")
    return str(model) if isinstance(model, (str, Path)) else tuple(str(m) for m in model)


def _models(model: str | Path | Sequence[str | Path]) -> list[str]:
    return [str(model)] if isinstance(model, (str, Path)) else [str(m) for m in model]



def ltr_reranked(index: FactIndex, bi_encoder: str | Path | Sequence[str | Path] | None = None,
                 cross_encoder: str | Path | Sequence[str | Path] | None = None,
                 dense_weight: float = DENSE_WEIGHT,
                 cross_weight: float = CROSS_WEIGHT, depth: int = RERANK_DEPTH,
                 dense_candidates: int = DENSE_CANDIDATES, train: str | Path | None = None,
                 verbose: bool = False) -> pt.Transformer:
    """:func:`ltr`'s top ``depth`` facts reranked by a fusion with neural scores.

    ``z(ltr) + dense_weight * z(bi-encoder cosine) + cross_weight * z(cross-encoder)``
    (a model left as ``None`` is not used). With a bi-encoder, its own
    ``dense_candidates`` nearest facts join the reranked rows (:class:`DenseCandidates`).
    Both models are fine-tuned on Train by ``mathir train-reranker worldtree --split
    train``; the weights, ``depth`` and ``dense_candidates`` were chosen on Dev. A
    sequence of models is a seed ensemble: the bi-encoders' cosines averaged
    (:class:`EnsembleBiEncoder`, which also finds the dense candidates), the
    cross-encoders' scores averaged (:class:`MeanScore`).
    """
    from mathir.pipelines.neural import BiEncoderScorer, CrossEncoderScorer, load_bi_encoder
    from mathir.pipelines.worldtree_lexical import CompleteRanking, ExplanationQuery

    if bi_encoder is None and cross_encoder is None:
        raise InputError("ltr_reranked needs a bi-encoder or a cross-encoder model")
    # The lexical ranker, not ltr-minilm: with the fine-tuned bi-encoder fused, the
    # packaged MiniLM's feature only repeats it (Dev 0.5616 instead of 0.5691).
    ff, booster = trained_ranker(index, train, verbose=verbose)
    scorers = {}
    pipeline = ExplanationQuery() >> ff >> LearnedRanker(booster) >> AddFactText(index)
    if bi_encoder is not None:
        encoders = [load_bi_encoder(m) for m in _models(bi_encoder)]
        dense = BiEncoderScorer(encoders[0] if len(encoders) == 1 else
                                EnsembleBiEncoder(encoders))
        scorers["dense"] = (dense, dense_weight)
        if dense_candidates > 0:
            pipeline = pipeline >> DenseCandidates(index, dense, k=dense_candidates)
    if cross_encoder is not None:
        cross = [CrossEncoderScorer(m, max_length=128, verbose=verbose)
                 for m in _models(cross_encoder)]
        scorers["crossencoder"] = (cross[0] if len(cross) == 1 else MeanScore(cross),
                                   cross_weight)
    return pipeline >> ScoreFusion(scorers, depth=depth) >> CompleteRanking(index)


def ltr_dense(index: FactIndex, bi_encoder: str | Path | Sequence[str | Path] | None = None,
              verbose: bool = False) -> pt.Transformer:
    """``ltr`` fused with a Train-fine-tuned bi-encoder (``--bi-encoder``; ``ltr-dense``)."""
    return ltr_reranked(index, bi_encoder=_model(bi_encoder, "ltr-dense", "bi-encoder"),
                        verbose=verbose)


def ltr_crossencoder(index: FactIndex,
                     cross_encoder: str | Path | Sequence[str | Path] | None = None,
                     verbose: bool = False) -> pt.Transformer:
    """``ltr`` fused with a Train-trained cross-encoder (``--cross-encoder``)."""
    return ltr_reranked(index, cross_encoder=_model(cross_encoder, "ltr-crossencoder",
                                                    "cross-encoder"), verbose=verbose)


def ltr_dense_crossencoder(index: FactIndex,
                           bi_encoder: str | Path | Sequence[str | Path] | None = None,
                           cross_encoder: str | Path | Sequence[str | Path] | None = None,
                           verbose: bool = False) -> pt.Transformer:
    """``ltr`` fused with both models (``--bi-encoder`` and ``--cross-encoder``)."""
    return ltr_reranked(
        index, bi_encoder=_model(bi_encoder, "ltr-dense-crossencoder", "bi-encoder"),
        cross_encoder=_model(cross_encoder, "ltr-dense-crossencoder", "cross-encoder"),
        verbose=verbose)
