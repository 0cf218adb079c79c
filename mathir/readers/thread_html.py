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
        math = span.xpath(".//*[local-name()='math']")
        latex = math[0].get("alttext", "") if math else span.text_content()
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
    qdiv = root.xpath('//div[@id="question"]')
    adiv = root.xpath('//div[@id="answer"]')
    if not qdiv or not adiv:
        raise InputError("no question or answer block (div#question, div#answer)", path=path)
    qdiv, adiv = qdiv[0], adiv[0]
    qid = qdiv.get("question_id") or path.stem.split("_")[0]
    aid = adiv.get("answer_id") or path.stem.split("_")[-1]
    h1 = root.xpath('//div[@id="question-title"]/h1')
    tags = [t.text_content().strip() for t in root.xpath('//div[@id="tags"]/span')]
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
        for cell in root.xpath(f'//div[@id="{block}"]//*[@comment_id]'):
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
