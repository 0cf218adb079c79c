"""The Task 1 answer index: answer posts in PISA (BM25) and scikit-learn TF-IDF.

An index directory holds ``pisa/``, ``tfidf/``, ``meta.tsv`` (docno, thread id) and
``manifest.json`` (what it was built from). It is built in a temporary directory and
renamed into place, and reused when the manifest matches the input and parameters.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

import mathir
from mathir.errors import InputError
from mathir.indexing.html_text import html_to_text
from mathir.indexing.mse_posts import Post, iter_posts
from mathir.indexing.tfidf import TfidfIndex
from mathir.indexing.thread_html import iter_thread_posts
from mathir.storage import (
    atomic_directory,
    exclusive_lock,
    file_fingerprint,
    read_manifest,
    remove_stale_temporaries,
    write_manifest,
)

INDEX_FORMAT = 1
STEMMER = "porter2"


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

    def iter_posts(self) -> Iterator[Post]:
        """All questions and answers, questions before their answers."""
        if self.kind == "thread_html":
            return iter_thread_posts(self.path)
        return iter_posts(self.path)

    def iter_answers(self, with_title: bool = True, math_words: bool = False) -> Iterator[dict]:
        """Answers as ``{"docno", "text", "thread_id"}``.

        The text keeps formulas as ``$LaTeX$``, or turns them into words (``math_words``).

        With ``with_title`` the question's title is prepended to each answer, which
        gives short answers the context of their thread (questions precede their
        answers in the official file, so one pass suffices).
        """
        titles: dict[str, str] = {}
        for post in self.iter_posts():
            if post.post_type == "question":
                if with_title:
                    titles[post.post_id] = html_to_text(post.title, math_words)
                continue
            text = post.text(math_words)
            if with_title:
                title = titles.get(post.parent_id or "", "")
                text = f"{title} {text}" if title else text
            yield {"docno": post.post_id, "text": text, "thread_id": post.thread_id}


@contextlib.contextmanager
def native_output_to(log: Path):
    """Send the C++ library's own progress output (fd 1 and 2) to a log file.

    PISA prints hundreds of progress lines to the terminal; we show one tqdm bar instead
    (written to a duplicate of the original stderr, so it stays visible).
    """
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    visible = os.fdopen(os.dup(saved[1]), "w", buffering=1)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield visible
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for x in (*saved, fd):
            os.close(x)
        visible.close()


class AnswerIndex:
    """A built answer index; open one with ``AnswerIndex(path)`` or build with :meth:`build`."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.manifest = read_manifest(self.path)
        if self.manifest is None or self.manifest.get("kind") != "arqmath-answers":
            raise InputError("not a mathir answer index (no manifest.json)", path=self.path)
        self._pisa = None
        self._tfidf = None

    @property
    def num_docs(self) -> int:
        """Number of indexed answers."""
        return int(self.manifest["num_docs"])

    def docnos(self) -> list[str]:
        """The indexed answer ids, in index order."""
        with open(self.path / "meta.tsv", encoding="utf-8") as f:
            return [line.split("\t", 1)[0] for line in f]

    @property
    def pisa(self):
        """The ``pyterrier_pisa.PisaIndex`` of the answers."""
        if self._pisa is None:
            from pyterrier_pisa import PisaIndex

            self._pisa = PisaIndex(str(self.path / "pisa"), stemmer=STEMMER, text_field="text", threads=1)
        return self._pisa

    @property
    def tfidf(self) -> TfidfIndex:
        """The scikit-learn TF-IDF index of the answers."""
        if self._tfidf is None:
            self._tfidf = TfidfIndex(self.path / "tfidf")
        return self._tfidf

    @classmethod
    def build(cls, collection: AnswerCollection | str | Path, path: str | Path, *,
              with_title: bool = True, overwrite: bool = False, quiet: bool = False) -> AnswerIndex:
        """Index the answers of ``collection`` into ``path`` (reused when up to date).

        >>> import tempfile
        >>> from mathir.samples import arqmath_sample
        >>> idx = AnswerIndex.build(arqmath_sample().posts, tempfile.mkdtemp() + "/i", quiet=True)
        >>> idx.num_docs
        250
        """
        if not isinstance(collection, AnswerCollection):
            collection = AnswerCollection.at(collection)
        path = Path(path)
        wanted = {
            "kind": "arqmath-answers",
            "format": INDEX_FORMAT,
            "collection": {"kind": collection.kind, **file_fingerprint(collection.path)},
            "params": {"with_title": with_title, "stemmer": STEMMER, "math": "latex-words"},
        }
        with exclusive_lock(path):
            existing = read_manifest(path)
            if overwrite or existing is None or any(existing.get(k) != v for k, v in wanted.items()):
                remove_stale_temporaries(path)
                cls._build_into(collection, path, wanted, with_title, quiet)
        return cls(path)

    @staticmethod
    def _build_into(collection: AnswerCollection, path: Path, wanted: dict, with_title: bool,
                    quiet: bool) -> None:
        from pyterrier_pisa import PisaIndex

        with atomic_directory(path) as tmp:
            n = 0
            failures: list[BaseException] = []
            with native_output_to(tmp / "pisa.log") as visible, \
                    open(tmp / "meta.tsv", "w", encoding="utf-8") as meta:
                bar = tqdm(desc="indexing answers", unit=" answers", disable=quiet, file=visible,
                           mininterval=0.5)

                def docs():
                    # pyterrier-pisa consumes this in a writer thread and would index a
                    # truncated collection if it raised: keep the error for this thread.
                    nonlocal n
                    try:
                        for doc in collection.iter_answers(with_title, math_words=True):
                            meta.write(f"{doc['docno']}\t{doc['thread_id']}\n")
                            n += 1
                            bar.update()
                            yield doc
                    except BaseException as e:  # noqa: BLE001 - re-raised below
                        failures.append(e)

                PisaIndex(str(tmp / "pisa"), stemmer=STEMMER, text_field="text",
                          batch_size=20_000, threads=max(1, os.cpu_count() or 1)).index(docs())
                bar.close()
            if failures:
                raise failures[0]
            if n == 0:
                raise InputError("the collection has no answer posts", path=collection.path)
            TfidfIndex.build_from_pisa(tmp / "pisa", tmp / "tfidf", stemmer=STEMMER)
            write_manifest(tmp, {**wanted, "num_docs": n, "mathir_version": mathir.__version__})
