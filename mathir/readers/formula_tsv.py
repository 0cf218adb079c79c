"""The ARQMath formula index TSVs (``latex_representation_v3`` and its variants).

Column layouts, all with a header line:

* v3 (9 columns): ``id post_id thread_id type comment_id old_visual_id visual_id issue formula``
* 7 columns: ``id post_id thread_id type comment_id visual_id formula``
* 6 columns: ``id post_id thread_id type visual_id formula``

The ``formula`` column is last and may be LaTeX, or quoted MathML in the SLT/OPT files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from mathir.errors import InputError
from mathir.readers.tabular import iter_lines

FORMULA_COLUMNS = ["formula_id", "post_id", "thread_id", "type", "comment_id",
                   "old_visual_id", "visual_id", "issue", "formula"]
_HEADER_NAMES = {"id": "formula_id", "formula": "formula", "latex": "formula",
                 "slt": "formula", "opt": "formula"}
_KNOWN = set(FORMULA_COLUMNS) | set(_HEADER_NAMES)


class FormulaRecord(NamedTuple):
    """One formula instance of the collection (every id a string, "" when absent)."""

    formula_id: str
    post_id: str
    thread_id: str
    type: str
    comment_id: str
    old_visual_id: str
    visual_id: str
    issue: str
    formula: str


def unquote_field(value: str) -> str:
    # SLT/OPT files hold MathML as a CSV-quoted field ("" for a quote).
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return value[1:-1].replace('""', '"')
    return value


def iter_formula_index(path: str | Path) -> Iterator[FormulaRecord]:
    """Stream a formula index TSV of any of the known layouts.

    >>> from mathir.samples import arqmath_sample
    >>> rec = next(iter_formula_index(arqmath_sample().formulas))
    >>> rec.formula_id.isdigit() and rec.visual_id != ""
    True
    """
    columns: list[str] | None = None
    for lineno, line in iter_lines(path):
        if columns is None:
            names = [c.strip().lower() for c in line.split("\t")]
            if _HEADER_NAMES.get(names[-1]) != "formula" or not set(names) <= _KNOWN:
                raise InputError(
                    "expected a header line naming the columns "
                    "(id post_id thread_id type ... visual_id ... formula)",
                    path=path,
                    line=lineno,
                )
            columns = [_HEADER_NAMES.get(n, n) for n in names]
            missing = {"formula_id", "post_id", "formula"} - set(columns)
            if missing:
                raise InputError(f"header lacks columns {sorted(missing)}", path=path, line=lineno)
            continue
        fields = line.split("\t", len(columns) - 1)
        if len(fields) != len(columns):
            raise InputError(
                f"expected {len(columns)} columns, found {len(fields)}", path=path, line=lineno
            )
        row = dict(zip(columns, fields, strict=True))
        if not row["formula_id"].strip():
            raise InputError("empty formula id", path=path, line=lineno)
        yield FormulaRecord(
            formula_id=row["formula_id"].strip(),
            post_id=row.get("post_id", "").strip(),
            thread_id=row.get("thread_id", "").strip(),
            type=row.get("type", "").strip(),
            comment_id=row.get("comment_id", "").strip(),
            old_visual_id=row.get("old_visual_id", "").strip(),
            visual_id=row.get("visual_id", "").strip(),
            issue=row.get("issue", "").strip(),
            formula=unquote_field(row["formula"].strip()),
        )
    if columns is None:
        raise InputError("empty formula index file", path=path)


def read_formula_index(path: str | Path) -> pd.DataFrame:
    """A formula index TSV as a frame with :data:`FORMULA_COLUMNS` (all strings).

    >>> from mathir.samples import arqmath_sample
    >>> list(read_formula_index(arqmath_sample().formulas).columns)[:3]
    ['formula_id', 'post_id', 'thread_id']
    """
    return pd.DataFrame.from_records(list(iter_formula_index(path)), columns=FORMULA_COLUMNS)
