"""The Task 1 answer index: answer posts in PISA (BM25) and scikit-learn TF-IDF.

An index directory holds ``pisa/`` (with ``scoring="bm25-impacts"``: ``pisa/shard-<i>/``,
see :meth:`AnswerIndex.build`), ``tfidf/``, ``meta.tsv`` (docno, thread id),
``manifest.json`` (what it was built from) and ``pt_meta.json`` (what ``pt.Artifact.load``
reads). It is built in a temporary directory and renamed into place, and reused when the
manifest matches the input and parameters (:func:`mathir.storage.build_or_reuse`). The
answers are read by :class:`~mathir.indexing.answer_collection.AnswerCollection`.

Beside an index at ``I``, ``I-texts/`` holds its answer texts with formulas as
``$LaTeX$`` (:class:`~mathir.indexing.text_store.AnswerTexts`), which the index's
``text_loader`` reads.

``build_package()`` (PyTerrier's packaged artifact, as ``to_hf()`` uploads it) ships
what opening and searching read: no lock, log, forward index or BM25 data of other
parameters than :data:`~mathir.indexing.pisa_bm25.BM25_DEFAULTS`
(:func:`~mathir.indexing.pisa_bm25.packaged`), and a manifest without the
collection's absolute path (:func:`mathir.storage.portable_manifest`).
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyterrier as pt
from tqdm.auto import tqdm

from mathir.errors import InputError
from mathir.indexing.answer_collection import AnswerCollection
from mathir.indexing.artifact import MathirIndex
from mathir.indexing.id_arrays import IdColumnWriter, IdLookup
from mathir.indexing.identity import writer_identity
from mathir.indexing.native_output import native_output_to
from mathir.indexing.pisa_bm25 import BM25_DEFAULTS, compile_bm25, packaged, pisa_index
from mathir.indexing.pisa_impacts import ImpactShards, resolve_scoring
from mathir.indexing.text_store import AnswerTexts
from mathir.indexing.tfidf import TfidfIndex
from mathir.storage import (
    artifact_meta,
    build_or_reuse,
    file_fingerprint,
)

INDEX_FORMAT = 1
STEMMER = "porter2"
# Documents per batch of PISA's parser and inverter (pyterrier-pisa's default). The index
# is the same whatever the size; at 2.4M posts 100,000 indexed faster than 20,000 in two of
# three alternating runs (docs/measurements.md).
PISA_BATCH_SIZE = 100_000
# PISA's parsing threads for an unsharded build (it runs one more); None: one per core
# this process may run on.
PISA_THREADS: int | None = None
# A batch size no collection reaches (PISA reads it as a C int).
_ONE_BATCH = 2**31 - 1
#: The libraries that write an answer index (PISA's indexer is in pyterrier-pisa's
#: wheel, TF-IDF is scikit-learn's over scipy/numpy, lxml reads the collection): their
#: versions are part of its identity (:mod:`mathir.indexing.identity`), as this module's code is.
INDEX_PACKAGES = ("pyterrier-pisa", "pyterrier", "scikit-learn", "scipy", "numpy", "lxml")


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


class AnswerIndex(MathirIndex):
    """A built answer index; open one with ``AnswerIndex(path)`` or build with :meth:`build`.

    A PyTerrier artifact: ``pt.Artifact.load(path)`` opens it too (``pt_meta.json``).
    """

    ARTIFACT_FORMAT = "mathir.arqmath_answers"
    KIND, WHAT, UNIT = "arqmath-answers", "answer index", "answers"
    PACKAGED = staticmethod(packaged)

    def _open(self) -> None:
        self._pisa = None
        self._tfidf = None
        self._lookup = None

    def __getstate__(self) -> dict:
        # What it opened (PISA, TF-IDF, the docno lookup) is opened again where unpickled.
        return {**self.__dict__, "_pisa": None, "_tfidf": None, "_lookup": None}

    def text_loader(self, fields: str | Sequence[str] = "*", *,
                    verbose: bool = False) -> pt.Transformer:
        """PyTerrier's text loader (``pt.text.get_text(index, fields)``): adds each
        answer's ``title`` (its question's) and ``text`` (formulas as ``$LaTeX$``) by
        ``docno``, from the answer texts beside the index
        (:class:`~mathir.indexing.text_store.AnswerTexts`, built from the index's collection on first use).

        >>> from mathir.samples import arqmath_sample
        >>> idx = AnswerIndex.build(arqmath_sample().posts, "sample-answers", quiet=True)
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

        >>> from mathir.samples import arqmath_sample
        >>> idx = AnswerIndex.build(arqmath_sample().posts, "sample-answers", quiet=True)
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
