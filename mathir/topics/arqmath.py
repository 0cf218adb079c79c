"""ARQMath topic files: Task 1 (and Task 3) questions, Task 2 formula topics, topic formulas.

Task 1 XML::

    <Topics><Topic number="A.301"><Title>…</Title><Question>…</Question><Tags>a,b</Tags></Topic>

Title and Question hold escaped HTML with ``math-container`` spans. Task 2 topics add
``<Formula_Id>q_6</Formula_Id><Latex>…</Latex>`` before the title.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from lxml import etree

from mathir.errors import InputError
from mathir.readers.formula_tsv import unquote_field
from mathir.readers.html_text import html_to_text
from mathir.readers.mse_posts import parse_tags
from mathir.readers.safe_xml import iter_elements
from mathir.readers.tabular import iter_lines

TASK1_COLUMNS = ["qid", "query", "title", "question", "tags"]
TASK2_COLUMNS = ["qid", "query", "formula_id", "latex", "title", "question", "tags"]


def _inner(elem) -> str:
    # Official files escape the HTML; tolerate files that embed it as markup instead.
    text = elem.text or ""
    if len(elem):
        text += "".join(etree.tostring(c, encoding="unicode", with_tail=True) for c in elem)
    return text


def _iter_topics(path: str | Path):
    seen: set[str] = set()
    for topic in iter_elements(path, "Topic"):
        qid = (topic.get("number") or "").strip()
        if not qid:
            raise InputError("Topic without a number attribute", path=path, line=topic.sourceline)
        if qid in seen:
            raise InputError(f"duplicate topic {qid}", path=path, line=topic.sourceline)
        seen.add(qid)
        fields = {c.tag: _inner(c) for c in topic if isinstance(c.tag, str)}
        yield qid, topic.sourceline, fields
    if not seen:
        raise InputError("no <Topic> elements found", path=path)


def read_task1_topics(path: str | Path) -> pd.DataFrame:
    """Task 1 / Task 3 topics: ``query`` is title + question, HTML removed, LaTeX kept.

    >>> from mathir.samples import arqmath_sample
    >>> t = read_task1_topics(arqmath_sample().task1_topics)
    >>> list(t.columns) == TASK1_COLUMNS and t.qid.iloc[0]
    'A.1'
    """
    rows = []
    for qid, line, f in _iter_topics(path):
        if "Title" not in f and "Question" not in f:
            raise InputError(f"topic {qid} has neither Title nor Question", path=path, line=line)
        title = html_to_text(f.get("Title", ""))
        question = html_to_text(f.get("Question", ""))
        rows.append({
            "qid": qid,
            "query": f"{title} {question}".strip(),
            "title": title,
            "question": question,
            "tags": ",".join(parse_tags(f.get("Tags", ""))),
        })
    return pd.DataFrame(rows, columns=TASK1_COLUMNS)


def read_task2_topics(path: str | Path) -> pd.DataFrame:
    """Task 2 formula topics: ``query`` is the query formula's LaTeX.

    >>> from mathir.samples import arqmath_sample
    >>> t = read_task2_topics(arqmath_sample().task2_topics)
    >>> t.formula_id.iloc[0].startswith("q_")
    True
    """
    rows = []
    for qid, line, f in _iter_topics(path):
        if not f.get("Formula_Id", "").strip() or "Latex" not in f:
            raise InputError(f"topic {qid} lacks Formula_Id or Latex", path=path, line=line)
        title = html_to_text(f.get("Title", ""))
        question = html_to_text(f.get("Question", ""))
        latex = f["Latex"].strip()
        rows.append({
            "qid": qid,
            "query": latex,
            "formula_id": f["Formula_Id"].strip(),
            "latex": latex,
            "title": title,
            "question": question,
            "tags": ",".join(parse_tags(f.get("Tags", ""))),
        })
    return pd.DataFrame(rows, columns=TASK2_COLUMNS)


def read_topic_formulas(path: str | Path) -> pd.DataFrame:
    """A topic formula TSV (``id topic_id thread_id type formula``; LaTeX, SLT or OPT).

    Returns columns ``formula_id, qid, thread_id, type, formula``.

    >>> from mathir.samples import arqmath_sample
    >>> read_topic_formulas(arqmath_sample().topic_formulas).columns[1]
    'qid'
    """
    rows = []
    header = True
    for lineno, line in iter_lines(path):
        fields = line.split("\t", 4)
        if header:
            header = False
            if fields[0].strip().lower() == "id":
                if len(fields) != 5:
                    raise InputError(f"expected 5 columns, found {len(fields)}", path=path, line=lineno)
                continue
        if len(fields) != 5:
            raise InputError(f"expected 5 columns, found {len(fields)}", path=path, line=lineno)
        fid, qid, thread, kind, formula = (x.strip() for x in fields)
        rows.append({"formula_id": fid, "qid": qid, "thread_id": thread, "type": kind,
                     "formula": unquote_field(formula)})
    return pd.DataFrame(rows, columns=["formula_id", "qid", "thread_id", "type", "formula"])


def read_topic_metadata(path: str | Path) -> pd.DataFrame:
    """ARQMath topic information CSV (``Task1_ARQMath{2,3}_Topic_Information.csv``).

    Returns ``qid`` plus the columns ``category``, ``difficulty``, ``dependency`` (and the
    others of the file, lower-cased). Used to break scores down by topic kind.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "m.csv"
    >>> _ = p.write_text("Topic,Category,Difficulty,Dependency\\nA.1,Proof,Low,Both\\n")
    >>> read_topic_metadata(p).iloc[0].tolist()
    ['A.1', 'Proof', 'Low', 'Both']
    """
    import csv

    rows = []
    header: list[str] | None = None
    for lineno, line in iter_lines(path):
        fields = next(csv.reader([line]))
        if header is None:
            header = [" ".join(h.split()).lower() for h in fields]
            if header[0] != "topic" or not {"category", "difficulty", "dependency"} <= set(header):
                raise InputError("expected a header with Topic, Category, Difficulty, Dependency",
                                 path=path, line=lineno)
            continue
        if len(fields) != len(header):
            raise InputError(f"expected {len(header)} columns, found {len(fields)}", path=path, line=lineno)
        rows.append(dict(zip(header, (f.strip() for f in fields), strict=True)))
    if header is None:
        raise InputError("empty topic metadata file", path=path)
    df = pd.DataFrame(rows, columns=header).rename(columns={"topic": "qid"})
    return df
