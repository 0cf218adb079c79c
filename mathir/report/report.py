"""A self-contained HTML experiment report: comparison table, significance, and plots.

Plots are drawn with matplotlib (Agg backend) and embedded as base64 PNG images, so the
single HTML file opens in any browser without a server or network.

Run names, topic ids and group names are drawn as given: no mathtext (``$`` is a dollar
sign), no LaTeX, bidi controls written out. On the page they are isolated from the text
around them (:func:`name_html`).
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from mathir.report.charts import plain_text, png_bytes, pyplot
from mathir.storage import atomic_file

#: Bidi embeddings, overrides, isolates and marks (U+202A-U+202E, U+2066-U+2069, U+200E,
#: U+200F, U+061C): in an id or a name they reorder what is shown, so that one docno or
#: run reads as another.
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def visible_controls(text: object) -> str:
    """``text`` with its bidi controls written out and lone surrogates (which UTF-8 cannot
    write) as U+FFFD: the text of an id or name to show, in a tooltip or a chart.

    >>> visible_controls("bm25\\u202egnp.exe")
    'bm25<U+202E>gnp.exe'
    """
    return BIDI_CONTROLS.sub(lambda m: f"<U+{ord(m.group()):04X}>",
                             _SURROGATE.sub("\ufffd", str(text)))


def name_html(text: object) -> str:
    """HTML of an id or a name (topic id, docno, run): escaped, its bidi controls written
    out, and isolated left-to-right from the text around it.

    >>> name_html("A.1\\u202e<b>")
    '<bdi dir="ltr">A.1&lt;U+202E&gt;&lt;b&gt;</bdi>'
    """
    return f'<bdi dir="ltr">{html.escape(visible_controls(text), quote=False)}</bdi>'


def shown_path(path: str | Path, folder: str | Path) -> str:
    """How a page written in ``folder`` names ``path``: relative to the folder when it is
    under it, else by its file name (a page that travels does not show the machine's
    folders).

    >>> shown_path("/home/me/runs/t1/bm25.tsv", "/home/me/runs"), shown_path("/tmp/x.tsv", "/home")
    ('t1/bm25.tsv', 'x.tsv')
    """
    p, f = Path(path).absolute(), Path(folder).absolute()
    return p.relative_to(f).as_posix() if p.is_relative_to(f) else p.name


def valid_text(page: str) -> str:
    """``page`` with lone surrogates as U+FFFD (so that it can be written as UTF-8)."""
    return _SURROGATE.sub("\ufffd", page)


#: Topic ids labelled under a per-topic chart at most (more: every k-th topic).
MAX_TOPIC_LABELS = 80
#: Characters of a topic id shown under a bar (longer ids are cut, ending with "…").
MAX_LABEL_CHARS = 24


def _tick_label(qid: object) -> str:
    text = visible_controls(qid)
    return text if len(text) <= MAX_LABEL_CHARS else text[:MAX_LABEL_CHARS - 1] + "…"


def per_topic_chart(per_topic: Mapping[str, pd.DataFrame], measure: str, baseline: str) -> bytes:
    """PNG: for each system, its per-topic difference to the baseline on ``measure``.

    Bars are sorted from largest gain to largest loss, one panel per system, each bar
    labelled with its topic id (every k-th topic when there are more than
    :data:`MAX_TOPIC_LABELS`, so that the labels stay readable). Each panel gets its own
    height, room for its topic ids included, and the panels are laid out (matplotlib's
    constrained layout) so that no title is drawn over the panel above, however many runs.
    """
    plt = pyplot()
    others = [n for n in per_topic if n != baseline] or [baseline]
    base = per_topic[baseline].set_index("qid")[measure]
    n = len(base)
    step = max(1, -(-n // MAX_TOPIC_LABELS))  # ceil(n / MAX_TOPIC_LABELS)
    longest = max((len(_tick_label(q)) for q in base.index), default=1)
    # a panel: 2.2 in of bars, title and axis label, plus the topic ids (6 pt, turned 90°)
    panel = 2.2 + longest * 6 * 0.62 / 72
    with plain_text():
        fig, axes = plt.subplots(len(others), 1, squeeze=False, layout="constrained",
                                 figsize=(max(9.0, 0.11 * min(n, MAX_TOPIC_LABELS)),
                                          panel * len(others)))
        for ax, name in zip(axes[:, 0], others, strict=True):
            s = per_topic[name].set_index("qid")[measure].reindex(base.index).fillna(0.0)
            d = (s - base).sort_values(ascending=False)
            colors = ["#2b8a3e" if v > 0 else "#c92a2a" if v < 0 else "#868e96" for v in d]
            ax.bar(range(len(d)), d.to_numpy(), color=colors, width=0.9)
            ax.axhline(0, color="black", linewidth=0.6)
            ax.set_xlim(-1, max(len(d), 1))
            ticks = list(range(0, len(d), step))
            ax.set_xticks(ticks)
            ax.set_xticklabels([_tick_label(d.index[i]) for i in ticks], rotation=90, fontsize=6)
            if step > 1:
                ax.set_xlabel(f"topics (every {step}th labelled)", fontsize=7)
            ax.set_ylabel(f"Δ {visible_controls(measure)}")
            wins, losses = int((d > 0).sum()), int((d < 0).sum())
            ax.set_title(f"{visible_controls(name)} vs {visible_controls(baseline)}: {wins} topics "
                         f"better, {losses} worse, {len(d) - wins - losses} tied", fontsize=9)
        return png_bytes(fig)


def breakdown_chart(per_topic: Mapping[str, pd.DataFrame], measure: str,
                    groups: pd.Series, title: str) -> bytes:
    """PNG: mean ``measure`` per group of topics (``groups``: qid -> group) for each system."""
    plt = pyplot()
    labels = sorted(set(groups.dropna()))
    with plain_text():
        fig, ax = plt.subplots(figsize=(8, 3.2))
        width = 0.8 / max(len(per_topic), 1)
        for i, (name, df) in enumerate(per_topic.items()):
            s = df.set_index("qid")[measure]
            means = [float(s[s.index.isin(groups[groups == g].index)].mean() or 0.0)
                     for g in labels]
            ax.bar(np.arange(len(labels)) + i * width, means, width=width,
                   label=visible_controls(name))
        counts = [int((groups == g).sum()) for g in labels]
        ax.set_xticks(np.arange(len(labels)) + width * (len(per_topic) - 1) / 2)
        ax.set_xticklabels([f"{visible_controls(g)}\n({c} topics)"
                            for g, c in zip(labels, counts, strict=True)], fontsize=8)
        ax.set_ylabel(visible_controls(measure))
        ax.set_title(visible_controls(title), fontsize=10)
        ax.legend(fontsize=8)
        return png_bytes(fig)


def breakdown_figures(per_topic: Mapping[str, pd.DataFrame], measure: str,
                      groups: pd.DataFrame) -> list[tuple[str, bytes]]:
    """``(caption, PNG)`` per column of ``groups``: each system's mean ``measure`` per
    group of topics (:func:`breakdown_chart`), in the column order of ``groups``.

    ``groups`` has one row per topic, its ``qid`` as a column or as the index, and one
    column per way of grouping the topics; the caller chooses them (e.g. ARQMath's
    category, difficulty and dependency from the topic metadata file), so the report
    knows no task's files.

    >>> per_topic = {"bm25": pd.DataFrame({"qid": ["1", "2"], "MAP": [0.2, 0.4]})}
    >>> groups = pd.DataFrame({"qid": ["1", "2"], "kind": ["proof", "concept"]})
    >>> [caption for caption, _ in breakdown_figures(per_topic, "MAP", groups)]
    ['MAP by topic kind']
    """
    if "qid" in groups.columns:
        groups = groups.set_index("qid")
    return [(f"{measure} by topic {column}",
             breakdown_chart(per_topic, measure, groups[column], f"{measure} by topic {column}"))
            for column in groups.columns]


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1000px;color:#212529}
table{border-collapse:collapse;margin:1em 0}th,td{padding:.3em .7em;border-bottom:1px solid #dee2e6;text-align:right}
th:first-child,td:first-child{text-align:left}td.best{font-weight:bold}td.sig{background:#e6fcf5}
img{max-width:100%;display:block;margin:.5em 0 1.5em}p.note{font-size:.85em;color:#6c757d}
"""


def html_report(title: str, table: pd.DataFrame, baseline: str,
                significance: pd.DataFrame | None = None,
                figures: Sequence[tuple[str, bytes]] = (), notes: Sequence[str] = (),
                explorer: str = "") -> str:
    """One self-contained HTML page.

    ``table``: runs x measures means; ``significance``: from
    :func:`mathir.evaluation.significance.significance_table` (marks a significant
    difference to the baseline with †); ``figures``: (caption, PNG bytes); ``explorer``:
    an HTML fragment placed after the figures (the run explorer of
    :func:`mathir.report.explorer.explorer_html`).

    >>> t = pd.DataFrame({"MAP": [0.5, 0.6]}, index=["bm25", "new"])
    >>> "<table" in html_report("demo", t, "bm25")
    True
    """
    esc = html.escape
    best = table.max(axis=0)
    head = "".join(f"<th>{name_html(c)}</th>" for c in table.columns)
    rows = []
    for name, row in table.iterrows():
        cells = []
        for m, v in row.items():
            cls = []
            mark = ""
            if v == best[m]:
                cls.append("best")
            if significance is not None and (name, m) in significance.index:
                s = significance.loc[(name, m)]
                if bool(s["significant"]):
                    cls.append("sig")
                    mark = "†"
                tip = f"Δ {s['delta']:+.4f}, 95% CI [{s['ci_low']:+.4f}, {s['ci_high']:+.4f}], " \
                      f"p={s['p']:.3g}, corrected p={s['p_corrected']:.3g}"
            else:
                tip = ""
            cells.append(f'<td class="{" ".join(cls)}" title="{esc(tip)}">{v:.4f}{mark}</td>')
        label = name_html(name) + (" (baseline)" if name == baseline else "")
        rows.append(f"<tr><td>{label}</td>{''.join(cells)}</tr>")
    caption = "Bold: best per measure. † significantly different from the baseline " \
              "(paired test, multiple-testing corrected, α = 0.05); hover a cell for Δ, CI and p."
    shown = esc(visible_controls(title))
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{shown}</title>",
             f"<style>{_CSS}</style></head><body><h1>{shown}</h1>",
             f"<table><thead><tr><th>run</th>{head}</tr></thead>",
             f"<tbody>{''.join(rows)}</tbody></table>", f"<p class='note'>{esc(caption)}</p>"]
    parts += [f"<p>{esc(n)}</p>" for n in notes]
    for cap, png in figures:
        data = base64.b64encode(png).decode("ascii")
        parts.append(f"<h2>{esc(cap)}</h2><img alt='{esc(cap)}' src='data:image/png;base64,{data}'>")
    if explorer:
        parts.append(explorer)
    parts.append("</body></html>")
    return valid_text("\n".join(parts))


def write_report(path: str | Path, page: str) -> Path:
    """Write the HTML page atomically."""
    with atomic_file(path) as f:
        f.write(page)
    return Path(path)
