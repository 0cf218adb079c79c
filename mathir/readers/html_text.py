"""Math StackExchange HTML to plain text, keeping formulas as LaTeX.

Post bodies hold formulas as ``<span class="math-container" id="ID">$LATEX$</span>``.
Bodies are parsed with regular expressions rather than an HTML parser: they are
small, machine-written fragments, and a million of them must be processed in seconds.
"""

from __future__ import annotations

import html
import re
from typing import NamedTuple

from mathir.readers.latex_words import latex_to_words

_MATH_SPAN = re.compile(
    r"<span\b(?P<attrs>[^>]*\bclass=[\"']math-container[\"'][^>]*)>(?P<body>.*?)</span>",
    re.S | re.I,
)
_ID_ATTR = re.compile(r"\bid=[\"']([^\"']*)[\"']")
_TAG = re.compile(r"<[^>]*>")
_BLOCK_TAG = re.compile(r"</?(?:p|div|li|ul|ol|br|hr|h\d|blockquote|pre|tr|td|table)\b[^>]*>", re.I)
_PARKED = re.compile(r"\x00(\d+)\x00")
_DELIMS = re.compile(r"^\s*(\${1,2})(.*?)\1\s*$", re.S)


class Formula(NamedTuple):
    """A formula occurrence in a post: its ``formula_id`` and LaTeX (without ``$``)."""

    formula_id: str
    latex: str


def strip_dollars(latex: str) -> str:
    """Remove the ``$``/``$$`` delimiters around a formula.

    >>> strip_dollars("$$x^2$$")
    'x^2'
    """
    m = _DELIMS.match(latex)
    return (m.group(2) if m else latex).strip()


def _span_latex(body: str) -> str:
    return strip_dollars(html.unescape(_TAG.sub("", body)))


def extract_formulas(body_html: str) -> list[Formula]:
    """The formulas of an HTML fragment, in order.

    >>> extract_formulas('<p>Let <span class="math-container" id="7">$x^2$</span>.</p>')
    [Formula(formula_id='7', latex='x^2')]
    """
    out = []
    for m in _MATH_SPAN.finditer(body_html):
        idm = _ID_ATTR.search(m.group("attrs"))
        out.append(Formula(idm.group(1) if idm else "", _span_latex(m.group("body"))))
    return out


def html_to_text(body_html: str, math_words: bool = False) -> str:
    """Plain text of an HTML fragment; whitespace collapses.

    Formulas become ``$LATEX$``, or with ``math_words`` the ARQMath baseline's words
    (:func:`~mathir.readers.latex_words.latex_to_words`), in one pass.

    >>> html_to_text('<p>Let <span class="math-container" id="7">$x &lt; 2$</span> hold.</p>')
    'Let $x < 2$ hold.'
    >>> html_to_text('<p>Let <span class="math-container" id="7">$x &lt; 2$</span>.</p>', True)
    'Let x less than 2 .'
    """
    if math_words:
        # Words hold only letters, digits and spaces: no need to protect them below.
        text = _MATH_SPAN.sub(lambda m: " " + latex_to_words(_span_latex(m.group("body"))) + " ",
                              body_html)
        return " ".join(html.unescape(_TAG.sub("", _BLOCK_TAG.sub(" ", text))).split())
    formulas: list[str] = []

    def park(m: re.Match) -> str:
        # Formulas are set aside so that tag stripping and unescaping leave them alone.
        formulas.append(_span_latex(m.group("body")))
        return f"\x00{len(formulas) - 1}\x00"

    text = _MATH_SPAN.sub(park, body_html)
    text = html.unescape(_TAG.sub("", _BLOCK_TAG.sub(" ", text)))
    if formulas:
        text = _PARKED.sub(lambda m: f"${formulas[int(m.group(1))]}$", text)
    return " ".join(text.split())
