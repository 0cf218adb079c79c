"""LaTeX as words: the symbol-to-English mapping of the ARQMath PyTerrier baselines.

The ARQMath-3 PyTerrier TF-IDF baseline (pt-arqmath, ``math_recoding.py``) replaces each
LaTeX symbol with an English word so that a word tokenizer keeps formulas: ``x^2+1``
becomes ``x power 2 plus 1`` and ``\\geq`` becomes ``backslash geq``. We apply the same
map, with one documented difference: the baseline ran it over the whole post HTML (so
``<p>`` became ``less than p greater than``); we apply it to formulas only.
"""

from __future__ import annotations

import re

# Order follows the baseline's dict; only "\\" before "\" matters, since every
# replacement is made of letters and spaces.
LATEX_SYMBOL_WORDS: dict[str, str] = {
    "+": "plus",
    "-": "minus",
    "^": "power",
    "*": "star",
    "#": "hash",
    "!": "exclaim",
    "?": "question",
    ",": "comma",
    ".": "period",
    "/": "forward slash",
    ":": "colon",
    ";": "semicolon",
    "&": "ampersand",
    "~": "tilde",
    "`": "backquote",
    "@": "at",
    "$": "dollar",
    "%": "percent",
    '"': "double quote",
    "'": "single quote",
    "|": "vertical bar",
    "=": "equals",
    ">": "greater than",
    "<": "less than",
    "{": "open brace",
    "}": "close brace",
    "[": "open square bracket",
    "]": "close square bracket",
    "(": "open parenthesis",
    ")": "close parenthesis",
    "\\\\": "double backslash",
    "\\": "backslash",
}

# One C-level pass: "\\" is first parked on a control character, then every symbol is
# translated to its padded word (much faster than sequential str.replace calls).
_DOUBLE_BACKSLASH = "\x02"
_TABLE = {ord(k): f" {v} " for k, v in LATEX_SYMBOL_WORDS.items() if len(k) == 1}
_TABLE[ord(_DOUBLE_BACKSLASH)] = " double backslash "
_MATH_IN_TEXT = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)


def latex_to_words(latex: str) -> str:
    """Replace LaTeX symbols by English words, padded with spaces.

    >>> latex_to_words(r"x^2+1 \\geq 0")
    'x power 2 plus 1 backslash geq 0'
    >>> latex_to_words(r"a \\\\ b")
    'a double backslash b'
    """
    return " ".join(latex.replace("\\\\", _DOUBLE_BACKSLASH).translate(_TABLE).split())


def math_to_words(text: str) -> str:
    """Translate the ``$...$`` and ``$$...$$`` formulas of a text, leaving prose alone.

    >>> math_to_words("Show that $a<b$ for all n.")
    'Show that a less than b for all n.'
    """
    def repl(m: re.Match) -> str:
        return " " + latex_to_words(m.group(1) if m.group(1) is not None else m.group(2)) + " "

    return " ".join(_MATH_IN_TEXT.sub(repl, text).split())
