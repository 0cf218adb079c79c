"""Symbol Layout Trees (SLTs) from LaTeX (through latex2mathml) or Presentation MathML.

An SLT (Zanibbi et al.; Tangent-S) is the layout of a formula: symbols on writing lines
("baselines") linked by spatial edges. Node labels carry a type prefix, as in Tangent-S:

* ``V!x`` identifiers (variables and function names), ``N!2`` numbers, ``T!if`` text,
* ``O!divide`` fraction bars, ``O!root`` radicals, ``O!binom`` stacks without a bar,
* ``M!2x2`` matrices (rows x columns); operators such as ``=`` or ``+`` are the symbol.

Edge labels: ``n`` next on the baseline, ``a`` above (superscript), ``b`` below
(subscript), ``o`` over (numerator, overscript, accent), ``u`` under (denominator,
underscript), ``c``/``d`` pre-superscript/pre-subscript (and a root's index), ``w``
within (radicand), ``e`` element (matrix cell).

Scripts attach to the **last** symbol of their base's baseline, so ``(x+1)^2`` and
``\\|A\\|_2`` put the script on the closing fence, whether the MathML wraps the fenced group
in an ``mrow`` (LaTeXML, ``\\left( ... \\right)``) or scripts the fence alone (latex2mathml).
Invisible operators (function application, invisible times) and spaces are skipped.

We walk the MathML ourselves: no library builds Tangent-style SLTs from MathML in Python
(Tangent-S's own code is Python 2 and not packaged).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache

from lxml import etree

from mathir.errors import InputError


class SLTError(ValueError):
    """A formula whose MathML could not be turned into an SLT."""


class Node:
    """One SLT node: a label and its outgoing ``(edge, child)`` pairs.

    >>> n = slt_from_latex("x^2")
    >>> n.label, [(e, c.label) for e, c in n.edges]
    ('V!x', [('a', 'N!2')])
    """

    __slots__ = ("label", "edges")

    def __init__(self, label: str):
        self.label = label
        self.edges: list[tuple[str, Node]] = []

    def __repr__(self) -> str:
        return f"Node({self.label!r}, {len(self.edges)} edges)"

    def walk(self) -> Iterator[tuple[str, Node]]:
        """Every node once with its location (non-``n`` edges from the root; ``-`` for none).

        >>> [(loc, n.label) for loc, n in slt_from_latex("a_i+1").walk()]
        [('-', 'V!a'), ('b', 'V!i'), ('-', '+'), ('-', 'N!1')]
        """
        stack: list[tuple[str, Node]] = [("", self)]
        while stack:
            loc, node = stack.pop()
            yield (loc or "-"), node
            for edge, child in reversed(node.edges):
                stack.append((loc if edge == "n" else loc + edge, child))

    def to_string(self) -> str:
        """A compact text form, e.g. ``V!x[a:N!2]`` (for tests and debugging).

        >>> slt_from_latex(r"\\frac{1}{x}").to_string()
        'O!divide[o:N!1,u:V!x]'
        """
        if not self.edges:
            return self.label
        inner = ",".join(f"{e}:{c.to_string()}" for e, c in self.edges)
        return f"{self.label}[{inner}]"


_SKIP_TEXT = {"\u2061", "\u2062", "\u2063", "\u2064", ""}
_SEQUENCE = {"math", "mrow", "mstyle", "mpadded", "menclose", "mtd", "mtr", "mlabeledtr",
             "maction", "mfenced"}
_IGNORED = {"mspace", "mphantom", "annotation", "annotation-xml", "mprescripts", "none",
            "malignmark", "maligngroup"}
_WS = re.compile(r"\s+")
# Symbols that LaTeXML and latex2mathml write with different characters.
_SAME_SYMBOL = {"\u2212": "-", "\u2217": "*", "\u2223": "|", "\u2225": "\u2016", "\u2032": "'",
                "\u00d7": "\u00d7", "\u2026": "\u2026", "\u22ef": "\u22ef"}

# Mathematical Alphanumeric Symbols (LaTeXML's math italic)
_MATH_ALPHANUMERIC = re.compile("[\U0001d400-\U0001d7ff]")
_SCRIPTS = {"msub": ("b",), "msup": ("a",), "msubsup": ("b", "a"), "munder": ("u",),
            "mover": ("o",), "munderover": ("u", "o")}
_LIMIT_OPERATORS = {"\u2211", "\u220f", "\u2210", "\u22c3", "\u22c2", "\u2a01", "\u2a02", "\u22c1",
                    "\u22c0", "V!lim", "V!max", "V!min", "V!sup", "V!inf", "V!limsup", "V!liminf"}
Fragment = tuple[Node, Node]  # first and last node of a baseline piece


def _zero_thickness(value: str | None) -> bool:
    # "0", "0pt", "0em", "0.0ex" mean no bar (\\binom); "thin", "medium", "2px" draw one.
    m = re.fullmatch(r"\s*([0-9.]+)\s*[a-z%]*\s*", value or "")
    try:
        return m is not None and float(m.group(1)) == 0
    except ValueError:
        return False


@lru_cache(maxsize=4096)  # a handful of tags, met hundreds of thousands of times
def _local(tag) -> str:
    if not isinstance(tag, str):
        return ""  # comments, processing instructions
    return tag.rsplit("}", 1)[-1]


def _text(el) -> str:
    t = el.text or ""
    if "&" in t:
        t = html.unescape(t)
    return _WS.sub(" ", t).strip()


def _children(el) -> list:
    return [c for c in el if _local(c.tag)]


def _chain(frags: list[Fragment | None]) -> Fragment | None:
    first = last = None
    for f in frags:
        if f is None:
            continue
        if first is None:
            first, last = f
        else:
            last.edges.append(("n", f[0]))
            last = f[1]
    return None if first is None else (first, last)


def _leaf(label: str) -> Fragment:
    n = Node(label)
    return n, n


def _attach(base: Fragment | None, scripts: list[tuple[str, object]]) -> Fragment | None:
    built = [(edge, _build(el)) for edge, el in scripts]
    built = [(edge, f) for edge, f in built if f is not None]
    if base is None:
        # A script with no base ({}_n C_k): keep its symbols on the baseline.
        return _chain([f for _, f in built])
    anchor = base[1]
    for edge, f in built:
        anchor.edges.append((edge, f[0]))
    return base


def _build(el) -> Fragment | None:
    tag = _local(el.tag)
    if tag in _IGNORED:
        return None
    if tag in ("mi", "mn", "mo", "mtext", "ms"):
        text = _text(el)
        if text in _SKIP_TEXT:
            return None
        text = _SAME_SYMBOL.get(text, text)
        if _MATH_ALPHANUMERIC.search(text):
            text = unicodedata.normalize("NFKC", text)  # math italic 𝑑 -> d (LaTeXML)
        if tag == "mo" and text.isalpha():
            tag = "mi"  # \\lim, \\gcd, \\operatorname{ord}: LaTeXML writes <mi>
        if tag == "mi":
            if len(text) == 1 and unicodedata.category(text)[0] in "SP":
                return _leaf(text)  # an operator written as <mi> (latex2mathml's \\implies)
            return _leaf("V!" + text)
        if tag == "mn":
            return _leaf("N!" + text)
        if tag in ("mtext", "ms"):
            return _leaf("T!" + text)
        return _leaf(text)
    kids = _children(el)
    if tag == "semantics":
        return _build(kids[0]) if kids else None
    if tag == "mfenced":
        opening, closing = el.get("open", "("), el.get("close", ")")
        seps = (el.get("separators", ",") or "").split() or [""]
        seps = list("".join(seps)) or [""]
        parts: list[Fragment | None] = [_leaf(opening) if opening else None]
        for i, k in enumerate(kids):
            if i:
                s = seps[min(i - 1, len(seps) - 1)]
                parts.append(_leaf(s) if s else None)
            parts.append(_build(k))
        parts.append(_leaf(closing) if closing else None)
        return _chain(parts)
    if tag in _SEQUENCE:
        return _chain([_build(k) for k in kids])
    if tag == "mfrac":
        if not 1 <= len(kids) <= 2:  # latex2mathml writes \\frac{a} with one child
            raise SLTError(f"mfrac with {len(kids)} children")
        bar = "O!binom" if _zero_thickness(el.get("linethickness")) else "O!divide"
        node = Node(bar)
        for edge, k in zip(("o", "u"), kids, strict=False):
            f = _build(k)
            if f is not None:
                node.edges.append((edge, f[0]))
        return node, node
    if tag == "msqrt":
        node = Node("O!root")
        f = _chain([_build(k) for k in kids])
        if f is not None:
            node.edges.append(("w", f[0]))
        return node, node
    if tag == "mroot":
        if len(kids) != 2:
            raise SLTError(f"mroot with {len(kids)} children")
        node = Node("O!root")
        for edge, k in (("w", kids[0]), ("c", kids[1])):
            f = _build(k)
            if f is not None:
                node.edges.append((edge, f[0]))
        return node, node
    if tag in _SCRIPTS:
        edges = _SCRIPTS[tag]
        if not kids:
            return None
        if len(kids) > len(edges) + 1:
            # latex2mathml flattens a fenced base (\\binom{n}{k}^2, a bmatrix^{-1}) into
            # the script element: the base is everything before the scripts.
            base = _chain([_build(k) for k in kids[:-len(edges)]])
            kids = [kids[0], *kids[-len(edges):]]
        else:
            base = _build(kids[0])
            edges = edges[:len(kids) - 1]
        if base is not None and base[1].label in _LIMIT_OPERATORS:
            # Limits of sums and lim are under/over whether written as scripts or not.
            edges = tuple({"a": "o", "b": "u"}.get(e, e) for e in edges)
        return _attach(base, list(zip(edges, kids[1:], strict=True)))
    if tag == "mmultiscripts":
        if not kids:
            return None
        base, rest = kids[0], kids[1:]
        post, pre, seen_pre = [], [], False
        for k in rest:
            if _local(k.tag) == "mprescripts":
                seen_pre = True
                continue
            (pre if seen_pre else post).append(k)
        pairs = [("b" if i % 2 == 0 else "a", k) for i, k in enumerate(post)]
        pairs += [("d" if i % 2 == 0 else "c", k) for i, k in enumerate(pre)]
        return _attach(_build(base), pairs)
    if tag == "mtable":
        rows = [r for r in kids if _local(r.tag) in ("mtr", "mlabeledtr")]
        cols = max((len(_children(r)) for r in rows), default=0)
        node = Node(f"M!{len(rows)}x{cols}")
        for r in rows:
            for cell in _children(r):
                f = _build(cell)
                if f is not None:
                    node.edges.append(("e", f[0]))
        return node, node
    # <merror> (LaTeXML's undefined macros such as \\binom) keeps its text as T! nodes.
    # Unknown presentation element: keep its content on the baseline.
    return _chain([_build(k) for k in kids])


def slt_from_element(el) -> Node:
    """The SLT of a MathML element (lxml or xml.etree); :class:`SLTError` when empty."""
    f = _build(el)
    if f is None:
        raise SLTError("formula has no visible symbols")
    return f[0]


def slt_from_latex(latex: str) -> Node:
    """The SLT of a LaTeX formula, via latex2mathml's Presentation MathML.

    Raises :class:`SLTError` when latex2mathml cannot parse it.

    >>> slt_from_latex(r"\\|A\\|_2").to_string()
    '‖[n:V!A[n:‖[b:N!2]]]'
    >>> slt_from_latex(r"\\binom n2").to_string()
    '([n:O!binom[o:V!n,u:N!2,n:)]]'
    """
    from latex2mathml.converter import convert_to_element

    text = latex.strip().replace("...", "\\ldots ")  # as LaTeXML reads it
    # LaTeXML's alttext keeps line-continuation comments ("%" + newline, flattened to
    # "% "); latex2mathml would drop the rest of the formula as a comment.
    text = _LINE_CONTINUATION.sub("", text)
    if not text:
        raise SLTError("empty formula")
    try:
        el = convert_to_element(text)
    except Exception as e:  # noqa: BLE001 - latex2mathml raises many types on bad LaTeX
        raise SLTError(f"latex2mathml: {type(e).__name__}: {e}") from None
    return slt_from_element(el)


_LINE_CONTINUATION = re.compile(r"(?<!\\)%\s*")
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False,
                          remove_comments=True)


def slt_from_mathml(mathml: str | bytes) -> Node:
    """The SLT of a Presentation MathML string (e.g. an official ``slt`` TSV cell).

    Parsed without entity expansion or network access. :class:`SLTError` on bad XML.

    >>> slt_from_mathml('<math><msup><mi>x</mi><mn>2</mn></msup></math>').to_string()
    'V!x[a:N!2]'
    """
    data = mathml.encode("utf-8") if isinstance(mathml, str) else mathml
    data = data.strip()
    if data.startswith(b"<?xml"):
        end = data.find(b"?>")
        data = data[end + 2:] if end >= 0 else data
    try:
        root = etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError as e:
        raise SLTError(f"bad MathML: {e}") from None
    return slt_from_element(root)


def read_slt_tsv(path) -> Iterator[tuple[str, Node | None]]:
    """Stream ``(formula_id, SLT or None)`` from an official SLT TSV.

    Works for the topic formula SLT files and the ``slt_representation`` index files
    (the MathML is the last, CSV-quoted column). A cell that does not parse gives None.
    """
    from mathir.readers.formula_tsv import unquote_field
    from mathir.readers.tabular import iter_lines

    header = True
    for lineno, line in iter_lines(path):
        fields = line.split("\t")
        if header:
            header = False
            if fields[0].strip().lower() == "id":
                continue
        if len(fields) < 2:
            raise InputError("expected an id and a MathML column", path=path, line=lineno)
        cell = unquote_field(fields[-1].strip())
        try:
            yield fields[0].strip(), slt_from_mathml(cell) if cell else None
        except SLTError:
            yield fields[0].strip(), None
