"""Fusion of the WorldTree learned ranker with neural rerankers, and seed ensembles.

:class:`ScoreFusion` adds rerankers' scores (a bi-encoder's, a cross-encoder's) to the
learned score with weights chosen on Dev, over the learned ranker's top facts and the
bi-encoder's own nearest facts (:class:`DenseCandidates`). A seed ensemble is several
models as one: :class:`EnsembleBiEncoder` (the bi-encoders' cosines averaged) and
:class:`MeanScore` (the cross-encoders' scores averaged).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pyterrier as pt

from mathir.indexing.fact_index import FactIndex
from mathir.pipelines.parameters import derived


class DenseCandidates(pt.Transformer):
    """Add a bi-encoder's ``k`` nearest facts of each question to the rows to rerank.

    The learned ranker's top 100 holds about 80% of the Dev gold facts; the fine-tuned
    bi-encoder's own top 50 over the whole tablestore finds many of the others (gold
    recall of the union 0.88 on Dev, for 25 more facts per question). Rows of those
    facts get ``candidate = True`` (so :class:`ScoreFusion` reranks them whatever their
    rank); facts missing from the input are appended with the question's lowest score.
    The facts are encoded once, into the ``scorer``'s cache, so that the fusion's
    bi-encoder scorer does not encode them again. ``index``, ``scorer`` and ``k`` may
    change between calls (``set_parameter``): the facts are encoded again for a new index
    or encoder.
    """

    def __init__(self, index: FactIndex, scorer, k: int = 50):
        self.index, self.scorer, self.k = index, scorer, k

    def __repr__(self) -> str:
        return f"DenseCandidates({self.scorer!r}, k={self.k})"

    @property
    def _docnos(self) -> np.ndarray:
        return derived(self, "_docno_array", (self.index,),
                       lambda: np.asarray(self.index.docnos(), dtype=object))

    @property
    def _texts(self) -> dict[str, str]:
        return derived(self, "_fact_texts", (self.index,), self.index.texts)

    def _fact_vectors(self) -> np.ndarray:
        def encode() -> np.ndarray:
            from mathir.models import unit_vectors

            texts = [self._texts[d] for d in self._docnos]
            st = self.scorer.encoder.st
            vectors = unit_vectors(st.encode_docs(texts, batch_size=self.scorer.batch_size))
            self.scorer.remember(texts, vectors)
            return vectors

        return derived(self, "_facts", (self.index, self.scorer, self.scorer.encoder), encode)

    def transform(self, res: pd.DataFrame) -> pd.DataFrame:
        if res.empty or self.k <= 0:
            return res.assign(candidate=False)
        from mathir.models import unit_vectors

        facts = self._fact_vectors()
        first = res.drop_duplicates("qid").set_index("qid")
        queries = first["query"].astype(str)
        vecs = unit_vectors(self.scorer.encoder.st.encode_queries(list(queries),
                                                            batch_size=self.scorer.batch_size))
        k = min(self.k, len(self._docnos))
        top = np.argpartition(-(vecs @ facts.T), k - 1, axis=1)[:, :k]
        near = pd.DataFrame({"qid": np.repeat(queries.index.to_numpy(), k),
                             "docno": self._docnos[top.ravel()], "candidate": True})
        out = res.merge(near, on=["qid", "docno"], how="outer")
        new = out["score"].isna()
        if new.any():
            qids = out.loc[new, "qid"]
            out.loc[new, "score"] = qids.map(res.groupby("qid")["score"].min()).to_numpy()
            out.loc[new, "rank"] = qids.map(res.groupby("qid")["rank"].max()).to_numpy() + 1
            for c in res.columns:
                if c == "text":
                    out.loc[new, c] = out.loc[new, "docno"].map(self._texts).to_numpy()
                elif c not in ("qid", "docno", "score", "rank"):
                    out.loc[new, c] = qids.map(first[c]).to_numpy()
        out["candidate"] = out["candidate"].eq(True)
        out["rank"] = out["rank"].astype(np.int64)
        return out.sort_values(["qid", "rank"], kind="stable").reset_index(drop=True)


class ScoreFusion(pt.Transformer):
    """Rerank the top ``depth`` rows by ``z(score) + sum of weight * z(scorer's score)``.

    ``scorers`` maps a name to ``(transformer, weight)``; each transformer scores the head
    rows (with a ``text`` column) and its score is kept in a ``score_<name>`` column.
    ``z``: per-question standardisation over the head (mean 0, deviation 1), so that a
    weight means the same for any score scale. Rows below ``depth`` keep their order
    beneath the reranked head, except those a ``candidate`` column marks (see
    :class:`DenseCandidates`), which are reranked with the head.
    """

    def __init__(self, scorers: Mapping[str, tuple[pt.Transformer, float]], depth: int = 100):
        self.scorers, self.depth = dict(scorers), depth

    def __repr__(self) -> str:
        parts = ", ".join(f"{n}={w}" for n, (_, w) in self.scorers.items())
        return f"ScoreFusion({parts}, depth={self.depth})"

    def transform(self, res: pd.DataFrame) -> pd.DataFrame:
        if res.empty:
            return res
        res = res.sort_values(["qid", "rank"], kind="stable").reset_index(drop=True)
        in_head = res["rank"].to_numpy() < self.depth
        if "candidate" in res.columns:
            in_head |= res["candidate"].to_numpy(dtype=bool)
            res = res.drop(columns="candidate")
        head, tail = res[in_head], res[~in_head]
        keys = pd.MultiIndex.from_frame(head[["qid", "docno"]])
        fused = _z(head["score"].to_numpy(), head["qid"])
        extra = {}
        for name, (scorer, weight) in self.scorers.items():
            scored = scorer.transform(head.drop(columns=["score"]).assign(score=0.0))
            values = scored.set_index(["qid", "docno"])["score"].reindex(keys).to_numpy()
            extra[f"score_{name}"] = values
            fused = fused + weight * _z(values, head["qid"])
        head = head.assign(score=fused, **extra)
        floor = head.groupby("qid")["score"].min()
        # Below the reranked head, in the first stage's order.
        tail = tail.assign(score=tail["qid"].map(floor).to_numpy() - 1.0 - tail["rank"].to_numpy())
        out = pd.concat([head, tail], ignore_index=True)
        out = out.drop(columns="text", errors="ignore")
        out = out.sort_values(["qid", "score"], ascending=[True, False], kind="stable")
        return pt.model.add_ranks(out.reset_index(drop=True))


def _z(values: np.ndarray, qids: pd.Series) -> np.ndarray:
    v = pd.Series(np.asarray(values, dtype=np.float64), index=qids.index)
    g = v.groupby(qids.to_numpy())
    sd = g.transform("std").fillna(0.0).to_numpy()
    return ((v - g.transform("mean")).to_numpy()) / np.where(sd > 0, sd, 1.0)



class EnsembleBiEncoder:
    """Several bi-encoders as one (a seed ensemble), for :class:`BiEncoderScorer` and
    :class:`DenseCandidates`.

    A text's vector is the concatenation of its unit vectors under each model divided by
    the square root of their number: the dot product of two such vectors is the mean of
    the models' cosines, and the vector has length 1.

    >>> class Constant:  # stands for a BiEncoder: one query vector, one text vector
    ...     batch_size = 8
    ...     def __init__(self, q, d):
    ...         self.st, self.q, self.d = self, np.array(q, float), np.array(d, float)
    ...     def encode_queries(self, texts, batch_size):
    ...         return np.tile(self.q, (len(texts), 1))
    ...     def encode_docs(self, texts, batch_size):
    ...         return np.tile(self.d, (len(texts), 1))
    >>> ens = EnsembleBiEncoder([Constant([1, 0], [1, 0]), Constant([1, 0], [0, 2])])
    >>> q, d = ens.st.encode_queries(["q"]), ens.st.encode_docs(["d"])
    >>> round(float(q[0] @ d[0]), 6), round(float(np.linalg.norm(d[0])), 6)  # cosines 1, 0
    (0.5, 1.0)
    """

    def __init__(self, encoders: Sequence):
        if not encoders:
            raise ValueError("an ensemble needs at least one bi-encoder")
        self.encoders = list(encoders)
        self.batch_size = self.encoders[0].batch_size

    def __repr__(self) -> str:
        return f"EnsembleBiEncoder([{', '.join(repr(e) for e in self.encoders)}])"

    @property
    def st(self) -> EnsembleBiEncoder:
        """Itself: it offers ``encode_queries`` and ``encode_docs`` as pyterrier-dr does."""
        return self

    def _joined(self, method: str, texts: list[str], batch_size: int | None) -> np.ndarray:
        from mathir.models import unit_vectors

        parts = [unit_vectors(np.asarray(getattr(e.st, method)(list(texts),
                                                               batch_size=batch_size or
                                                               e.batch_size)))
                 for e in self.encoders]
        return np.hstack(parts) / np.sqrt(len(parts))

    def encode_queries(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        return self._joined("encode_queries", texts, batch_size)

    def encode_docs(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        return self._joined("encode_docs", texts, batch_size)

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.encode_docs(list(texts))


class MeanScore(pt.Transformer):
    """Each row's score is the mean of several scorers' scores (a seed ensemble of
    cross-encoders: their logits averaged).

    >>> one = pt.apply.doc_score(lambda row: 1.0)
    >>> three = pt.apply.doc_score(lambda row: 3.0)
    >>> res = pd.DataFrame({"qid": ["1"], "query": ["q"], "docno": ["d"], "score": [0.0]})
    >>> MeanScore([one, three])(res)["score"].tolist()
    [2.0]
    """

    def __init__(self, scorers: Sequence[pt.Transformer]):
        if not scorers:
            raise ValueError("MeanScore needs at least one scorer")
        self.scorers = list(scorers)

    def __repr__(self) -> str:
        return f"MeanScore([{', '.join(repr(s) for s in self.scorers)}])"

    def transform(self, res: pd.DataFrame) -> pd.DataFrame:
        if res.empty:
            return res.assign(score=pd.Series(dtype=float))
        keys = pd.MultiIndex.from_frame(res[["qid", "docno"]])
        total = np.zeros(len(res))
        for scorer in self.scorers:
            scored = scorer.transform(res.copy())
            total += scored.set_index(["qid", "docno"])["score"].reindex(keys).to_numpy(
                dtype=np.float64)
        return pt.model.add_ranks(res.assign(score=total / len(self.scorers)))
