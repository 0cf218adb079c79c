"""Math StackExchange ``Posts.V1.3.xml`` (the ARQMath collection), streamed.

Each ``<row>`` is a question (``PostTypeId="1"``) or an answer (``PostTypeId="2"``,
with ``ParentId``). Bodies are escaped HTML with formulas in math-container spans.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mathir.errors import InputError
from mathir.readers.html_text import Formula, extract_formulas, html_to_text
from mathir.readers.safe_xml import iter_elements

_TAG_LIST = re.compile(r"<([^<>]+)>")

POST_TYPES = {"1": "question", "2": "answer"}


@dataclass(slots=True)
class Post:
    """One question or answer of the collection; ids are strings."""

    post_id: str
    post_type: str  # "question" or "answer"
    body: str  # HTML as in the collection
    parent_id: str | None = None  # the question of an answer
    title: str = ""  # questions only; may hold formulas
    tags: list[str] = field(default_factory=list)
    score: int = 0

    @property
    def thread_id(self) -> str:
        """The question id of the thread the post belongs to."""
        return self.parent_id if self.post_type == "answer" and self.parent_id else self.post_id

    def text(self, math_words: bool = False) -> str:
        """Title (questions) and body as plain text, formulas as ``$LATEX$`` (or as words)."""
        body = html_to_text(self.body, math_words)
        title = html_to_text(self.title, math_words) if self.title else ""
        return f"{title} {body}".strip() if title else body

    def formulas(self) -> list[Formula]:
        """Formulas of the title and body, with their formula ids."""
        return extract_formulas(self.title) + extract_formulas(self.body)


def parse_tags(tags: str) -> list[str]:
    """``<a><b>`` (Posts XML) or ``a,b`` (topics) to a list of tags.

    >>> parse_tags("<calculus><limits>")
    ['calculus', 'limits']
    """
    if "<" in tags:
        return _TAG_LIST.findall(tags)
    return [t.strip() for t in tags.split(",") if t.strip()]


# The start of an XML file, as libxml2 reads it: a byte-order mark, else the first four
# bytes (XML 1.0 Appendix F), tell the encoding family. Only encodings that libxml2
# decodes itself, as Python does, are accepted: the check below reads the prolog in the
# encoding the parser will use.
def iter_posts(path: str | Path, post_types: tuple[str, ...] = ("question", "answer")) -> Iterator[Post]:
    """Stream the posts of a ``Posts.V1.3.xml`` file with bounded memory.

    Rows of other types (tag wikis, ...) are skipped. A row without ``Id`` or an answer
    without ``ParentId`` raises :class:`~mathir.errors.InputError` naming the line.

    >>> from mathir.samples import arqmath_sample
    >>> next(iter_posts(arqmath_sample().posts, ("answer",))).post_type
    'answer'
    """
    for row in iter_elements(path, "row"):
        kind = POST_TYPES.get(row.get("PostTypeId", ""))
        if kind is None or kind not in post_types:
            continue
        post_id = row.get("Id")
        if not post_id:
            raise InputError("row has no Id attribute", path=path, line=row.sourceline)
        parent = row.get("ParentId")
        if kind == "answer" and not parent:
            raise InputError(f"answer {post_id} has no ParentId", path=path, line=row.sourceline)
        try:
            score = int(row.get("Score") or 0)
        except ValueError:
            raise InputError(
                f"post {post_id}: Score is not an integer: {row.get('Score')!r}",
                path=path,
                line=row.sourceline,
            ) from None
        yield Post(
            post_id=post_id,
            post_type=kind,
            body=row.get("Body") or "",
            parent_id=parent,
            title=row.get("Title") or "",
            tags=parse_tags(row.get("Tags") or ""),
            score=score,
        )
