"""The formula instances of a source: a formula index TSV or a posts collection.

A formula TSV (:mod:`mathir.readers.formula_tsv`, any layout; the SLT files' cells are
Presentation MathML, their ``alttext`` the LaTeX: :func:`formula_latex`) or, when no TSV
is given, the ``math-container`` formulas of a ``Posts.V1.3.xml`` file or thread HTML
directory (no visual ids then).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

from mathir.indexing.answer_collection import AnswerCollection
from mathir.readers.formula_tsv import FormulaRecord, iter_formula_index
from mathir.readers.html_text import extract_formulas

_ALTTEXT = re.compile(r'alttext="([^"]*)"')


def formula_latex(formula: str) -> str:
    """The LaTeX of a formula cell: itself, or the ``alttext`` of an SLT MathML cell.

    >>> formula_latex('<math alttext="x^{2}"><msup><mi>x</mi><mn>2</mn></msup></math>')
    'x^{2}'
    """
    if not formula.lstrip().startswith("<"):
        return formula
    m = _ALTTEXT.search(formula)
    return html.unescape(m.group(1)) if m else ""


def iter_formula_source(path: str | Path) -> Iterator[FormulaRecord]:
    """Formula instances of a TSV file, or of the posts (``Posts.V1.3.xml`` / thread HTML).

    >>> from mathir.samples import arqmath_sample
    >>> next(iter_formula_source(arqmath_sample().posts)).post_id
    '1001'
    """
    p = Path(path)
    if p.is_file() and p.suffix.lower() in (".tsv", ".txt", ".csv"):
        yield from iter_formula_index(p)
        return
    for post in AnswerCollection.at(p).iter_posts():
        parts = [("title", post.title), (post.post_type, post.body)]
        for kind, fragment in parts:
            for f in extract_formulas(fragment or ""):
                if f.formula_id:
                    yield FormulaRecord(f.formula_id, post.post_id, post.thread_id, kind,
                                        "", "", "", "", f.latex)
