"""Thread HTML files of the ARQMath judged pool (one question and one answer per file).

File names are ``{question_id}_{answer_id}.html``. Formulas are
``<span class="math-container" id="FORMULA_ID" visual_id="VID"><math alttext="LATEX">``
with Presentation MathML inside. We turn each file back into two :class:`Post` records
in the collection's own form (formulas as ``$LATEX$`` spans), plus the formula records.
"""

from __future__ import annotations

import html as html_escape
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lxml import etree, html

from mathir.errors import InputError, require_file, require_files
from mathir.readers.formula_tsv import FormulaRecord
from mathir.readers.mse_posts import Post

_PARSER = html.HTMLParser(no_network=True, remove_comments=True, remove_pis=True)


@dataclass(slots=True)
class ThreadFile:
    """The question, answer and formula instances of one thread HTML file."""

    question: Post
    answer: Post
    formulas: list[FormulaRecord]


def _rewrite_math(node: etree._Element, post: Post, kind: str, comment_id: str,
                  out: list[FormulaRecord]) -> None:
    for span in node.xpath('.//span[contains(concat(" ", @class, " "), " math-container ")]'):
        # the first descendant named math, in any namespace or none (an xpath per span
        # was a quarter of the reading)
        math = next(span.iterdescendants("{*}math"), None)
        latex = math.get("alttext", "") if math is not None else span.text_content()
        fid = span.get("id", "")
        vid = span.get("visual_id", "")
        if fid:
            out.append(FormulaRecord(fid, post.post_id, post.thread_id, kind, comment_id,
                                     vid, vid, "", latex))
        for child in list(span):
            span.remove(child)
        span.text = "$" + latex + "$"


def _inner_html(node: etree._Element) -> str:
    parts = [html_escape.escape(node.text, quote=False) if node.text else ""]
    parts += [etree.tostring(c, encoding="unicode", method="html", with_tail=True) for c in node]
    return "".join(parts).strip()


def _blocks(root: etree._Element, ids: tuple[str, ...]) -> dict[str, list]:
    """The ``div`` elements whose id is one of ``ids``, by id, in document order (what
    ``//div[@id="ID"]`` finds, for all of them in one walk)."""
    found: dict[str, list] = {i: [] for i in ids}
    for div in root.iter("div"):
        hit = found.get(div.get("id"))
        if hit is not None:
            hit.append(div)
    return found


def _children(root: etree._Element, divs: list, tag: str) -> list:
    """``//div[@id="ID"]/TAG`` of the ``divs`` :func:`_blocks` found for ID."""
    if len(divs) == 1:
        return list(divs[0].iterchildren(tag))
    if not divs:
        return []
    return root.xpath(f'//div[@id="{divs[0].get("id")}"]/{tag}')  # their union, in order


def read_thread_file(path: str | Path) -> ThreadFile:
    """Read one ``{question_id}_{answer_id}.html`` file.

    Raises :class:`~mathir.errors.InputError` when the question or answer block is missing.
    """
    path = require_file(path)
    try:
        root = html.parse(str(path), parser=_PARSER).getroot()
    except (etree.ParserError, etree.XMLSyntaxError, OSError) as e:
        raise InputError(f"cannot parse thread HTML: {e}", path=path) from None
    if root is None:
        raise InputError("empty thread HTML file", path=path)
    blocks = _blocks(root, ("question", "answer", "question-title", "tags"))
    if not blocks["question"] or not blocks["answer"]:
        raise InputError("no question or answer block (div#question, div#answer)", path=path)
    qdiv, adiv = blocks["question"][0], blocks["answer"][0]
    qid = qdiv.get("question_id") or path.stem.split("_")[0]
    aid = adiv.get("answer_id") or path.stem.split("_")[-1]
    h1 = _children(root, blocks["question-title"], "h1")
    tags = [t.text_content().strip() for t in _children(root, blocks["tags"], "span")]
    question = Post(post_id=qid, post_type="question", body="", title="", tags=tags)
    answer = Post(post_id=aid, post_type="answer", body="", parent_id=qid)
    formulas: list[FormulaRecord] = []
    if h1:
        _rewrite_math(h1[0], question, "title", "", formulas)
        question.title = _inner_html(h1[0])
    _rewrite_math(qdiv, question, "question", "", formulas)
    question.body = _inner_html(qdiv)
    _rewrite_math(adiv, answer, "answer", "", formulas)
    answer.body = _inner_html(adiv)
    for block, post in (("question-comments", question), ("answer-comments", answer)):
        divs = _blocks(root, (block,))[block]  # in the tree as rewritten so far
        if len(divs) == 1:
            cells = [e for e in divs[0].iterdescendants(etree.Element)
                     if e.get("comment_id") is not None]
        else:  # none, or several (perhaps nested): the union, in document order
            cells = root.xpath(f'//div[@id="{block}"]//*[@comment_id]')
        for cell in cells:
            _rewrite_math(cell, post, "comment", cell.get("comment_id", ""), formulas)
    return ThreadFile(question, answer, formulas)


def iter_thread_files(directory: str | Path) -> Iterator[ThreadFile]:
    """Read every ``*.html`` thread file of a directory, in file-name order."""
    for f in require_files(directory, "*.html", "thread files"):
        yield read_thread_file(f)


def iter_thread_posts(directory: str | Path) -> Iterator[Post]:
    """The distinct questions and answers of a thread HTML directory.

    A question shared by several files is yielded once, before its first answer.
    """
    seen: set[str] = set()
    for thread in iter_thread_files(directory):
        for post in (thread.question, thread.answer):
            if post.post_id not in seen:
                seen.add(post.post_id)
                yield post
