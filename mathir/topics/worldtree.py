"""WorldTree question TSVs (``ARC-Elementary+EXPL-{Train,Dev,Test}.tsv``) -> topic frames.

The header is ``questionID originalQuestionID ... AnswerKey ... AnswerKey Question
explanation ... category fold`` (``AnswerKey`` appears twice; the first is used). The
``Question`` cell holds the stem and its options: ``stem (A) x (B) y (C) z (D) w`` (keys
``A``-``E`` or ``1``-``5``). A topic frame has one row per question:

* ``qid`` (questionID), ``query`` (the retrieval query, see :func:`question_query`),
* ``question`` (stem), ``answer`` (text of the correct option), ``answer_key``,
  ``choices`` (the full ``Question`` cell), ``explanation`` (raw ``uid|ROLE ...``),
  ``flags``, ``category`` (split name) and ``fold``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from mathir.errors import InputError
from mathir.readers.tabular import iter_lines

REQUIRED = ("questionID", "AnswerKey", "Question")
QUERY_FIELDS = ("question", "answer", "choices")
_OPTION = re.compile(r"\(([A-E1-5])\)\s*")


def split_options(question: str) -> tuple[str, dict[str, str]]:
    """Split ``stem (A) x (B) y ...`` into the stem and ``{key: option text}``.

    The options are the last run of consecutive keys (A, B, C, ... or 1, 2, 3, ...), so a
    stem that itself contains ``(A)`` is kept whole.

    >>> split_options("Which is a metal? (A) wood (B) iron (C) glass")
    ('Which is a metal?', {'A': 'wood', 'B': 'iron', 'C': 'glass'})
    """
    marks = list(_OPTION.finditer(question))
    for start in range(len(marks)):
        first = marks[start].group(1)
        if first not in ("A", "1"):
            continue
        run = [marks[start]]
        for m in marks[start + 1:]:
            if ord(m.group(1)) == ord(run[-1].group(1)) + 1:
                run.append(m)
            else:
                break
        if len(run) == len(marks) - start and len(run) >= 2:
            options = {}
            for i, m in enumerate(run):
                end = run[i + 1].start() if i + 1 < len(run) else len(question)
                options[m.group(1)] = question[m.end():end].strip()
            return question[: run[0].start()].strip(), options
    return question.strip(), {}


def question_query(topics: pd.DataFrame, fields: tuple[str, ...] = ("question", "answer")) -> pd.Series:
    """The query text of each topic: its ``fields`` joined with a space.

    ``("question", "answer")`` (default): stem and correct answer, the other options
    removed; ``("choices",)``: the full question cell with every option (what the task's
    Python baseline uses).

    >>> t = pd.DataFrame({"question": ["Which melts?"], "answer": ["ice"]})
    >>> question_query(t).tolist()
    ['Which melts? ice']
    """
    bad = [f for f in fields if f not in QUERY_FIELDS]
    if bad or not fields:
        raise InputError(f"unknown query fields {bad}; expected some of {list(QUERY_FIELDS)}")
    return pd.Series([" ".join(str(row[f]) for f in fields if str(row[f]))
                      for _, row in topics[list(fields)].iterrows()], index=topics.index,
                     dtype=object)


def find_split_file(tables: str | Path, split: str) -> Path:
    """The question TSV of ``split`` in the distribution that holds the tablestore ``tables``.

    Looks under the ancestors of ``tables`` (the official layout puts ``questions/``
    beside ``annotation/<export>/tables``) for ``ARC-Elementary*EXPL-<split>.tsv``.

    >>> from mathir.samples import worldtree_sample
    >>> find_split_file(worldtree_sample().tables, "Train").name
    'ARC-Elementary+EXPL-Train.tsv'
    """
    from mathir.storage import walk_glob  # follows linked folders (Path.rglob does not)

    tables = Path(tables).resolve()
    for root in list(tables.parents)[:4]:
        hits = walk_glob(root, f"ARC-Elementary*EXPL-{split}.tsv")
        if hits:
            return hits[0]
    raise InputError(f"no {split} question file (ARC-Elementary*EXPL-{split}.tsv) near the "
                     "tablestore; pass its path", path=tables)


def read_questions(path: str | Path, query_fields: tuple[str, ...] = ("question", "answer"),
                   explained_only: bool = False) -> pd.DataFrame:
    """Read a WorldTree question TSV into a topic frame (see the module docstring).

    ``explained_only`` keeps the questions with a non-empty explanation (the only ones
    the official scorer evaluates). A repeated questionID, a missing column, an answer
    key that names no option, or a row with the wrong number of cells is an
    :class:`InputError` naming the line.

    >>> from mathir.samples import worldtree_sample
    >>> t = read_questions(worldtree_sample().questions("Dev"))
    >>> t.loc[0, ["qid", "answer"]].tolist()
    ['WT_DEV_01', 'melting']
    """
    lines = iter_lines(path)
    try:
        _, head = next(lines)
    except StopIteration:
        raise InputError("question file is empty", path=path) from None
    header = head.lstrip("\ufeff").split("\t")
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(f"header lacks columns {missing}", path=path, line=1)
    col = {}
    for i, h in enumerate(header):
        col.setdefault(h.strip(), i)  # the first of a repeated name (AnswerKey) wins
    rows = []
    seen: set[str] = set()
    for lineno, line in lines:
        cells = line.split("\t")
        if len(cells) != len(header):
            raise InputError(f"expected {len(header)} columns, found {len(cells)}",
                             path=path, line=lineno)

        def get(name: str, cells=cells) -> str:
            i = col.get(name)
            return cells[i].strip() if i is not None else ""

        qid = get("questionID")
        if not qid:
            raise InputError("empty questionID", path=path, line=lineno)
        if qid in seen:
            raise InputError(f"questionID {qid!r} appears twice", path=path, line=lineno)
        seen.add(qid)
        stem, options = split_options(get("Question"))
        key = get("AnswerKey")
        if options and key not in options:
            raise InputError(f"answer key {key!r} names no option of {sorted(options)}",
                             path=path, line=lineno)
        rows.append({"qid": qid, "question": stem, "answer": options.get(key, ""),
                     "answer_key": key, "choices": get("Question"),
                     "explanation": get("explanation"), "flags": get("flags"),
                     "category": get("category"), "fold": get("fold")})
    topics = pd.DataFrame(rows, columns=["qid", "question", "answer", "answer_key", "choices",
                                         "explanation", "flags", "category", "fold"])
    if explained_only:
        topics = topics[topics["explanation"] != ""].reset_index(drop=True)
    topics.insert(1, "query", question_query(topics, query_fields) if len(topics) else [])
    return topics
