"""Building the formula index: formula instances -> PISA indexes of pre-tokenised documents.

One pass over the source (:func:`~mathir.indexing.formula_source.iter_formula_source`)
makes both representations of each instance: Tangent-S symbol-pair tuples
(``tuples/``) and the LaTeX-as-words tokens (``words/``), written as PISA indexes
from pre-tokenised documents (:mod:`mathir.indexing.pisa_postings`), and the id columns
of ``meta/`` (:mod:`mathir.indexing.id_arrays`). Each distinct formula is parsed once
(:class:`_Entries`), by worker processes for large sources; a formula TSV may be cut
into shards indexed in parallel and merged (:mod:`mathir.indexing.shard_jobs`), or kept
as shards of BM25 impacts (:mod:`mathir.indexing.pisa_impacts`). :func:`build_into` is
what :meth:`mathir.indexing.formula_index.FormulaIndex.build` runs in its temporary folder.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
from collections import Counter, OrderedDict, deque
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from mathir.errors import InputError
from mathir.indexing.formula_source import formula_latex, iter_formula_source
from mathir.indexing.formula_tuples import FormulaTokenizer, latex_word_tokens
from mathir.indexing.id_arrays import (
    IdColumnWriter,
    IdLookup,
    SeenIds,
    as_texts,
    save_column,
)
from mathir.indexing.native_output import native_output_to
from mathir.indexing.pisa_bm25 import BM25_DEFAULTS, compile_bm25
from mathir.indexing.pisa_impacts import write_impacts
from mathir.indexing.pisa_postings import PostingsWriter, write_index
from mathir.indexing.shard_jobs import run_shard_jobs
from mathir.readers.formula_tsv import FormulaRecord
from mathir.readers.tabular import count_lines

REPRESENTATIONS = ("tuples", "words")
META_COLUMNS = ("formula_id", "post_id", "thread_id", "visual_id")
#: Distinct formulas whose encoded tokens are kept decoded in memory while building
#: (about 0.5 KB each); the others are read back from a file (see :class:`_Entries`).
CACHE_SIZE = 200_000
_POOL_MIN_BYTES = 16 << 20
_BATCH = 500


def _formula_tokens(tokenizer: FormulaTokenizer, formula: str):
    # An official SLT TSV holds Presentation MathML: build the SLT from it, and fall back
    # to the LaTeX words of its alttext.
    if formula.lstrip().startswith("<"):
        return tokenizer.tokens(formula_latex(formula), mathml=formula)
    return tokenizer.tokens(formula)


def _parse(tokenizer: FormulaTokenizer, formula: str) -> tuple[dict, dict, int]:
    """Tuple tokens, LaTeX-word tokens and fallback flag (0/1) of one distinct formula."""
    before = tokenizer.fallbacks
    tuples = dict(_formula_tokens(tokenizer, formula))
    return tuples, dict(latex_word_tokens(formula_latex(formula))), tokenizer.fallbacks - before


def _parse_batch(window: int, formulas: list[str]) -> tuple[list[tuple[dict, dict, int]], dict]:
    # Runs in a worker process.
    tok = FormulaTokenizer(window=window)
    return [_parse(tok, f) for f in formulas], dict(tok.errors)


class _Entries:
    """Each formula instance's encoded tokens, parsing each distinct formula once.

    A distinct formula is parsed once, by ``workers`` processes a batch at a time (or
    here), and its encoded token arrays (:meth:`PostingsWriter.encode`, a few hundred
    bytes) are appended to a file (``store``); a 16-byte BLAKE2 digest of its text finds
    them again (a collision has odds of about 10^-24 at 28M formulas). The ``cache_size``
    most recently used entries are also kept decoded in memory. Memory then holds the
    digests (about 130 bytes a distinct formula) rather than every entry, and no formula
    is parsed twice: with a cache alone, a rare formula repeated after it left the cache
    was parsed again (about 40% of the parses at 6M synthetic formulas).
    """

    def __init__(self, tokenizer: FormulaTokenizer, tuples: PostingsWriter,
                 words: PostingsWriter, workers: int, cache_size: int, store: Path):
        self.tokenizer, self.tuples, self.words = tokenizer, tuples, words
        self.workers, self.cache_size = workers, cache_size
        # Parses done here count nothing: instances are counted on ``tokenizer``.
        self.parser = FormulaTokenizer(window=tokenizer.window)
        self.parser.errors = tokenizer.errors
        self.cache: OrderedDict[str, tuple[np.ndarray, np.ndarray, int]] = OrderedDict()
        self.parsed = 0
        self._store = os.open(store, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        self._end = 0
        self._where: dict[bytes, tuple[int, int, int, int]] = {}

    def close(self) -> None:
        """Close the store file (the caller removes it)."""
        os.close(self._store)

    @staticmethod
    def _key(formula: str) -> bytes:
        return hashlib.blake2b(formula.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def _known(self, formula: str) -> bool:
        return formula in self.cache or self._key(formula) in self._where

    def _keep(self, formula: str, entry: tuple[np.ndarray, np.ndarray, int]) -> None:
        self.cache[formula] = entry
        if len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)

    def _remember(self, formula: str, parsed: tuple[dict, dict, int]) -> None:
        tuples, words, fallback = parsed
        entry = (self.tuples.encode(tuples), self.words.encode(words), fallback)
        data = entry[0].tobytes() + entry[1].tobytes()
        os.write(self._store, data)  # unbuffered: pread sees it at once
        self._where[self._key(formula)] = (self._end, len(entry[0]), len(entry[1]), fallback)
        self._end += len(data)
        self.parsed += 1
        self._keep(formula, entry)

    def _entry(self, formula: str) -> tuple[np.ndarray, np.ndarray, int]:
        hit = self.cache.get(formula)
        if hit is not None:
            self.cache.move_to_end(formula)
            return hit
        where = self._where.get(self._key(formula))
        if where is None:  # not seen before: parse it here
            self._remember(formula, _parse(self.parser, formula))
            return self.cache[formula]
        offset, n_tuples, n_words, fallback = where
        data = np.frombuffer(os.pread(self._store, 4 * (n_tuples + n_words), offset),
                             dtype=np.uint32)
        hit = (data[:n_tuples], data[n_tuples:], fallback)
        self._keep(formula, hit)
        return hit

    def _resolve(self, chunk: list[FormulaRecord]):
        tok = self.tokenizer
        for rec in chunk:
            hit = self._entry(rec.formula)
            tok.formulas += 1
            tok.fallbacks += hit[2]
            yield rec, hit

    def __call__(self, records: Iterator[FormulaRecord]):
        """``(record, (tuple array, word array, fallback))`` in input order."""
        if self.workers <= 1:
            while chunk := list(islice(records, _BATCH)):
                yield from self._resolve(chunk)
            return
        # "spawn": the PISA writer may run threads, which fork would copy in a bad state.
        ctx = multiprocessing.get_context("spawn")
        inflight: set[str] = set()
        with ctx.Pool(self.workers) as pool:
            pending: deque = deque()

            def drain():
                chunk, asked, job = pending.popleft()
                results, errors = job.get()
                self.tokenizer.errors.update(errors)
                for f, parsed in zip(asked, results, strict=True):
                    self._remember(f, parsed)
                    inflight.discard(f)
                yield from self._resolve(chunk)

            while chunk := list(islice(records, _BATCH)):
                asked = [f for f in dict.fromkeys(r.formula for r in chunk)
                         if f not in inflight and not self._known(f)]
                inflight.update(asked)
                pending.append((chunk, asked, pool.apply_async(
                    _parse_batch, (self.tokenizer.window, asked))))
                if len(pending) >= 3 * self.workers:  # bounded memory: a few batches in flight
                    yield from drain()
            while pending:
                yield from drain()


def _is_tsv(source: Path) -> bool:
    return source.is_file() and source.suffix.lower() in (".tsv", ".txt", ".csv")


def build_into(tmp: Path, source: Path, window: int, quiet: bool, workers: int | None,
               cache_size: int, shards: int = 1, ray_address: str | None = None,
               scoring: str = "bm25") -> dict:
    """Index the formulas of ``source`` into the empty folder ``tmp``; the manifest's counts."""
    if shards > 1:
        parts, counts = _build_shards(tmp, source, window, quiet, workers, cache_size, shards,
                                      ray_address)
    else:
        if workers is None:  # worker processes pay off for large sources only
            size = source.stat().st_size if source.is_file() else 0
            workers = min(4, os.cpu_count() or 1) if size >= _POOL_MIN_BYTES else 1
        # A TSV's size is known (its lines, less the header): the bar shows a total and
        # an ETA. Posts are not counted ahead: formulas per post vary too much.
        total = max(count_lines(source) - 1, 0) if _is_tsv(source) and not quiet else None
        bar = tqdm(desc="indexing formulas", unit=" formulas", disable=quiet, total=total,
                   mininterval=0.5)
        try:
            counts = _build_part(source, tmp / "part", window, max(1, workers), cache_size,
                                 None, bar.update)
        finally:
            bar.close()
        parts = [tmp / "part"]
    if counts["formulas"] == 0:
        raise InputError("the source has no formulas", path=source)
    sizes, impacts = {}, {}
    with native_output_to(tmp / "pisa.log"):
        for name in REPRESENTATIONS:
            if scoring == "bm25":
                sizes[name] = write_index(tmp / name, [part / name for part in parts],
                                          df_file=tmp / name / "df.npy")
                compile_bm25(tmp / name, *BM25_DEFAULTS)  # searching then writes nothing
            else:
                sizes[name], impacts[name] = _write_impact_shards(tmp / name, parts, name)
    (tmp / "meta").mkdir()
    for name in META_COLUMNS:
        values = _concatenate([np.load(part / "meta" / f"{name}.npy") for part in parts])
        save_column(tmp / "meta", name, values)
        if name == "formula_id":
            lookup = IdLookup.of(values)
            repeated = np.flatnonzero(lookup.sorted_ids[1:] == lookup.sorted_ids[:-1])
            if len(repeated):  # only shards can disagree: each part drops its own repeats
                raise InputError(f"formula id {lookup.sorted_ids[repeated[0]]} occurs in two "
                                 "shards of the source: build it without shards", path=source)
            lookup.save(tmp / "meta", name)
        del values
    for part in parts:
        shutil.rmtree(part)
    return {"num_formulas": counts["formulas"], "empty": counts["empty"],
            "repeated_ids": counts["repeated_ids"], "distinct_parsed": counts["parsed"],
            "fallbacks": counts["fallbacks"],
            "fallback_rate": counts["fallbacks"] / counts["formulas"],
            "fallback_reasons": dict(Counter(counts["errors"]).most_common(20)),
            "postings": {k: v["num_postings"] for k, v in sizes.items()},
            "terms": {k: v["num_terms"] for k, v in sizes.items()},
            "shards": max(1, shards),
            **({"scoring": scoring, "impacts": impacts} if scoring != "bm25" else {})}


def _write_impact_shards(folder: Path, parts: list[Path], name: str) -> tuple[dict, dict]:
    """Write each part's ``name`` postings as a PISA index of BM25 impacts from all the
    parts' statistics, in ``folder/shard-<i>``; its counts and impacts entry."""
    from pyterrier_pisa import PisaIndex

    shards, postings = [], 0
    for part in parts:
        if json.loads((part / name / "part.json").read_text())["num_docs"] == 0:
            continue  # (e.g. no formula of a shard had LaTeX words): PISA needs documents
        shard = folder / f"shard-{len(shards)}"
        postings += write_index(shard, [part / name], df_file=shard / "df.npy")["num_postings"]
        shards.append(shard)
    if not shards:
        raise InputError(f"no formula has {name}")
    info = write_impacts(shards, *BM25_DEFAULTS)
    for shard in shards:  # compress and write the maximum scores now: a search writes nothing
        PisaIndex(str(shard), stemmer="none", threads=1).quantized(toks_scale=1.0)
    return ({"num_docs": info["num_docs"], "num_terms": info["num_terms"],
             "num_postings": postings}, info)


def _concatenate(columns: list[np.ndarray]) -> np.ndarray:
    # Parts agree on integer columns unless one of them met a non-integer id.
    if all(c.dtype.kind == "i" for c in columns):
        return np.concatenate(columns)
    return np.concatenate([c if c.dtype.kind == "U" else as_texts(c).astype(str)
                           for c in columns])


def _build_part(source: Path, out: Path, window: int, workers: int, cache_size: int,
                rows: tuple[int, int] | None = None, progress=None) -> dict:
    """Index the source's records ``rows`` (a range of record numbers; all when None) into
    the parts ``out/tuples``, ``out/words`` and ``out/meta``; the counts."""
    tokenizer = FormulaTokenizer(window=window)
    counts = {"formulas": 0, "empty": 0, "repeated_ids": 0}
    seen = SeenIds()
    columns = {c: IdColumnWriter() for c in META_COLUMNS}

    def records():
        stream = iter_formula_source(source)
        if rows is not None:
            stream = islice(stream, *rows)
        for rec in stream:
            if progress is not None:
                progress()
            if not rec.formula.strip():
                counts["empty"] += 1
                continue
            if not seen.add(rec.formula_id):  # e.g. a question in many thread files
                counts["repeated_ids"] += 1
                continue
            yield rec

    tuples, words = PostingsWriter(out / "tuples"), PostingsWriter(out / "words")
    entries = _Entries(tokenizer, tuples, words, workers, cache_size, out / "parsed.bin")
    try:
        for rec, (tuple_doc, word_doc, _) in entries(records()):
            if not len(tuple_doc):
                counts["empty"] += 1
                continue
            counts["formulas"] += 1
            for name, column in columns.items():
                column.add(getattr(rec, name))
            tuples.add(rec.formula_id, tuple_doc)
            if len(word_doc):
                words.add(rec.formula_id, word_doc)
    finally:
        entries.close()
        (out / "parsed.bin").unlink()
    tuples.flush()
    words.flush()
    (out / "meta").mkdir()
    for name, column in columns.items():
        np.save(out / "meta" / f"{name}.npy", column.values())
    return {**counts, "parsed": entries.parsed, "fallbacks": tokenizer.fallbacks,
            "errors": dict(tokenizer.errors)}


def _shard_job(source: str, out: str, window: int, workers: int, cache_size: int,
               rows: tuple[int, int]) -> dict:
    # Runs in a shard process or a Ray task.
    return _build_part(Path(source), Path(out), window, workers, cache_size, rows)


def _build_shards(tmp: Path, source: Path, window: int, quiet: bool, workers: int | None,
                  cache_size: int, shards: int, ray_address: str | None
                  ) -> tuple[list[Path], dict]:
    """Index ``shards`` consecutive slices of the source in parallel; their parts and counts.

    Each shard is a process (or a Ray task when ``ray_address`` is given) that reads the
    source and indexes its own slice of records; the parts are merged in order, so the
    index is the one an unsharded build writes, byte for byte.
    """
    if not _is_tsv(source):
        raise InputError("a sharded build reads a formula TSV (posts repeat formula ids "
                         "across thread files): build this source without shards",
                         path=source)
    records = max(count_lines(source) - 1, 0)
    bounds = [records * i // shards for i in range(shards + 1)]
    jobs = [(str(source), str(tmp / f"shard-{i}"), window, max(1, workers or 1), cache_size,
             (bounds[i], bounds[i + 1])) for i in range(shards)]
    results = run_shard_jobs(_shard_job, jobs, ray_address, "indexing formula shards", quiet)
    counts: dict = {"formulas": 0, "empty": 0, "repeated_ids": 0, "parsed": 0, "fallbacks": 0,
                    "errors": Counter()}
    for i in range(shards):
        for key, value in results[i].items():
            counts[key] = counts[key] + (Counter(value) if key == "errors" else value)
    return [tmp / f"shard-{i}" for i in range(shards)], counts
