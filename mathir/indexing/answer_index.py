"""The Task 1 answer index: answer posts in PISA (BM25) and scikit-learn TF-IDF.

An index directory holds ``pisa/``, ``tfidf/``, ``meta.tsv`` (docno, thread id),
``manifest.json`` (what it was built from) and ``pt_meta.json`` (what ``pt.Artifact.load``
reads). It is built in a temporary directory and renamed into place, and reused when the
manifest matches the input and parameters (:func:`mathir.storage.build_or_reuse`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyterrier as pt
from tqdm.auto import tqdm

from mathir.errors import InputError
from mathir.indexing.html_text import html_to_text
from mathir.indexing.mse_posts import Post, iter_posts
from mathir.indexing.tfidf import TfidfIndex
from mathir.indexing.thread_html import iter_thread_posts
from mathir.storage import (
    USER_OS_ERRORS,
    artifact_meta,
    build_or_reuse,
    exclusive_lock,
    file_fingerprint,
    read_manifest,
    scratch_directory,
)

INDEX_FORMAT = 1
STEMMER = "porter2"
# BM25's (k1, b) in mathir's pipelines (mathir.pipelines.lexical.bm25 and the formula
# retrievers): a build compiles their block-max data, so that searching writes nothing.
BM25_DEFAULTS = (1.2, 0.75)


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
    (written to a duplicate of the original stderr, so it stays visible). Where the log
    cannot be written (a read-only index being searched), the output is discarded.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError:
        fd = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(1), os.dup(2)
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


def _fmt_double(x: float) -> str:
    """A double as pisathon names its files (``fmt::format("{}", x)``: 1.0 -> "1")."""
    r = repr(float(x))
    return r[:-2] if r.endswith(".0") else r


def bm25_data_files(pisa_dir: Path, k1: float, b: float, encoding: str = "block_simdbp",
                    quantize: bool = False) -> list[Path]:
    """The files PISA compiles on the first BM25 search with ``k1``, ``b``: block-max
    (WAND) data and the compressed index (``pyterrier_pisa``'s prepare_index).

    >>> [p.name for p in bm25_data_files(Path("pisa"), 1.2, 0.75)]
    ['bm25.k1-1.2.b-0.75.q0.bmw.64', 'bm25.k1-1.2.b-0.75.q0.bmw.64.block_simdbp']
    """
    wand = pisa_dir / f"bm25.k1-{_fmt_double(k1)}.b-{_fmt_double(b)}.q{int(quantize)}.bmw.64"
    return [wand, wand.with_name(f"{wand.name}.{encoding}")]


def compile_bm25(pisa_dir: Path, k1: float, b: float, quantize: bool = False) -> None:
    """Compile a PISA index's BM25 data in place (for an index being built: no lock)."""
    from pyterrier_pisa import PisaIndex

    PisaIndex(str(pisa_dir), threads=1).bm25(k1=k1, b=b, precompute_impact=quantize)


def prepare_bm25(pisa_dir: str | Path, k1: float, b: float, encoding: str = "block_simdbp",
                 quantize: bool = False) -> None:
    """Compile a PISA index's BM25 data for ``k1``, ``b`` unless it is there already.

    PISA would write it in place on the first search, where a concurrent search could
    read a half-written file and a read-only index aborts the process. Here it is
    compiled under a lock in a scratch folder and renamed into place; an index that
    lacks it and cannot be written is an :class:`InputError`.
    """
    pisa_dir = Path(pisa_dir)
    if all(f.exists() for f in bm25_data_files(pisa_dir, k1, b, encoding, quantize)):
        return
    try:
        with exclusive_lock(pisa_dir):
            if all(f.exists() for f in bm25_data_files(pisa_dir, k1, b, encoding, quantize)):
                return
            with scratch_directory(pisa_dir) as tmp:
                for f in pisa_dir.iterdir():
                    if f.is_file():
                        (tmp / f.name).symlink_to(f.resolve())
                compile_bm25(tmp, k1, b, quantize)
                for f in tmp.iterdir():
                    if f.is_file() and not f.is_symlink():
                        os.replace(f, pisa_dir / f.name)
    except (InputError, OSError) as e:
        if isinstance(e, OSError) and e.errno not in USER_OS_ERRORS:
            raise
        why = e.message if isinstance(e, InputError) else f"not writable ({e.strerror})"
        raise InputError(f"the index has no BM25 data for k1={k1}, b={b} (PISA compiles it on "
                         f"the first search) and its folder is {why.removeprefix('folder ')}: "
                         "search it once with write access", path=pisa_dir) from None


@functools.cache
def _prepared_pisa_class():
    from pyterrier_pisa import PisaIndex

    class PreparedPisaIndex(PisaIndex):
        """A PisaIndex whose BM25 data is compiled by :func:`prepare_bm25` first."""

        def bm25(self, k1=0.9, b=0.4, *args, precompute_impact=False, **kwargs):
            prepare_bm25(self.path, k1, b, self.index_encoding.value, precompute_impact)
            return super().bm25(k1, b, *args, precompute_impact=precompute_impact, **kwargs)

    return PreparedPisaIndex


def pisa_index(path: str | Path, **kwargs):
    """``pyterrier_pisa.PisaIndex(path, **kwargs)`` whose ``bm25`` first prepares its data
    (:func:`prepare_bm25`), so that a search never writes into a finished index in place."""
    return _prepared_pisa_class()(str(path), **kwargs)


class AnswerIndex(pt.Artifact):
    """A built answer index; open one with ``AnswerIndex(path)`` or build with :meth:`build`.

    A PyTerrier artifact: ``pt.Artifact.load(path)`` opens it too (``pt_meta.json``).
    """

    ARTIFACT_TYPE = "sparse_index"
    ARTIFACT_FORMAT = "mathir.answers"

    def __init__(self, path: str | Path):
        super().__init__(path)
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
            self._pisa = pisa_index(self.path / "pisa", stemmer=STEMMER, text_field="text",
                                    threads=1)
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
        wanted = {
            "kind": "arqmath-answers",
            "format": INDEX_FORMAT,
            "collection": {"kind": collection.kind, **file_fingerprint(collection.path)},
            "params": {"with_title": with_title, "stemmer": STEMMER, "math": "latex-words"},
        }
        build_or_reuse(path, wanted,
                       lambda tmp: cls._build_into(tmp, collection, with_title, quiet),
                       overwrite=overwrite, pt_meta=artifact_meta(cls))
        return cls(path)

    @staticmethod
    def _build_into(tmp: Path, collection: AnswerCollection, with_title: bool,
                    quiet: bool) -> dict:
        from pyterrier_pisa import PisaIndex

        n = 0
        failures: list[BaseException] = []
        with native_output_to(tmp / "pisa.log") as visible, \
                open(tmp / "meta.tsv", "w", encoding="utf-8") as meta:
            bar = tqdm(desc="indexing answers", unit=" answers", disable=quiet, file=visible,
                       total=None if quiet else collection.count_answers(),
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
            if not failures and n:
                compile_bm25(tmp / "pisa", *BM25_DEFAULTS)
        if failures:
            raise failures[0]
        if n == 0:
            raise InputError("the collection has no answer posts", path=collection.path)
        TfidfIndex.build_from_pisa(tmp / "pisa", tmp / "tfidf", stemmer=STEMMER)
        return {"num_docs": n}


def answer_texts(collection, docnos: Iterable[str]) -> dict[str, str]:
    """Texts (``$LaTeX$`` formulas, no title) of the answers ``docnos`` of a collection.

    ``collection`` is an :class:`~mathir.indexing.answer_index.AnswerCollection` or a
    path; one streaming pass keeps only the wanted answers.
    """
    from mathir.indexing.html_text import html_to_text

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
