"""The answer collection: a ``Posts.V1.3.xml`` file or a thread HTML directory, read as answers.

:class:`AnswerCollection` recognises the format and yields the answers, the question's
title before each (as the answer index reads them, formulas as words or as ``$LaTeX$``);
:func:`iter_answer_texts` yields them with the title apart (as the answer text store,
:mod:`mathir.indexing.text_store`, keeps them), and :func:`answer_texts` fetches the
texts of some answers in one pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mathir.errors import InputError
from mathir.readers.html_text import html_to_text
from mathir.readers.mse_posts import Post, iter_posts
from mathir.readers.thread_html import iter_thread_posts


@dataclass(frozen=True)
class AnswerCollection:
    """Where the answers come from: a ``Posts.V1.3.xml`` file or a thread HTML directory.

    >>> from mathir.samples import arqmath_sample
    >>> AnswerCollection.at(arqmath_sample().posts).kind
    'posts'
    """

    path: Path
    kind: str  # "posts" or "thread_html"

    @classmethod
    def at(cls, path: str | Path) -> AnswerCollection:
        """Recognise the collection format at ``path``."""
        p = Path(path)
        if p.is_dir():
            return cls(p, "thread_html")
        if p.is_file():
            return cls(p, "posts")
        raise InputError("collection not found (expected Posts.V1.3.xml or a thread HTML directory)", path=p)

    def count_answers(self, chunk: int = 1 << 22) -> int:
        """How many answers the collection holds, counted cheaply for progress bars:
        the answer files of a thread directory, or the ``PostTypeId="2"`` rows of a
        Posts file (a byte scan, about a second per GB; an estimate if the attribute is
        written in an unusual way).

        >>> from mathir.samples import arqmath_sample
        >>> AnswerCollection.at(arqmath_sample().posts).count_answers()
        250
        """
        if self.kind == "thread_html":
            return sum(1 for _ in self.path.glob("*.html"))
        needle, n, tail = b'PostTypeId="2"', 0, b""
        with open(self.path, "rb") as f:
            while block := f.read(chunk):
                data = tail + block
                n += data.count(needle)
                tail = data[-(len(needle) - 1):]
                # a needle split over the boundary is counted once: tail is shorter
        return n

    def iter_posts(self) -> Iterator[Post]:
        """All questions and answers, questions before their answers."""
        if self.kind == "thread_html":
            return iter_thread_posts(self.path)
        return iter_posts(self.path)

    def iter_answers(self, with_title: bool = True, math_words: bool = False,
                     rows: tuple[int, int | None] = (0, None)) -> Iterator[dict]:
        """Answers as ``{"docno", "text", "thread_id"}``.

        The text keeps formulas as ``$LaTeX$``, or turns them into words (``math_words``).

        With ``with_title`` the question's title is prepended to each answer, which
        gives short answers the context of their thread (questions precede their
        answers in the official file, so one pass suffices).

        ``rows`` = ``(start, stop)`` yields only the answers numbered ``start`` to ``stop
        - 1`` in collection order (``stop`` None: to the end), as ``islice`` would; the
        answers before ``start`` are counted but their text is not made, so a shard
        that indexes a late slice does not convert every answer before it.

        >>> from mathir.samples import arqmath_sample
        >>> answers = AnswerCollection.at(arqmath_sample().posts)
        >>> [a["docno"] for a in answers.iter_answers(rows=(2, 4))]
        ['1004', '1005']
        """
        start, stop = rows
        if start < 0 or (stop is not None and stop < start):
            raise ValueError(f"rows must be 0 <= start <= stop, got {rows}")
        titles: dict[str, str] = {}
        number = -1
        for post in self.iter_posts():
            if post.post_type == "question":
                if with_title:
                    titles[post.post_id] = html_to_text(post.title, math_words)
                continue
            number += 1
            if number < start:
                continue
            if stop is not None and number >= stop:
                return
            text = post.text(math_words)
            if with_title:
                title = titles.get(post.parent_id or "", "")
                text = f"{title} {text}" if title else text
            yield {"docno": post.post_id, "text": text, "thread_id": post.thread_id}


def answer_texts(collection, docnos: Iterable[str]) -> dict[str, str]:
    """Texts (``$LaTeX$`` formulas, no title) of the answers ``docnos`` of a collection.

    ``collection`` is an :class:`AnswerCollection` or a
    path; one streaming pass keeps only the wanted answers.
    """
    from mathir.readers.html_text import html_to_text

    if not isinstance(collection, AnswerCollection):
        collection = AnswerCollection.at(collection)
    wanted = {str(d) for d in docnos}
    out: dict[str, str] = {}
    if not wanted:
        return out
    # Read to the end: lxml's iterparse keeps the file open when a reader stops early.
    for post in collection.iter_posts():
        if post.post_type == "answer" and post.post_id in wanted:
            out[post.post_id] = html_to_text(post.body)
    return out


def iter_answer_texts(collection: AnswerCollection) -> Iterator[dict]:
    """Answers as ``{"docno", "title", "text"}``: the question's title kept apart, LaTeX kept.

    Like :meth:`AnswerCollection.iter_answers` (questions precede their answers), but
    with the title in its own field so that every passage of a long answer can repeat it.

    >>> from mathir.samples import arqmath_sample
    >>> doc = next(iter_answer_texts(AnswerCollection.at(arqmath_sample().posts)))
    >>> sorted(doc)
    ['docno', 'text', 'title']
    """
    titles: dict[str, str] = {}
    for post in collection.iter_posts():
        if post.post_type == "question":
            titles[post.post_id] = html_to_text(post.title)
            continue
        yield {"docno": post.post_id, "title": titles.get(post.parent_id or "", ""),
               "text": post.text(False)}
