"""Template-retrieval solver for algebra word problems, as PyTerrier transformers.

``ProblemRetriever`` ranks training problems by TF-IDF cosine over their text with
numbers masked (``12`` and ``twice`` both become ``NUM``); ``SolveFromTemplates``
takes the templates of the top-k, aligns the problem's numbers to their slots and
keeps the best derivation (:class:`mathir.answer_checking.solver.TemplateSolver`). Output:
one row per topic with ``docno`` (the training problem whose template was used),
``score``, and JSON columns ``template``, ``alignment``, ``equations``, ``solution``.

>>> from mathir.samples import word_problems_sample
>>> s = word_problems_sample()
>>> index = WordProblemIndex.build(s.problems, train=s.split("train"))
>>> pipe = template_retrieval(index)
>>> pipe
(ProblemRetriever(9 problems, num_results=30) >> SolveFromTemplates(TemplateSolver(9 training problems, per_slot=4)))
>>> from mathir.topics.word_problems import read_problem_topics
>>> topics = read_problem_topics(s.split("test"))
>>> json.loads(pipe(topics.iloc[:1])["solution"][0])
[20.0, 20.0]
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt
from sklearn.feature_extraction.text import TfidfVectorizer
from tqdm.auto import tqdm

from mathir.answer_checking.solver import TemplateSolver
from mathir.errors import InputError
from mathir.readers.word_problems import (
    WordProblem,
    iter_derivation_problems,
    read_split,
    token_value,
)

RESULT_COLUMNS = ["qid", "query", "docno", "score", "template", "alignment", "equations",
                  "solution"]


def mask_numbers(text: str) -> str:
    """The text with every textual number replaced by ``NUM``.

    >>> mask_numbers("A is twice B and 12 more")
    'A is NUM B and NUM more'
    """
    return " ".join("NUM" if token_value(t) is not None else t for t in text.split())


class WordProblemIndex:
    """Training problems with derivations, and a TF-IDF index of their masked text."""

    def __init__(self, problems: Iterable[WordProblem], path: str | Path = "<memory>"):
        self.problems = [p for p in problems if p.template and p.alignment]
        if not self.problems:
            raise InputError("no training problem with a derivation", path=path)
        self.path = Path(path)
        self.vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True,
                                          token_pattern=r"(?u)\b\w+\b")
        self.matrix = self.vectorizer.fit_transform(mask_numbers(p.text) for p in self.problems)
        self.solver = TemplateSolver(self.problems)

    @property
    def num_docs(self) -> int:
        return len(self.problems)

    def docnos(self) -> list[str]:
        return [p.id for p in self.problems]

    def neighbours(self, num_results: int = 30) -> dict[str, list[tuple[str, float]]]:
        """For each training problem, its most similar other training problems."""
        sims = (self.matrix @ self.matrix.T).toarray()
        np.fill_diagonal(sims, -1.0)
        ids = self.docnos()
        out = {}
        for r, pid in enumerate(ids):
            order = np.argsort(-sims[r], kind="stable")[:num_results]
            out[pid] = [(ids[j], float(sims[r, j])) for j in order]
        return out

    @classmethod
    def build(cls, problems: str | Path, train: str | Path | None = None,
              exclude: str | Path | None = None) -> WordProblemIndex:
        """Index the problems of a JSON file: those of ``train`` (a split file) if given,
        else all but those of ``exclude`` (e.g. the test fold)."""
        keep = set(read_split(train)) if train else None
        drop = set(read_split(exclude)) if exclude else set()
        chosen = [p for p in iter_derivation_problems(problems)
                  if (keep is None or p.id in keep) and p.id not in drop]
        return cls(chosen, problems)


class ProblemRetriever(pt.Transformer):
    """Rank training problems by TF-IDF cosine of their number-masked text."""

    def __init__(self, index: WordProblemIndex, num_results: int = 10):
        self.index = index
        self.num_results = num_results

    def __repr__(self) -> str:
        return f"ProblemRetriever({self.index.num_docs} problems, num_results={self.num_results})"

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        pt.validate.query_frame(topics, extra_columns=["query"])
        q = self.index.vectorizer.transform(mask_numbers(t) for t in topics["query"])
        sims = (q @ self.index.matrix.T).toarray()
        ids = self.index.docnos()
        rows = []
        for r, (qid, query) in enumerate(zip(topics["qid"], topics["query"], strict=True)):
            order = np.argsort(-sims[r], kind="stable")[:self.num_results]
            for rank, j in enumerate(order):
                rows.append((qid, query, ids[j], float(sims[r, j]), rank))
        return pd.DataFrame(rows, columns=["qid", "query", "docno", "score", "rank"])


class SolveFromTemplates(pt.Transformer):
    """Best derivation over the templates of the retrieved problems (one row a topic;
    empty JSON fields when no template fits)."""

    def __init__(self, index: WordProblemIndex, verbose: bool = False,
                 solver: TemplateSolver | None = None):
        self.index = index
        self.verbose = verbose
        self.solver = solver

    @property
    def solver(self) -> TemplateSolver:
        """The solver given, else the index's (so that ``set_parameter("index", ...)``
        takes effect)."""
        return self._solver if self._solver is not None else self.index.solver

    @solver.setter
    def solver(self, value: TemplateSolver | None) -> None:
        self._solver = value

    def __repr__(self) -> str:
        learned = ", learned weights" if self.solver.coef is not None else ""
        return f"SolveFromTemplates({self.solver!r}{learned})"

    def transform(self, results: pd.DataFrame) -> pd.DataFrame:
        rows = []
        groups = results.groupby("qid", sort=False)
        for qid, g in tqdm(groups, desc="solving", unit=" problems", disable=not self.verbose):
            query = g["query"].iloc[0]
            best = self.solver.solve(query, list(zip(g["docno"], g["score"], strict=True)))
            if best is None:
                rows.append((qid, query, "", 0.0, "[]", "{}", "[]", "[]"))
                continue
            d = best.derivation
            alignment = {c: [q.sentence, q.token, q.value] for c, q in d.alignment.items()}
            rows.append((qid, query, best.source, best.score,
                         json.dumps(list(d.template.equations)), json.dumps(alignment),
                         json.dumps(list(d.equations())),
                         json.dumps([round(float(x), 6) for x in best.solution])))
        return pd.DataFrame(rows, columns=RESULT_COLUMNS)


def template_retrieval(index: WordProblemIndex, num_results: int = 30,
                       verbose: bool = False) -> pt.Transformer:
    """Retrieve the top ``num_results`` training problems, solve with their templates."""
    return ProblemRetriever(index, num_results) >> SolveFromTemplates(index, verbose=verbose)


def trained_template_retrieval(index: WordProblemIndex, num_results: int = 30,
                               verbose: bool = False) -> pt.Transformer:
    """Like :func:`template_retrieval`, with scoring weights learned on the training
    problems: each is solved from its retrieved neighbours (leave-one-out) and a
    logistic regression separates derivations equivalent to the annotated one (the
    paper's TD supervision) from the others."""
    solver = copy.copy(index.solver)
    solver.fit(index.neighbours(num_results))
    return (ProblemRetriever(index, num_results)
            >> SolveFromTemplates(index, verbose=verbose, solver=solver))


def nearest_template(index: WordProblemIndex, verbose: bool = False) -> pt.Transformer:
    """Baseline: the template of the single nearest training problem."""
    return template_retrieval(index, 1, verbose)
