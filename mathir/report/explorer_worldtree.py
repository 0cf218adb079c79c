"""The run explorer's pages of WorldTree (facts with their gold roles) and of word
problems (answers judged correct or wrong)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from mathir.evaluation.evaluated import EvaluatedRuns
from mathir.report.explorer import Badge, Hit, Judged, TopicView
from mathir.report.explorer_views import (
    ARQMATH_BADGE,
    MAX_JUDGED,
    Lookups,
    TaskData,
    escape,
    listed_hits,
    set_ranks,
    used_labels,
)
from mathir.report.mathml import MathRenderer
from mathir.report.report import name_html

# --- WorldTree ----------------------------------------------------------------------------

_ROLES = {"CENTRAL": ("C", "g3"), "GROUNDING": ("G", "g2"), "LEXGLUE": ("L", "g1")}
WORLDTREE_LEGEND = ("Badges: the gold role of a fact in the question's explanation (C "
                    "CENTRAL, G GROUNDING, L LEXGLUE, others by name); – = not in the gold "
                    "explanation (every such fact counts as irrelevant for MAP).")


def _role_badge(role: str | None) -> Badge:
    if role is None:
        return Badge("–", "gu", "not in the gold explanation")
    text, css = _ROLES.get(role, (role[:4], "g1"))
    return Badge(text, css, role)


def worldtree(ev: EvaluatedRuns, topics: pd.DataFrame, data: TaskData | None,
              renderer: MathRenderer, depth: int = 20, lookups: Lookups | None = None
              ) -> tuple[list[TopicView], str]:
    """Topic views of WorldTree runs: question and answer, facts with their gold role, in
    the order the evaluation ranks them; the facts' texts from ``lookups.facts``."""
    texts: Mapping[str, str] = {}
    tablestore = (data.extras.get("tablestore") or data.collection) if data is not None else None
    if tablestore is not None and lookups is not None and lookups.facts is not None:
        texts = lookups.facts(tablestore)
    qrels = ev.qrels
    roles: dict[tuple[str, str], str] = {}
    if qrels is not None and "role" in qrels.columns:
        roles = {(str(q), str(d)): str(r) for q, d, r in
                 zip(qrels["qid"], qrels["docno"], qrels["role"], strict=True)}
    order = list(_ROLES)
    views = []
    for t in topics.to_dict("records"):
        qid = str(t["qid"])
        question, answer = str(t.get("question") or t["query"]), str(t.get("answer") or "")
        query_html = f'<div class="title">{escape(question)}</div>'
        if answer:
            query_html += f'<div class="body">answer: <b>{escape(answer)}</b></div>'
        view = TopicView(qid, escape(question[:120]), query_html)
        shown: set[str] = set()
        for name in ev.runs:
            hits, listed = listed_hits(ev, name, qid, depth, ARQMATH_BADGE)
            for h in hits:
                h.badge = _role_badge(roles.get((qid, h.docno)))
            view.hits[name] = hits
            shown |= listed
        gold = sorted(((d, r) for (q, d), r in roles.items() if q == qid),
                      key=lambda x: (order.index(x[1]) if x[1] in order else len(order), x[0]))
        labels = used_labels(ev).get(qid, {})
        view.judged = [Judged(d, labels.get(d, "1"), _role_badge(r)) for d, r in gold[:MAX_JUDGED]]
        shown.update(j.docno for j in view.judged)
        set_ranks(view, ev, qid, shown)
        view.snippets = {d: escape(texts.get(d, "(not in the tablestore)"))
                         for d in sorted(shown)}
        views.append(view)
    return views, WORLDTREE_LEGEND


# --- word problems ------------------------------------------------------------------------

WORD_PROBLEMS_LEGEND = ("Badges: ✓ the run's solution is correct, ✗ wrong, – unanswered "
                        "(solution accuracy; equation and derivation accuracy beside it).")


def _equation_latex(equation: str) -> str:
    return str(equation).replace("*", r" \cdot ")


def word_problems(ev: EvaluatedRuns, topics: pd.DataFrame, data: TaskData | None,
                  renderer: MathRenderer, depth: int = 20) -> tuple[list[TopicView], str]:
    """Topic views of word-problem runs, judged by the evaluation (its per-problem scores)."""
    gold = ev.qrels
    problems = dict(zip(gold["qid"].astype(str), gold["problem"], strict=True))
    by_run = {name: {str(r["qid"]): r for r in run.to_dict("records")}
              for name, run in ev.runs.items()}
    scores = {name: {str(r["qid"]): r for r in df.to_dict("records")}
              for name, df in (ev.per_topic or {}).items()}
    views = []
    for t in topics.to_dict("records"):
        qid = str(t["qid"])
        p = problems.get(qid)
        query_html = f'<div class="body">{escape(t["query"])}</div>'
        if p is not None and getattr(p, "equations", None):
            eqs = ", ".join(renderer.formula(_equation_latex(e), kind="topic") for e in p.equations)
            sol = ", ".join(f"{v:g}" for v in p.solutions)
            query_html += f'<div class="meta">gold equations: {eqs} · solution: {escape(sol)}</div>'
        view = TopicView(qid, escape(str(t["query"])[:120]), query_html)
        for name, rows in by_run.items():
            r = rows.get(qid)
            s = scores.get(name, {}).get(qid, {})
            answered = r is not None and bool(r.get("solution"))
            label = ("correct" if s.get("solution_acc") else "wrong") if answered else "unanswered"
            badge = {"correct": Badge("✓", "g3", "correct solution"),
                     "wrong": Badge("✗", "g0", "wrong solution"),
                     "unanswered": Badge("–", "gu", "no solution")}[label]
            if r is None:
                view.hits[name] = []
                continue
            docno = str(r.get("docno") or "none")
            eqs = ", ".join(renderer.formula(_equation_latex(e)) for e in (r.get("equations") or []))
            sol = ", ".join(f"{v:g}" for v in (r.get("solution") or []))
            extra = " · ".join(f"{m} {int(s.get(m, 0))}" for m in ("equation_acc", "derivation_acc"))
            about = (f"template of training problem {name_html(docno)} · {escape(extra)}"
                     f'<div class="snip">equations: {eqs or "–"}<br>solution: {escape(sol or "–")}'
                     "</div>")
            view.hits[name] = [Hit(docno, 1, float(r.get("score") or 0.0), label, badge, about)]
            view.ranks[name] = {docno: 1}
        views.append(view)
    return views, WORD_PROBLEMS_LEGEND
