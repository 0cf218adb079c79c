"""The Task 1 answer index: answer posts in PISA (BM25) and scikit-learn TF-IDF.

An index directory holds ``pisa/`` (with ``scoring="bm25-impacts"``: ``pisa/shard-<i>/``,
see :meth:`AnswerIndex.build`), ``tfidf/``, ``meta.tsv`` (docno, thread id),
``manifest.json`` (what it was built from) and ``pt_meta.json`` (what ``pt.Artifact.load``
reads). It is built in a temporary directory and renamed into place, and reused when the
manifest matches the input and parameters (:func:`mathir.storage.build_or_reuse`).

Beside an index at ``I``, ``I-texts/`` holds its :class:`AnswerTexts`: the answers with
their formulas as ``$LaTeX$`` (the index holds them as words), in an SQLite file, built
from the collection on first use. Rerankers read them
(:mod:`mathir.pipelines.reranking`), and so does the index's ``text_loader``
(``pt.text.get_text(index, "text")``). :class:`~mathir.indexing.dense_index.DenseAnswerIndex`
encodes their passages.

``build_package()`` (PyTerrier's packaged artifact, as ``to_hf()`` uploads it) ships
what opening and searching read: no lock, log, forward index or BM25 data of other
parameters than :data:`BM25_DEFAULTS` (:func:`packaged`), and a manifest without the
collection's absolute path (:func:`mathir.storage.portable_manifest`).
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import sqlite3
import threading
from collections.abc import ItemsView, Iterable, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt
from tqdm.auto import tqdm

from mathir.errors import InputError
from mathir.indexing.html_text import html_to_text
from mathir.indexing.id_arrays import IdColumnWriter, IdLookup
from mathir.indexing.identity import writer_identity
from mathir.indexing.mse_posts import Post, iter_posts
from mathir.indexing.native_output import native_output_to
from mathir.indexing.pisa_impacts import ImpactShards, resolve_scoring
from mathir.indexing.tfidf import TfidfIndex
from mathir.indexing.thread_html import iter_thread_posts
from mathir.storage import (
    USER_OS_ERRORS,
    artifact_meta,
    build_or_reuse,
    exclusive_lock,
    file_fingerprint,
    package_files,
    read_manifest,
    scratch_directory,
)

INDEX_FORMAT = 1
STEMMER = "porter2"
# BM25's (k1, b) in mathir's pipelines (mathir.pipelines.lexical.bm25 and the formula
# retrievers): a build compiles their block-max data, so that searching writes nothing.
BM25_DEFAULTS = (1.2, 0.75)
# Documents per batch of PISA's parser and inverter (pyterrier-pisa's default). The index
# is the same whatever the size; at 2.4M posts 100,000 indexed faster than 20,000 in two of
# three alternating runs (docs/performance.md).
PISA_BATCH_SIZE = 100_000
# PISA's parsing threads for an unsharded build (it runs one more); None: one per core
# this process may run on.
PISA_THREADS: int | None = None
# A batch size no collection reaches (PISA reads it as a C int).
_ONE_BATCH = 2**31 - 1
TEXTS_FORMAT = 2  # answer texts: 1: texts.jsonl, loaded whole; 2: texts.sqlite
#: The libraries that write an answer index (PISA's indexer is in pyterrier-pisa's
#: wheel, TF-IDF is scikit-learn's over scipy/numpy, lxml reads the collection): their
#: versions are part of its identity (:mod:`mathir.indexing.identity`), as this module's code is.
INDEX_PACKAGES = ("pyterrier-pisa", "pyterrier", "scikit-learn", "scipy", "numpy", "lxml")
#: The libraries that write the answer texts (lxml reads them; Python's sqlite3 stores them).
TEXTS_PACKAGES = ("lxml",)
#: The fields of an answer that text loaders add: the question's title, the answer.
TEXT_FIELDS = ("title", "text")


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity (taskset, a Slurm or container
    cpuset), which is what TBB sizes its thread pool by, else the machine's count.

    >>> usable_cpus() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on this platform (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def _pisa_threads() -> int:
    return PISA_THREADS or usable_cpus()


def _pisa_batch_size() -> int:
    """Documents per batch of PISA's parser for this process.

    PISA's parser (``Forward_Index_Builder::build``) hands each batch to a TBB task and
    blocks once twice its threads' count of batches wait; TBB starts one worker per usable
    CPU less one, so a process confined to one CPU has no worker and would wait forever
    from that batch on (the sample's 250 answers in batches of 16 never finish under
    ``taskset -c 0``). There the waiting batches are only parsed after the last is read,
    so one batch of every answer holds no more memory, and finishes: the same index.
    """
    return PISA_BATCH_SIZE if usable_cpus() > 1 else _ONE_BATCH


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


def packaged(rel: str) -> bool:
    """Whether an index package holds the file at ``rel`` (a path inside a mathir index
    with PISA parts): not PISA's forward index (``fwd``, ``fwd.urls``: only re-indexing
    reads them) nor the BM25 data of a k1 and b other than :data:`BM25_DEFAULTS` (a
    parameter scan compiles them; a search compiles them again where needed).

    >>> [packaged(p) for p in ("pisa/inv.docs", "pisa/fwd", "pisa/bm25.k1-0.9.b-0.4.q0.bmw.64",
    ...                        "pisa/bm25.k1-1.2.b-0.75.q0.bmw.64.block_simdbp")]
    [True, False, False, True]
    """
    name = rel.rsplit("/", 1)[-1]
    if name in ("fwd", "fwd.urls"):
        return False
    if name.startswith("bm25.k1-"):
        return name in {p.name for p in bm25_data_files(Path(), *BM25_DEFAULTS)}
    return True


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
        self._lookup = None

    def __repr__(self) -> str:
        return f"AnswerIndex({str(self.path)!r}, {self.num_docs} answers)"

    def __getstate__(self) -> dict:
        # What it opened (PISA, TF-IDF, the docno lookup) is opened again where unpickled.
        return {**self.__dict__, "_pisa": None, "_tfidf": None, "_lookup": None}

    @property
    def num_docs(self) -> int:
        """Number of indexed answers."""
        return int(self.manifest["num_docs"])

    def _package_files(self):
        # What build_package() and to_hf() ship (pt.Artifact's hook): what opening and
        # searching read, no lock, log or absolute path (mathir.storage.package_files).
        return package_files(self.path, packaged, artifact_meta(type(self)))

    def text_loader(self, fields: str | Sequence[str] = "*", *,
                    verbose: bool = False) -> pt.Transformer:
        """PyTerrier's text loader (``pt.text.get_text(index, fields)``): adds each
        answer's ``title`` (its question's) and ``text`` (formulas as ``$LaTeX$``) by
        ``docno``, from the answer texts beside the index
        (:class:`AnswerTexts`, built from the index's collection on first use).

        >>> import tempfile
        >>> from mathir.samples import arqmath_sample
        >>> idx = AnswerIndex.build(arqmath_sample().posts, tempfile.mkdtemp() + "/i", quiet=True)
        >>> import pandas as pd
        >>> loaded = pt.text.get_text(idx, "text")(pd.DataFrame({"qid": ["1"], "docno": ["1002"]}))
        >>> loaded.columns.tolist(), "$" in loaded["text"][0]
        (['qid', 'docno', 'text'], True)
        """
        return AnswerTexts.for_index(self, quiet=not verbose).text_loader(fields,
                                                                          verbose=verbose)

    def docnos(self) -> list[str]:
        """The indexed answer ids, in index order."""
        with open(self.path / "meta.tsv", encoding="utf-8") as f:
            return [line.split("\t", 1)[0] for line in f]

    @property
    def scoring(self) -> str:
        """``bm25`` (one PISA index) or ``bm25-impacts`` (shards, :meth:`impact_shards`)."""
        return self.manifest.get("scoring", "bm25")

    @property
    def impacts(self) -> dict:
        """How a ``bm25-impacts`` index's impacts were computed (k1, b, levels, the
        collection's statistics, each shard's answers)."""
        if self.scoring != "bm25-impacts":
            raise InputError("this answer index scores BM25 when searching: it has no "
                             "impacts (build it with scoring='bm25-impacts')", path=self.path)
        return self.manifest["impacts"]

    def positions(self, docnos) -> np.ndarray:
        """Position of each answer id in index order; -1 when not indexed."""
        if self._lookup is None:
            column = IdColumnWriter()
            for docno in self.docnos():
                column.add(docno)
            self._lookup = IdLookup.of(column.values())
        return self._lookup.positions(docnos)

    def impact_shards(self, query_algorithm: str = "maxscore") -> ImpactShards:
        """The shards of a ``bm25-impacts`` index, searched side by side and merged into
        the unsharded ranking."""
        shards = [self.path / "pisa" / f"shard-{i}"
                  for i in range(len(self.impacts["shard_docs"]))]
        return ImpactShards(shards, self.positions, self.impacts["levels"], stemmer=STEMMER,
                            query_algorithm=query_algorithm)

    @property
    def pisa(self):
        """The ``pyterrier_pisa.PisaIndex`` of the answers (``bm25`` scoring)."""
        if self.scoring != "bm25":
            raise InputError(f"this answer index is in shards of {self.scoring}: search it "
                             "with impact_shards()", path=self.path)
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
              with_title: bool = True, overwrite: bool = False, quiet: bool = False,
              shards: int = 1, scoring: str | None = None,
              ray_address: str | None = None) -> AnswerIndex:
        """Index the answers of ``collection`` into ``path`` (reused when up to date).

        ``scoring="bm25-impacts"`` indexes ``shards`` consecutive slices of the answers
        side by side (processes, or Ray tasks on the cluster at ``ray_address``) and
        keeps them as PISA indexes of BM25 impacts (k1 1.2, b 0.75) from the whole
        collection's statistics, searched side by side: any number of shards gives the
        same ranking, hit for hit (:mod:`mathir.indexing.pisa_impacts`); the TF-IDF
        index is the whole collection's, as without shards. ``scoring=None`` (the
        default) reuses the index at ``path`` whatever its scoring and shards, and
        builds ``bm25`` (one PISA index, any k1 and b when searching) where there is none.

        >>> import tempfile
        >>> from mathir.samples import arqmath_sample
        >>> idx = AnswerIndex.build(arqmath_sample().posts, tempfile.mkdtemp() + "/i", quiet=True)
        >>> idx.num_docs
        250
        """
        if not isinstance(collection, AnswerCollection):
            collection = AnswerCollection.at(collection)
        scoring, shards = resolve_scoring(path, scoring, shards, "answer")
        if shards < 1:
            raise InputError(f"shards must be at least 1, not {shards}")
        if shards > 1 and scoring == "bm25":
            raise InputError("answer shards are kept and searched side by side: build them "
                             "with scoring='bm25-impacts' (--scoring bm25-impacts)")
        wanted = {
            "kind": "arqmath-answers",
            "format": INDEX_FORMAT,
            "collection": {"kind": collection.kind, **file_fingerprint(collection.path)},
            "params": {"with_title": with_title, "stemmer": STEMMER, "math": "latex-words"},
            "writer": writer_identity(__name__, INDEX_PACKAGES),
        }
        if scoring == "bm25":
            build = lambda tmp: cls._build_into(tmp, collection, with_title, quiet)  # noqa: E731
        else:  # (keys only where they are not the default: older indexes still match)
            wanted["params"].update(scoring=scoring, shards=shards)
            build = lambda tmp: _build_impact_shards(  # noqa: E731
                tmp, collection, with_title, quiet, shards, ray_address)
        build_or_reuse(path, wanted, build, overwrite=overwrite, pt_meta=artifact_meta(cls))
        return cls(path)

    @staticmethod
    def _build_into(tmp: Path, collection: AnswerCollection, with_title: bool,
                    quiet: bool) -> dict:
        n = _index_answer_slice(str(collection.path), collection.kind, with_title, str(tmp),
                                rows=(0, None),
                                total=None if quiet else collection.count_answers(),
                                threads=_pisa_threads())
        if n == 0:
            raise InputError("the collection has no answer posts", path=collection.path)
        with native_output_to(tmp / "pisa.log"):
            compile_bm25(tmp / "pisa", *BM25_DEFAULTS)
        TfidfIndex.build_from_pisa(tmp / "pisa", tmp / "tfidf", stemmer=STEMMER)
        return {"num_docs": n}


def _index_answer_slice(path: str, kind: str, with_title: bool, out: str,
                        rows: tuple[int, int | None], total: int | None = None,
                        threads: int = 1) -> int:
    """Index the answers ``rows`` (a range of answer numbers, open-ended when the end is
    None) of a collection into the PISA folder ``out/pisa`` and ``out/meta.tsv``; their
    number. Runs in a shard process or a Ray task, or in the build of an unsharded index
    (``rows=(0, None)``), with a progress bar of ``total`` answers when that is given,
    and PISA's ``threads``."""
    from pyterrier_pisa import PisaIndex

    collection, out_dir = AnswerCollection(Path(path), kind), Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    n = 0
    failures: list[BaseException] = []
    with native_output_to(out_dir / "pisa.log") as visible, \
            open(out_dir / "meta.tsv", "w", encoding="utf-8") as meta:
        bar = tqdm(desc="indexing answers", unit=" answers", disable=total is None,
                   file=visible, total=total, mininterval=0.5)

        def docs():
            nonlocal n
            # pyterrier-pisa consumes this in a writer thread and would index a truncated
            # collection if it raised: keep the error for this thread.
            try:
                for doc in collection.iter_answers(with_title, math_words=True, rows=rows):
                    meta.write(f"{doc['docno']}\t{doc['thread_id']}\n")
                    n += 1
                    bar.update()
                    yield doc
            except BaseException as e:  # noqa: BLE001 - re-raised below
                failures.append(e)

        # PISA peeks at the first document and raises StopIteration on none: an empty
        # collection (or slice), or a reader error on its first answer, is told here.
        stream = docs()
        first = next(stream, None)
        if first is not None:
            PisaIndex(str(out_dir / "pisa"), stemmer=STEMMER, text_field="text",
                      batch_size=_pisa_batch_size(),
                      threads=threads).index(itertools.chain([first], stream))
        bar.close()
    if failures:
        raise failures[0]
    return n


def _build_impact_shards(tmp: Path, collection: AnswerCollection, with_title: bool,
                         quiet: bool, shards: int, ray_address: str | None) -> dict:
    """Index the answers as ``shards`` slices side by side, then their TF-IDF (whole
    collection) and their BM25 impacts (whole collection's statistics); the counts."""
    from pyterrier_pisa import PisaIndex

    from mathir.indexing.pisa_impacts import write_impacts
    from mathir.indexing.shard_jobs import run_shard_jobs

    total = collection.count_answers()  # (an estimate at worst: the last slice is open)
    if total < shards:
        raise InputError(f"{total} answers cannot make {shards} shards", path=collection.path)
    bounds = [total * i // shards for i in range(shards)] + [None]
    jobs = [(str(collection.path), collection.kind, with_title, str(tmp / f"part-{i}"),
             (bounds[i], bounds[i + 1])) for i in range(shards)]
    if shards == 1:
        counts = [_index_answer_slice(*jobs[0], total=None if quiet else total,
                                      threads=_pisa_threads())]
    else:
        counts = run_shard_jobs(_index_answer_slice, jobs, ray_address,
                                "indexing answer shards", quiet)
    if sum(counts) == 0:
        raise InputError("the collection has no answer posts", path=collection.path)
    if not all(counts):
        raise InputError(f"a shard of the collection has no answers (answers per shard: "
                         f"{counts}): use fewer shards", path=collection.path)
    parts = [tmp / f"part-{i}" for i in range(shards)]
    with open(tmp / "meta.tsv", "wb") as meta:
        for part in parts:
            meta.write((part / "meta.tsv").read_bytes())
    (tmp / "pisa").mkdir()
    pisa_dirs = []
    for i, part in enumerate(parts):
        os.replace(part / "pisa", tmp / "pisa" / f"shard-{i}")
        pisa_dirs.append(tmp / "pisa" / f"shard-{i}")
    # TF-IDF from the raw term counts, before impacts replace them.
    TfidfIndex.build_from_pisa(pisa_dirs, tmp / "tfidf", stemmer=STEMMER)
    with native_output_to(tmp / "pisa.log"):
        info = write_impacts(pisa_dirs, *BM25_DEFAULTS)
        for shard in pisa_dirs:  # compress and write the maximum scores now
            PisaIndex(str(shard), stemmer=STEMMER, text_field="text", threads=1).quantized(
                toks_scale=1.0)
    for part in parts:
        shutil.rmtree(part)
    return {"num_docs": sum(counts), "scoring": "bm25-impacts", "impacts": info,
            "shards": shards}


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


# --- the answer texts beside an index: what rerankers and text loaders read ----------------


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


def collection_of(index: AnswerIndex) -> AnswerCollection:
    """The collection an answer index was built from (its manifest records the path)."""
    info = index.manifest.get("collection", {})
    if "path" not in info:
        raise InputError("the answer index does not record its collection (a packaged index): "
                         "build its texts with AnswerTexts.build(collection, path)",
                         path=index.path)
    return AnswerCollection(Path(info["path"]), info.get("kind", "posts"))


def sibling(index: AnswerIndex | str | Path, suffix: str) -> Path:
    """The directory ``<index>-<suffix>`` beside an answer index.

    >>> sibling("/tmp/idx/answers", "texts").as_posix()
    '/tmp/idx/answers-texts'
    """
    path = index.path if isinstance(index, AnswerIndex) else Path(index)
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

    >>> import tempfile
    >>> from mathir.samples import arqmath_sample
    >>> texts = AnswerTexts.build(arqmath_sample().posts, tempfile.mkdtemp() + "/t", quiet=True)
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

        >>> import tempfile
        >>> from mathir.samples import arqmath_sample
        >>> texts = AnswerTexts.build(arqmath_sample().posts, tempfile.mkdtemp() + "/t", quiet=True)
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
    def for_index(cls, index: AnswerIndex, quiet: bool = True) -> AnswerTexts:
        """The texts beside ``index`` (built from its collection on first use)."""
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
