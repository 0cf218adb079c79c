"""Tangent-S style symbol-pair tuples of an SLT, and PISA-safe formula tokens.

A symbol-pair tuple ``(s1, s2, path, location)`` links a symbol to each symbol it reaches
in at most ``window`` edges (Tangent-S used a window of 2); ``path`` is the edge labels
walked (``a`` for ``x^2``, ``na`` for ``x+y^2``'s ``+`` to ``2`` is ``n a``), and
``location`` the non-``n`` edges from the root to ``s1`` (``-`` on the main baseline).
End-of-baseline tuples ``(s, "0!", "n", location)`` mark the last symbol of each baseline,
so that one-symbol formulas still have a tuple.

PISA's ``toks`` path indexes the terms exactly as given, but its query parser and lexicon
expect lowercase words; :func:`encode_token` writes any string as a lowercase
alphanumeric token, reversibly (case is encoded in the token, see its docstring).

Formulas that do not parse fall back to their LaTeX words (the Task 1 baseline mapping);
:class:`FormulaTokenizer` counts them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from mathir.indexing.slt import Node, SLTError, slt_from_latex, slt_from_mathml
from mathir.readers.latex_words import latex_to_words

EOB = "0!"


class SymbolPair(NamedTuple):
    """One Tangent-S symbol-pair tuple."""

    first: str
    second: str
    path: str
    location: str


def symbol_pairs(root: Node, window: int = 2, end_of_baseline: bool = True) -> list[SymbolPair]:
    """The symbol-pair tuples of an SLT (window of ``window`` edges).

    >>> from mathir.indexing.slt import slt_from_latex
    >>> [tuple(t[:3]) for t in symbol_pairs(slt_from_latex("x^2"))]
    [('V!x', 'N!2', 'a'), ('V!x', '0!', 'n'), ('N!2', '0!', 'n')]
    """
    return [SymbolPair(*t) for t in _pairs(root, window, end_of_baseline)]


def _pairs(root: Node, window: int, end_of_baseline: bool = True
           ) -> Iterator[tuple[str, str, str, str]]:
    """:func:`symbol_pairs` as plain ``(first, second, path, location)`` tuples, made as
    they are met (the indexing hot loop: no object per tuple)."""
    for loc, node in root.walk():
        # paths of length 1 .. window from node
        frontier: list[tuple[str, Node]] = [("", node)]
        for _ in range(window):
            nxt = []
            for path, n in frontier:
                for edge, child in n.edges:
                    p = path + edge
                    yield node.label, child.label, p, loc
                    nxt.append((p, child))
            frontier = nxt
            if not frontier:
                break
        if end_of_baseline and not any(e == "n" for e, _ in node.edges):
            yield node.label, EOB, "n", loc


def encode_token(text: str) -> str:
    """A lowercase alphanumeric token that PISA keeps exactly; different texts stay different.

    ``a``-``y`` and digits are kept; ``z`` is the escape: ``zz`` is z, ``zu`` + letter an
    upper-case letter, ``zb`` ``!``, ``zp`` ``|``, and ``zx`` + hex code + ``z`` any
    other character.

    >>> encode_token("V!x|N!2|a")
    'zuvzbxzpzunzb2zpa'
    >>> encode_token("≤") == encode_token("<")
    False
    """
    out = []
    for ch in text:
        if ("a" <= ch <= "y") or ("0" <= ch <= "9"):
            out.append(ch)
        elif ch == "z":
            out.append("zz")
        elif "A" <= ch <= "Z":
            out.append("zu" + ch.lower())
        elif ch == "!":
            out.append("zb")
        elif ch == "|":
            out.append("zp")
        else:
            out.append(f"zx{ord(ch):x}z")
    return "".join(out)


def _abstract(label: str) -> str:
    # Variables and numbers lose their value (Tangent-CFT's type abstraction).
    return label[:2] if label[:2] in ("V!", "N!") else label


@lru_cache(maxsize=1 << 18)
def _label_token(label: str) -> str:
    return encode_token(label)


_SEP = encode_token("|")
_ABSTRACT_MARK = _SEP + encode_token("*")


def tuple_tokens(root: Node, window: int = 2, location: bool = False, abstract: bool = True,
                 symbols: bool = True) -> Counter:
    """Encoded tokens of an SLT with their counts.

    * every symbol-pair tuple ``s1|s2|path`` (with ``|location`` when ``location``);
    * with ``abstract``, each tuple holding a variable or number once more with the
      value dropped (``V!|N!|a|*`` for ``x^2``), so that ``t^2`` still matches;
    * with ``symbols``, each node label alone.

    Abstraction and symbols each added about 0.005 nDCG' on real judged formulas
    (benchmarks/arqmath_formula_pool.py).

    >>> sorted(tuple_tokens(slt_from_latex("x")))
    ['zuvzbx', 'zuvzbxzp0zbzpn', 'zuvzbzp0zbzpnzpzx2az']
    >>> sorted(tuple_tokens(slt_from_latex("x"), abstract=False, symbols=False))
    ['zuvzbxzp0zbzpn']
    """
    # The encoding is character by character, so a tuple's token is the concatenation
    # of its encoded parts; edge paths and locations are letters a-y and encode as
    # themselves. Each label is encoded (and abstracted) once per formula, and tokens are
    # counted in a plain dict: this is the indexing hot loop (4.9 -> 3.1 CPU-s for 5,000
    # real formulas; the same tokens in the same order).
    counts: dict[str, int] = {}
    get = counts.get
    labels: dict[str, tuple[str, str | None]] = {}  # label -> (encoded, encoded abstraction)

    def label(text: str) -> tuple[str, str | None]:
        known = labels.get(text)
        if known is None:
            short = _abstract(text)
            known = labels[text] = (_label_token(text),
                                    _label_token(short) if short != text else None)
        return known

    for a, b, path, loc in _pairs(root, window):
        first, first_abstract = label(a)
        second, second_abstract = label(b)
        token = first + _SEP + second + _SEP + path
        if location:
            token += _SEP + _label_token(loc)
        counts[token] = get(token, 0) + 1
        if abstract and (first_abstract or second_abstract):
            token = ((first_abstract or first) + _SEP + (second_abstract or second) + _SEP + path
                     + _ABSTRACT_MARK)
            counts[token] = get(token, 0) + 1
    if symbols:
        for _, node in root.walk():
            token = label(node.label)[0]
            counts[token] = get(token, 0) + 1
    return Counter(counts)


def latex_word_tokens(latex: str) -> Counter:
    """The LaTeX-as-words tokens of a formula, encoded (the fallback representation).

    >>> dict(latex_word_tokens("x^2"))
    {'x': 1, 'power': 1, '2': 1}
    """
    return Counter(encode_token(w.lower()) for w in latex_to_words(latex).split())


@dataclass
class FormulaTokenizer:
    """Turns formulas into tuple tokens, falling back to LaTeX words; counts fallbacks.

    >>> tok = FormulaTokenizer()
    >>> len(tok.tokens(r"\\frac{a}{b}")) > 0, tok.fallbacks
    (True, 0)
    >>> _ = tok.tokens(r"\\frac{a}{"); tok.fallbacks, tok.formulas
    (1, 2)
    """

    window: int = 2
    location: bool = False
    abstract: bool = True
    symbols: bool = True
    formulas: int = 0
    fallbacks: int = 0
    errors: Counter = field(default_factory=Counter)

    def tokens(self, latex: str, mathml: str | None = None) -> Counter:
        """Tokens of one formula: from ``mathml`` (an SLT MathML string) when given."""
        self.formulas += 1
        try:
            root = slt_from_mathml(mathml) if mathml else slt_from_latex(latex)
            toks = tuple_tokens(root, self.window, self.location, self.abstract, self.symbols)
        except (SLTError, RecursionError) as e:
            self.fallbacks += 1
            self.errors[str(e).split(":", 1)[0]] += 1
            return latex_word_tokens(latex)
        return toks

    @property
    def fallback_rate(self) -> float:
        """Share of formulas that fell back to LaTeX words."""
        return self.fallbacks / self.formulas if self.formulas else 0.0
