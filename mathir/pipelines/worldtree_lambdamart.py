"""The WorldTree learned ranker: LambdaMART over the fact features of
:mod:`mathir.pipelines.worldtree_features`.

:func:`train_ranker` fits LightGBM's LambdaMART on Train (written by hand around
``lightgbm.train`` rather than ``pt.ltr.apply_learned_model`` because that wrapper needs
a validation split and we keep Dev for choosing the number of rounds);
:class:`LearnedRanker` applies it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyterrier as pt

from mathir.errors import InputError
from mathir.pipelines.worldtree_features import CATEGORICAL, FEATURES


@dataclass
class RankerSettings:
    """LightGBM LambdaMART settings (defaults chosen on Dev)."""

    rounds: int = 200
    learning_rate: float = 0.02
    num_leaves: int = 15
    min_data_in_leaf: int = 100
    feature_fraction: float = 0.8
    truncation_level: int = 50
    seed: int = 0


#: LightGBM threads of :func:`train_ranker`: a fixed number rather than 0 (OpenMP's
#: default, the machine's core count), since LightGBM's ``deterministic`` mode promises the
#: same trees for the same parameters only. (On the WorldTree Train features 1, 2, 3, 8 and
#: 16 threads gave identical trees and scores;
#: tests/reproduction/test_worldtree_headline.py checks 1, 2 and 3.)
RANKER_THREADS = 2


def train_ranker(candidates: pd.DataFrame, qrels: pd.DataFrame,
                 settings: RankerSettings | None = None, threads: int = RANKER_THREADS,
                 names: Sequence[str] = FEATURES):
    """Fit LambdaMART on a :class:`FactFeatures` frame; gold facts (``qrels``) are label 1.

    ``names``: the feature names (:attr:`FactFeatures.names`).

    Deterministic for a given input (LightGBM's ``deterministic`` mode with row-wise
    histograms, a fixed seed and a fixed number of ``threads``, whatever the machine's
    core count). Returns a ``lightgbm.Booster``.
    """
    import lightgbm as lgb

    s = settings or RankerSettings()
    if candidates.empty:
        raise InputError("no candidates to train the ranker on")
    cand = candidates.sort_values(["qid", "rank"], kind="stable")
    gold = set(zip(qrels["qid"].astype(str), qrels["docno"], strict=True))
    labels = np.fromiter(((q, d) in gold for q, d in zip(cand["qid"].astype(str), cand["docno"],
                                                          strict=True)), dtype=np.int32,
                         count=len(cand))
    if labels.sum() == 0:
        raise InputError("no gold fact among the training candidates")
    groups = cand.groupby("qid", sort=False).size().to_numpy()
    data = lgb.Dataset(np.stack(cand["features"].to_numpy()), labels, group=groups,
                       feature_name=list(names), categorical_feature=list(CATEGORICAL),
                       free_raw_data=True)
    params = {"objective": "lambdarank", "learning_rate": s.learning_rate,
              "num_leaves": s.num_leaves, "min_data_in_leaf": s.min_data_in_leaf,
              "feature_fraction": s.feature_fraction,
              "lambdarank_truncation_level": s.truncation_level, "seed": s.seed,
              "deterministic": True, "force_row_wise": True, "num_threads": threads,
              "verbose": -1}
    return lgb.train(params, data, num_boost_round=s.rounds)


class LearnedRanker(pt.Transformer):
    """Score a ``features`` frame with a trained LightGBM booster and re-rank it."""

    def __init__(self, booster, rounds: int | None = None):
        self.booster, self.rounds = booster, rounds

    def __repr__(self) -> str:
        # The trees' checksum identifies the training (data, settings) in run manifests.
        import hashlib

        digest = hashlib.sha1(self.booster.model_to_string().encode()).hexdigest()[:12]
        return f"LearnedRanker({self.booster.num_trees()} trees, {digest})"

    def transform(self, res: pd.DataFrame) -> pd.DataFrame:
        if res.empty:
            return res
        scores = self.booster.predict(np.stack(res["features"].to_numpy()),
                                      num_iteration=self.rounds)
        out = res.drop(columns=["features"]).assign(score=scores)
        return pt.model.add_ranks(out.sort_values(["qid", "score"], ascending=[True, False],
                                                  kind="stable"))
