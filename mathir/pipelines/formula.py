"""Formula search pipelines: LaTeX words or SLT tuples over a :class:`FormulaIndex`.

* ``formula_words``: the query formula as LaTeX words (the ARQMath baseline mapping),
  BM25 over the formulas' LaTeX words;
* ``formula_tuples``: Tangent-S symbol-pair tuples of the query's SLT, BM25 over the
  formulas' tuples (Tangent-S's first stage ranked tuples by Dice; BM25 weighs rare
  tuples higher and runs on PISA's dynamic pruning in milliseconds);
* both end with :class:`~mathir.pipelines.dedup.VisualDedup`, as Task 2 judges visual ids;
* ``formula_aware`` (Task 1): answers scored by how well their formulas match the
  question's formulas (:class:`FormulaAwareAnswers`), fused with BM25 by min-max
  normalised averaging (the ARQMath TF-IDF + Tangent-S baseline) or reciprocal rank fusion.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pyterrier as pt

from mathir.errors import InputError
from mathir.indexing.answer_index import AnswerIndex
from mathir.indexing.formula_build import REPRESENTATIONS
from mathir.indexing.formula_index import FormulaIndex
from mathir.indexing.formula_tuples import FormulaTokenizer, latex_word_tokens
from mathir.indexing.native_output import native_output_to
from mathir.pipelines.dedup import VisualDedup
from mathir.pipelines.fusion import LinearFusion, RRFusion
from mathir.pipelines.lexical import bm25
from mathir.pipelines.parameters import derived
from mathir.readers.html_text import strip_dollars

_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)


def query_formulas(text: str) -> list[str]:
    """The ``$...$`` / ``$$...$$`` formulas of a question text.

    >>> query_formulas("Is $x^2$ even? $$y=1$$")
    ['x^2', 'y=1']
    """
    return [(m.group(1) or m.group(2)).strip() for m in _MATH.finditer(text)]


class FormulaQuery(pt.Transformer):
    """Turn the query formula (LaTeX in ``query``) into PISA ``query_toks``.

    >>> q = FormulaQuery("words")(pd.DataFrame({"qid": ["1"], "query": ["$x^2$"]}))
    >>> q["query_toks"][0]
    {'x': 1.0, 'power': 1.0, '2': 1.0}
    """

    def __init__(self, representation: str = "tuples", window: int = 2,
                 abstract: bool = True, symbols: bool = True):
        self.representation = _check_representation(representation)
        # The index holds every token kind; a query may leave out the abstracted tuples
        # and symbol unigrams, whose long posting lists cost most of PISA's time.
        self.window, self.abstract, self.symbols = window, abstract, symbols

    def __repr__(self) -> str:
        extra = "" if self.representation == "words" else \
            f", abstract={self.abstract}, symbols={self.symbols}"
        return f"FormulaQuery({self.representation!r}{extra})"

    @property
    def tokenizer(self) -> FormulaTokenizer:
        """The tuple tokenizer of the current ``window``, ``abstract`` and ``symbols``."""
        return derived(self, "_tokenizer", (self.window, self.abstract, self.symbols),
                       lambda: FormulaTokenizer(window=self.window, abstract=self.abstract,
                                                symbols=self.symbols))

    def tokens(self, latex: str) -> dict[str, float]:
        """Query tokens of one formula."""
        latex = strip_dollars(latex)
        if _check_representation(self.representation) == "words":
            toks = latex_word_tokens(latex)
        else:
            toks = self.tokenizer.tokens(latex)
        return {k: float(v) for k, v in toks.items()}

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        _check_representation(self.representation)  # it may have been set since __init__
        out = topics.copy()
        if "query_0" not in out.columns:
            out["query_0"] = out["query"]
        out["query_toks"] = [self.tokens(q) for q in out["query"]]
        return out


def _check_representation(representation: str) -> str:
    if representation not in REPRESENTATIONS:
        raise InputError(f"unknown formula representation {representation!r}; "
                         f"expected one of {list(REPRESENTATIONS)}")
    return representation


class PruneQuery(pt.Transformer):
    """First-stage pruning: drop a formula query's commonest tokens before BM25.

    For indexes of at least ``prune_from`` formulas (1M; ``0``: any index): smaller ones
    have short posting lists, and their queries are left as they are. A token held by
    more than ``max_df`` of the index's formulas (a fraction) is dropped,
    unless every token of the query is that common; then, of a query with more than
    ``max_terms`` tokens, only the ``max_terms`` rarest are kept (ties by token). Tokens
    the index does not hold are dropped (they score nothing). Common tokens add little
    to BM25 (a low idf) but have the longest posting lists, which PISA must walk for the
    top 2,000 hits; ``None`` switches either rule off. Every parameter may change between
    calls (``set_parameter``).

    >>> from mathir.samples import arqmath_sample
    >>> idx = FormulaIndex.build(arqmath_sample().formulas, "sample-formulas", quiet=True)
    >>> q = FormulaQuery("words")(pd.DataFrame({"qid": ["1"], "query": ["$x^2 + y$"]}))
    >>> idx.num_docs, idx.document_frequency("words", q["query_toks"][0]).tolist()
    (1528, [352, 448, 359, 278, 46])
    >>> PruneQuery(idx, "words", max_df=0.1, max_terms=None, prune_from=0)(q)["query_toks"][0]
    {'y': 1.0}
    >>> PruneQuery(idx, "words", max_df=None, max_terms=2, prune_from=0)(q)["query_toks"][0]
    {'plus': 1.0, 'y': 1.0}
    >>> PruneQuery(idx, "words", max_df=0.1)(q)["query_toks"][0]  # 1,528 formulas: kept
    {'x': 1.0, 'power': 1.0, '2': 1.0, 'plus': 1.0, 'y': 1.0}
    """

    def __init__(self, index: FormulaIndex, representation: str = "tuples",
                 max_df: float | None = 0.05, max_terms: int | None = 64,
                 prune_from: int = 1_000_000):
        self.index = index
        self.representation = representation
        self.max_df = max_df
        self.max_terms = max_terms
        self.prune_from = prune_from

    def __repr__(self) -> str:
        return (f"PruneQuery({str(self.index.path)!r}, {self.representation!r}, "
                f"max_df={self.max_df}, max_terms={self.max_terms}, "
                f"prune_from={self.prune_from})")

    def prune(self, toks: dict[str, float]) -> dict[str, float]:
        """The query tokens ``toks`` that are kept."""
        if self.max_df is not None and not 0 < self.max_df <= 1:
            raise InputError(f"max_df is a fraction of the formulas (0 < max_df <= 1), "
                             f"not {self.max_df}")
        if self.max_terms is not None and self.max_terms < 1:
            raise InputError(f"max_terms must be at least 1, not {self.max_terms}")
        if self.index.num_docs < self.prune_from:
            return toks
        terms = list(toks)
        df = self.index.document_frequency(_check_representation(self.representation), terms)
        kept = [(int(d), t) for d, t in zip(df, terms, strict=True) if d > 0]
        if self.max_df is not None:
            rare = [(d, t) for d, t in kept if d <= self.max_df * self.index.num_docs]
            kept = rare or kept
        if self.max_terms is not None and len(kept) > self.max_terms:
            kept = sorted(kept)[:self.max_terms]
        chosen = {t for _, t in kept}
        return {t: w for t, w in toks.items() if t in chosen}

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        if "query_toks" not in topics.columns:
            raise InputError("PruneQuery needs query_toks (put a FormulaQuery first)")
        out = topics.copy()
        out["query_toks"] = [self.prune(toks) for toks in out["query_toks"]]
        return out


class FormulaRetriever(pt.Transformer):
    """BM25 (PISA) over one representation of a :class:`FormulaIndex`.

    Adds ``formula_id``, ``post_id``, ``thread_id`` and ``visual_id`` to each hit.
    Every parameter may change between calls (``set_parameter``, as ``pt.GridScan``
    does): PISA's retriever is built again for the new values.
    """

    def __init__(self, index: FormulaIndex, representation: str = "tuples",
                 num_results: int = 1000, k1: float = 1.2, b: float = 0.75,
                 query_algorithm: str = "maxscore"):
        self.index = index
        self.representation = representation
        self.num_results = num_results
        self.k1 = k1
        self.b = b
        #: PISA's algorithm (``maxscore``, ``block_max_wand``, ``block_max_maxscore``,
        #: ``wand``, ``ranked_or``): all find the top k, but they add a document's term
        #: scores in different orders, so the last bits of a score, and the order of
        #: near-ties, may differ between them. Published figures use ``maxscore``.
        self.query_algorithm = query_algorithm

    def __repr__(self) -> str:
        algorithm = "" if self.query_algorithm == "maxscore" else \
            f", query_algorithm={self.query_algorithm!r}"
        return (f"FormulaRetriever({str(self.index.path)!r}, {self.representation!r}, "
                f"num_results={self.num_results}, k1={self.k1}, b={self.b}{algorithm})")

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        if "query_toks" not in topics.columns:
            raise InputError("FormulaRetriever needs query_toks (put a FormulaQuery first)")
        has = topics["query_toks"].map(bool)
        cols = list(topics.columns) + ["docno", "score", "rank"]
        if not has.any():
            return pd.DataFrame(columns=cols + ["formula_id", "post_id", "thread_id", "visual_id"])
        asked = topics[has].reset_index(drop=True)
        representation = _check_representation(self.representation)
        if self.index.scoring == "bm25-impacts":
            impacts = self.index.impacts(representation)
            if (self.k1, self.b) != (impacts["k1"], impacts["b"]):
                raise InputError(f"this formula index holds BM25 impacts of k1={impacts['k1']}, "
                                 f"b={impacts['b']}: they cannot be searched with k1={self.k1}, "
                                 f"b={self.b} (build it with scoring='bm25' to vary them)",
                                 path=self.index.path)
            shards = derived(self, "_shards", (self.index, representation, self.query_algorithm),
                             lambda: self.index.impact_shards(representation,
                                                              self.query_algorithm))
            res = shards.search(asked[["qid", "query_toks"]], self.num_results)
            pos = res.pop("position").to_numpy()
            which = pd.Index(asked["qid"]).get_indexer(res["qid"])
        else:
            with native_output_to(self.index.path / "pisa.log"):
                key = (self.index, representation, self.k1, self.b, self.num_results,
                       self.query_algorithm)
                retriever = derived(self, "_pisa", key, lambda: self.index.pisa(
                    representation).bm25(k1=self.k1, b=self.b, num_results=self.num_results,
                                         verbose=False, toks_scale=1.0, threads=1,
                                         query_algorithm=self.query_algorithm))
                # PISA copies every topic column onto every hit: give it only what it
                # needs and add the other columns once the hits are known (numpy takes).
                res = retriever.transform(asked[["qid", "query_toks"]])
            # Assemble the output in one DataFrame construction: column-by-column
            # assignment cost more than PISA's own retrieval per query
            # (benchmarks/formula_search.py).
            which = pd.Index(asked["qid"]).get_indexer(res["qid"])
            pos = self.index.positions(res["docno"].to_numpy(dtype=object))
            keep = pos >= 0
            if not keep.all():
                which, pos, res = which[keep], pos[keep], res[keep]
        data = {c: asked[c].to_numpy()[which] for c in asked.columns}
        data.update({c: res[c].to_numpy() for c in res.columns if c not in data})
        data["formula_id"] = data["docno"]
        data.update(self.index.rows(pos))
        return pd.DataFrame(data)


def formula_words(index: FormulaIndex, num_results: int = 1000, verbose: bool = False,
                  k1: float = 1.2, b: float = 0.75,
                  query_algorithm: str = "maxscore") -> pt.Transformer:
    """Task 2 baseline: the query formula's LaTeX words, BM25 over formula LaTeX words."""
    return (FormulaQuery("words")
            >> FormulaRetriever(index, "words", 2 * num_results, k1, b, query_algorithm)
            >> VisualDedup(num_results))


def formula_tuples(index: FormulaIndex, num_results: int = 1000, verbose: bool = False,
                   k1: float = 1.2, b: float = 0.75, abstract: bool = True,
                   symbols: bool = False, query_algorithm: str = "maxscore",
                   max_df: float | None = 0.05, max_terms: int | None = 64,
                   prune_from: int = 1_000_000) -> pt.Transformer:
    """Tangent-S style symbol-pair tuples of the query's SLT, BM25 over formula tuples.

    The query uses the pairs and their type-abstracted copies; symbol unigrams
    (``symbols=True``) add 0.0006 nDCG' on real judged formulas but cost a sixth of
    the query time (benchmarks/arqmath_formula_pool.py, benchmarks/formula_search.py).
    First-stage pruning (:class:`PruneQuery`), in an index of ``prune_from`` formulas or
    more (1M), leaves out the query's tuples held by more than ``max_df`` of the formulas,
    then keeps its ``max_terms`` rarest: it bounds the cost of common and long queries at
    ARQMath's 28M formulas (docs/performance.md); applied to real judged formulas
    (``prune_from=0``) it gives nDCG' 0.7676 against 0.7668 with every tuple. Smaller
    indexes, and ``max_df=None, max_terms=None``: every tuple, exact BM25 over the query.

    >>> from mathir.samples import arqmath_sample
    >>> idx = FormulaIndex.build(arqmath_sample().formulas, "sample-formulas", quiet=True)
    >>> res = formula_tuples(idx, 5).search(r"\\\\ln y=x\\\\ln x")
    >>> len(res), res.visual_id.is_unique
    (5, True)
    """
    query = FormulaQuery("tuples", abstract=abstract, symbols=symbols)
    if max_df is not None or max_terms is not None:
        query = query >> PruneQuery(index, "tuples", max_df=max_df, max_terms=max_terms,
                                    prune_from=prune_from)
    return (query
            >> FormulaRetriever(index, "tuples", 2 * num_results, k1, b, query_algorithm)
            >> VisualDedup(num_results))


class FormulaAwareAnswers(pt.Transformer):
    """Score answers by their formulas' similarity to the question's formulas.

    Each ``$...$`` formula of the question retrieves ``per_formula`` formulas by tuples;
    an answer scores the sum, over the question's formulas, of its best-matching
    formula's BM25 score. Only posts in ``answers`` (answer ids) are returned.
    Every parameter may change between calls (``set_parameter``).
    """

    def __init__(self, index: FormulaIndex, answers: set[str] | None = None,
                 per_formula: int = 1000, num_results: int = 1000,
                 representation: str = "tuples"):
        self.index = index
        self.answers = answers
        self.per_formula = per_formula
        self.num_results = num_results
        self.representation = _check_representation(representation)

    def __repr__(self) -> str:
        extra = "" if self.representation == "tuples" else f", {self.representation!r}"
        return (f"FormulaAwareAnswers({str(self.index.path)!r}, per_formula={self.per_formula}, "
                f"num_results={self.num_results}{extra})")

    @property
    def query(self) -> FormulaQuery:
        """The query stage for the current ``representation``."""
        return derived(self, "_query", (self.representation,),
                       lambda: FormulaQuery(self.representation))

    @property
    def retriever(self) -> FormulaRetriever:
        """The formula retriever (kept, with PISA's retriever, across calls)."""
        r = derived(self, "_retriever", (self.index,),
                    lambda: FormulaRetriever(self.index, self.representation, self.per_formula))
        r.representation, r.num_results = self.representation, self.per_formula
        return r

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        rows = []
        text_col = "query_0" if "query_0" in topics.columns else "query"
        for qid, text in zip(topics["qid"], topics[text_col], strict=True):
            for i, f in enumerate(dict.fromkeys(query_formulas(str(text)))):
                rows.append({"qid": f"{qid}\x1f{i}", "query": f, "topic": qid})
        keep = [c for c in topics.columns if c not in ("docno", "score", "rank")]
        empty = pd.DataFrame(columns=keep + ["docno", "score", "rank"])
        if not rows:
            return empty
        sub = self.query.transform(pd.DataFrame(rows))
        hits = self.retriever.transform(sub)
        if hits.empty:
            return empty
        if self.answers is not None:
            hits = hits[hits["post_id"].isin(self.answers)]
        best = hits.groupby(["topic", "qid", "post_id"], as_index=False)["score"].max()
        agg = best.groupby(["topic", "post_id"], as_index=False)["score"].sum()
        agg = agg.rename(columns={"topic": "qid", "post_id": "docno"})
        out = topics[keep].merge(agg, on="qid")
        out = out.sort_values(["qid", "score", "docno"], ascending=[True, False, True],
                              kind="stable")
        out["rank"] = out.groupby("qid").cumcount()
        out = out[out["rank"] < self.num_results]
        return out.reset_index(drop=True)


def answer_formula_index(index: AnswerIndex, quiet: bool = True) -> FormulaIndex:
    """The formula index of an answer index's collection (built next to it on first use)."""
    source = Path(index.manifest["collection"]["path"])
    return FormulaIndex.build(source, index.path.parent / f"{index.path.name}-formulas",
                              quiet=quiet)


def formula_aware(index: AnswerIndex, num_results: int = 1000, verbose: bool = False,
                  fusion: str = "linear", weight: float = 0.5) -> pt.Transformer:
    """Task 1: BM25 fused with :class:`FormulaAwareAnswers` (``linear`` or ``rrf``).

    ``linear`` averages per-query min-max normalised scores with ``weight`` on the
    formulas (0.5 as in the TF-IDF + Tangent-S baseline); ``rrf`` is reciprocal rank
    fusion (k = 60).
    """
    formulas = FormulaAwareAnswers(answer_formula_index(index, quiet=not verbose),
                                   set(index.docnos()), num_results=num_results)
    text = bm25(index, num_results=num_results)
    if fusion == "linear":
        return LinearFusion([text, formulas], [1.0 - weight, weight], num_results=num_results)
    if fusion == "rrf":
        return RRFusion([text, formulas], num_results=num_results)
    raise InputError(f"unknown fusion {fusion!r}; expected 'linear' or 'rrf'")


def formula_aware_rrf(index: AnswerIndex, num_results: int = 1000,
                      verbose: bool = False) -> pt.Transformer:
    """Task 1: BM25 and formula matching by reciprocal rank fusion."""
    return formula_aware(index, num_results, verbose, fusion="rrf")
