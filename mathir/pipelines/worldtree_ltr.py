"""WorldTree learning to rank: fact features, a LambdaMART ranker trained on Train, fusion.

The lexical first stages of :mod:`mathir.pipelines.worldtree` see one question at a
time; the explanations of the Train split say much more about which facts a question
needs. :class:`FactFeatures` describes every (question, fact) pair by

* lexical similarity with the question + answer, the answer alone and the stem alone
  (TF-IDF and BM25 over PISA's Porter2 tokens, TF-IDF over the tablestore's own
  ``lemmatization-en.txt`` lemmas); with the *wrong* options of the multiple-choice
  question (``tfidf_wrong``) and the answer's margin over them (``answer_margin`` =
  ``tfidf_answer - tfidf_wrong``): a fact about a distractor rarely explains the answer;
* the Train explanations: how often the fact is used at all (``uses``), how often the
  facts of its table are (``table_prior``: KINDOF and SYNONYMY facts are grounding
  facts of many explanations), and how often it explains the ``k`` most similar Train
  questions (``knn10``, ``knn50``);
* hops over the fact graph (the lexical-glue design of the task): from the best
  first-stage facts to the facts that share terms with them (``hop_lex``: best cosine
  to a top-5 fact, scaled by that fact's score) and to the facts that Train explanations
  use together with them (``hop_couse``); ``hop2_lex`` is a second hop from the facts
  the first one reached, scaled by ``decay``;
* the fact itself: its length and its table (a categorical feature);
* optionally (``encoder``), ``minilm``: the cosine of question + answer and the fact under
  a bi-encoder that was *not* trained on Train (the packaged all-MiniLM-L6-v2), so the
  feature means the same on Train as on Dev and Test; and ``knn_minilm10`` /
  ``knn_minilm50``: the neighbour votes with Train questions found by that encoder's
  cosine instead of TF-IDF.

It keeps the ``depth`` best facts of a cheap first stage (TF-IDF + ``knn50``) as
candidates, in PyTerrier's learning-to-rank form (a ``features`` column). A Train
question is left out of every Train statistic it would otherwise see (leave-one-out),
so the ranker can be trained on Train features that look like Dev and Test features.

:func:`train_ranker` fits LightGBM's LambdaMART on Train (written by hand around
``lightgbm.train`` rather than ``pt.ltr.apply_learned_model`` because that wrapper needs
a validation split and we keep Dev for choosing the number of rounds);
:class:`LearnedRanker` applies it. :class:`ScoreFusion` adds rerankers' scores (a
bi-encoder's, a cross-encoder's) to the learned score with weights chosen on Dev, over the
learned ranker's top facts and the bi-encoder's own nearest facts (:class:`DenseCandidates`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt
from scipy import sparse
from tqdm.auto import tqdm

from mathir.errors import InputError
from mathir.indexing.worldtree import FactIndex, find_lemma_file, read_lemmas
from mathir.pipelines.parameters import Fixed, derived
from mathir.pipelines.worldtree import RESULT_COLUMNS, LexicalModel

FEATURES = ("tfidf", "bm25", "tfidf_answer", "tfidf_question", "lemma", "lemma_answer",
            "tfidf_wrong", "answer_margin", "knn10", "knn50", "uses", "table_prior", "hop_lex",
            "hop2_lex", "hop_couse", "length", "table")
SEMANTIC_FEATURES = ("minilm", "knn_minilm10", "knn_minilm50")
CATEGORICAL = ("table",)
_WORD = re.compile(r"[a-z0-9]+")


def lemma_analyzer(lemmas: Mapping[str, str]):
    """A scikit-learn analyzer: lower-cased words, stopwords dropped, mapped to lemmas.

    >>> lemma_analyzer({"melting": "melt"})("The ice is Melting")
    ['ice', 'melt']
    """
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    def analyze(text: str) -> list[str]:
        return [lemmas.get(w, w) for w in _WORD.findall(text.lower())
                if w not in ENGLISH_STOP_WORDS]

    return analyze


def encode_float64(encoder, texts: list[str]) -> np.ndarray:
    """``encoder.encode(texts)`` as float64 unit vectors, whatever the float type the
    encoder returns.

    The ``minilm`` features are cosines, and LambdaMART turns a difference in their last
    bits into other trees: computed in float32 (what sentence-transformers returns
    today), Dev ``ltr-minilm`` scores MAP 0.5216; from the same embeddings in float64,
    0.5239, the figure of docs/worldtree.md measured with an earlier library stack. In
    float64 the features do not depend on the type an encoder library hands back.

    >>> class Half:
    ...     def encode(self, texts):
    ...         return np.ones((len(texts), 4), dtype=np.float16)
    >>> v = encode_float64(Half(), ["a"])
    >>> v.dtype, v.tolist()
    (dtype('float64'), [[0.5, 0.5, 0.5, 0.5]])
    """
    from mathir.models import unit_vectors

    return unit_vectors(np.asarray(encoder.encode(list(texts)), dtype=np.float64))


class ExplanationStatistics:
    """What the Train explanations say about the facts of a :class:`FactIndex`.

    ``gold`` (Train questions x facts, 0/1), ``uses`` (explanations using each fact),
    ``couse`` (facts x facts: explanations using both), the Train questions' TF-IDF
    vectors (for neighbours), and each fact's table as an integer code.
    """

    def __init__(self, index: FactIndex, train_topics: pd.DataFrame, train_qrels: pd.DataFrame):
        self.index = index
        self.tfidf = LexicalModel(index, "tfidf")
        self.qids = train_topics["qid"].astype(str).to_numpy()
        self.row = {q: i for i, q in enumerate(self.qids)}
        self.texts = (train_topics["question"] + " " + train_topics["answer"]).tolist()
        self.vectors = self.tfidf.query_weights(index.query_counts(self.texts))
        pos = {d: i for i, d in enumerate(index.docnos())}
        pairs = {(self.row[q], pos[d]) for q, d in zip(train_qrels["qid"].astype(str),
                                                       train_qrels["docno"], strict=True)
                 if q in self.row and d in pos}
        r, c = zip(*sorted(pairs), strict=True) if pairs else ((), ())
        self.gold = sparse.csr_matrix((np.ones(len(r)), (r, c)),
                                      shape=(len(self.qids), index.num_docs))
        self.uses = np.asarray(self.gold.sum(axis=0)).ravel()
        couse = (self.gold.T @ self.gold).tolil()
        couse.setdiag(0)
        self.couse = couse.tocsr()
        self.couse.eliminate_zeros()
        self.table_names, self.table = np.unique(index.facts["table"].to_numpy(), return_inverse=True)
        self.table_size = np.bincount(self.table, minlength=len(self.table_names))

    def encoded(self, encoder) -> np.ndarray:
        """The Train questions (question + answer) as unit vectors under ``encoder``
        (float64, see :func:`encode_float64`)."""
        return derived(self, "_encoded", (encoder,), lambda: encode_float64(encoder, self.texts))

    def neighbour_votes(self, sim: np.ndarray, qids: Sequence[str], k: int) -> np.ndarray:
        """Facts voted for by each question's ``k`` most similar Train questions.

        ``sim``: questions x Train questions. A fact gets the summed similarity of the
        neighbours whose explanation uses it, divided by the question's best fact. A
        Train question is not its own neighbour (leave-one-out).
        """
        sim = np.maximum(sim, 0.0)
        for i, q in enumerate(qids):
            j = self.row.get(str(q))
            if j is not None:
                sim[i, j] = 0.0
        kk = min(k, sim.shape[1])
        top = np.argsort(-sim, axis=1, kind="stable")[:, :kk]
        w = np.zeros_like(sim)
        np.put_along_axis(w, top, np.take_along_axis(sim, top, axis=1), axis=1)
        votes = (sparse.csr_matrix(w) @ self.gold).toarray()
        return votes / np.maximum(votes.max(axis=1, keepdims=True), 1e-12)

    def own_gold(self, qids: Sequence[str]) -> np.ndarray:
        """Rows of ``gold`` for questions that are Train questions, zeros for the others."""
        out = np.zeros((len(qids), self.index.num_docs))
        for i, q in enumerate(qids):
            j = self.row.get(str(q))
            if j is not None:
                out[i] = self.gold[j].toarray().ravel()
        return out


@dataclass
class FeatureSettings:
    """Settings of :class:`FactFeatures`: ``depth`` chosen on Dev (150 / 300 / 500 gave
    Dev MAP 0.4977 / 0.5024 / 0.4997 after LambdaMART); the hop settings were set once and
    not tuned."""

    depth: int = 300  # candidates kept per question
    hop_from: int = 5  # top facts the lexical hops start from
    couse_from: int = 10  # top facts the co-use hop starts from
    decay: float = 0.5  # weight of the second hop relative to the first
    knn_weight: float = 0.4  # knn50 in the candidate score tfidf/max + knn_weight * knn50
    batch_size: int = 128


class FactFeatures(pt.Transformer):
    """Candidates and their feature vectors (see the module docstring for the features).

    Input: topics with ``qid, query, question, answer``. Output: the ``depth`` best facts
    per question by ``tfidf / max + knn_weight * knn50`` with ``qid, query, docno, score,
    rank, features`` (``features``: one float vector in :data:`FEATURES` order).

    ``settings`` and ``encoder`` may change between calls (``set_parameter``); ``index``
    and ``stats`` are fixed when it is built (the lemma and BM25 weights of the facts are
    computed from them once).
    """

    index = Fixed()
    stats = Fixed()

    def __init__(self, index: FactIndex, stats: ExplanationStatistics,
                 lemmas: Mapping[str, str] | None = None,
                 settings: FeatureSettings | None = None, encoder=None, verbose: bool = False):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.index, self.stats = index, stats
        self.encoder = encoder
        self.settings = settings or FeatureSettings()
        self.verbose = verbose
        self.tfidf = stats.tfidf
        self.bm25 = LexicalModel(index, "bm25")
        texts = index.facts["text"].tolist()
        self.lemma_vectorizer = TfidfVectorizer(analyzer=lemma_analyzer(lemmas or {})).fit(texts)
        self.lemma_facts = self.lemma_vectorizer.transform(texts).tocsr()
        self.lengths = np.asarray(index.counts.sum(axis=1)).ravel().astype(np.float64)
        self.docnos = np.asarray(index.docnos(), dtype=object)

    def __repr__(self) -> str:
        # Every setting changes the output, so every setting is in the repr (run
        # manifests record it); batch_size does not change it and is left out.
        s = self.settings
        extra = f", encoder={self.encoder!r}" if self.encoder is not None else ""
        return (f"FactFeatures(depth={s.depth}, hop_from={s.hop_from}, couse_from={s.couse_from}, "
                f"decay={s.decay}, knn_weight={s.knn_weight}{extra})")

    @property
    def names(self) -> tuple[str, ...]:
        """The feature names, in the order of the ``features`` vectors."""
        return FEATURES + (SEMANTIC_FEATURES if self.encoder is not None else ())

    def _semantic(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Cosines of ``texts`` with every fact and with every Train question under the
        encoder (facts and Train questions encoded once per encoder), in float64."""
        facts = derived(self, "_fact_vectors", (self.encoder,), lambda: encode_float64(
            self.encoder, self.index.facts["text"].tolist()))
        queries = encode_float64(self.encoder, texts)
        return queries @ facts.T, queries @ self.stats.encoded(self.encoder).T

    def _lexical(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        counts = self.index.query_counts(texts)
        return (self.tfidf.score(self.tfidf.query_weights(counts)),
                self.bm25.score(self.bm25.query_weights(counts)))

    def _tfidf(self, texts: list[str]) -> np.ndarray:
        return self.tfidf.score(self.tfidf.query_weights(self.index.query_counts(texts)))

    def _lemma(self, texts: list[str]) -> np.ndarray:
        return (self.lemma_vectorizer.transform(texts) @ self.lemma_facts.T).toarray()

    def _hop(self, scores: np.ndarray, starts: int) -> np.ndarray:
        """Per fact: the best of start-fact score x cosine(start fact, fact)."""
        facts = self.tfidf.facts
        top = np.argsort(-scores, axis=1, kind="stable")[:, :starts]
        out = np.empty_like(scores)
        for i in range(len(scores)):
            sims = (facts[top[i]] @ facts.T).toarray()
            out[i] = (scores[i, top[i]][:, None] * sims).max(axis=0)
        return out

    def matrices(self, topics: pd.DataFrame) -> dict[str, np.ndarray]:
        """Every feature as a (questions x facts) matrix, Train questions left out."""
        s, st = self.settings, self.stats
        question, answer = topics["question"].astype(str), topics["answer"].astype(str)
        both = (question + " " + answer).tolist()
        f: dict[str, np.ndarray] = {}
        f["tfidf"], f["bm25"] = self._lexical(both)
        f["tfidf_answer"] = self._tfidf(answer.tolist())
        f["tfidf_question"] = self._tfidf(question.tolist())
        f["lemma"] = self._lemma(both)
        f["lemma_answer"] = self._lemma(answer.tolist())
        f["tfidf_wrong"] = self._tfidf(wrong_options(topics))
        f["answer_margin"] = f["tfidf_answer"] - f["tfidf_wrong"]
        qids = topics["qid"].tolist()
        own = st.own_gold(qids)
        sim = (self.tfidf.query_weights(self.index.query_counts(both)) @ st.vectors.T).toarray()
        for k in (10, 50):
            f[f"knn{k}"] = st.neighbour_votes(sim, qids, k)
        uses = st.uses[None, :] - own
        f["uses"] = np.log1p(uses)
        table_uses = np.stack([uses[:, st.table == t].sum(axis=1)
                               for t in range(len(st.table_names))], axis=1)
        f["table_prior"] = np.log1p(table_uses / np.maximum(st.table_size, 1))[:, st.table]
        f["hop_lex"] = self._hop(f["tfidf"], s.hop_from)
        f["hop2_lex"] = s.decay * self._hop(f["hop_lex"], s.hop_from)
        base = _max_normalised(f["tfidf"]) + s.knn_weight * f["knn50"]
        top = np.argsort(-base, axis=1, kind="stable")[:, :s.couse_from]
        w = np.zeros_like(base)
        np.put_along_axis(w, top, np.take_along_axis(base, top, axis=1), axis=1)
        couse = (sparse.csr_matrix(w) @ st.couse).toarray()
        # leave-one-out: a Train question's own explanation adds 1 to the co-use of every
        # pair of its gold facts; remove it (the diagonal holds no co-use).
        couse -= ((w * own).sum(axis=1, keepdims=True) - w) * own
        f["hop_couse"] = np.log1p(np.maximum(couse, 0.0))
        f["length"] = np.broadcast_to(self.lengths, base.shape)
        f["table"] = np.broadcast_to(st.table.astype(np.float64), base.shape)
        if self.encoder is not None:
            f["minilm"], neighbours = self._semantic(both)
            for k in (10, 50):
                f[f"knn_minilm{k}"] = st.neighbour_votes(neighbours, qids, k)
        f["_candidate"] = base
        return f

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        pt.validate.query_frame(topics, extra_columns=["question", "answer"])
        if topics.empty:
            return pd.DataFrame(columns=[*RESULT_COLUMNS, "features"])
        depth = min(self.settings.depth, self.index.num_docs)
        frames = []
        starts = range(0, len(topics), self.settings.batch_size)
        for s0 in tqdm(starts, desc="fact features", unit=" batches", disable=not self.verbose):
            part = topics.iloc[s0:s0 + self.settings.batch_size]
            f = self.matrices(part)
            base = f["_candidate"]
            top = np.argsort(-base, axis=1, kind="stable")[:, :depth]
            x = np.stack([np.take_along_axis(f[n], top, axis=1) for n in self.names], axis=-1)
            frames.append(pd.DataFrame({
                "qid": np.repeat(part["qid"].to_numpy(dtype=object), depth),
                "query": np.repeat(part["query"].to_numpy(dtype=object), depth),
                "docno": self.docnos[top].ravel(),
                "score": np.take_along_axis(base, top, axis=1).ravel(),
                "rank": np.tile(np.arange(depth), len(part)),
                "features": list(x.reshape(-1, len(self.names))),
            }))
        return pd.concat(frames, ignore_index=True)


def wrong_options(topics: pd.DataFrame) -> list[str]:
    """The text of each question's wrong options (empty without ``choices``/``answer_key``).

    >>> t = pd.DataFrame({"choices": ["Which melts? (A) ice (B) rock"], "answer_key": ["A"]})
    >>> wrong_options(t)
    ['rock']
    """
    from mathir.topics.worldtree import split_options

    if "choices" not in topics or "answer_key" not in topics:
        return [""] * len(topics)
    out = []
    for choices, key in zip(topics["choices"], topics["answer_key"], strict=True):
        options = split_options(str(choices))[1]
        out.append(" ".join(text for k, text in options.items() if k != str(key)))
    return out


def _max_normalised(scores: np.ndarray) -> np.ndarray:
    return scores / np.maximum(scores.max(axis=1, keepdims=True), 1e-12)


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
#: 16 threads gave identical trees and scores; tests/test_reproduce.py checks 1 against 2.)
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


class AddFactText(pt.Transformer):
    """Add each fact's ``text`` (for a cross-encoder) to a result frame."""

    def __init__(self, index: FactIndex):
        self.index = index

    def __repr__(self) -> str:
        return "AddFactText()"

    def transform(self, res: pd.DataFrame) -> pd.DataFrame:
        texts = derived(self, "_texts", (self.index,), self.index.texts)
        return res.assign(text=res["docno"].map(texts).fillna(""))


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


def lemmas_of(index: FactIndex) -> dict[str, str]:
    """The lemma list of the index's distribution (empty when there is none)."""
    path = find_lemma_file(index.tablestore)
    return read_lemmas(path) if path else {}


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
            from mathir.encoders import load_bi_encoder

            encoder = load_bi_encoder()
        ff = FactFeatures(index, ExplanationStatistics(index, topics, qrels), lemmas_of(index),
                          features, encoder=encoder, verbose=verbose)
        _RANKERS[key] = ff, train_ranker(ff.transform(topics), qrels, ranker, names=ff.names)
    return _RANKERS[key]


def ltr(index: FactIndex, train: str | Path | None = None, semantic: bool = False,
        verbose: bool = False) -> pt.Transformer:
    """LambdaMART over :class:`FactFeatures`, trained on Train, then the full ranking."""
    from mathir.pipelines.worldtree import CompleteRanking, ExplanationQuery

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
    from mathir.pipelines.worldtree import CompleteRanking, ExplanationQuery

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
