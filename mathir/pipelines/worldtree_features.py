"""WorldTree fact features: what the Train explanations and the tablestore say of each
(question, fact) pair, the input of the learned ranker
(:mod:`mathir.pipelines.worldtree_lambdamart`).

The lexical first stages of :mod:`mathir.pipelines.worldtree_lexical` see one question at a
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
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyterrier as pt
from scipy import sparse
from tqdm.auto import tqdm

from mathir.indexing.fact_index import FactIndex, find_lemma_file, read_lemmas
from mathir.pipelines.parameters import Fixed, derived
from mathir.pipelines.worldtree_lexical import RESULT_COLUMNS, LexicalModel

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


def lemmas_of(index: FactIndex) -> dict[str, str]:
    """The lemma list of the index's distribution (empty when there is none)."""
    path = find_lemma_file(index.tablestore)
    return read_lemmas(path) if path else {}
