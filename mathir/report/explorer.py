"""The run explorer: why one system beats another, topic by topic, with rendered math.

An :class:`Explorer` holds, for every topic, the query as its users see it and each
run's top results with their judgments; :func:`explorer_html` renders it as one HTML
fragment (inline CSS and JS, no network) that the experiment report appends:

* a topic list sorted by the per-topic difference to the baseline, with each run's
  scores, and one bar per topic (an inline SVG) that links to the topic;
* one topic at a time, the runs side by side: rank, score, the judgment as a badge, a
  snippet with its formulas rendered, and where the same document sits in the other
  runs (DiffIR's "moved" marks); judged relevant documents a run missed under it;
* formulas as MathML (:class:`~mathir.report.mathml.MathRenderer`, latex2mathml;
  browsers render MathML Core natively); a formula latex2mathml cannot convert is shown
  as its LaTeX source.

The page is safe with any ids and formulas: topic ids are percent-encoded in links (and
decoded once, a malformed escape left as it is); ids and run names are isolated from the
text around them, their bidi controls written out (``<U+202E>``); formulas are escaped,
their lengths and sizes bounded, and huge or deeply nested ones shown as (shortened)
source, by :mod:`mathir.report.mathml`.

The DOM contract (the tests and your scripts may rely on it): each topic is a
``<section class="topic" data-qid=...>``; each listed result an ``<li class="hit">``
with ``data-docno``, ``data-rank`` (1-based rank in its run) and ``data-label`` (the
qrels label, or ``unjudged``); each missed judged document an ``<li class="missed">``
with ``data-docno``, ``data-label`` and ``data-run-rank`` (its rank in the run, empty
when the run did not retrieve it); rendered formulas are ``<math>`` elements, formulas
left as source ``<code class="tex">``. Each document's snippet is written once per topic,
in ``<div class="docs" hidden>`` as ``<div data-doc=DOCNO>``; the page's script copies it
into the ``<div class="snip" data-doc=DOCNO>`` of each result listing it when the topic
is opened (all topics with "all topics"), so a page of 100 topics x 3 runs x top 20 stays
small and opens fast.

The task-specific part (what a query looks like, what a judgment means) is in
:mod:`mathir.report.explorer_views`.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from mathir.report.report import name_html, valid_text, visible_controls

# --- the model ------------------------------------------------------------------------------


@dataclass
class Badge:
    """How a judgment is shown: short text, CSS class (``g3``..``g0``, ``gu``), tooltip."""

    text: str
    css: str
    title: str = ""


@dataclass
class Hit:
    """One listed result of a run on a topic (Task 2: one visual id, its first instance)."""

    docno: str
    rank: int
    score: float
    label: str  # the qrels label, or "unjudged"
    badge: Badge
    #: a line of details shown above the snippet (ids, post, other instances ...)
    about: str = ""


@dataclass
class Judged:
    """A judged relevant document of a topic (listed under a run that missed it)."""

    docno: str
    label: str
    badge: Badge


@dataclass
class TopicView:
    """Everything the explorer shows about one topic."""

    qid: str
    #: the topic as one line in the topic list (HTML: formulas may be rendered)
    summary: str
    #: the query as its users see it (HTML, formulas as ``<math>``)
    query_html: str
    #: run -> its top results, best first
    hits: dict[str, list[Hit]] = field(default_factory=dict)
    #: run -> docno -> rank in the run's whole ranking, for the documents listed here
    ranks: dict[str, dict[str, int]] = field(default_factory=dict)
    #: judged relevant documents, most relevant first
    judged: list[Judged] = field(default_factory=list)
    #: docno -> snippet HTML (formulas rendered)
    snippets: dict[str, str] = field(default_factory=dict)
    #: run -> measure -> score on this topic
    scores: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class Explorer:
    """The explorer of a set of runs over a set of topics (see :func:`explorer_html`)."""

    runs: list[str]
    baseline: str
    primary: str
    measures: list[str]
    topics: list[TopicView]
    depth: int = 20
    #: what the badges mean (shown above the topics)
    legend: str = ""
    notes: list[str] = field(default_factory=list)

    def delta(self, topic: TopicView, run: str) -> float:
        """``run``'s score minus the baseline's on the primary measure (0 when unscored)."""
        s = topic.scores.get(run, {}).get(self.primary)
        b = topic.scores.get(self.baseline, {}).get(self.primary)
        return float(s - b) if s is not None and b is not None else 0.0

    def ordered(self) -> list[TopicView]:
        """Topics from the largest gain of the first other run to its largest loss."""
        other = self.others()[0]
        return sorted(self.topics, key=lambda t: (-self.delta(t, other), t.qid))

    def others(self) -> list[str]:
        """The runs compared with the baseline (the baseline alone when it is the only run)."""
        return [r for r in self.runs if r != self.baseline] or [self.baseline]


# --- HTML ---------------------------------------------------------------------------------

_CSS = """
body.explorer-wide{max-width:none;margin:2em 2em}
#explorer h2{margin-top:1.5em}
#explorer table.topics td,#explorer table.topics th{padding:.15em .5em;font-size:.9em}
#explorer table.topics th{cursor:pointer;user-select:none}
#explorer .up{color:#2b8a3e}#explorer .down{color:#c92a2a}
#explorer td.q{text-align:left;max-width:38em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#explorer tr.cur{background:#fff3bf}
#explorer .bars{margin:.3em 0 1em}#explorer .bars rect{cursor:pointer}
#explorer .controls{position:sticky;top:0;background:#f8f9fa;padding:.4em .6em;border:1px solid #dee2e6;z-index:2}
#explorer section.topic{display:none;border-top:2px solid #495057;margin-top:1em;padding-top:.5em}
#explorer section.topic.open,#explorer section.topic:target,#explorer.all section.topic{display:block}
#explorer .query{background:#f1f3f5;padding:.6em .9em;border-radius:4px;line-height:1.6}
#explorer .query .title{font-weight:600;font-size:1.1em}
#explorer .cols{display:grid;gap:1em;margin-top:.8em;align-items:start;overflow-x:auto}
#explorer .moves{display:flex;flex-wrap:wrap;gap:.2em}
#explorer .col h3{margin:.2em 0;font-size:1em}
#explorer ol.hits,#explorer ul.missed{list-style:none;padding:0;margin:0}
#explorer li.hit{border:1px solid #dee2e6;border-radius:4px;padding:.35em .5em;margin:.35em 0;line-height:1.5}
#explorer li.hit.hl,#explorer li.missed.hl{outline:2px solid #1c7ed6}
#explorer li.missed{font-size:.85em;padding:.15em .3em;border-bottom:1px dotted #ced4da}
#explorer .meta{font-size:.8em;color:#495057}
#explorer .rank{font-weight:700;margin-right:.3em}
#explorer .badge{display:inline-block;min-width:1.4em;text-align:center;border-radius:3px;padding:0 .3em;font-size:.8em;font-weight:700;color:#fff;margin-right:.3em}
#explorer .g3{background:#2b8a3e}#explorer .g2{background:#74b816}#explorer .g1{background:#f59f00}
#explorer .g0{background:#c92a2a}#explorer .gu{background:#adb5bd}
#explorer .mv{font-size:.75em;border:1px solid #ced4da;border-radius:3px;padding:0 .25em;white-space:nowrap}
#explorer .mv.new{border-color:#1c7ed6;color:#1c7ed6}
#explorer .snip{font-size:.9em;overflow-wrap:anywhere}
#explorer .fbig{font-size:1.25em}#explorer .qformula{font-size:1.3em}
#explorer math.match,#explorer code.match{background:#ffec99;outline:1px solid #f08c00;border-radius:2px}
#explorer math.exact,#explorer code.exact{background:#b2f2bb;outline:1px solid #2b8a3e}
#explorer code.tex{background:#fff5f5;color:#862e9c;font-size:.9em;overflow-wrap:anywhere}
#explorer math,#explorer code.tex,#explorer bdi{unicode-bidi:isolate}
#explorer table.scores td,#explorer table.scores th{padding:.1em .5em;font-size:.85em}
#explorer p.note{font-size:.85em;color:#6c757d}
body.ex-focus>*:not(#explorer),body.ex-focus #explorer>*:not(section):not(.controls){display:none}
body.ex-focus{margin-top:.5em}
"""

_JS = """
(function(){
var ex=document.getElementById('explorer');if(!ex)return;
document.body.classList.add('explorer-wide');
var sel=document.getElementById('ex-k');
function applyK(){var k=parseInt(sel.value,10);
 ex.querySelectorAll('li.hit').forEach(function(li){li.hidden=parseInt(li.dataset.rank,10)>k;});
 ex.querySelectorAll('li.missed').forEach(function(li){var r=li.dataset.runRank;
  li.hidden=!!r&&parseInt(r,10)<=k;});
 ex.querySelectorAll('.missed-count').forEach(function(s){var ul=s.parentNode.nextElementSibling;
  s.textContent=ul.querySelectorAll('li.missed:not([hidden])').length;});}
function fill(sec){if(sec.dataset.filled)return;var store={};
 sec.querySelectorAll('.docs>[data-doc]').forEach(function(d){store[d.dataset.doc]=d;});
 sec.querySelectorAll('.snip[data-doc]').forEach(function(s){var d=store[s.dataset.doc];
  if(d)s.innerHTML=d.innerHTML;});sec.dataset.filled='1';}
function show(qid){var found=null;
 ex.querySelectorAll('section.topic').forEach(function(s){var on=s.dataset.qid===qid;
  s.classList.toggle('open',on);if(on){found=s;fill(s);}});
 ex.querySelectorAll('table.topics tr[data-qid]').forEach(function(tr){
  tr.classList.toggle('cur',tr.dataset.qid===qid);});
 return found;}
// ids are percent-encoded in links: decoded once; a malformed escape (a '%' typed into
// the address) is left as it is
function dec(s){try{return decodeURIComponent(s);}catch(e){return s;}}
function fromHash(scroll){var h=dec(location.hash.slice(1));
 var focus=h.indexOf('only-')===0;document.body.classList.toggle('ex-focus',focus);
 if(focus){h=h.slice(5);scroll=false;}
 var qid=h.indexOf('q-')===0?h.slice(2):null;
 if(!qid){var first=ex.querySelector('table.topics tr[data-qid]');qid=first&&first.dataset.qid;}
 var s=qid&&show(qid);if(s&&scroll&&h)s.scrollIntoView();}
sel.addEventListener('change',applyK);
document.getElementById('ex-all').addEventListener('change',function(e){
 if(e.target.checked)ex.querySelectorAll('section.topic').forEach(fill);
 ex.classList.toggle('all',e.target.checked);});
window.addEventListener('hashchange',function(){fromHash(true);});
ex.addEventListener('mouseover',function(e){var li=e.target.closest('li[data-docno]');
 ex.querySelectorAll('li.hl').forEach(function(x){x.classList.remove('hl');});
 if(!li)return;var sec=li.closest('section.topic');
 sec.querySelectorAll('li[data-docno]').forEach(function(x){
  if(x.dataset.docno===li.dataset.docno)x.classList.add('hl');});});
ex.querySelectorAll('table.topics th[data-sort]').forEach(function(th,i){
 th.addEventListener('click',function(){var tb=th.closest('table').tBodies[0];
  var col=th.cellIndex,rows=Array.prototype.slice.call(tb.rows);
  var dir=th.dataset.dir==='asc'?'desc':'asc';th.dataset.dir=dir;
  rows.sort(function(a,b){var x=a.cells[col].dataset.v,y=b.cells[col].dataset.v;
   var nx=parseFloat(x),ny=parseFloat(y);var c=(isNaN(nx)||isNaN(ny))?String(x).localeCompare(y):nx-ny;
   return dir==='asc'?c:-c;});
  rows.forEach(function(r){tb.appendChild(r);});});});
applyK();fromHash(true);
ex.dataset.ready='1';
// when the page was parsed and its script done, and when it loaded (ms since navigation)
ex.dataset.readyMs=Math.round(performance.now());
window.addEventListener('load',function(){ex.dataset.loadMs=Math.round(performance.now());});
})();
"""


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _name(value: object) -> str:
    """An id or a run name as shown: isolated, bidi controls written out."""
    return name_html(value)


def _tip(value: object) -> str:
    """An id or a run name in an attribute (a tooltip): bidi controls written out."""
    return _esc(visible_controls(value))


def _href(qid: str) -> str:
    """The link to a topic: its id percent-encoded (``%`` too), so that the fragment
    decodes to the id and only to it.

    >>> _href("A.1"), _href("A%2E1"), _href("50%")
    ('#q-A.1', '#q-A%252E1', '#q-50%25')
    """
    return _esc("#q-" + quote(valid_text(qid), safe=""))


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _plain(markup: str) -> str:
    """The text of an HTML fragment (for sorting)."""
    return re.sub(r"<[^>]*>", "", markup)


def _signed(value: float) -> str:
    cls = "up" if value > 0 else "down" if value < 0 else ""
    return f'<span class="{cls}">{value:+.4f}</span>'


def _bars(ex: Explorer, run: str, ordered: Sequence[TopicView]) -> str:
    """An inline SVG of ``run``'s per-topic differences; each bar links to its topic."""
    deltas = [(t.qid, ex.delta(t, run)) for t in ordered]
    deltas.sort(key=lambda x: -x[1])
    n = max(len(deltas), 1)
    width, height = max(300, min(1200, 10 * n)), 120
    bw = width / n
    top = max([abs(d) for _, d in deltas] + [1e-9])
    mid = height / 2
    parts = [f'<svg class="bars" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="{_tip(run)} minus {_tip(ex.baseline)} per topic">',
             f'<line x1="0" x2="{width}" y1="{mid}" y2="{mid}" stroke="#000" stroke-width="0.5"/>']
    for i, (qid, d) in enumerate(deltas):
        h = abs(d) / top * (mid - 4)
        y = mid - h if d > 0 else mid
        color = "#2b8a3e" if d > 0 else "#c92a2a" if d < 0 else "#868e96"
        parts.append(f'<a href="{_href(qid)}" data-qid="{_esc(qid)}"><rect x="{i * bw:.1f}" '
                     f'y="{y:.1f}" width="{max(bw - 1, 1):.1f}" height="{max(h, 1):.1f}" '
                     f'fill="{color}"><title>{_tip(qid)}: {d:+.4f}</title></rect></a>')
    parts.append("</svg>")
    return "".join(parts)


def _topic_list(ex: Explorer, ordered: Sequence[TopicView]) -> str:
    others = [r for r in ex.others() if r != ex.baseline]
    head = ['<th data-sort="s">topic</th>', '<th data-sort="s">query</th>']
    head += [f'<th data-sort="n">{_name(r)}</th>' for r in ex.runs]
    head += [f'<th data-sort="n">Δ {_name(r)}</th>' for r in others]
    rows = []
    for t in ordered:
        cells = [f'<td data-v="{_esc(t.qid)}"><a href="{_href(t.qid)}">{_name(t.qid)}</a></td>',
                 f'<td class="q" data-v="{_esc(_plain(t.summary))}">{t.summary}</td>']
        for r in ex.runs:
            v = t.scores.get(r, {}).get(ex.primary)
            cells.append(f'<td data-v="{"" if v is None else v}">{_fmt(v)}</td>')
        for r in others:
            d = ex.delta(t, r)
            cells.append(f'<td data-v="{d}">{_signed(d)}</td>')
        rows.append(f'<tr data-qid="{_esc(t.qid)}">{"".join(cells)}</tr>')
    return (f'<table class="topics"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _moved(topic: TopicView, run: str, hit: Hit, runs: Sequence[str]) -> str:
    marks = []
    for other in runs:
        if other == run:
            continue
        r = topic.ranks.get(other, {}).get(hit.docno)
        if r is None:
            marks.append(f'<span class="mv new" title="{_tip(other)} did not retrieve it">'
                         f"not in {_name(other)}</span>")
        elif r != hit.rank:
            arrow = "▲" if r > hit.rank else "▼"  # ▲: this run ranks it higher
            marks.append(f'<span class="mv" title="{_tip(other)} ranks it {r}">'
                         f"{arrow} {_name(other)} #{r}</span>")
        else:
            marks.append(f'<span class="mv" title="{_tip(other)} ranks it {r} too">'
                         f"= {_name(other)}</span>")
    return "".join(marks)


def _badge(b: Badge) -> str:
    title = f' title="{_esc(b.title)}"' if b.title else ""
    return f'<span class="badge {_esc(b.css)}"{title}>{_esc(b.text)}</span>'


def _snip(topic: TopicView, docno: str) -> str:
    """A snippet's place: filled from the topic's document store when the topic opens
    (each document's snippet is written once per topic, however many runs list it)."""
    if docno not in topic.snippets:
        return ""
    return f'<div class="snip" data-doc="{_esc(docno)}"></div>'


def _column(ex: Explorer, topic: TopicView, run: str) -> str:
    items = []
    for h in topic.hits.get(run, []):
        items.append(
            f'<li class="hit" data-docno="{_esc(h.docno)}" data-rank="{h.rank}" '
            f'data-label="{_esc(h.label)}"><div class="meta"><span class="rank">{h.rank}</span>'
            f"{_badge(h.badge)}<b>{_name(h.docno)}</b> · {h.score:.4g}</div>"
            f'<div class="moves">{_moved(topic, run, h, ex.runs)}</div>'
            + (f'<div class="meta">{h.about}</div>' if h.about else "")
            + _snip(topic, h.docno) + "</li>")
    ranks = topic.ranks.get(run, {})
    missed = []
    for j in topic.judged:
        r = ranks.get(j.docno)
        hidden = " hidden" if r is not None and r <= ex.depth else ""
        where = f"ranked {r}" if r is not None else "not retrieved"
        missed.append(
            f'<li class="missed" data-docno="{_esc(j.docno)}" data-label="{_esc(j.label)}" '
            f'data-run-rank="{"" if r is None else r}"{hidden}>{_badge(j.badge)}'
            f'<b>{_name(j.docno)}</b> <span class="meta">{where}</span>'
            + _snip(topic, j.docno) + "</li>")
    shown = sum(1 for j in topic.judged
                if ranks.get(j.docno) is None or ranks[j.docno] > ex.depth)
    line = f"{_esc(ex.primary)} {_fmt(topic.scores.get(run, {}).get(ex.primary))}" \
        if ex.primary else ""
    return (f'<div class="col" data-run="{_esc(run)}"><h3>{_name(run)}'
            f'{" (baseline)" if run == ex.baseline else ""}</h3><div class="meta">{line}</div>'
            f'<ol class="hits">{"".join(items)}</ol>'
            + (f'<h4 class="meta">judged relevant, not in the top k: '
               f'<span class="missed-count">{shown}</span></h4>'
               f'<ul class="missed">{"".join(missed)}</ul>' if topic.judged else "")
            + "</div>")


def _topic_section(ex: Explorer, topic: TopicView) -> str:
    head = "".join(f"<th>{_esc(m)}</th>" for m in ex.measures)
    rows = []
    for r in ex.runs:
        s = topic.scores.get(r, {})
        cells = "".join(f"<td>{_fmt(s.get(m))}</td>" for m in ex.measures)
        rows.append(f"<tr><td>{_name(r)}</td>{cells}</tr>")
    cols = "".join(_column(ex, topic, r) for r in ex.runs)
    docs = "".join(f'<div data-doc="{_esc(d)}">{markup}</div>'
                   for d, markup in topic.snippets.items())
    return (f'<section class="topic" id="q-{_esc(topic.qid)}" data-qid="{_esc(topic.qid)}">'
            f"<h3>Topic {_name(topic.qid)}</h3>"
            f'<div class="query">{topic.query_html}</div>'
            f'<table class="scores"><thead><tr><th>run</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>'
            f'<div class="cols" style="grid-template-columns:repeat({len(ex.runs)},minmax(18em,1fr))">'
            f'{cols}</div><div class="docs" hidden>{docs}</div></section>')


def explorer_html(ex: Explorer) -> str:
    """The explorer as one HTML fragment (a ``<div id="explorer">`` with its own inline
    ``<style>`` and ``<script>``), to place inside a report's ``<body>``.

    >>> t = TopicView("A.1", "x squared", "Is $x^2$ even?", scores={"a": {"m": 0.5}, "b": {"m": 0.7}})
    >>> page = explorer_html(Explorer(["a", "b"], "a", "m", ["m"], [t]))
    >>> 'data-qid="A.1"' in page and "<script>" in page
    True
    """
    ordered = ex.ordered()
    ks = sorted({k for k in (5, 10, 20, ex.depth) if k <= ex.depth})
    default = 10 if 10 in ks else ks[-1]
    options = "".join(f'<option value="{k}"{" selected" if k == default else ""}>{k}</option>'
                      for k in ks)
    others = [r for r in ex.others() if r != ex.baseline]
    bars = "".join(f'<div><b>{_name(r)}</b> minus <b>{_name(ex.baseline)}</b> on '
                   f'{_esc(ex.primary)}, per topic (click a bar)</div>{_bars(ex, r, ordered)}'
                   for r in others)
    notes = "".join(f'<p class="note">{_esc(n)}</p>' for n in ex.notes)
    data = json.dumps({"runs": ex.runs, "baseline": ex.baseline, "primary": ex.primary,
                       "depth": ex.depth})
    return valid_text("\n".join([
        f"<style>{_CSS}</style>",
        f'<div id="explorer" data-runs="{_esc(data)}">',
        "<h2>Topics</h2>",
        f'<p class="note">Sorted by {_esc(ex.primary)} difference to the baseline '
        f'({_name(ex.baseline)}); click a column to sort, a topic to open it. {_esc(ex.legend)}</p>',
        notes, bars, _topic_list(ex, ordered),
        f'<div class="controls">top <select id="ex-k">{options}</select> results per run · '
        '<label><input type="checkbox" id="ex-all"> all topics</label> · hover a result to '
        "see it in the other runs</div>",
        "".join(_topic_section(ex, t) for t in ordered),
        "</div>",
        f"<script>{_JS}</script>",
        # without scripts, the snippets are shown once per topic, below the runs
        "<noscript><style>#explorer .docs{display:block!important}</style></noscript>",
    ]))


def label_badges(names: Mapping[str, str], titles: Mapping[str, str] | None = None,
                 unjudged: str = "?") -> Callable[[str], Badge]:
    """A label -> :class:`Badge` function for graded labels (``names``: label -> text).

    >>> badge = label_badges({"3": "H", "0": "N"})
    >>> badge("3").css, badge("unjudged").text
    ('g3', '?')
    """
    titles = titles or {}

    def badge(label: str) -> Badge:
        if label == "unjudged":
            return Badge(unjudged, "gu", "not judged")
        try:
            grade = max(0, min(3, int(float(label))))
        except ValueError:
            grade = 0
        return Badge(names.get(label, label), f"g{grade}", titles.get(label, f"label {label}"))

    return badge


__all__ = ["Badge", "Explorer", "Hit", "Judged", "TopicView", "explorer_html",
           "label_badges"]
