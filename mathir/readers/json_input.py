"""Reading JSON a user gives mathir: one function, with a cap on nesting depth.

:mod:`json` parses nested arrays and objects recursively: a line such as
``[[[[...]]]]`` 100,000 levels deep raises RecursionError (a traceback, not a message),
and where a program has raised the recursion limit it can overflow the C stack.
:func:`loads` counts the depth first, in one linear pass that never recurses, and
refuses anything deeper than :data:`MAX_DEPTH` with an InputError naming the file and
line; so is an integer longer than Python reads from text (4,300 digits, where
:mod:`json` raises a bare ValueError). Every reader of JSON from outside (answer
records, word-problem runs and datasets) goes through it; JSON that mathir wrote itself
(manifests) need not.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from mathir.errors import InputError

#: Deepest nesting of arrays and objects accepted (real inputs nest 5 levels at most).
MAX_DEPTH = 100

# What the depth count must see: brackets, quotes and backslash escapes (so that a
# quote or bracket inside a string does not count). Each match is one or two
# characters, so the scan is linear whatever the text.
_TOKEN = re.compile(r'\\.|["\[\]{}]', re.S)


def _too_deep(text: str, max_depth: int) -> int | None:
    """The offset of the first bracket nested deeper than ``max_depth``, if any."""
    depth, in_string = 0, False
    for m in _TOKEN.finditer(text):
        t = m.group()
        if t == '"':
            in_string = not in_string
        elif in_string or len(t) == 2:
            continue  # inside a string, or an escape (invalid outside one: json says so)
        elif t in "[{":
            depth += 1
            if depth > max_depth:
                return m.start()
        else:
            depth -= 1
    return None


def loads(text: str, path: str | Path | None = None, line: int | None = None,
          max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, with errors as InputError naming ``path`` and line.

    ``line`` is the line of ``path`` where ``text`` starts (1 for a whole file);
    errors inside a multi-line text name the line of the error itself.

    >>> loads('{"a": [1, "[[["]}')
    {'a': [1, '[[[']}
    >>> loads("[" * 101 + "]" * 101, "deep.jsonl", 7)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: deep.jsonl:7: JSON nested deeper than 100 levels
    >>> loads("[" + "9" * 5000 + "]", "big.jsonl", 2)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: big.jsonl:2: not valid JSON: an integer of more than 4,300 digits
    """
    first = 1 if line is None else line
    # Depth cannot exceed the number of opening brackets: count them first (fast, in C)
    # and scan only when there are enough to matter.
    if text.count("[") + text.count("{") > max_depth:
        at = _too_deep(text, max_depth)
        if at is not None:
            raise InputError(f"JSON nested deeper than {max_depth} levels", path=path,
                             line=first + text.count("\n", 0, at))
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg}", path=path, line=first + e.lineno - 1) from None
    except ValueError:  # an integer beyond Python's int string-conversion limit
        raise InputError(f"not valid JSON: an integer of more than {_max_int_digits():,} "
                         "digits", path=path, line=line) from None
    except RecursionError:  # only where max_depth is set above the recursion limit
        raise InputError("JSON nested too deeply", path=path, line=line) from None


def _max_int_digits() -> int:
    """Python's limit on the digits of an integer read from text (4,300 by default; 0
    when lifted, and then no ValueError comes)."""
    return sys.get_int_max_str_digits()
