"""What the run explorer shows for each task (:mod:`mathir.evaluation.explorer`).

:func:`build_explorer` turns a task's topics, judgments and runs (frames, as the task's
readers return them) into an :class:`~mathir.evaluation.explorer.Explorer`:

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
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from mathir.evaluation.evaluated import EvaluatedRuns
from mathir.evaluation.explorer import (
    Badge,
    Explorer,
    Hit,
    Judged,
    TopicView,
    label_badges,
)
from mathir.evaluation.mathml import MATH, MAX_FORMULA_CHARS, MathRenderer
from mathir.evaluation.report import name_html

#: a task's files (:class:`mathir.tasks.TaskData`; not imported: the tasks import this layer)
TaskData = Any

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


def _esc(value: object) -> str:
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


def _relevant(ev: EvaluatedRuns, qid: str, available: Callable[[str], bool] = lambda d: True
              ) -> list[tuple[str, str]]:
    """(docno, label) of the topic's documents judged above 0 in the judgments the score
    used, most relevant first."""
    found = [(d, lab) for d, lab in _topic_labels(ev).get(qid, {}).items()
             if _grade(lab) > 0 and available(d)]
    found.sort(key=lambda x: (-_grade(x[1]), x[0]))
    return found[:MAX_JUDGED]


def _topic_labels(ev: EvaluatedRuns) -> dict[str, dict[str, str]]:
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


def _ranks(view: TopicView, ev: EvaluatedRuns, qid: str, shown: set[str]) -> None:
    """Each run's rank (position in its scored order) of the documents shown."""
    for name in ev.runs:
        g = _by_topic_cached(ev, name).get(qid)
        if g is not None:
            sub = g[g["docno"].astype(str).isin(shown)]
            view.ranks[name] = dict(zip(sub["docno"].astype(str), sub["rank"].astype(int),
                                        strict=True))


def _by_topic_cached(ev: EvaluatedRuns, name: str) -> dict[str, pd.DataFrame]:
    key = ("topics", name)
    if key not in ev.cache:
        ev.cache[key] = _by_topic(ev.runs[name])
    return ev.cache[key]


def _hits(ev: EvaluatedRuns, name: str, qid: str, depth: int, badge: Callable[[str], Badge]
          ) -> tuple[list[Hit], set[str]]:
    g = _by_topic_cached(ev, name).get(qid)
    if g is None:
        return [], set()
    top = g[g["rank"] <= depth]
    scores = top["score"] if "score" in top.columns else top["rank"] * 0.0
    hits = []
    for d, r, s in zip(top["docno"].astype(str), top["rank"], scores, strict=True):
        label, b = judged_badge(ev, qid, d, badge)
        hits.append(Hit(d, int(r), float(s), label, b))
    return hits, set(top["docno"].astype(str))


def _grade(label: str) -> float:
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


# --- ARQMath Task 1 -------------------------------------------------------------------------


def _answer_texts(collection: Path | None, docnos: set[str]) -> dict[str, str]:
    if collection is None or not docnos:
        return {}
    from mathir.indexing.answer_index import answer_texts

    return answer_texts(collection, docnos)


def _collection(data: TaskData | None) -> Path | None:
    return data.collection if data is not None else None


def arqmath_answers(ev: EvaluatedRuns, topics: pd.DataFrame, data: TaskData | None,
                    renderer: MathRenderer, depth: int = 20) -> tuple[list[TopicView], str]:
    """Topic views of ARQMath answer runs (Task 1): question, answers in the order they
    were scored, H/M/L/N badges of the judgments the score used."""
    wanted: set[str] = set()
    qids = topics["qid"].astype(str).tolist()
    for qid in qids:
        for name in ev.runs:
            g = _by_topic_cached(ev, name).get(qid)
            if g is not None:
                wanted.update(g.loc[g["rank"] <= depth, "docno"].astype(str))
        wanted.update(d for d, _ in _relevant(ev, qid))
    texts = _answer_texts(_collection(data), wanted)
    views = []
    for t in topics.to_dict("records"):
        qid = str(t["qid"])
        title, question = str(t.get("title") or ""), str(t.get("question") or t["query"])
        query_html = (f'<div class="title">{renderer.text(title, kind="topic")}</div>'
                      f'<div class="body">{renderer.text(question, kind="topic")}</div>')
        if t.get("tags"):
            query_html += f'<div class="meta">tags: {_esc(t["tags"])}</div>'
        mark = formula_matcher([(m.group(1) or m.group(2)) for m in
                                MATH.finditer(f"{title} {question}")])
        view = TopicView(qid, renderer.text(title or question, 120, kind="list"), query_html)
        shown: set[str] = set()
        for name in ev.runs:
            view.hits[name], listed = _hits(ev, name, qid, depth, ARQMATH_BADGE)
            shown |= listed
        relevant = _relevant(ev, qid, lambda d: d in texts or not texts)
        view.judged = [Judged(d, lab, ARQMATH_BADGE(lab)) for d, lab in relevant]
        shown.update(d for d, _ in relevant)
        _ranks(view, ev, qid, shown)
        for d in shown:
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


def _formula_records(formula_index: Path | None, formula_ids: set[str], visual_ids: set[str]
                     ) -> tuple[dict[str, tuple[str, str, str]], dict[str, str]]:
    """One pass: formula id -> (visual id, LaTeX, post id) for ``formula_ids``; visual id
    -> LaTeX of its first instance for ``visual_ids``."""
    by_formula: dict[str, tuple[str, str, str]] = {}
    by_visual: dict[str, str] = {}
    if formula_index is None:
        return by_formula, by_visual
    from mathir.indexing.formula_tsv import iter_formula_index

    for rec in iter_formula_index(formula_index):
        if rec.formula_id in formula_ids:
            by_formula[rec.formula_id] = (rec.visual_id, rec.formula, rec.post_id)
        if rec.visual_id in visual_ids and rec.visual_id not in by_visual:
            by_visual[rec.visual_id] = rec.formula
    return by_formula, by_visual


def arqmath_formulas(ev: EvaluatedRuns, topics: pd.DataFrame, data: TaskData | None,
                     renderer: MathRenderer, depth: int = 20) -> tuple[list[TopicView], str]:
    """Topic views of Task 2 formula runs: visual ids as the evaluation scored them (the
    counted instance of each, in trec_eval's order), the other instances listed with it."""
    formula_index = (data.extras.get("formula_index") if data is not None else None) \
        or ev.options.get("formula_index")
    fids: set[str] = set()
    for run in ev.read.values():
        fids.update(run["docno"].astype(str))
    judged_vids = {d for labels in _topic_labels(ev).values() for d, lab in labels.items()
                   if _grade(lab) > 0}
    records, first_latex = _formula_records(Path(formula_index) if formula_index else None,
                                            fids, judged_vids)
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
            hits, listed = _hits(ev, name, qid, depth, ARQMATH_BADGE)
            for hit in hits:
                row = _by_topic_cached(ev, name)[qid]
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
        relevant = _relevant(ev, qid)
        view.judged = [Judged(v, lab, ARQMATH_BADGE(lab)) for v, lab in relevant]
        for v, _ in relevant:
            if v not in view.snippets:
                view.snippets[v] = _formula_snippet(renderer, first_latex.get(v, ""), mark)
        _ranks(view, ev, qid, shown | {v for v, _ in relevant})
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
        title, question = str(t.get("title") or ""), str(t.get("question") or t["query"])
        query_html = (f'<div class="title">{renderer.text(title, kind="topic")}</div>'
                      f'<div class="body">{renderer.text(question, kind="topic")}</div>')
        view = TopicView(qid, renderer.text(title or question, 120, kind="list"), query_html)
        for name in ev.runs:
            g = _by_topic_cached(ev, name).get(qid)
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
              renderer: MathRenderer, depth: int = 20) -> tuple[list[TopicView], str]:
    """Topic views of WorldTree runs: question and answer, facts with their gold role, in
    the order the evaluation ranks them."""
    texts: dict[str, str] = {}
    tablestore = (data.extras.get("tablestore") or data.collection) if data is not None else None
    if tablestore is not None:
        from mathir.indexing.worldtree import read_tablestore, tables_dir

        texts = read_tablestore(tables_dir(tablestore), warn=False).texts()
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
        query_html = f'<div class="title">{_esc(question)}</div>'
        if answer:
            query_html += f'<div class="body">answer: <b>{_esc(answer)}</b></div>'
        view = TopicView(qid, _esc(question[:120]), query_html)
        shown: set[str] = set()
        for name in ev.runs:
            hits, listed = _hits(ev, name, qid, depth, ARQMATH_BADGE)
            for h in hits:
                h.badge = _role_badge(roles.get((qid, h.docno)))
            view.hits[name] = hits
            shown |= listed
        gold = sorted(((d, r) for (q, d), r in roles.items() if q == qid),
                      key=lambda x: (order.index(x[1]) if x[1] in order else len(order), x[0]))
        labels = _topic_labels(ev).get(qid, {})
        view.judged = [Judged(d, labels.get(d, "1"), _role_badge(r)) for d, r in gold[:MAX_JUDGED]]
        shown.update(j.docno for j in view.judged)
        _ranks(view, ev, qid, shown)
        view.snippets = {d: _esc(texts.get(d, "(not in the tablestore)")) for d in shown}
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
        query_html = f'<div class="body">{_esc(t["query"])}</div>'
        if p is not None and getattr(p, "equations", None):
            eqs = ", ".join(renderer.formula(_equation_latex(e), kind="topic") for e in p.equations)
            sol = ", ".join(f"{v:g}" for v in p.solutions)
            query_html += f'<div class="meta">gold equations: {eqs} · solution: {_esc(sol)}</div>'
        view = TopicView(qid, _esc(str(t["query"])[:120]), query_html)
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
            about = (f"template of training problem {name_html(docno)} · {_esc(extra)}"
                     f'<div class="snip">equations: {eqs or "–"}<br>solution: {_esc(sol or "–")}'
                     "</div>")
            view.hits[name] = [Hit(docno, 1, float(r.get("score") or 0.0), label, badge, about)]
            view.ranks[name] = {docno: 1}
        views.append(view)
    return views, WORD_PROBLEMS_LEGEND


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
            view.hits[name], listed = _hits(ev, name, qid, depth, ARQMATH_BADGE)
            shown |= listed
        relevant = _relevant(ev, qid)
        view.judged = [Judged(d, lab, ARQMATH_BADGE(lab)) for d, lab in relevant]
        shown.update(d for d, _ in relevant)
        _ranks(view, ev, qid, shown)
        views.append(view)
    return views, ""


# --- one entry point --------------------------------------------------------------------------


def build_explorer(ev: EvaluatedRuns, topics: pd.DataFrame, data: TaskData | None = None, *,
                   baseline: str | None = None, primary: str | None = None,
                   depth: int = 20, all_topics: bool = False) -> tuple[Explorer, MathRenderer]:
    """The explorer of an evaluation (:func:`mathir.evaluation.evaluated.evaluate`) on the
    task's topics: each run listed in the order it was scored, with the judgments the
    score used, through the page the task declares (``Task.explorer``).

    Only topics with scores are shown when there are scores, unless ``all_topics``.
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
    views, legend = page(ev, topics, data, renderer, depth)
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


__all__ = ["ARQMATH_BADGE", "MAX_JUDGED", "SNIPPET_CHARS", "arqmath_answers", "arqmath_formulas",
           "build_explorer", "formula_matcher", "generic", "judged_badge", "open_answers",
           "word_problems", "worldtree"]
