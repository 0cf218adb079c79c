"""Word-problem run files: one derivation per problem, a TSV with a header.

Columns: ``qid``, ``docno`` (training problem whose template was used), ``score``,
then JSON: ``solution``, ``template``, ``alignment`` (slot -> [SentenceId, TokenId,
Value]), ``equations``; last the run name.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from mathir.answers.derivations import template
from mathir.answers.templates import TemplateError
from mathir.errors import InputError, require_file
from mathir.json_input import loads
from mathir.storage import atomic_file
from mathir.tabular import iter_lines

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
        try:
            score = float(rec[2])
        except ValueError:
            raise InputError(f"malformed field (score {rec[2]!r} is not a number)", path=path,
                             line=line) from None
        fields = {}
        for i, k in enumerate(("solution", "template", "alignment", "equations"), 3):
            try:  # loads: also refuses nesting deeper than json_input.MAX_DEPTH
                fields[k] = loads(rec[i])
            except InputError as e:
                raise InputError(f"malformed {k} field ({e.message})", path=path,
                                 line=line) from None
        if fields["template"]:
            # Parsed by the safe grammar (never run); an error names this line. The
            # cached template() is the one the evaluation uses: parsed once, not twice.
            try:
                if not isinstance(fields["template"], list):
                    raise TemplateError("expected a JSON list of equations")
                template(tuple(fields["template"]))
            except TemplateError as e:
                raise InputError(f"malformed template field ({e.message})", path=path,
                                 line=line) from None
        rows.append({"qid": rec[0], "docno": rec[1], "score": score, **fields, "run": rec[7]})
    if not rows:
        raise InputError("empty run", path=path)
    return pd.DataFrame(rows)
