"""Readers for algebra word-problem datasets with derivations, and textual numbers.

* The DRAW-1K / Alg-514 / Dolphin-L derivation release (``draw.json``,
  ``kushman.json``, ``dolphin_t2_final.json``; Upadhyay & Chang 2017): a JSON list of
  ``{sQuestion, lEquations, lSolutions, iIndex, Template, Alignment, Equiv}``.
  Alignments point at tokens by ``SentenceId``/``TokenId``: tokens are
  ``sQuestion.split()`` and a sentence ends after a ``.``, ``?`` or ``!`` token.
* Split files (one id a line, CRLF allowed) and Dolphin1878 ``number_word_std``
  (``{id, index, text, sources, equations: ["unkn: x,y", "equ: ..."], ans, ans_simple}``).

Each file is a single JSON array (a few MB), read whole with :mod:`json`; records are
then yielded one by one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mathir.errors import InputError, require_file
from mathir.readers.json_input import loads
from mathir.readers.tabular import iter_lines

# --- textual numbers ------------------------------------------------------------------

_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate(
    "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if w != "_"}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10 ** 6}
_FRACTION_WORDS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "fourth": 4, "fourths": 4,
                   "quarter": 4, "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6,
                   "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "tenths": 10}
# Words that stand for a number in these datasets (values as the annotators used them).
_SPECIAL = {"twice": 2, "double": 2, "doubled": 2, "doubles": 2, "thrice": 3, "triple": 3,
            "tripled": 3, "triples": 3, "quadruple": 4, "half": 0.5, "dimes": 0.1, "dime": 0.1,
            "nickels": 0.05, "nickel": 0.05, "nickles": 0.05, "quarters": 0.25,
            "pennies": 0.01, "penny": 0.01, "odd": 2, "even": 2, "couple": 2, "dozen": 12,
            "percent": None}
_DIGITS = re.compile(r"^[$+]?(-?\d[\d,]*(?:\.\d+)?|-?\.\d+)(%?)(?:[-a-z]*)$")
_FRACTION = re.compile(r"^(\d+)/(\d+)$")


def _word_value(w: str) -> float | None:
    if w in _UNITS:
        return _UNITS[w]
    if w in _TENS:
        return _TENS[w]
    if w in _SCALES:
        return _SCALES[w]
    parts = w.split("-")
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _UNITS and _UNITS[parts[1]] < 10:
        return _TENS[parts[0]] + _UNITS[parts[1]]
    if len(parts) == 2 and parts[0] in _UNITS and parts[1] in _FRACTION_WORDS:
        return _UNITS[parts[0]] / _FRACTION_WORDS[parts[1]]
    if len(parts) >= 2 and parts[0] in _UNITS and _UNITS[parts[0]] > 0:
        return _UNITS[parts[0]]  # three-legged, four-hour
    return None


def token_value(token: str) -> float | None:
    """The number a token stands for, or None.

    >>> [token_value(t) for t in ["12", "1,250", "$8", "20%", "5-dollar", "one-third",
    ...                           "twice", "thirty-three", "dimes", "cat"]]
    [12.0, 1250.0, 8.0, 20.0, 5.0, 0.3333333333333333, 2, 33, 0.1, None]
    """
    t = token.lower()
    m = _DIGITS.match(t)
    if m:
        try:
            return float(m.group(1).replace(",", ""))
        except ValueError:
            return None
    m = _FRACTION.match(t)
    if m and int(m.group(2)):
        return int(m.group(1)) / int(m.group(2))
    if t in _SPECIAL:
        return _SPECIAL[t]
    return _word_value(t)


@dataclass(frozen=True)
class TextNumber:
    """A number in the text: sentence and token index (0-based) and its value."""

    sentence: int
    token: int
    value: float

    @property
    def position(self) -> tuple[int, int]:
        return (self.sentence, self.token)


def sentences(text: str) -> list[list[str]]:
    """Tokens by sentence: ``text.split()``, a sentence ending after ``.``/``?``/``!``.

    >>> sentences("Two numbers sum to 5 . Find them ?")
    [['Two', 'numbers', 'sum', 'to', '5', '.'], ['Find', 'them', '?']]
    """
    out, cur = [], []
    for tok in text.split():
        cur.append(tok)
        if tok in (".", "?", "!"):
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def textual_numbers(text: str) -> list[TextNumber]:
    """Every token of ``text`` that stands for a number (see :func:`token_value`).

    >>> [(n.position, n.value) for n in textual_numbers("A is twice B . Their sum is 12 .")]
    [((0, 2), 2), ((1, 3), 12.0)]
    """
    out = []
    for s, toks in enumerate(sentences(text)):
        for i, tok in enumerate(toks):
            v = token_value(tok)
            if v is not None:
                out.append(TextNumber(s, i, v))
    return out


# --- the derivation release -----------------------------------------------------------

@dataclass(frozen=True)
class WordProblem:
    """One word problem with its equations, solutions and (if annotated) derivation.

    ``alignment`` maps each coefficient slot of ``template`` to a textual number;
    ``equiv`` lists classes of interchangeable textual numbers (EquivTNum).
    """

    id: str
    text: str
    equations: tuple[str, ...]
    solutions: tuple[float, ...]
    template: tuple[str, ...] = ()
    alignment: dict[str, TextNumber] = field(default_factory=dict)
    equiv: tuple[tuple[TextNumber, ...], ...] = ()

    def tokens(self) -> list[list[str]]:
        return sentences(self.text)


def _load_json(path: str | Path):
    path = require_file(path)
    raw = path.read_bytes().removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 (byte {raw[e.start]:#04x})", path=path,
                         line=line) from None
    return loads(text, path, 1)  # also refuses nesting deeper than json_input.MAX_DEPTH


def iter_derivation_problems(path: str | Path) -> Iterator[WordProblem]:
    """The problems of ``draw.json`` / ``kushman.json`` / ``dolphin_t2_final.json``.

    A repeated ``iIndex`` (DRAW's 153934 appears twice) is yielded once. An alignment
    pointing outside the text is an InputError naming the problem.

    >>> from mathir.samples import word_problems_sample
    >>> p = next(iter_derivation_problems(word_problems_sample().problems))
    >>> p.template, sorted(p.alignment)
    (('a * m + b * n = c', 'm + n = d'), ['a', 'b', 'c', 'd'])
    """
    data = _load_json(path)
    if not isinstance(data, list):
        raise InputError("expected a JSON list of problems", path=path)
    seen = set()
    for k, rec in enumerate(data):
        try:
            pid = str(rec["iIndex"])
            if pid in seen:
                continue
            seen.add(pid)
            text = rec["sQuestion"]
            toks = sentences(text)

            def number(s: int, t: int, v: float, pid=pid, toks=toks) -> TextNumber:
                if not (0 <= s < len(toks) and 0 <= t < len(toks[s])):
                    raise InputError(f"problem {pid}: token ({s}, {t}) is outside the text",
                                     path=path)
                return TextNumber(int(s), int(t), float(v))

            alignment = {a["coeff"]: number(a["SentenceId"], a["TokenId"], a["Value"])
                         for a in rec.get("Alignment") or []}
            equiv = tuple(tuple(number(*m) for m in cls) for cls in rec.get("Equiv") or [])
            yield WordProblem(pid, text, tuple(rec["lEquations"]),
                              tuple(float(x) for x in rec["lSolutions"]),
                              tuple(rec.get("Template") or ()), alignment, equiv)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            if isinstance(e, InputError):
                raise
            raise InputError(f"record {k}: malformed problem ({e!r})", path=path) from None


def read_split(path: str | Path) -> list[str]:
    """Problem ids of a split or fold file, one a line (CRLF allowed), in order."""
    return [line.strip() for _, line in iter_lines(path) if line.strip()]


# --- Dolphin1878 ----------------------------------------------------------------------

@dataclass(frozen=True)
class DolphinProblem:
    """A Dolphin1878 ``number_word_std`` problem (``ans`` in the Dolphin answer format)."""

    id: str
    index: int
    text: str
    unknowns: tuple[str, ...]
    equations: tuple[str, ...]
    ans: str
    sources: tuple[str, ...]


def iter_dolphin1878(path: str | Path) -> Iterator[DolphinProblem]:
    """The problems of ``number_word_std.{dev,test}.json`` (``sources`` may be a string,
    a list or absent; ``ans_simple`` is ignored, as the dataset document says)."""
    data = _load_json(path)
    if not isinstance(data, list):
        raise InputError("expected a JSON list of problems", path=path)
    for k, rec in enumerate(data):
        try:
            unknowns, equations = [], []
            for e in rec.get("equations") or []:
                head, _, body = e.partition(":")
                if head.strip() == "unkn":
                    unknowns += [u.strip() for u in body.split(",") if u.strip()]
                elif head.strip() == "equ":
                    equations.append(body.strip())
            src = rec.get("sources") or ()
            yield DolphinProblem(str(rec["id"]), int(rec["index"]), rec["text"], tuple(unknowns),
                                 tuple(equations), str(rec["ans"]),
                                 (src,) if isinstance(src, str) else tuple(src))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputError(f"record {k}: malformed problem ({e!r})", path=path) from None
