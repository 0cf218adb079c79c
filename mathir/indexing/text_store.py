"""The answer texts beside an answer index: what rerankers and text loaders read.

Beside an index at ``I``, ``I-texts/`` holds its :class:`AnswerTexts`: the answers with
their formulas as ``$LaTeX$`` (the index holds them as words), in an SQLite file, built
from the collection on first use. Rerankers read them
(:mod:`mathir.pipelines.reranking`), and so does the index's ``text_loader``
(``pt.text.get_text(index, "text")``). :class:`~mathir.indexing.dense_index.DenseAnswerIndex`
encodes their passages.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import ItemsView, Iterable, Iterator, Mapping, Sequence, ValuesView
from pathlib import Path

import pandas as pd
import pyterrier as pt
from tqdm.auto import tqdm

from mathir.errors import InputError
from mathir.indexing.answer_collection import AnswerCollection, iter_answer_texts
from mathir.indexing.identity import writer_identity
from mathir.storage import build_or_reuse, file_fingerprint, read_manifest, require_data_files

TEXTS_FORMAT = 2  # answer texts: 1: texts.jsonl, loaded whole; 2: texts.sqlite
#: The libraries that write the answer texts (lxml reads them; Python's sqlite3 stores them).
TEXTS_PACKAGES = ("lxml",)
#: The fields of an answer that text loaders add: the question's title, the answer.
TEXT_FIELDS = ("title", "text")


def collection_of(index: pt.Artifact) -> AnswerCollection:
    """The collection an answer index (:class:`~mathir.indexing.answer_index.AnswerIndex`)
    was built from (its manifest records the path)."""
    info = index.manifest.get("collection", {})
    if "path" not in info:
        raise InputError("the answer index does not record its collection (a packaged index): "
                         "build its texts with AnswerTexts.build(collection, path)",
                         path=index.path)
    return AnswerCollection(Path(info["path"]), info.get("kind", "posts"))


def sibling(index: pt.Artifact | str | Path, suffix: str) -> Path:
    """The directory ``<index>-<suffix>`` beside an answer index.

    >>> sibling("/tmp/idx/answers", "texts").as_posix()
    '/tmp/idx/answers-texts'
    """
    path = index.path if isinstance(index, pt.Artifact) else Path(index)
    return path.parent / f"{path.name}-{suffix}"


class AnswerTexts(Mapping):
    """docno -> answer text (title, then the answer; formulas as ``$LaTeX$``), on disk.

    The answers sit in an SQLite file (``texts.sqlite``), so opening reads nothing and
    memory does not grow with the collection (ARQMath: 1.4M answers). Rerankers fetch
    a result list's texts in one query (:meth:`fetch`, :meth:`lookup`); whole-collection
    passes stream it in collection order (:meth:`iter_frames`). The file is opened
    read-only and immutable (the directory never changes once built), one connection per
    thread and process, so a read-only index works and threads and workers may share
    an ``AnswerTexts`` (a pickled one reopens the file where it is unpickled).

    >>> from mathir.samples import arqmath_sample
    >>> texts = AnswerTexts.build(arqmath_sample().posts, "sample-texts", quiet=True)
    >>> len(texts), "$" in " ".join(texts.frame()["text"])
    (250, True)
    >>> texts.lookup(["1003", "1002"])["docno"].tolist()
    ['1003', '1002']
    >>> texts["nope"]
    Traceback (most recent call last):
    KeyError: 'nope'
    """

    # Stdlib sqlite3 rather than a hand-made offset file: a B-tree keyed by docno, batch
    # lookups by IN (...), read-only immutable opening, and nothing to install. SQLite's
    # own limit on query parameters was 999 before 3.32; chunks stay below it.
    FILE = "texts.sqlite"
    _CHUNK = 900

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.manifest = read_manifest(self.path)
        if self.manifest is None or self.manifest.get("kind") != "answer-texts":
            raise InputError("not a mathir answer-texts directory (no manifest.json)", path=self.path)
        if self.manifest.get("format") == TEXTS_FORMAT:
            require_data_files(self.path, self.manifest)  # one stat a file
        if self.manifest.get("format") != TEXTS_FORMAT or not (self.path / self.FILE).is_file():
            raise InputError(f"answer texts of an older format ({self.manifest.get('format')}, "
                             f"expected {TEXTS_FORMAT}): rebuild them with AnswerTexts.build or "
                             "remove the folder (it is rebuilt on first use)", path=self.path)
        self._local = threading.local()

    def __getstate__(self) -> dict:
        # Connections stay in the process (and thread) that opened them.
        return {"path": self.path, "manifest": self.manifest}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"AnswerTexts({str(self.path)!r})"

    def _db(self) -> sqlite3.Connection:
        """This thread's read-only connection (opened again in a forked child)."""
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            uri = (self.path / self.FILE).resolve().as_uri() + "?mode=ro&immutable=1"
            try:
                local.db = sqlite3.connect(uri, uri=True)
            except sqlite3.Error as e:
                raise InputError(f"cannot open the answer texts ({e})",
                                 path=self.path / self.FILE) from None
            local.pid = os.getpid()
        return local.db

    def __getitem__(self, docno: str) -> str:
        if not isinstance(docno, str):  # SQLite would compare 12 and "12" as equal
            raise KeyError(docno)
        row = self._db().execute("SELECT title, text FROM answers WHERE docno = ?",
                                 (docno,)).fetchone()
        if row is None:
            raise KeyError(docno)
        return joined(*row)

    def __contains__(self, docno: object) -> bool:
        return isinstance(docno, str) and self._db().execute(
            "SELECT 1 FROM answers WHERE docno = ?", (docno,)).fetchone() is not None

    def __iter__(self) -> Iterator[str]:
        last = 0
        while True:  # a query per chunk, no cursor held open between them
            rows = self._db().execute("SELECT position, docno FROM answers WHERE position > ? "
                                      "ORDER BY position LIMIT 10000", (last,)).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            for _, docno in rows:
                yield docno

    def __len__(self) -> int:
        return int(self.manifest["num_docs"])

    def items(self) -> ItemsView:
        """``(docno, text)`` pairs in collection order, read in chunks."""
        return _Items(self)

    def values(self) -> ValuesView:
        """The texts in collection order, read in chunks."""
        return _Values(self)

    def fetch(self, docnos: Iterable[str]) -> dict[str, tuple[str, str]]:
        """``{docno: (title, answer)}`` of the given docnos that are stored (the others
        are left out): one query per 900 distinct docnos.
        """
        wanted = list(dict.fromkeys(d for d in docnos if isinstance(d, str)))
        found: dict[str, tuple[str, str]] = {}
        db = self._db()
        for start in range(0, len(wanted), self._CHUNK):
            part = wanted[start:start + self._CHUNK]
            marks = ",".join("?" * len(part))
            for docno, title, text in db.execute(
                    f"SELECT docno, title, text FROM answers WHERE docno IN ({marks})", part):
                found[docno] = (title, text)
        return found

    def lookup(self, docnos: Iterable[str]) -> pd.DataFrame:
        """Columns docno, title, text for ``docnos``, in their order (repeats kept).

        A docno that is not stored raises KeyError, as ``texts[docno]`` does.
        """
        docnos = list(docnos)
        found = self.fetch(docnos)
        missing = [d for d in dict.fromkeys(docnos) if d not in found]
        if missing:
            raise KeyError(missing[0])
        return pd.DataFrame({"docno": docnos, "title": [found[d][0] for d in docnos],
                             "text": [found[d][1] for d in docnos]},
                            columns=["docno", "title", "text"])

    def text_loader(self, fields: str | Sequence[str] = "*", *,
                    verbose: bool = False) -> pt.Transformer:
        """PyTerrier's text loader (``pt.text.get_text(texts, fields)``): adds ``title``
        and/or ``text`` (:data:`TEXT_FIELDS`) to each row by ``docno``.

        >>> from mathir.samples import arqmath_sample
        >>> texts = AnswerTexts.build(arqmath_sample().posts, "sample-texts", quiet=True)
        >>> res = pd.DataFrame({"qid": ["1"], "docno": ["1002"]})
        >>> pt.text.get_text(texts, "text")(res).columns.tolist()
        ['qid', 'docno', 'text']
        """
        from mathir.indexing.text_loader import TextLoader

        return TextLoader(self.field_values, TEXT_FIELDS, fields, verbose=verbose,
                          name=f"answer texts {self.path}")

    def field_values(self, docnos: Iterable[str], fields: Sequence[str]) -> dict[str, tuple]:
        """``{docno: (value of each of fields)}`` (:data:`TEXT_FIELDS`) of the given
        docnos that are stored (the others are left out)."""
        where = [TEXT_FIELDS.index(f) for f in fields]
        return {d: tuple(pair[i] for i in where) for d, pair in self.fetch(docnos).items()}

    def subset(self, docnos: Iterable[str]) -> dict[str, str]:
        """``{docno: text}`` (as ``texts[docno]``) of the given docnos that are stored."""
        return {d: joined(t, x) for d, (t, x) in self.fetch(docnos).items()}

    def iter_frames(self, chunk_size: int = 10_000) -> Iterator[pd.DataFrame]:
        """All answers, ``chunk_size`` at a time, as frames with columns docno, title,
        text (collection order; each answer once). Memory stays that of one chunk."""
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be positive, got {chunk_size}")
        last = 0
        while True:
            rows = self._db().execute(
                "SELECT position, docno, title, text FROM answers WHERE position > ? "
                "ORDER BY position LIMIT ?", (last, chunk_size)).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield pd.DataFrame([r[1:] for r in rows], columns=["docno", "title", "text"])

    def frame(self) -> pd.DataFrame:
        """All answers as one frame with columns docno, title, text (collection order).

        Holds the whole collection in memory: for small collections; walk a large one
        with :meth:`iter_frames`.
        """
        frames = list(self.iter_frames(100_000))
        if not frames:
            return pd.DataFrame(columns=["docno", "title", "text"], dtype=object)
        return pd.concat(frames, ignore_index=True)

    @classmethod
    def build(cls, collection: AnswerCollection | str | Path, path: str | Path, *,
              overwrite: bool = False, quiet: bool = False) -> AnswerTexts:
        """Store the answers of ``collection`` in ``path`` (reused when up to date)."""
        if not isinstance(collection, AnswerCollection):
            collection = AnswerCollection.at(collection)
        path = Path(path)
        wanted = {"kind": "answer-texts", "format": TEXTS_FORMAT,
                  "collection": {"kind": collection.kind, **file_fingerprint(collection.path)},
                  "writer": writer_identity(__name__, TEXTS_PACKAGES)}

        def build_into(tmp: Path) -> dict:
            n = _write_store(tmp / cls.FILE, tqdm(
                iter_answer_texts(collection), desc="storing answer texts", unit=" answers",
                disable=quiet, mininterval=0.5,
                total=None if quiet else collection.count_answers()), collection.path)
            if n == 0:
                raise InputError("the collection has no answer posts", path=collection.path)
            return {"num_docs": n}

        build_or_reuse(path, wanted, build_into, overwrite=overwrite)
        return cls(path)

    @classmethod
    def for_index(cls, index: pt.Artifact, quiet: bool = True) -> AnswerTexts:
        """The texts beside ``index``, an answer index (built from its collection on first use)."""
        return cls.build(collection_of(index), sibling(index, "texts"), quiet=quiet)


class _Items(ItemsView):
    """``AnswerTexts.items()``: streamed in chunks, not one query per answer."""

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for f in self._mapping.iter_frames():
            yield from zip(f["docno"], map(joined, f["title"], f["text"]), strict=True)


class _Values(ValuesView):
    """``AnswerTexts.values()``: streamed in chunks, not one query per answer."""

    def __iter__(self) -> Iterator[str]:
        for f in self._mapping.iter_frames():
            yield from map(joined, f["title"], f["text"])


def joined(title: str, text: str) -> str:
    """The text a model reads: the question's title, a space, the answer (no title: the answer).

    >>> joined("Title", "answer"), joined("", "answer")
    ('Title answer', 'answer')
    """
    return f"{title} {text}" if title else text


def _write_store(file: Path, docs: Iterable[dict], source: Path) -> int:
    """Write ``docs`` into a new SQLite file: table ``answers`` (position = collection
    order, from 1; docno unique); returns how many."""
    db = sqlite3.connect(file)
    try:
        # A fresh file in a temporary folder that is renamed into place when complete:
        # no journal or syncing needed while writing it.
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.execute("CREATE TABLE answers (position INTEGER PRIMARY KEY, docno TEXT NOT NULL, "
                   "title TEXT NOT NULL, text TEXT NOT NULL)")
        n = 0
        batch: list[tuple[int, str, str, str]] = []
        for doc in docs:
            n += 1
            batch.append((n, doc["docno"], doc["title"], doc["text"]))
            if len(batch) == 10_000:
                db.executemany("INSERT INTO answers VALUES (?, ?, ?, ?)", batch)
                batch.clear()
        db.executemany("INSERT INTO answers VALUES (?, ?, ?, ?)", batch)
        # Indexed once at the end (one sort), not row by row.
        try:
            db.execute("CREATE UNIQUE INDEX answers_docno ON answers (docno)")
        except sqlite3.IntegrityError:
            dup = db.execute("SELECT docno FROM answers GROUP BY docno HAVING COUNT(*) > 1 "
                             "LIMIT 1").fetchone()[0]
            raise InputError(f"answer id {dup!r} occurs twice", path=source) from None
        db.commit()
    finally:
        db.close()
    return n
