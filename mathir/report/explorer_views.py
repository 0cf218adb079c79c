"""What the run explorer shows for each task (:mod:`mathir.report.explorer`).

:func:`build_explorer` turns an evaluation (:mod:`mathir.evaluation.evaluated`: the runs in
the order they were scored, the judgments the score used) and the task's topics into an
:class:`~mathir.report.explorer.Explorer`, through the page the task declares
(``Task.explorer``; :mod:`~mathir.report.explorer_arqmath`,
:mod:`~mathir.report.explorer_worldtree`; this module holds what they share and the
generic page):

* ARQMath Task 1 (and any task with ARQMath answers): the question title and body with
  their formulas rendered; answers with the judgment as H / M / L / N (labels 3 / 2 / 1 /
  0, the gains of nDCG'; MAP' and P'@10 count H and M as relevant) or ``?`` when
  unjudged; answer formulas that match a question formula highlighted by the SLT tuples
  that ``formula-aware`` and ``formula-tuples`` search with;
* ARQMath Task 2: the query formula rendered; results grouped by visual id as the
  evaluation groups them (the first instance of a visual id counts, the others are
  listed with it), judged by visual id;
* WorldTree: the question and its answer; facts with their gold role;
* word problems: the problem text and the gold equations; each run's answer (its
  equations and solution) judged correct or wrong.

Other tasks get the generic view: the query text, document ids and qrels labels.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pandas as pd

from mathir.evaluation.evaluated import EvaluatedRuns
from mathir.report.explorer import (
    Badge,
    Explorer,
    Hit,
    Judged,
    TopicView,
    label_badges,
)
from mathir.report.mathml import MAX_FORMULA_CHARS, MathRenderer

#: a task's files (:class:`mathir.tasks.TaskData`; not imported: the tasks import this layer)
TaskData = Any


@dataclass(frozen=True)
class Lookups:
    """What a page shows of the documents, looked up by whoever builds the explorer
    (:func:`mathir.experiment.reports.explorer_lookups`: the index's text store): the
    report reads the evaluated runs and these, never a collection file. A lookup that is
    None finds nothing (the page says "not in the collection").

    >>> Lookups(texts=lambda docnos: {d: "an answer" for d in docnos}).texts({"1"})
    {'1': 'an answer'}
    """

    #: docnos -> {docno: answer text} of those the collection holds (ARQMath answers)
    texts: Callable[[set[str]], Mapping[str, str]] | None = None
    #: (formula index TSV, formula ids, visual ids) -> ({formula id: (visual id, LaTeX,
    #: post id)}, {visual id: LaTeX of its first instance}) (ARQMath Task 2)
    formulas: Callable[[Any, set[str], set[str]],
                       tuple[dict[str, tuple[str, str, str]], dict[str, str]]] | None = None
    #: tablestore -> {fact id: fact text} (WorldTree)
    facts: Callable[[Any], Mapping[str, str]] | None = None

#: characters of an answer's text shown in a snippet (formulas count a third)
SNIPPET_CHARS = 420
#: judged relevant documents listed per topic under the runs that missed them (most relevant first)
MAX_JUDGED = 30

ARQMATH_BADGE = label_badges(
    {"3": "H", "2": "M", "1": "L", "0": "N"},
    {"3": "high (3): gain 3 in nDCG', relevant for MAP' and P'@10",
     "2": "medium (2): gain 2 in nDCG', relevant for MAP' and P'@10",
     "1": "low (1): gain 1 in nDCG', not relevant for MAP' and P'@10",
     "0": "not relevant (0)"})
ARQMATH_LEGEND = ("Badges: H / M / L / N = judged 3 / 2 / 1 / 0 (the gains of nDCG'; MAP', "
                  "P'@10 and bpref count H and M as relevant), ? = unjudged (the prime "
                  "measures skip it). Highlighted formulas share SLT tuples with a query "
                  "formula (green: the same formula).")


def escape(value: object) -> str:
    return html.escape(str(value), quote=True)


def _by_topic(run: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """qid -> the rows of an evaluated run (:class:`~mathir.evaluation.evaluated.EvaluatedRuns`)
    for that topic, in the order they were scored (``rank`` is the position)."""
    if run is None or not len(run) or "qid" not in run.columns:
        return {}
    qids = run["qid"].astype(str)
    return {q: g for q, g in run.groupby(qids.to_numpy(), sort=False)}


def _scores(per_topic: Mapping[str, pd.DataFrame] | None) -> tuple[dict, list[str]]:
    """(qid -> run -> measure -> value, measures) from per-topic frames."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    measures: list[str] = []
    for run, df in (per_topic or {}).items():
        cols = [c for c in df.columns if c != "qid"]
        measures = measures or cols
        for rec in df.to_dict("records"):
            out.setdefault(str(rec["qid"]), {})[run] = {m: float(rec[m]) for m in cols}
    return out, measures


def _label_text(value) -> str:
    f = float(value)
    return str(int(f)) if f.is_integer() else str(value)


def judged_badge(ev: EvaluatedRuns, qid: str, docno: str, badge: Callable[[str], Badge]
                 ) -> tuple[str, Badge]:
    """(label, badge) of a listed document: its judgment when the score used it; a judgment
    the score did not use (its document is not in the collection) is shown as such, never
    with a badge that implies it counted; ``unjudged`` otherwise."""
    found = ev.judgment(qid, docno)
    if found is None:
        return "unjudged", badge("unjudged")
    label, used = found
    text = _label_text(label)
    if used:
        return text, badge(text)
    shown = badge(text).text
    return "unjudged", Badge(f"({shown})", "gu",
                             f"judged {shown} ({text}) in the qrels file, but not in the "
                             "collection: the score treats it as unjudged")


def relevant_judged(ev: EvaluatedRuns, qid: str, available: Callable[[str], bool] = lambda d: True
              ) -> list[tuple[str, str]]:
    """(docno, label) of the topic's documents judged above 0 in the judgments the score
    used, most relevant first."""
    found = [(d, lab) for d, lab in used_labels(ev).get(qid, {}).items()
             if grade(lab) > 0 and available(d)]
    found.sort(key=lambda x: (-grade(x[1]), x[0]))
    return found[:MAX_JUDGED]


def used_labels(ev: EvaluatedRuns) -> dict[str, dict[str, str]]:
    """qid -> docno -> label of the judgments the score used (computed once per evaluation)."""
    cached = ev.cache.get("labels")
    if cached is None:
        cached = {}
        q = ev.qrels
        if q is not None and {"qid", "docno", "label"} <= set(q.columns):
            for a, d, v in zip(q["qid"].astype(str), q["docno"].astype(str), q["label"],
                               strict=True):
                cached.setdefault(a, {})[d] = _label_text(v)
        ev.cache["labels"] = cached
    return cached


def set_ranks(view: TopicView, ev: EvaluatedRuns, qid: str, shown: set[str]) -> None:
    """Each run's rank (position in its scored order) of the documents shown."""
    for name in ev.runs:
        g = run_by_topic(ev, name).get(qid)
        if g is not None:
            sub = g[g["docno"].astype(str).isin(shown)]
            view.ranks[name] = dict(zip(sub["docno"].astype(str), sub["rank"].astype(int),
                                        strict=True))


def run_by_topic(ev: EvaluatedRuns, name: str) -> dict[str, pd.DataFrame]:
    key = ("topics", name)
    if key not in ev.cache:
        ev.cache[key] = _by_topic(ev.runs[name])
    return ev.cache[key]


def listed_hits(ev: EvaluatedRuns, name: str, qid: str, depth: int, badge: Callable[[str], Badge]
          ) -> tuple[list[Hit], set[str]]:
    g = run_by_topic(ev, name).get(qid)
    if g is None:
        return [], set()
    top = g[g["rank"] <= depth]
    scores = top["score"] if "score" in top.columns else top["rank"] * 0.0
    hits = []
    for d, r, s in zip(top["docno"].astype(str), top["rank"], scores, strict=True):
        label, b = judged_badge(ev, qid, d, badge)
        hits.append(Hit(d, int(r), float(s), label, b))
    return hits, set(top["docno"].astype(str))


def grade(label: str) -> float:
    try:
        return float(label)
    except ValueError:
        return 0.0


# --- formula matching (the tuples of formula-aware / formula-tuples) ----------------------


@lru_cache(maxsize=65536)
def _tuples(latex: str) -> Counter:
    from mathir.indexing.formula_tuples import FormulaTokenizer

    return _TOKENIZER.get(FormulaTokenizer).tokens(latex)


class _Lazy:
    value = None

    def get(self, factory):
        if self.value is None:
            self.value = factory()
        return self.value


_TOKENIZER = _Lazy()


_SYMBOL = re.compile(r"\\[A-Za-z]+|[A-Za-z0-9]|[^\s{}\\]")


def _symbols(latex: str) -> Counter:
    """The LaTeX's commands, letters, digits and operators (a cheap first look)."""
    return Counter(_SYMBOL.findall(latex))


def _dice(a: Counter, b: Counter) -> float:
    total = sum(a.values()) + sum(b.values())
    return 2 * sum((a & b).values()) / total if total else 0.0


def _normal(latex: str) -> str:
    return "".join(latex.split())


def formula_matcher(query_formulas: Iterable[str], threshold: float = 0.65
                    ) -> Callable[[str], tuple[str, str] | None]:
    """``latex -> (css class, tooltip)`` for a formula that matches a query formula.

    ``exact``: the same LaTeX (spaces ignored); ``match``: the Dice overlap of their SLT
    tuple tokens (the tokens ``formula-tuples`` and ``formula-aware`` search with) is at
    least ``threshold``.

    >>> m = formula_matcher([r"x^x\\ln x"])
    >>> m(r"x^x \\ln x")[0], m(r"x^{x}\\ln x")[0], m("y+1")
    ('exact', 'match', None)
    """
    queries = [q for q in dict.fromkeys(q.strip() for q in query_formulas) if q]
    normal = {_normal(q): q for q in queries}
    symbols = {q: _symbols(q) for q in queries}

    def mark(latex: str) -> tuple[str, str] | None:
        if not queries or len(latex) > MAX_FORMULA_CHARS:  # shown shortened, not parsed
            return None
        same = normal.get(_normal(latex))
        if same is not None:
            return "exact", f"the query formula ${same}$"
        # SLT tuples are costly (a parse per formula): only for formulas whose symbols
        # overlap a query formula's enough that their tuples may
        mine_symbols = _symbols(latex)
        close = [q for q in queries if _dice(mine_symbols, symbols[q]) >= threshold - 0.15]
        if not close:
            return None
        mine = _tuples(latex.strip())
        size = sum(mine.values())
        if not size:
            return None
        best, which = 0.0, ""
        for q in close:
            dice = _dice(mine, _tuples(q))
            if dice > best:
                best, which = dice, q
        if best >= threshold:
            return "match", f"shares {best:.0%} of its SLT tuples with the query formula ${which}$"
        return None

    return mark


# --- generic --------------------------------------------------------------------------------


def generic(ev: EvaluatedRuns, topics: pd.DataFrame, data: TaskData | None,
            renderer: MathRenderer, depth: int = 20) -> tuple[list[TopicView], str]:
    """Topic views of any ranking task: query text, document ids, the judgments the score
    used, in the order the runs were scored."""
    views = []
    for t in topics.to_dict("records"):
        qid = str(t["qid"])
        query = str(t.get("query", ""))
        view = TopicView(qid, renderer.text(query, 120, kind="list"),
                         f'<div class="body">{renderer.text(query, kind="topic")}</div>')
        shown: set[str] = set()
        for name in ev.runs:
            view.hits[name], listed = listed_hits(ev, name, qid, depth, ARQMATH_BADGE)
            shown |= listed
        relevant = relevant_judged(ev, qid)
        view.judged = [Judged(d, lab, ARQMATH_BADGE(lab)) for d, lab in relevant]
        shown.update(d for d, _ in relevant)
        set_ranks(view, ev, qid, shown)
        views.append(view)
    return views, ""


# --- one entry point --------------------------------------------------------------------------


def _takes_lookups(page: Callable) -> bool:
    """Whether a page (a function, or a task's reference to one) takes ``lookups=``."""
    import inspect

    target = page.resolve() if callable(getattr(page, "resolve", None)) else page
    try:
        return "lookups" in inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False


def build_explorer(ev: EvaluatedRuns, topics: pd.DataFrame, data: TaskData | None = None, *,
                   baseline: str | None = None, primary: str | None = None,
                   depth: int = 20, all_topics: bool = False,
                   lookups: Lookups | None = None) -> tuple[Explorer, MathRenderer]:
    """The explorer of an evaluation (:func:`mathir.evaluation.evaluated.evaluate`) on the
    task's topics: each run listed in the order it was scored, with the judgments the
    score used, through the page the task declares (``Task.explorer``).

    Only topics with scores are shown when there are scores, unless ``all_topics``.
    ``lookups``: the documents' texts and formulas the page shows (:class:`Lookups`;
    :func:`mathir.experiment.reports.explorer_lookups` reads them from the index); a
    page that takes ``lookups`` gets them, and without them shows ids and judgments only.
    Returns the explorer and the renderer, whose ``stats`` say how many formulas
    latex2mathml could not convert.

    >>> from mathir.evaluation.evaluated import evaluate
    >>> from mathir.samples import word_problems_sample
    >>> from mathir.topics.word_problems import read_problem_topics
    >>> from mathir.qrels.word_problems import read_gold
    >>> s = word_problems_sample().split("test")
    >>> run = pd.DataFrame({"qid": ["9101"], "docno": ["9001"], "score": [1.0],
    ...     "solution": [[20.0, 20.0]], "template": [[]], "alignment": [{}], "equations": [[]]})
    >>> from mathir.tasks import get_task
    >>> ev = evaluate(get_task("word-problems"), {"r": run}, read_gold(s))
    >>> ex, _ = build_explorer(ev, read_problem_topics(s))
    >>> [h.label for h in ex.topics[0].hits["r"]], len(ex.topics)
    (['correct'], 5)
    """
    renderer = MathRenderer()
    names = list(ev.runs)
    if not names:
        from mathir.errors import InputError

        raise InputError("no runs to explore")
    baseline = baseline or names[0]
    scores, measures = _scores(ev.per_topic)
    notes = []
    if scores and not all_topics:
        shown = topics["qid"].astype(str).isin(scores.keys())
        if not shown.all():
            notes.append(f"{int((~shown).sum())} topic(s) without judgments are not shown.")
        topics = topics[shown.to_numpy()].reset_index(drop=True)
    if ev.judged_note:
        notes.append(f"Judged set: {ev.judged_note}.")
    page = getattr(ev.declaration, "explorer", None) or generic
    extra = {"lookups": lookups or Lookups()} if _takes_lookups(page) else {}
    views, legend = page(ev, topics, data, renderer, depth, **extra)
    for v in views:
        v.scores = scores.get(v.qid, {})
    primary = primary or (measures[0] if measures else "")
    topic_stats = renderer.stats.get("topic")
    if topic_stats and topic_stats.unconverted:
        notes.append(f"{len(topic_stats.unconverted)} of {topic_stats.formulas} topic formulas "
                     "could not be converted by latex2mathml and are shown as LaTeX source.")
    result_stats = renderer.stats.get("result")
    if result_stats and result_stats.unconverted:
        notes.append(f"{len(result_stats.unconverted)} of {result_stats.formulas} formulas in "
                     "results could not be converted and are shown as LaTeX source.")
    shortened = sum(getattr(s, "shortened", 0) or 0 for s in renderer.stats.values())
    if shortened:
        notes.append(f"{shortened} formula(s) longer than {MAX_FORMULA_CHARS:,} characters are "
                     "shown as shortened source.")
    ex = Explorer(names, baseline, primary, measures, views, depth, legend, notes)
    return ex, renderer


__all__ = ["ARQMATH_BADGE", "ARQMATH_LEGEND", "MAX_JUDGED", "Lookups", "SNIPPET_CHARS", "build_explorer",
           "escape", "formula_matcher", "generic", "grade", "judged_badge", "listed_hits",
           "relevant_judged", "run_by_topic", "set_ranks", "used_labels"]
