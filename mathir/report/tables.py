"""Comparison tables as terminal text, Markdown, LaTeX (booktabs) or JSON."""

from __future__ import annotations

import json
import math

import pandas as pd

FORMATS = ("table", "markdown", "latex", "json")


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
          "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
          "|": r"\textbar{}"}


def latex_text(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped (``<`` and ``>`` included, which
    the default font encoding prints as other glyphs).

    >>> print(latex_text("bm25>>biencoder_2, p < 0.05"))
    bm25\textgreater{}\textgreater{}biencoder\_2, p \textless{} 0.05
    """
    return "".join(_LATEX.get(c, c) for c in text)


def markdown_text(text: str) -> str:
    r"""``text`` as one Markdown table cell: ``|`` (a column break) and ``\`` escaped, a
    line break made a space.

    >>> print(markdown_text("a|b\\c"))
    a\|b\\c
    """
    return (text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ")
            .replace("\n", " "))


def _cells(table: pd.DataFrame, digits: int) -> list[list[str]]:
    return [[f"{v:.{digits}f}" for v in row] for row in table.to_numpy(dtype=float)]


def format_table(table: pd.DataFrame, fmt: str = "table", digits: int = 4,
                 significance: pd.DataFrame | None = None, footnote: str | None = None) -> str:
    """Render a run x measure table.

    ``json`` gives ``{run: {measure: value}}``; ``latex`` puts the best value of each
    column in bold. With ``significance`` (from
    :func:`mathir.evaluation.significance.significance_table`), a value significantly
    different from the baseline's is marked † (``$^\\dagger$`` in LaTeX). ``footnote``
    says what the mark means; it is shown only when a value is marked: below the table
    (after a blank line in Markdown, which would otherwise read it as a row), and in
    LaTeX as the table's last row, inside the ``tabular``. JSON has neither.

    >>> t = pd.DataFrame({"MAP": [0.5, 0.25]}, index=["bm25", "tfidf"])
    >>> print(format_table(t, digits=2, footnote="better"))  # nothing marked: no note
    run     MAP
    -----------
    bm25   0.50
    tfidf  0.25

    >>> t = pd.DataFrame({"nDCG'": [0.5, 0.25]}, index=["bm25", "tfidf"])
    >>> print(format_table(t, "markdown", digits=3))
    | run   |   nDCG' |
    |:------|--------:|
    | bm25  |   0.500 |
    | tfidf |   0.250 |
    """
    if fmt == "json":
        # NaN / infinite values (e.g. a measure a run has no judgments for) become null.
        return json.dumps({str(r): {str(m): float(v) if math.isfinite(float(v)) else None
                                    for m, v in row.items()}
                           for r, row in table.iterrows()}, indent=2)
    names = [str(i) for i in table.index]
    measures = [str(c) for c in table.columns]
    cells = _cells(table, digits)
    marked = False
    mark = "$^\\dagger$" if fmt == "latex" else "†"
    if significance is not None:
        for i, name in enumerate(table.index):
            for j, m in enumerate(table.columns):
                key = (name, m)
                if key in significance.index and bool(significance.loc[key, "significant"]):
                    cells[i][j] += mark
                    marked = True
    note = f"{mark} {footnote}" if footnote and marked else None
    if fmt == "latex":
        best = table.max(axis=0)
        lines = [r"\begin{tabular}{l" + "r" * len(measures) + "}", r"\toprule",
                 " & ".join(["Run"] + [latex_text(m).replace("'", "$'$") for m in measures])
                 + r" \\",
                 r"\midrule"]
        for i, name in enumerate(names):
            vals = []
            for j, m in enumerate(table.columns):
                c = cells[i][j]
                vals.append(rf"\textbf{{{c}}}" if table.iloc[i, j] == best[m] else c)
            lines.append(" & ".join([latex_text(name)] + vals) + r" \\")
        lines.append(r"\bottomrule")
        if note:
            text = "$^\\dagger$ " + latex_text(footnote)
            lines.append(rf"\multicolumn{{{len(measures) + 1}}}{{l}}{{\footnotesize {text}}} \\")
        lines.append(r"\end{tabular}")
        return "\n".join(lines)
    if fmt == "markdown":
        names, measures = [markdown_text(n) for n in names], [markdown_text(m) for m in measures]
        w0 = max(len("run"), *(len(n) for n in names))
        ws = [max(len(m), max(len(r[j]) for r in cells)) + 2 for j, m in enumerate(measures)]
        out = ["| " + "run".ljust(w0) + " | " + " | ".join(m.rjust(w) for m, w in zip(measures, ws, strict=True)) + " |",
               "|:" + "-" * w0 + "-|" + "|".join("-" * (w + 1) + ":" for w in ws) + "|"]
        for name, row in zip(names, cells, strict=True):
            out.append("| " + name.ljust(w0) + " | " + " | ".join(c.rjust(w) for c, w in zip(row, ws, strict=True)) + " |")
        if note:
            out += ["", note]
        return "\n".join(out)
    if fmt == "table":
        w0 = max(len("run"), *(len(n) for n in names))
        ws = [max(len(m), max(len(r[j]) for r in cells)) for j, m in enumerate(measures)]
        out = ["run".ljust(w0) + "  " + "  ".join(m.rjust(w) for m, w in zip(measures, ws, strict=True))]
        out.append("-" * len(out[0]))
        for name, row in zip(names, cells, strict=True):
            out.append(name.ljust(w0) + "  " + "  ".join(c.rjust(w) for c, w in zip(row, ws, strict=True)))
        if note:
            out.append(note)
        return "\n".join(out)
    raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
