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

import pandas as pd

from mathir.evaluation.explorer import (
    MATH,
    Badge,
    Explorer,
    Hit,
    Judged,
    MathRenderer,
    TopicView,
    label_badges,
)

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


def _ranked(run: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """qid -> the run's rows for that topic, best first, with a 1-based ``_rank``."""
    df = run.copy()
    df["qid"] = df["qid"].astype(str)
    df["docno"] = df["docno"].astype(str)
    order = ["qid", "rank"] if "rank" in df.columns else ["qid"]
    asc = [True, True] if "rank" in df.columns else [True]
    if "rank" not in df.columns and "score" in df.columns:
        order, asc = ["qid", "score"], [True, False]
    df = df.sort_values(order, ascending=asc, kind="stable")
    df["_rank"] = df.groupby("qid").cumcount() + 1
    return {q: g for q, g in df.groupby("qid", sort=False)}


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


def _labels(qrels: pd.DataFrame | None) -> dict[tuple[str, str], str]:
    if qrels is None or not {"qid", "docno", "label"} <= set(qrels.columns):
        return {}
    return {(str(q), str(d)): str(int(v)) if float(v).is_integer() else str(v)
            for q, d, v in zip(qrels["qid"], qrels["docno"], qrels["label"], strict=True)}


def _relevant(labels: Mapping[tuple[str, str], str], qid: str,
              available: Callable[[str], bool] = lambda d: True) -> list[tuple[str, str]]:
    """(docno, label) of the topic's documents judged above 0, most relevant first."""
    found = [(d, lab) for (q, d), lab in labels.items()
             if q == qid and _grade(lab) > 0 and available(d)]
    found.sort(key=lambda x: (-_grade(x[1]), x[0]))
    return found[:MAX_JUDGED]


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
        if not queries:
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


def arqmath_answers(topics: pd.DataFrame, qrels: pd.DataFrame | None,
                    runs: Mapping[str, pd.DataFrame], collection: Path | None,
                    renderer: MathRenderer, depth: int = 20) -> list[TopicView]:
    """Topic views of ARQMath answer runs (Task 1): question, answers, H/M/L/N badges."""
    from mathir.qrels.arqmath import judged_only

    labels = _labels(judged_only(qrels) if qrels is not None else None)
    ranked = {name: _ranked(run) for name, run in runs.items()}
    wanted: set[str] = set()
    for qid in topics["qid"].astype(str):
        for by_topic in ranked.values():
            g = by_topic.get(qid)
            if g is not None:
                wanted.update(g.loc[g["_rank"] <= depth, "docno"])
        wanted.update(d for d, _ in _relevant(labels, qid))
    texts = _answer_texts(collection, wanted)
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
        for name, by_topic in ranked.items():
            g = by_topic.get(qid)
            if g is None:
                view.hits[name] = []
                continue
            top = g[g["_rank"] <= depth]
            view.hits[name] = [
                Hit(d, int(r), float(s), labels.get((qid, d), "unjudged"),
                    ARQMATH_BADGE(labels.get((qid, d), "unjudged")))
                for d, r, s in zip(top["docno"], top["_rank"], top["score"], strict=True)]
            shown.update(top["docno"])
        relevant = _relevant(labels, qid, lambda d: d in texts or not texts)
        view.judged = [Judged(d, lab, ARQMATH_BADGE(lab)) for d, lab in relevant]
        shown.update(d for d, _ in relevant)
        for name, by_topic in ranked.items():
            g = by_topic.get(qid)
            if g is not None:
                sub = g[g["docno"].isin(shown)]
                view.ranks[name] = dict(zip(sub["docno"], sub["_rank"].astype(int), strict=True))
        for d in shown:
            text = texts.get(d)
            view.snippets[d] = (renderer.text(text, SNIPPET_CHARS, mark=mark) if text is not None
                                else '<span class="meta">(not in the collection)</span>')
        views.append(view)
    return views


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


def arqmath_formulas(topics: pd.DataFrame, qrels: pd.DataFrame | None,
                     runs: Mapping[str, pd.DataFrame], formula_index: Path | None,
                     renderer: MathRenderer, depth: int = 20) -> list[TopicView]:
    """Topic views of Task 2 formula runs, grouped by visual id as the evaluation groups them."""
    labels = _labels(qrels)
    ranked = {name: _ranked(run) for name, run in runs.items()}
    fids: set[str] = set()
    for by_topic in ranked.values():
        for g in by_topic.values():
            fids.update(g["docno"])
    judged_vids = {d for (q, d), lab in labels.items() if _grade(lab) > 0}
    records, first_latex = _formula_records(formula_index, fids, judged_vids)
    views = []
    for t in topics.to_dict("records"):
        qid = str(t["qid"])
        latex = str(t.get("latex") or t["query"])
        mark = formula_matcher([latex])
        query_html = (f'<div class="title">query formula {_esc(t.get("formula_id", ""))}:</div>'
                      f'<div class="qformula">{renderer.formula(latex, True, kind="topic")}</div>')
        if t.get("title") or t.get("question"):
            query_html += (f'<details><summary>from the question: '
                           f'{renderer.text(str(t.get("title", "")), kind="topic")}</summary>'
                           f'<div class="body">'
                           f'{renderer.text(str(t.get("question", "")), kind="topic", mark=mark)}'
                           "</div></details>")
        view = TopicView(qid, renderer.formula(latex, kind="list"), query_html)
        shown: set[str] = set()
        for name, by_topic in ranked.items():
            g = by_topic.get(qid)
            view.hits[name] = []
            if g is None:
                continue
            groups: dict[str, list[tuple[str, int, float]]] = {}
            order: list[str] = []
            ranks: dict[str, int] = {}
            for fid, r, s in zip(g["docno"], g["_rank"], g["score"], strict=True):
                vid = records.get(fid, ("", "", ""))[0] or f"formula {fid}"
                ranks.setdefault(vid, int(r))
                if r <= depth:
                    if vid not in groups:
                        order.append(vid)
                    groups.setdefault(vid, []).append((fid, int(r), float(s)))
            for vid in order:
                (fid, r, s), *more = groups[vid]
                no_vid = vid.startswith("formula ")
                label = "unjudged" if no_vid else labels.get((qid, vid), "unjudged")
                post = records.get(fid, ("", "", ""))[2]
                about = (f"formula {_esc(fid)}" + (f" in post {_esc(post)}" if post else "")
                         + ("" if not no_vid else " · no visual id in the formula index: "
                            "dropped by the evaluation"))
                if more:
                    about += (" · same visual id, not counted again: "
                              + ", ".join(f"{_esc(f)} (rank {rr})" for f, rr, _ in more))
                view.hits[name].append(Hit(vid, r, s, label, ARQMATH_BADGE(label), about))
                if vid not in view.snippets:
                    flatex = records.get(fid, ("", "", ""))[1]
                    view.snippets[vid] = _formula_snippet(renderer, flatex, mark)
            view.ranks[name] = ranks
            shown.update(order)
        relevant = _relevant(labels, qid)
        view.judged = [Judged(v, lab, ARQMATH_BADGE(lab)) for v, lab in relevant]
        for v, _ in relevant:
            if v not in view.snippets:
                view.snippets[v] = _formula_snippet(renderer, first_latex.get(v, ""), mark)
        keep = shown | {v for v, _ in relevant}
        view.ranks = {n: {v: r for v, r in rk.items() if v in keep} for n, rk in view.ranks.items()}
        views.append(view)
    return views


def _formula_snippet(renderer: MathRenderer, latex: str, mark) -> str:
    if not latex:
        return '<span class="meta">(formula not in the formula index)</span>'
    css, title = mark(latex) or ("", "")
    return f'<span class="fbig">{renderer.formula(latex, css=css, title=title)}</span>'


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


def worldtree(topics: pd.DataFrame, qrels: pd.DataFrame | None,
              runs: Mapping[str, pd.DataFrame], tablestore: Path | None,
              depth: int = 20) -> list[TopicView]:
    """Topic views of WorldTree runs: question and answer, facts with their gold role."""
    texts: dict[str, str] = {}
    if tablestore is not None:
        from mathir.indexing.worldtree import read_tablestore, tables_dir

        texts = read_tablestore(tables_dir(tablestore), warn=False).texts()
    labels = _labels(qrels)
    roles: dict[tuple[str, str], str] = {}
    if qrels is not None and "role" in qrels.columns:
        roles = {(str(q), str(d)): str(r) for q, d, r in
                 zip(qrels["qid"], qrels["docno"], qrels["role"], strict=True)}
    ranked = {name: _ranked(run) for name, run in runs.items()}
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
        for name, by_topic in ranked.items():
            g = by_topic.get(qid)
            top = g[g["_rank"] <= depth] if g is not None else None
            view.hits[name] = [] if top is None else [
                Hit(d, int(r), float(s), labels.get((qid, d), "unjudged"),
                    _role_badge(roles.get((qid, d))))
                for d, r, s in zip(top["docno"], top["_rank"], top["score"], strict=True)]
            if top is not None:
                shown.update(top["docno"])
        gold = sorted(((d, r) for (q, d), r in roles.items() if q == qid),
                      key=lambda x: (order.index(x[1]) if x[1] in order else len(order), x[0]))
        view.judged = [Judged(d, labels.get((qid, d), "1"), _role_badge(r))
                       for d, r in gold[:MAX_JUDGED]]
        shown.update(j.docno for j in view.judged)
        for name, by_topic in ranked.items():
            g = by_topic.get(qid)
            if g is not None:
                sub = g[g["docno"].isin(shown)]
                view.ranks[name] = dict(zip(sub["docno"], sub["_rank"].astype(int), strict=True))
        view.snippets = {d: _esc(texts.get(d, "(not in the tablestore)")) for d in shown}
        views.append(view)
    return views


# --- word problems ------------------------------------------------------------------------

WORD_PROBLEMS_LEGEND = ("Badges: ✓ the run's solution is correct, ✗ wrong, – unanswered "
                        "(solution accuracy; equation and derivation accuracy beside it).")


def _equation_latex(equation: str) -> str:
    return str(equation).replace("*", r" \cdot ")


def word_problems(topics: pd.DataFrame, gold: pd.DataFrame,
                  runs: Mapping[str, pd.DataFrame], renderer: MathRenderer
                  ) -> tuple[list[TopicView], dict[str, pd.DataFrame]]:
    """Topic views of word-problem runs, and the per-problem scores of each run."""
    from mathir.evaluation.word_problems import judge

    judged = {name: judge(run, gold, name) for name, run in runs.items()}
    problems = dict(zip(gold["qid"].astype(str), gold["problem"], strict=True))
    by_run = {name: {str(r["qid"]): r for r in run.to_dict("records")}
              for name, run in runs.items()}
    scores = {name: {str(r["qid"]): r for r in df.to_dict("records")}
              for name, df in judged.items()}
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
            s = scores[name].get(qid, {})
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
            about = (f"template of training problem {_esc(docno)} · {_esc(extra)}"
                     f'<div class="snip">equations: {eqs or "–"}<br>solution: {_esc(sol or "–")}'
                     "</div>")
            view.hits[name] = [Hit(docno, 1, float(r.get("score") or 0.0), label, badge, about)]
            view.ranks[name] = {docno: 1}
        views.append(view)
    return views, judged


# --- generic --------------------------------------------------------------------------------


def generic(topics: pd.DataFrame, qrels: pd.DataFrame | None, runs: Mapping[str, pd.DataFrame],
            renderer: MathRenderer, depth: int = 20) -> list[TopicView]:
    """Topic views of any ranking task: query text, document ids, qrels labels."""
    labels = _labels(qrels)
    ranked = {name: _ranked(run) for name, run in runs.items()}
    views = []
    for t in topics.to_dict("records"):
        qid = str(t["qid"])
        query = str(t.get("query", ""))
        view = TopicView(qid, renderer.text(query, 120, kind="list"),
                         f'<div class="body">{renderer.text(query, kind="topic")}</div>')
        shown: set[str] = set()
        for name, by_topic in ranked.items():
            g = by_topic.get(qid)
            top = g[g["_rank"] <= depth] if g is not None else g
            view.hits[name] = [] if top is None else [
                Hit(d, int(r), float(s) if "score" in top else 0.0,
                    labels.get((qid, d), "unjudged"), ARQMATH_BADGE(labels.get((qid, d), "unjudged")))
                for d, r, s in zip(top["docno"], top["_rank"],
                                   top["score"] if "score" in top else top["_rank"], strict=True)]
            if top is not None:
                shown.update(top["docno"])
        relevant = _relevant(labels, qid)
        view.judged = [Judged(d, lab, ARQMATH_BADGE(lab)) for d, lab in relevant]
        shown.update(d for d, _ in relevant)
        for name, by_topic in ranked.items():
            g = by_topic.get(qid)
            if g is not None:
                sub = g[g["docno"].isin(shown)]
                view.ranks[name] = dict(zip(sub["docno"], sub["_rank"].astype(int), strict=True))
        views.append(view)
    return views


# --- one entry point --------------------------------------------------------------------------


def build_explorer(task: str, topics: pd.DataFrame, qrels: pd.DataFrame | None,
                   runs: Mapping[str, pd.DataFrame],
                   per_topic: Mapping[str, pd.DataFrame] | None = None, *,
                   baseline: str | None = None, primary: str | None = None,
                   collection: Path | None = None, extras: Mapping[str, Path] | None = None,
                   depth: int = 20, all_topics: bool = False) -> tuple[Explorer, MathRenderer]:
    """The explorer of ``runs`` (name -> run frame) on a task's topics.

    ``per_topic``: run -> frame of ``qid`` and one column per measure (the task's
    per-topic scores; word problems are judged here). Only topics with scores are shown
    when there are scores, unless ``all_topics``. Returns the explorer and the renderer, whose ``stats`` say
    how many formulas latex2mathml could not convert.

    >>> from mathir.samples import word_problems_sample
    >>> from mathir.topics.word_problems import read_problem_topics
    >>> from mathir.qrels.word_problems import read_gold
    >>> s = word_problems_sample().split("test")
    >>> run = pd.DataFrame({"qid": ["9101"], "docno": ["9001"], "score": [1.0],
    ...     "solution": [[20.0, 20.0]], "template": [[]], "alignment": [{}], "equations": [[]]})
    >>> ex, _ = build_explorer("word-problems", read_problem_topics(s), read_gold(s), {"r": run})
    >>> [h.label for h in ex.topics[0].hits["r"]], len(ex.topics)
    (['correct'], 5)
    """
    extras = dict(extras or {})
    renderer = MathRenderer()
    names = list(runs)
    if not names:
        from mathir.errors import InputError

        raise InputError("no runs to explore")
    baseline = baseline or names[0]
    scores, measures = _scores(per_topic)
    notes = []
    if scores and not all_topics:
        shown = topics["qid"].astype(str).isin(scores.keys())
        if not shown.all():
            notes.append(f"{int((~shown).sum())} topic(s) without judgments are not shown.")
        topics = topics[shown.to_numpy()].reset_index(drop=True)
    legend = ""
    if task == "word-problems":
        views, per_topic = word_problems(topics, qrels, runs, renderer)
        legend = WORD_PROBLEMS_LEGEND
    elif task == "arqmath-task2":
        views = arqmath_formulas(topics, qrels, runs, extras.get("formula_index"), renderer, depth)
        legend = ARQMATH_LEGEND.replace("Highlighted formulas", "Highlighted results") + \
            " A result is a visual id: its first instance in the run, as the evaluation counts it."
    elif task in ("arqmath-task1",) or (task.startswith("arqmath") and "title" in topics):
        views = arqmath_answers(topics, qrels, runs, collection, renderer, depth)
        legend = ARQMATH_LEGEND
    elif task == "worldtree":
        views = worldtree(topics, qrels, runs, extras.get("tablestore") or collection, depth)
        legend = WORLDTREE_LEGEND
    else:
        views = generic(topics, qrels, runs, renderer, depth)
    if task == "word-problems":
        scores, measures = _scores(per_topic)
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
    ex = Explorer(names, baseline, primary, measures, views, depth, legend, notes)
    return ex, renderer


__all__ = ["ARQMATH_BADGE", "MAX_JUDGED", "SNIPPET_CHARS", "arqmath_answers", "arqmath_formulas",
           "build_explorer", "formula_matcher", "generic", "word_problems", "worldtree"]
