"""MathML rendering: the one place LaTeX becomes MathML.

:func:`latex_to_mathml` converts one formula with latex2mathml (browsers render MathML
Core natively) and writes the result again, MathML elements and attributes only, every
text escaped, so that a formula cannot inject markup into a page; a formula latex2mathml
cannot convert is None. :class:`MathRenderer` turns LaTeX and text with ``$...$``
formulas into HTML, a formula it cannot convert shown as its LaTeX source, and counts
per kind what it could not convert (:class:`MathStats`).

MathML lengths and sizes are bounded (:data:`MAX_LENGTH_EM`, :data:`MAX_NEGATIVE_EM`,
:data:`MAX_MATH_SCALE`); a formula over :data:`MAX_FORMULA_CHARS` characters or nested
deeper than :data:`MAX_MATHML_DEPTH` elements is shown as (shortened) source, not
converted. The run explorer (:mod:`mathir.report.explorer`) and its per-task views
(:mod:`mathir.report.explorer_views`) render their formulas with it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

#: ``$$display$$`` and ``$inline$`` formulas, as the collection readers keep them.
MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)

# MathML Core elements (and the few MathML 3 ones latex2mathml writes); anything else in
# latex2mathml's output (e.g. HTML that \text{...} let through) is dropped, its text kept.
_MATHML_TAGS = frozenset(
    "math mrow mi mn mo ms mtext mspace msup msub msubsup mfrac msqrt mroot mstyle merror "
    "mpadded mphantom menclose munder mover munderover mtable mtr mtd mlabeledtr "
    "mmultiscripts mprescripts none semantics annotation maligngroup malignmark".split())
_MATHML_ATTRIBUTES = frozenset(
    "display mathvariant stretchy fence form separator accent accentunder lspace rspace "
    "width height depth linethickness columnalign rowalign columnspacing rowspacing "
    "columnlines rowlines frame notation movablelimits largeop symmetric minsize maxsize "
    "scriptlevel displaystyle mathsize mathcolor mathbackground open close".split())
_UNKNOWN_COMMAND = re.compile(r"<mi>\\[A-Za-z]+</mi>")

#: LaTeX longer than this (characters) is not converted: it is shown as its source, cut
#: to :data:`SHOWN_FORMULA_CHARS` characters, with its length (latex2mathml's MathML of a
#: 200 KB formula is megabytes, written again in every topic that lists it).
MAX_FORMULA_CHARS = 2000
#: characters of a formula over :data:`MAX_FORMULA_CHARS` shown
SHOWN_FORMULA_CHARS = 200
#: MathML nested deeper than this (elements, ``<math>`` included) is shown as its source
#: (browsers flatten deeper HTML; 110 nested matrices are about 330 elements deep).
MAX_MATHML_DEPTH = 100
#: the largest MathML length (width, height, depth, lspace, rspace, minsize, maxsize,
#: linethickness, column and row spacing) in em: ``\rule{1000em}{1000em}`` is drawn
#: 5em by 5em; pseudo-units (``2width``) and percentages are bounded alike (5, 500 %)
MAX_LENGTH_EM = 5.0
#: the most a negative length may pull back (``\kern-1000em`` would draw over the text
#: before the formula): -1em, which covers ``\!``, ``\negthickspace`` and ``\mathllap``
MAX_NEGATIVE_EM = 1.0
#: the largest font size in a formula, relative to the text's (``\Huge`` is 2.49;
#: nested sizes multiply, so each ``mathsize`` is cut to keep the product under this)
MAX_MATH_SCALE = 2.5


# Elements whose children form one row anyway (an "inferred mrow"): an mrow among them
# adds nothing. An mrow of one element is that element, anywhere.
_ROW_PARENTS = frozenset("math mrow mtd msqrt mstyle mpadded mphantom menclose merror".split())


_LENGTH_ATTRIBUTES = frozenset(
    "width height depth lspace rspace minsize maxsize linethickness columnspacing "
    "rowspacing".split())
# a MathML length: sign, number, unit (a pseudo-unit of mpadded: 2width)
_LENGTH = re.compile(r"([+-]?)(\d+\.?\d*|\.\d+)\s*(em|ex|px|pt|pc|in|cm|mm|mu|%|width|height|depth)?")
# em per unit, at the browser's 16px font (percentages and pseudo-units: per 1 %, per 1x)
_EM = {"em": 1.0, "ex": 0.5, "px": 1 / 16, "pt": 1 / 12, "pc": 1.0, "in": 6.0, "cm": 6 / 2.54,
       "mm": 0.6 / 2.54, "mu": 1 / 18, "": 1.0, "%": 0.01, "width": 1.0, "height": 1.0,
       "depth": 1.0}
_NAMED_SPACE = re.compile(r"(negative)?(very){0,2}(thin|medium|thick)mathspace")
_SIZE_WORDS = {"small": 0.8, "normal": 1.0, "big": 1.2}
# latex2mathml writes symbols as hexadecimal character references; any other "&" in its
# texts is the formula's own (the readers already unescaped the HTML once)
_CHAR_REF = re.compile(r"&#x([0-9A-Fa-f]{1,6});")
# put between "&" and "#" of the formula's own text, so that "&#x3C;" there stays text
_GUARD = "\ue000"
# LaTeX's (and LaTeXML's) position argument of an array: \begin{array}[t]{ll}, [] {ll}
_ARRAY_POSITION = re.compile(r"(\\begin\s*\{array\})\s*\[\s*[tbc]?\s*\]")


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _char(m: re.Match) -> str:
    code = int(m.group(1), 16)
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"


def _decode(value: str) -> str:
    """A latex2mathml text or attribute as characters: its character references
    decoded, nothing else unescaped."""
    return _CHAR_REF.sub(_char, value).replace(_GUARD, "")


def _text(value: str | None) -> str:
    return html.escape(_decode(value or ""), quote=False)


def _bounded_length(value: str) -> str | None:
    """A length attribute's value with each length in [-MAX_NEGATIVE_EM, MAX_LENGTH_EM]
    em (None: not a length, the attribute is dropped).

    >>> _bounded_length("1000em"), _bounded_length("-18mu"), _bounded_length("-1000em")
    ('5em', '-18mu', '-1em')
    >>> _bounded_length("0em 2em 0em"), _bounded_length("["), _bounded_length("-1width")
    ('0em 2em 0em', None, '-1width')
    """
    parts = []
    for part in value.split():
        m = _LENGTH.fullmatch(part)
        if _NAMED_SPACE.fullmatch(part):
            parts.append(part)
            continue
        if m is None:
            return None
        sign, unit = m.group(1), m.group(3) or ""
        em = float(m.group(2)) * _EM[unit] * (-1 if sign == "-" else 1)
        top = MAX_LENGTH_EM * (100 if unit == "%" else 1)
        bottom = MAX_NEGATIVE_EM * (100 if unit == "%" else 1)
        if em > MAX_LENGTH_EM:
            part = f"{sign}{top:g}{unit if unit in ('%', 'width', 'height', 'depth') else 'em'}"
        elif em < -MAX_NEGATIVE_EM:
            part = f"-{bottom:g}{unit if unit in ('%', 'width', 'height', 'depth') else 'em'}"
        parts.append(part)
    return " ".join(parts) if parts else None


def _bounded_size(value: str, scale: float) -> tuple[str | None, float]:
    """A ``mathsize`` within :data:`MAX_MATH_SCALE` of the text's size, given the
    ``scale`` its ancestors set; and the scale it sets for its children."""
    value = value.strip()
    if value in _SIZE_WORDS:
        factor = _SIZE_WORDS[value]
    else:
        m = _LENGTH.fullmatch(value)
        if m is None or m.group(1) or m.group(3) in ("width", "height", "depth"):
            return None, scale
        factor = float(m.group(2)) * _EM[m.group(3) or ""]
    if factor <= 0:
        return None, scale
    if scale * factor > MAX_MATH_SCALE:
        factor = int(MAX_MATH_SCALE / scale * 1000) / 1000  # rounded down
        value = f"{factor:g}em"
    return value, scale * factor


def _attributes(tag: str, attrib: Mapping[str, str], scale: float) -> tuple[str, float]:
    """The MathML attributes of an element, lengths and sizes bounded; and the font
    scale it sets for its children."""
    out = []
    for k, v in attrib.items():
        if k not in _MATHML_ATTRIBUTES or (tag == "math" and k == "display" and v == "inline"):
            continue
        value: str | None = _decode(str(v))
        if k in _LENGTH_ATTRIBUTES:
            value = _bounded_length(value)
        elif k == "mathsize":
            value, scale = _bounded_size(value, scale)
        elif k == "scriptlevel" and not re.fullmatch(r"\+?\d{1,2}", value.strip()):
            value = None  # a negative script level enlarges the font
        if value is not None:
            out.append(f' {k}="{html.escape(value)}"')
    return "".join(out), scale


def _plain_row(elem) -> bool:
    return _local(elem.tag) == "mrow" and not elem.attrib and not (elem.text or "").strip() \
        and not (elem.tail or "").strip()


def _children(elem) -> list:
    """``elem``'s children, with the ``<mrow>`` wrappers that change nothing spliced out
    (a third of latex2mathml's bytes): in a row (``math``, ``mrow``, ``mtd`` ...) every
    plain ``<mrow>``; elsewhere (a script, a fraction: one child per slot) an ``<mrow>`` of
    one child, which is that child."""
    out = []
    if _local(elem.tag) in _ROW_PARENTS:
        pending = list(elem)[::-1]
        while pending:
            child = pending.pop()
            if _plain_row(child):
                pending.extend(list(child)[::-1])
            else:
                out.append(child)
        return out
    for child in elem:
        while _plain_row(child) and len(child) == 1:
            child = child[0]
        out.append(child)
    return out


class _TooDeep(Exception):
    pass


def _serialize(root) -> str:
    """MathML markup of a latex2mathml element: MathML elements and attributes only
    (anything else, e.g. HTML that ``\\text{}`` let through, becomes its text), every text
    escaped, lengths and sizes bounded. Iterative: raises ``_TooDeep`` past
    :data:`MAX_MATHML_DEPTH`, never RecursionError."""
    out: list[str] = []
    stack: list = [(root, 1, 1.0)]  # (element, depth, font scale) to write, or markup
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        elem, depth, scale = item
        tag = _local(elem.tag)
        if tag not in _MATHML_TAGS:
            out.append(_text("".join(elem.itertext())) + _text(elem.tail))
            continue
        if depth > MAX_MATHML_DEPTH:
            raise _TooDeep
        attrs, scale = _attributes(tag, elem.attrib, scale)
        out.append(f"<{tag}{attrs}>" + _text(elem.text))
        stack.append(f"</{tag}>" + _text(elem.tail))
        stack.extend((c, depth + 1, scale) for c in reversed(_children(elem)))
    return "".join(out)


@lru_cache(maxsize=65536)
def _convert(latex: str, display: bool) -> tuple[str | None, str]:
    """``(markup, "")``, or ``(None, why it is not converted)``."""
    if len(latex) > MAX_FORMULA_CHARS:
        return None, f"over {MAX_FORMULA_CHARS:,} characters"
    import latex2mathml.converter

    source = _ARRAY_POSITION.sub(r"\1", latex).replace("&#", "&" + _GUARD + "#")
    try:
        root = latex2mathml.converter.convert_to_element(
            source, display="block" if display else "inline")
    except Exception:  # latex2mathml raises many exception types (RecursionError too)
        return None, "latex2mathml could not convert this formula"
    root.tag = "math"
    try:
        return _serialize(root), ""
    except _TooDeep:
        return None, f"nested deeper than {MAX_MATHML_DEPTH} MathML elements"


def latex_to_mathml(latex: str, display: bool = False) -> str | None:
    """``<math>`` markup of a LaTeX formula, or None when it is not converted:
    latex2mathml cannot convert it, it is longer than :data:`MAX_FORMULA_CHARS`, or its
    MathML is nested deeper than :data:`MAX_MATHML_DEPTH`.

    The output holds MathML elements and attributes only, every text escaped (HTML in a
    ``\\text{}`` stays text, an entity stays as written), so a formula cannot inject markup
    into the page; lengths are bounded (:data:`MAX_LENGTH_EM`, :data:`MAX_NEGATIVE_EM`) and
    so are font sizes (:data:`MAX_MATH_SCALE`).

    >>> latex_to_mathml("x^2")
    '<math><msup><mi>x</mi><mn>2</mn></msup></math>'
    >>> latex_to_mathml(r"\\text{<b>bold</b>&lt;}")
    '<math><mtext>&lt;b&gt;bold&lt;/b&gt;&amp;lt;</mtext></math>'
    >>> latex_to_mathml(r"\\rule{1000em}{1em}")
    '<math><mspace mathbackground="black" width="5em" height="1em"></mspace></math>'
    >>> latex_to_mathml(r"\\frac{1}{") is None, latex_to_mathml("x" * 5000) is None
    (True, True)
    """
    return _convert(latex, display)[0]


@dataclass
class MathStats:
    """How many formulas were rendered, and which ones latex2mathml could not convert."""

    formulas: int = 0
    #: not converted (latex2mathml could not, or nested too deep): shown as source
    unconverted: list[str] = field(default_factory=list)
    #: rendered, but with a LaTeX command latex2mathml does not know shown as text
    unknown_commands: int = 0
    #: over :data:`MAX_FORMULA_CHARS` characters: shown as shortened source
    shortened: int = 0


class MathRenderer:
    """Turns LaTeX and text with ``$...$`` formulas into HTML with ``<math>`` elements,
    counting per kind (``"topic"``, ``"result"``) what it could not convert.

    >>> r = MathRenderer()
    >>> r.text("Is $x^2$ even?", kind="topic")
    'Is <math><msup><mi>x</mi><mn>2</mn></msup></math> even?'
    >>> r.formula(r"\\frac{1}{", kind="topic")
    '<code class="tex" title="latex2mathml could not convert this formula">$\\\\frac{1}{$</code>'
    >>> r.stats["topic"].formulas, r.stats["topic"].unconverted
    (2, ['\\\\frac{1}{'])
    >>> r.formula("x+" * 1500).endswith("x+x+… (3,000 characters)</code>")
    True
    """

    def __init__(self) -> None:
        self.stats: dict[str, MathStats] = {}

    def formula(self, latex: str, display: bool = False, kind: str = "result",
                css: str = "", title: str = "") -> str:
        """One formula as ``<math>`` (or ``<code class="tex">`` with its source)."""
        stats = self.stats.setdefault(kind, MathStats())
        stats.formulas += 1
        d = "$$" if display else "$"
        if len(latex.strip()) > MAX_FORMULA_CHARS:
            stats.shortened += 1
            tip = (f"a formula of {len(latex):,} characters, not rendered (over "
                   f"{MAX_FORMULA_CHARS:,}): its first {SHOWN_FORMULA_CHARS} shown"
                   + (f"; {title}" if title else ""))
            cls = " ".join(["tex", "long", css]).strip()
            return (f'<code class="{cls}" title="{html.escape(tip)}">'
                    f"{html.escape(d + latex[:SHOWN_FORMULA_CHARS])}… "
                    f"({len(latex):,} characters)</code>")
        markup, why = _convert(latex.strip(), display)
        if markup is None:
            stats.unconverted.append(latex)
            tip = why + (f"; {title}" if title else "")
            cls = " ".join(["tex", css]).strip()
            return (f'<code class="{cls}" title="{html.escape(tip)}">'
                    f"{html.escape(d + latex + d)}</code>")
        if _UNKNOWN_COMMAND.search(markup):
            stats.unknown_commands += 1
        attrs = (f' class="{html.escape(css)}"' if css else "") + \
            (f' title="{html.escape(title)}"' if title else "")
        return "<math" + attrs + markup[len("<math"):] if attrs else markup

    def text(self, text: str, limit: int | None = None, kind: str = "result",
             mark: Callable[[str], tuple[str, str] | None] | None = None) -> str:
        """HTML of a text whose ``$...$`` / ``$$...$$`` formulas are rendered.

        ``limit``: cut after about that many characters (never inside a formula) and end
        with an ellipsis. ``mark(latex)`` -> ``(css class, tooltip)`` highlights formulas.
        """
        out: list[str] = []
        used = 0
        pos = 0
        for m in MATH.finditer(text):
            piece = text[pos:m.start()]
            if limit is not None and used + len(piece) > limit:
                out.append(html.escape(_cut(piece, limit - used)) + "…")
                return "".join(out)
            out.append(html.escape(piece))
            used += len(piece)
            latex = m.group(1) if m.group(1) is not None else m.group(2)
            if limit is not None and used >= limit:
                out.append("…")
                return "".join(out)
            css, title = (mark(latex) if mark else None) or ("", "")
            out.append(self.formula(latex, display=m.group(1) is not None, kind=kind,
                                    css=css, title=title))
            used += len(latex) // 3 + 1  # a formula takes less room than its source
            pos = m.end()
        rest = text[pos:]
        if limit is not None and used + len(rest) > limit:
            return "".join(out) + html.escape(_cut(rest, max(limit - used, 0))) + "…"
        return "".join(out) + html.escape(rest)


def _cut(text: str, n: int) -> str:
    """``text`` cut to at most ``n`` characters, at a space when there is one near."""
    if len(text) <= n:
        return text
    head = text[:n]
    space = head.rfind(" ")
    return head[:space] if space > n * 0.6 else head


__all__ = ["MATH", "MAX_FORMULA_CHARS", "MAX_LENGTH_EM", "MAX_MATHML_DEPTH", "MAX_MATH_SCALE",
           "MAX_NEGATIVE_EM", "SHOWN_FORMULA_CHARS", "MathRenderer", "MathStats",
           "latex_to_mathml"]
