"""The run explorer's pages of ARQMath Tasks 1, 2 and 3: answers, formulas by visual id,
open answers (see :mod:`mathir.report.explorer_views`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mathir.evaluation.evaluated import EvaluatedRuns
from mathir.report.explorer import Hit, Judged, TopicView
from mathir.report.explorer_views import (
    ARQMATH_BADGE,
    ARQMATH_LEGEND,
    SNIPPET_CHARS,
    Lookups,
    TaskData,
    escape,
    formula_matcher,
    grade,
    judged_badge,
    listed_hits,
    relevant_judged,
    run_by_topic,
    set_ranks,
    used_labels,
)
from mathir.report.mathml import MATH, MathRenderer
from mathir.report.report import name_html

# --- ARQMath Task 1 -------------------------------------------------------------------------


def _question(topic: dict, renderer: MathRenderer) -> tuple[str, str, str]:
    """(title, question, HTML of both with formulas rendered) of an ARQMath topic."""
    title = str(topic.get("title") or "")
    question = str(topic.get("question") or topic["query"])
    return title, question, (f'<div class="title">{renderer.text(title, kind="topic")}</div>'
                             f'<div class="body">{renderer.text(question, kind="topic")}</div>')


def arqmath_answers(ev: EvaluatedRuns, topics: pd.DataFrame, data: TaskData | None,
                    renderer: MathRenderer, depth: int = 20, lookups: Lookups | None = None
                    ) -> tuple[list[TopicView], str]:
    """Topic views of ARQMath answer runs (Task 1): question, answers in the order they
    were scored, H/M/L/N badges of the judgments the score used; the answers' texts from
    ``lookups.texts`` (the answer index's text store)."""
    wanted: set[str] = set()
    qids = topics["qid"].astype(str).tolist()
    for qid in qids:
        for name in ev.runs:
            g = run_by_topic(ev, name).get(qid)
            if g is not None:
                wanted.update(g.loc[g["rank"] <= depth, "docno"].astype(str))
        wanted.update(d for d, _ in relevant_judged(ev, qid))
    find = lookups.texts if lookups is not None else None
    texts = dict(find(wanted)) if find is not None and wanted else {}
    views = []
    for t in topics.to_dict("records"):
        qid = str(t["qid"])
        title, question, query_html = _question(t, renderer)
        if t.get("tags"):
            query_html += f'<div class="meta">tags: {escape(t["tags"])}</div>'
        mark = formula_matcher([(m.group(1) or m.group(2)) for m in
                                MATH.finditer(f"{title} {question}")])
        view = TopicView(qid, renderer.text(title or question, 120, kind="list"), query_html)
        shown: set[str] = set()
        for name in ev.runs:
            view.hits[name], listed = listed_hits(ev, name, qid, depth, ARQMATH_BADGE)
            shown |= listed
        relevant = relevant_judged(ev, qid, lambda d: d in texts or not texts)
        view.judged = [Judged(d, lab, ARQMATH_BADGE(lab)) for d, lab in relevant]
        shown.update(d for d, _ in relevant)
        set_ranks(view, ev, qid, shown)
        for d in sorted(shown):  # the page's bytes the same in every process
            text = texts.get(d)
            view.snippets[d] = (renderer.text(text, SNIPPET_CHARS, mark=mark) if text is not None
                                else '<span class="meta">(not in the collection)</span>')
        views.append(view)
    legend = ARQMATH_LEGEND
    if ev.judged_note:
        legend += (f" Judged set: {ev.judged_note}; a judgment in parentheses, e.g. (H), "
                   "is of an answer the collection does not hold: the score did not use it.")
    return views, legend


# --- ARQMath Task 2 -------------------------------------------------------------------------


def arqmath_formulas(ev: EvaluatedRuns, topics: pd.DataFrame, data: TaskData | None,
                     renderer: MathRenderer, depth: int = 20, lookups: Lookups | None = None
                     ) -> tuple[list[TopicView], str]:
    """Topic views of Task 2 formula runs: visual ids as the evaluation scored them (the
    counted instance of each, in trec_eval's order), the other instances listed with it;
    the formulas from ``lookups.formulas`` (the formula index TSV)."""
    formula_index = (data.extras.get("formula_index") if data is not None else None) \
        or ev.options.get("formula_index")
    fids: set[str] = set()
    for run in ev.read.values():
        fids.update(run["docno"].astype(str))
    judged_vids = {d for labels in used_labels(ev).values() for d, lab in labels.items()
                   if grade(lab) > 0}
    find = lookups.formulas if lookups is not None else None
    records, first_latex = find(Path(formula_index), fids, judged_vids) \
        if find is not None and formula_index else ({}, {})
    # the instances of each visual id that a run retrieved, in the order it was read
    # (the order the evaluation keeps the first of)
    others: dict[str, dict[tuple[str, str], list[tuple[str, float]]]] = {}
    dropped: dict[str, dict[str, int]] = {}
    for name, run in ev.read.items():
        inst: dict[tuple[str, str], list[tuple[str, float]]] = {}
        lost: dict[str, int] = {}
        for q, f, sc in zip(run["qid"].astype(str), run["docno"].astype(str), run["score"],
                            strict=True):
            vid = records.get(f, ("", "", ""))[0]
            if vid:
                inst.setdefault((q, vid), []).append((f, float(sc)))
            else:
                lost[q] = lost.get(q, 0) + 1
        others[name], dropped[name] = inst, lost
    views = []
    for t in topics.to_dict("records"):
        qid = str(t["qid"])
        latex = str(t.get("latex") or t["query"])
        mark = formula_matcher([latex])
        query_html = (f'<div class="title">query formula {name_html(t.get("formula_id", ""))}:</div>'
                      f'<div class="qformula">{renderer.formula(latex, True, kind="topic")}</div>')
        if t.get("title") or t.get("question"):
            query_html += (f'<details><summary>from the question: '
                           f'{renderer.text(str(t.get("title", "")), kind="topic")}</summary>'
                           f'<div class="body">'
                           f'{renderer.text(str(t.get("question", "")), kind="topic", mark=mark)}'
                           "</div></details>")
        view = TopicView(qid, renderer.formula(latex, kind="list"), query_html)
        shown: set[str] = set()
        for name in ev.runs:
            hits, listed = listed_hits(ev, name, qid, depth, ARQMATH_BADGE)
            for hit in hits:
                row = run_by_topic(ev, name)[qid]
                fid = str(row.loc[row["docno"].astype(str) == hit.docno, "formula_id"].iloc[0]) \
                    if "formula_id" in row.columns else hit.docno
                post = records.get(fid, ("", "", ""))[2]
                about = f"formula {name_html(fid)}" + (f" in post {name_html(post)}" if post else "")
                more = [(f, s) for f, s in others[name].get((qid, hit.docno), []) if f != fid]
                if more:
                    about += (" · same visual id, not counted again: "
                              + ", ".join(f"{name_html(f)} (score {s:g})" for f, s in more))
                hit.about = about
                if hit.docno not in view.snippets:
                    flatex = records.get(fid, ("", "", ""))[1]
                    view.snippets[hit.docno] = _formula_snippet(renderer, flatex, mark)
            view.hits[name] = hits
            shown |= listed
            lost = dropped[name].get(qid)
            if lost:
                view.query_html += (f'<div class="meta">{name_html(name)}: {lost} retrieved '
                                    "formula(s) without a visual id in the formula index: "
                                    "dropped by the evaluation</div>")
        relevant = relevant_judged(ev, qid)
        view.judged = [Judged(v, lab, ARQMATH_BADGE(lab)) for v, lab in relevant]
        for v, _ in relevant:
            if v not in view.snippets:
                view.snippets[v] = _formula_snippet(renderer, first_latex.get(v, ""), mark)
        set_ranks(view, ev, qid, shown | {v for v, _ in relevant})
        views.append(view)
    legend = ARQMATH_LEGEND.replace("Highlighted formulas", "Highlighted results") + \
        (" A result is a visual id: its first instance in the run, as the evaluation counts "
         "it, ranked as trec_eval ranks the visual ids.")
    return views, legend


def _formula_snippet(renderer: MathRenderer, latex: str, mark) -> str:
    if not latex:
        return '<span class="meta">(formula not in the formula index)</span>'
    css, title = mark(latex) or ("", "")
    return f'<span class="fbig">{renderer.formula(latex, css=css, title=title)}</span>'


# --- ARQMath Task 3 -------------------------------------------------------------------------

TASK3_LEGEND = ("Each run gives one answer per topic. Badges: the answer's judgment (H / M / "
                "L / N = 3 / 2 / 1 / 0; codes 5 and 6 count 0 for AR and P@1), through the "
                "assignment file's document id of the run's answer; ? = not judged.")


def open_answers(ev: EvaluatedRuns, topics: pd.DataFrame, data: TaskData | None,
                 renderer: MathRenderer, depth: int = 20) -> tuple[list[TopicView], str]:
    """Topic views of ARQMath-3 Task 3 runs: each run's answer with its judgment (through
    the assignment file), the question beside it."""
    assigned: dict[tuple[str, str], str] = {}
    path = (data.extras.get("assignments") if data is not None else None) \
        or ev.options.get("assignments")
    if path:
        from mathir.runs.arqmath_task3 import read_assignments

        a = read_assignments(path)
        assigned = {(str(r), str(q)): str(d) for r, q, d in
                    zip(a["run"], a["qid"], a["docno"], strict=True)}
    views = []
    for t in topics.to_dict("records"):
        qid = str(t["qid"])
        title, question, query_html = _question(t, renderer)
        view = TopicView(qid, renderer.text(title or question, 120, kind="list"), query_html)
        for name in ev.runs:
            g = run_by_topic(ev, name).get(qid)
            if g is None or not len(g):
                view.hits[name] = []
                continue
            r = g.iloc[0]
            doc = assigned.get((name, qid))
            key = doc or f"{name}:{qid}"
            if doc is not None:
                label, badge = judged_badge(ev, qid, doc, ARQMATH_BADGE)
            else:
                label, badge = "unjudged", ARQMATH_BADGE("unjudged")
            about = (f"judged as {name_html(doc)}" if doc else "not among the judged answers") + \
                (f" · sources: {name_html(r['sources'])}" if str(r.get("sources", "")) else "")
            view.hits[name] = [Hit(key, 1, float(r.get("score", 0.0)), label, badge, about)]
            view.ranks[name] = {key: 1}
            view.snippets[key] = renderer.text(str(r.get("answer", "")), None)
        views.append(view)
    return views, TASK3_LEGEND
