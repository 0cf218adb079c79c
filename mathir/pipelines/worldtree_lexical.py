"""WorldTree explanation ranking: lexical first stages, multi-hop expansion, full rankings.

Every transformer here returns, per question, a ranking of facts with PyTerrier's
columns ``qid, query, docno, score, rank`` (rank from 0). The official scorer gives AP 0
to a question whose ranking misses a gold fact, so the first stages rank *every* fact by
default (``num_results=None``), and :class:`CompleteRanking` appends the facts a
shorter ranking (a reranker's top k, a fusion) left out.

* :class:`ExplanationQuery` sets ``query`` from the topic's fields (question stem,
  correct answer, all options).
* :class:`LexicalModel` ``"bm25"`` / ``"tfidf"`` weights facts and queries over the
  :class:`~mathir.indexing.fact_index.FactIndex` term counts (PISA's Porter2 tokens).
  The scores are sparse matrix products computed here rather than with PISA's
  retriever, because multi-hop expansion queries with *weighted* vectors (a fact's
  terms added with a weight below 1), which PISA's query interface cannot express.
  BM25 uses PISA's formula: ``idf = log(1 + (N - df + 0.5) / (df + 0.5))``.
* :class:`FactRanker` ranks all facts for each query with one model.
* :class:`IterativeExpansion` is a multi-hop ranker in the spirit of Red Dragon AI's
  iterated TF-IDF (TextGraphs 2019): it picks the best fact, adds its vector to the
  query with a decaying weight, re-scores the remaining facts, and repeats; the facts
  picked come first, in the order picked, then the rest by the last expanded query.
* :class:`PythonBaseline` is the task's ``baseline_tfidf.py``: scikit-learn
  ``TfidfVectorizer`` fitted on the fact texts, cosine with the full question text,
  top 10 only (it scores MAP 0.054 on Dev, as published).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt
from scipy import sparse
from tqdm.auto import tqdm

from mathir.indexing.fact_index import FactIndex
from mathir.pipelines.parameters import Fixed, derived
from mathir.topics.worldtree import question_query

RESULT_COLUMNS = ["qid", "query", "docno", "score", "rank"]
MODELS = ("bm25", "tfidf")


class ExplanationQuery(pt.Transformer):
    """Set ``query`` from the topic's ``fields`` (default: question stem + correct answer).

    >>> t = pd.DataFrame({"qid": ["1"], "query": ["x"], "question": ["What melts?"], "answer": ["ice"]})
    >>> ExplanationQuery()(t)["query"].tolist()
    ['What melts? ice']
    """

    def __init__(self, fields: Sequence[str] = ("question", "answer")):
        self.fields = tuple(fields)

    def __repr__(self) -> str:
        return f"ExplanationQuery({self.fields!r})"

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        out = topics.copy()
        out["query"] = question_query(out, self.fields) if len(out) else []
        return out


class LexicalModel:
    """Fact and query weights of one lexical model over a :class:`FactIndex`.

    ``score(Q)`` maps query term counts (queries x terms) to fact scores (queries x
    facts). ``bm25``: facts get ``idf * tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))``,
    queries their term counts. ``tfidf``: scikit-learn's smooth idf, l2-normalised
    rows on both sides (scores are cosines).
    """

    def __init__(self, index: FactIndex, kind: str = "bm25", k1: float = 0.9, b: float = 0.4):
        if kind not in MODELS:
            raise ValueError(f"unknown model {kind!r}; expected one of {MODELS}")
        self.index, self.kind, self.k1, self.b = index, kind, k1, b
        counts = index.counts.astype(np.float64).tocsr()
        n = counts.shape[0]
        df = np.bincount(counts.indices, minlength=counts.shape[1]).astype(np.float64)
        if kind == "bm25":
            self.idf = np.log1p((n - df + 0.5) / (df + 0.5))
            dl = np.asarray(counts.sum(axis=1)).ravel()
            avgdl = dl.mean() if n and dl.mean() > 0 else 1.0
            norm = k1 * (1 - b + b * dl / avgdl)
            w = counts.copy()
            row_norm = np.repeat(norm, np.diff(w.indptr))
            w.data = w.data * (k1 + 1) / (w.data + row_norm)
            w = w @ sparse.diags(self.idf)
        else:
            self.idf = np.log((1 + n) / (1 + df)) + 1.0
            w = counts @ sparse.diags(self.idf)
            w = _l2_rows(w)
        self.facts = w.tocsr()
        self._facts_t = self.facts.T.tocsr()

    def __repr__(self) -> str:
        extra = f", k1={self.k1}, b={self.b}" if self.kind == "bm25" else ""
        return f"LexicalModel({self.kind!r}{extra})"

    def query_weights(self, counts: sparse.csr_matrix) -> sparse.csr_matrix:
        """Model weights of query term counts."""
        if self.kind == "bm25":
            return counts.tocsr().astype(np.float64)
        return _l2_rows(counts @ sparse.diags(self.idf))

    def fact_vectors(self, rows: np.ndarray) -> sparse.csr_matrix:
        """The facts' vectors in query space (l2-normalised term weights), for expansion."""
        return _l2_rows(self.index.counts[rows].astype(np.float64) @ sparse.diags(self.idf))

    def score(self, query_weights: sparse.spmatrix) -> np.ndarray:
        """Scores of every fact (queries x facts, dense)."""
        return np.asarray((sparse.csr_matrix(query_weights) @ self._facts_t).todense())


class _LexicalRanker(pt.Transformer):
    """What the lexical fact rankers share: the index, one :class:`LexicalModel` named by
    ``model``, ``k1`` and ``b`` (built again when one changed, as PyTerrier's
    ``set_parameter`` may), and how many results to keep."""

    def __init__(self, index: FactIndex, model: str, k1: float, b: float,
                 num_results: int | None, verbose: bool):
        self.index = index
        self.model, self.k1, self.b = model, k1, b
        self.num_results = num_results
        self.verbose = verbose
        _ = self.lexical  # an unknown model fails here

    @property
    def lexical(self) -> LexicalModel:
        """The fact weights of the current ``model``, ``k1`` and ``b``."""
        return derived(self, "_lexical_model", (self.index, self.model, self.k1, self.b),
                       lambda: LexicalModel(self.index, self.model, k1=self.k1, b=self.b))


def _l2_rows(m: sparse.spmatrix) -> sparse.csr_matrix:
    m = sparse.csr_matrix(m, dtype=np.float64)
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sparse.diags(1.0 / norms) @ m


def _ranking_frame(qids, queries, docnos: np.ndarray, order: np.ndarray,
                   scores: np.ndarray) -> pd.DataFrame:
    """Rows for each query: docnos[order[i]] with scores[i] (already sorted)."""
    k = order.shape[1]
    return pd.DataFrame({
        "qid": np.repeat(np.asarray(qids, dtype=object), k),
        "query": np.repeat(np.asarray(queries, dtype=object), k),
        "docno": docnos[order].ravel(),
        "score": scores.ravel(),
        "rank": np.tile(np.arange(k), len(qids)),
    })


def _top(scores: np.ndarray, k: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Per row: fact positions best first (ties in index order) and their scores."""
    order = np.argsort(-scores, axis=1, kind="stable")
    if k is not None:
        order = order[:, :k]
    return order, np.take_along_axis(scores, order, axis=1)


class FactRanker(_LexicalRanker):
    """Rank the facts for each query with one :class:`LexicalModel` (all facts by default).

    >>> from mathir.samples import worldtree_sample
    >>> idx = FactIndex.build(worldtree_sample().tables, "sample-facts")
    >>> res = FactRanker(idx, "bm25").search("melting is changing from solid to liquid")
    >>> len(res) == idx.num_docs, int(res["rank"].min())
    (True, 0)

    Every parameter (``model``, ``k1``, ``b``, ...) may change between calls
    (``set_parameter``, as ``pt.GridScan`` does).
    """

    def __init__(self, index: FactIndex, model: str = "bm25", num_results: int | None = None,
                 k1: float = 0.9, b: float = 0.4, batch_size: int = 64, verbose: bool = False):
        self.batch_size = batch_size
        super().__init__(index, model, k1, b, num_results, verbose)

    def __repr__(self) -> str:
        return f"FactRanker({self.lexical!r}, num_results={self.num_results})"

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        pt.validate.query_frame(topics, extra_columns=["query"])
        docnos = np.asarray(self.index.docnos(), dtype=object)
        frames = []
        starts = range(0, len(topics), self.batch_size)
        model = self.lexical
        for s in tqdm(starts, desc=f"{model.kind} facts", unit=" batches",
                      disable=not self.verbose):
            part = topics.iloc[s:s + self.batch_size]
            q = model.query_weights(self.index.query_counts(part["query"].tolist()))
            order, scores = _top(model.score(q), self.num_results)
            frames.append(_ranking_frame(part["qid"], part["query"], docnos, order, scores))
        if not frames:
            return pd.DataFrame(columns=RESULT_COLUMNS)
        return pd.concat(frames, ignore_index=True)


class IterativeExpansion(_LexicalRanker):
    """Multi-hop ranking by iterated query expansion (see the module docstring).

    Hop ``t`` (from 0) picks the best remaining fact ``f_t`` and sets
    ``query = query_0 + sum_t weight * decay**t * v(f_t)`` (``v``: the fact's l2-normalised
    tf-idf vector). After ``hops`` picks, the remaining facts are ranked by the expanded
    query. Scores decrease down the ranking (picked facts above all others).

    >>> from mathir.samples import worldtree_sample
    >>> idx = FactIndex.build(worldtree_sample().tables, "sample-facts")
    >>> res = IterativeExpansion(idx, hops=3).search("an ice cube melts in the sun")
    >>> len(res) == idx.num_docs
    True

    Every parameter may change between calls (``set_parameter``).
    """

    def __init__(self, index: FactIndex, model: str = "bm25", hops: int = 4,
                 weight: float = 1.0, decay: float = 0.7, k1: float = 0.9, b: float = 0.4,
                 num_results: int | None = None, verbose: bool = False):
        self.hops, self.weight, self.decay = hops, weight, decay
        super().__init__(index, model, k1, b, num_results, verbose)

    def __repr__(self) -> str:
        return (f"IterativeExpansion({self.lexical!r}, hops={self.hops}, weight={self.weight}, "
                f"decay={self.decay})")

    def _expansion_scale(self, query: sparse.csr_matrix) -> float:
        # BM25 query weights are term counts; scale fact vectors to the query's length so
        # that ``weight`` means the same for short and long questions.
        if self.lexical.kind == "bm25":
            return float(np.sqrt(query.multiply(query).sum())) or 1.0
        return 1.0

    def rank_one(self, query: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        """Fact positions in ranking order and their scores for one query (1 x terms)."""
        n = self.index.num_docs
        model = self.lexical
        q = sparse.csr_matrix(query, dtype=np.float64)
        scale = self._expansion_scale(q)
        picked: list[int] = []
        taken = np.zeros(n, dtype=bool)
        scores = model.score(q)[0]
        for t in range(min(self.hops, n)):
            masked = np.where(taken, -np.inf, scores)
            best = int(np.argmax(masked))
            picked.append(best)
            taken[best] = True
            q = q + (self.weight * self.decay ** t * scale) * model.fact_vectors(np.array([best]))
            scores = model.score(q)[0]
        rest = np.flatnonzero(~taken)
        rest = rest[np.argsort(-scores[rest], kind="stable")]
        order = np.concatenate([np.asarray(picked, dtype=np.int64), rest])
        top = scores[rest[0]] if len(rest) else 0.0
        final = np.concatenate([top + np.arange(len(picked), 0, -1, dtype=np.float64),
                                scores[rest]])
        return order, final

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        pt.validate.query_frame(topics, extra_columns=["query"])
        docnos = np.asarray(self.index.docnos(), dtype=object)
        counts = self.index.query_counts(topics["query"].tolist())
        weights = self.lexical.query_weights(counts)
        orders, scores = [], []
        for i in tqdm(range(len(topics)), desc="multi-hop", unit=" questions",
                      disable=not self.verbose):
            o, s = self.rank_one(weights[i])
            if self.num_results is not None:
                o, s = o[: self.num_results], s[: self.num_results]
            orders.append(o)
            scores.append(s)
        if not orders:
            return pd.DataFrame(columns=RESULT_COLUMNS)
        return _ranking_frame(topics["qid"], topics["query"], docnos, np.vstack(orders),
                              np.vstack(scores))


class CompleteRanking(pt.Transformer):
    """Append, for each question, the facts its ranking lacks (index order, lower scores).

    Use after anything that returns fewer than all facts (a reranker's top k, a
    fusion), since the official scorer gives AP 0 when a gold fact is not ranked.

    >>> from mathir.samples import worldtree_sample
    >>> idx = FactIndex.build(worldtree_sample().tables, "sample-facts")
    >>> first = pd.DataFrame({"qid": ["1"], "query": ["q"], "docno": [idx.docnos()[5]], "score": [2.0], "rank": [0]})
    >>> out = CompleteRanking(idx)(first)
    >>> len(out) == idx.num_docs, out.docno[0] == idx.docnos()[5]
    (True, True)
    """

    def __init__(self, index: FactIndex):
        self.index = index

    def __repr__(self) -> str:
        return f"CompleteRanking({self.index.path!s})"

    def transform(self, results: pd.DataFrame) -> pd.DataFrame:
        if results.empty:
            return results
        docnos = np.asarray(self.index.docnos(), dtype=object)
        n = len(docnos)
        qids = results["qid"].drop_duplicates().to_numpy()
        full = pd.DataFrame({"qid": np.repeat(qids, n), "docno": np.tile(docnos, len(qids)),
                             "_pos": np.tile(np.arange(n), len(qids))})
        have = results[["qid", "docno"]].drop_duplicates().assign(_have=True)
        extra = full.merge(have, on=["qid", "docno"], how="left")
        extra = extra[extra["_have"].isna()]
        low = results.groupby("qid")["score"].min()
        extra = extra.assign(score=extra["qid"].map(low).to_numpy() - 1.0 - extra["_pos"] / n)
        first = results.drop_duplicates("qid").set_index("qid")
        for c in results.columns:
            if c not in ("qid", "docno", "score", "rank"):
                extra[c] = extra["qid"].map(first[c]).to_numpy()
        cols = [c for c in results.columns if c != "rank"]
        out = pd.concat([results[cols], extra[cols]], ignore_index=True)
        out = out.sort_values(["qid", "score"], ascending=[True, False], kind="stable")
        out["rank"] = out.groupby("qid", sort=False).cumcount()
        return out.reset_index(drop=True)


class ExplanationNeighbours(pt.Transformer):
    """Re-score a ranking with the gold explanations of similar training questions.

    Supervised "hops" through the training data: a fact used by the explanations of
    questions like this one (TF-IDF cosine of question + answer, top ``k``
    neighbours), or used often in training explanations at all, is likely needed here.
    Each input score ``s`` becomes::

        s / max(s) + prior * log(1 + uses) / log(1 + max uses)
                   + weight * knn / max(knn),   knn(f) = sum over neighbours of cos * [f in gold]

    A question that is itself a training question is left out of its own neighbours
    and counts (leave-one-out), so that runs on the Train split do not see their gold.
    Defaults tuned on Train (leave-one-out), never on Dev or Test. ``k``, ``weight`` and
    ``prior`` may change between calls; ``index`` is fixed when it is built.
    """

    index = Fixed()

    def __init__(self, index: FactIndex, train_topics: pd.DataFrame, train_qrels: pd.DataFrame,
                 k: int = 50, weight: float = 0.4, prior: float = 0.2):
        self.index, self.k, self.weight, self.prior = index, k, weight, prior
        self.model = LexicalModel(index, "tfidf")
        self.train_qids = train_topics["qid"].astype(str).to_numpy()
        self.train_vectors = self.model.query_weights(
            index.query_counts(train_topics["query"].tolist()))
        pos = {d: i for i, d in enumerate(index.docnos())}
        row = {q: i for i, q in enumerate(self.train_qids)}
        pairs = [(row[q], pos[d]) for q, d in zip(train_qrels["qid"], train_qrels["docno"],
                                                  strict=True) if q in row and d in pos]
        r, c = zip(*pairs, strict=True) if pairs else ((), ())
        self.gold = sparse.csr_matrix((np.ones(len(r)), (r, c)),
                                      shape=(len(self.train_qids), index.num_docs))
        self.gold.data[:] = 1.0
        self.uses = np.asarray(self.gold.sum(axis=0)).ravel()

    def __repr__(self) -> str:
        return (f"ExplanationNeighbours({len(self.train_qids)} training questions, k={self.k}, "
                f"weight={self.weight}, prior={self.prior})")

    def transform(self, results: pd.DataFrame) -> pd.DataFrame:
        if results.empty:
            return results
        queries = results.drop_duplicates("qid")[["qid", "query"]]
        qrow = {q: i for i, q in enumerate(queries["qid"])}
        sim = np.asarray((self.model.query_weights(self.index.query_counts(
            queries["query"].tolist())) @ self.train_vectors.T).todense())
        own = np.full(len(queries), -1)
        train_row = {q: i for i, q in enumerate(self.train_qids)}
        for i, q in enumerate(queries["qid"]):
            j = train_row.get(str(q))
            if j is not None:
                sim[i, j] = 0.0
                own[i] = j
        k = min(self.k, sim.shape[1])
        top = np.argsort(-sim, axis=1, kind="stable")[:, :k]
        w = sparse.csr_matrix((np.take_along_axis(sim, top, axis=1).ravel(),
                               (np.repeat(np.arange(len(queries)), k), top.ravel())),
                              shape=sim.shape)
        knn = np.asarray((w @ self.gold).todense())
        knn /= np.maximum(knn.max(axis=1, keepdims=True), 1e-12)
        top_uses = np.log1p(self.uses.max()) or 1.0
        qi = results["qid"].map(qrow).to_numpy()
        fi = results["docno"].map({d: i for i, d in enumerate(self.index.docnos())})
        known = fi.notna().to_numpy()
        fi = fi.fillna(0).astype(int).to_numpy()
        uses = self.uses[fi] - np.where(own[qi] >= 0, self.gold[np.maximum(own[qi], 0), fi].A1, 0)
        s = results["score"].astype(float)
        s = (s / s.groupby(results["qid"]).transform("max").where(lambda m: m > 0, 1.0)).to_numpy()
        extra = self.prior * np.log1p(uses) / top_uses + self.weight * knn[qi, fi]
        out = results.copy()
        out["score"] = s + np.where(known, extra, 0.0)
        out = out.sort_values(["qid", "score"], ascending=[True, False], kind="stable")
        out["rank"] = out.groupby("qid", sort=False).cumcount()
        return out.reset_index(drop=True)


class PythonBaseline(pt.Transformer):
    """The task's ``baseline_tfidf.py``: scikit-learn TF-IDF fitted on the facts, top 10.

    Its query is the full question cell with every option (``ExplanationQuery(("choices",))``).
    ``index`` is fixed when it is built (the vectorizer is fitted on its facts).
    """

    index = Fixed()

    def __init__(self, index: FactIndex, num_results: int | None = 10):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.index = index
        self.num_results = num_results
        self.vectorizer = TfidfVectorizer().fit(index.facts["text"])
        self.facts = self.vectorizer.transform(index.facts["text"])

    def __repr__(self) -> str:
        return f"PythonBaseline(num_results={self.num_results})"

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        from sklearn.metrics.pairwise import cosine_distances

        docnos = np.asarray(self.index.docnos(), dtype=object)
        dist = cosine_distances(self.vectorizer.transform(topics["query"]), self.facts)
        order = np.argsort(dist, axis=1)  # the baseline's (unstable) numpy sort
        if self.num_results is not None:
            order = order[:, : self.num_results]
        scores = 1.0 - np.take_along_axis(dist, order, axis=1)
        return _ranking_frame(topics["qid"], topics["query"], docnos, order, scores)


# --- named pipelines (what tasks.py registers) -----------------------------------------


def bm25(index: FactIndex, k1: float = 0.9, b: float = 0.4,
         fields: Sequence[str] = ("question", "answer"), verbose: bool = False) -> pt.Transformer:
    """BM25 over all facts; query = question stem + correct answer (``fields``)."""
    return ExplanationQuery(fields) >> FactRanker(index, "bm25", k1=k1, b=b, verbose=verbose)


def tfidf(index: FactIndex, fields: Sequence[str] = ("question", "answer"),
          verbose: bool = False) -> pt.Transformer:
    """TF-IDF cosine over all facts; query = question stem + correct answer (``fields``)."""
    return ExplanationQuery(fields) >> FactRanker(index, "tfidf", verbose=verbose)


def multihop(index: FactIndex, model: str = "tfidf", hops: int = 2, weight: float = 0.05,
             decay: float = 0.9, fields: Sequence[str] = ("question", "answer"),
             verbose: bool = False) -> pt.Transformer:
    """Iterated query expansion (:class:`IterativeExpansion`) over all facts."""
    return ExplanationQuery(fields) >> IterativeExpansion(index, model, hops=hops, weight=weight,
                                                          decay=decay, verbose=verbose)


def neighbours(index: FactIndex, train: str | Path | None = None, k: int = 50,
               weight: float = 0.4, prior: float = 0.2, verbose: bool = False) -> pt.Transformer:
    """TF-IDF re-scored by the gold explanations of similar Train questions.

    ``train``: the Train question TSV (default: found beside the index's tablestore).
    """
    from mathir.qrels.worldtree import qrels_from_topics
    from mathir.topics.worldtree import find_split_file, read_questions

    path = Path(train) if train else find_split_file(index.tablestore, "Train")
    train_topics = read_questions(path, explained_only=True)
    stage = ExplanationNeighbours(index, train_topics, qrels_from_topics(train_topics, path),
                                  k=k, weight=weight, prior=prior)
    return tfidf(index, verbose=verbose) >> stage


def python_baseline(index: FactIndex, verbose: bool = False) -> pt.Transformer:
    """The task's Python TF-IDF baseline (full question text, top 10 only)."""
    return ExplanationQuery(("choices",)) >> PythonBaseline(index)


def fusion(index: FactIndex, weights: Sequence[float] = (0.5, 0.5),
           verbose: bool = False) -> pt.Transformer:
    """TF-IDF and BM25 fused by per-query min-max linear fusion (``weights``), then completed."""
    from mathir.pipelines.fusion import LinearFusion

    parts = [tfidf(index, verbose=verbose), bm25(index, verbose=verbose)]
    return LinearFusion(parts, list(weights), num_results=None) >> CompleteRanking(index)


def rrf(index: FactIndex, k: int = 60, verbose: bool = False) -> pt.Transformer:
    """Reciprocal rank fusion (k = 60) of TF-IDF, BM25 and multi-hop BM25, then completed."""
    from mathir.pipelines.fusion import RRFusion

    parts = [tfidf(index, verbose=verbose), bm25(index, verbose=verbose),
             multihop(index, verbose=verbose)]
    return RRFusion(parts, k=k, num_results=None) >> CompleteRanking(index)
