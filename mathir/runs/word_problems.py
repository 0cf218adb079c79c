"""Word-problem run files: one derivation per problem, a TSV with a header.

Columns: ``qid``, ``docno`` (training problem whose template was used), ``score`` (a
finite number in ASCII digits), then JSON: ``solution`` (a list of numbers),
``template`` (a list of equation strings), ``alignment`` (an object slot ->
[SentenceId, TokenId, Value], the ids non-negative integers), ``equations`` (a list of
strings); last the run name. An unsolved problem has ``[]``, ``[]``, ``{}``, ``[]``. A
field of another JSON type is an InputError naming the file and line (it used to be
read, then scored as empty or crash a view of the run).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from mathir.answer_checking.derivations import template
from mathir.answer_checking.templates import TemplateError
from mathir.errors import InputError, require_file
from mathir.readers.json_input import loads
from mathir.readers.tabular import DECIMAL_PATTERN, iter_lines, parse_decimal, quote_field
from mathir.storage import atomic_file

COLUMNS = ["qid", "docno", "score", "solution", "template", "alignment", "equations", "run"]


def write_run(results: pd.DataFrame, path: str | Path, name: str = "run",
              topics: Iterable[str] | None = None, format: str | None = None) -> Path:
    """Write one row per topic (atomically). ``topics`` adds empty rows for unsolved ones.

    >>> import tempfile
    >>> p = write_run(pd.DataFrame({"qid": ["1"], "docno": ["7"], "score": [1.5],
    ...     "solution": ["[2.0]"], "template": ['["m = a"]'], "alignment": ['{"a": [0, 1, 2.0]}'],
    ...     "equations": ['["m = 2"]']}), tempfile.mkdtemp() + "/r.tsv", topics=["1", "2"])
    >>> read_run(p)["solution"].tolist()
    [[2.0], []]
    """
    if format not in (None, "arqmath", "tsv"):
        raise InputError(f"word-problem runs have one format (tsv), not {format!r}")
    path = Path(path)
    rows = results.drop_duplicates("qid")
    seen = set(rows["qid"].astype(str))
    with atomic_file(path) as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows.itertuples(index=False):
            w.writerow([str(r.qid), r.docno, f"{float(r.score):.6f}", r.solution, r.template,
                        r.alignment, r.equations, name])
        for qid in topics if topics is not None else ():
            if str(qid) not in seen:
                seen.add(str(qid))
                w.writerow([str(qid), "", "0.0", "[]", "[]", "{}", "[]", name])
    return path


def _json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, with its article.

    >>> _json_type("x"), _json_type(2.5), _json_type(None), _json_type({})
    ('a string', 'a number', 'null', 'an object')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_type(field: str, value: Any) -> None:
    """InputError (without a place: the caller adds it) when a JSON field of a run has
    a type the evaluation cannot use.

    >>> _check_type("solution", [2, 3.5])
    >>> _check_type("equations", "m = 2")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: expected a JSON list of equation strings, found a string
    """
    if field == "alignment":
        if not isinstance(value, dict):
            raise InputError("expected a JSON object slot -> [SentenceId, TokenId, Value], "
                             f"found {_json_type(value)}")
        for slot, where in value.items():
            if not (isinstance(where, list) and len(where) == 3
                    and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0
                            for x in where[:2]) and _is_number(where[2])):
                raise InputError(f"slot {quote_field(slot)}: expected [SentenceId, TokenId, "
                                 "Value] (two non-negative integers and a number), found "
                                 f"{json.dumps(where)[:60]}")
        return
    want, item, is_item = {
        "solution": ("a JSON list of numbers", "a number", _is_number),
        "template": ("a JSON list of equations", "a string", lambda x: isinstance(x, str)),
        "equations": ("a JSON list of equation strings", "a string",
                      lambda x: isinstance(x, str)),
    }[field]
    if not isinstance(value, list):
        raise InputError(f"expected {want}, found {_json_type(value)}")
    for k, x in enumerate(value, 1):
        if not is_item(x):
            name = "solution" if field == "solution" else "equation"
            raise InputError(f"{name} {k} is {_json_type(x)}, not {item}")


def read_run(path: str | Path, topics: Iterable[str] | None = None) -> pd.DataFrame:
    """Read a run; JSON columns are decoded. Errors name the line."""
    path = require_file(path, "run file")
    known = set(topics) if topics is not None else None
    rows = []
    header = None
    # Line by line through iter_lines: encoding errors and NUL bytes name their line,
    # and a field cannot span lines (its JSON is written on one).
    for line, text in iter_lines(path):
        try:
            rec = next(csv.reader([text], delimiter="\t"))
        except csv.Error as e:
            raise InputError(f"malformed TSV line ({e})", path=path, line=line) from None
        if header is None:
            header = rec
            if header != COLUMNS:
                raise InputError(f"expected the header {COLUMNS}", path=path, line=line)
            continue
        if len(rec) != len(COLUMNS):
            raise InputError(f"expected {len(COLUMNS)} columns, found {len(rec)}",
                             path=path, line=line)
        if known is not None and rec[0] not in known:
            raise InputError(f"problem {rec[0]!r} is not among the topics", path=path,
                             line=line)
        if not DECIMAL_PATTERN.fullmatch(rec[2]):
            raise InputError(f"malformed field (score {quote_field(rec[2])} is not a number)",
                             path=path, line=line)
        score = parse_decimal(rec[2], "score", path, line)  # finite
        fields = {}
        for i, k in enumerate(("solution", "template", "alignment", "equations"), 3):
            try:  # loads: also refuses nesting deeper than json_input.MAX_DEPTH
                fields[k] = loads(rec[i])
                _check_type(k, fields[k])
            except InputError as e:
                raise InputError(f"malformed {k} field ({e.message})", path=path,
                                 line=line) from None
        if fields["template"]:
            # Parsed by the safe grammar (never run); an error names this line. The
            # cached template() is the one the evaluation uses: parsed once, not twice.
            try:
                template(tuple(fields["template"]))
            except TemplateError as e:
                raise InputError(f"malformed template field ({e.message})", path=path,
                                 line=line) from None
        rows.append({"qid": rec[0], "docno": rec[1], "score": score, **fields, "run": rec[7]})
    if not rows:
        raise InputError("empty run", path=path)
    return pd.DataFrame(rows)
