"""The formula index: one entry per formula instance, searchable as SLT tuples or LaTeX words.

An index directory holds ``meta.tsv`` (``formula_id post_id thread_id visual_id``, one
line per indexed instance), two PISA indexes built through pyterrier-pisa's
pre-tokenised ``toks`` path (``tuples/``: Tangent-S symbol-pair tuples; ``words/``: the
LaTeX-as-words tokens), ``manifest.json`` with the counts, among them the formulas
that fell back to LaTeX tokens because they did not parse, and ``pt_meta.json`` (what
``pt.Artifact.load`` reads). It is built in a temporary directory, renamed into place,
and reused when the manifest matches (:func:`mathir.storage.build_or_reuse`).

Sources: a formula index TSV (:mod:`mathir.indexing.formula_tsv`, any layout; the SLT
files' Presentation MathML is read as such, its ``alttext`` giving the words) or, when
no TSV is given, the ``math-container`` formulas of a ``Posts.V1.3.xml`` file or thread
HTML directory (no visual ids then).
"""

from __future__ import annotations

import html
import multiprocessing
import os
import re
from collections import deque
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import pandas as pd
import pyterrier as pt
from tqdm.auto import tqdm

from mathir.errors import InputError
from mathir.indexing.answer_index import (
    BM25_DEFAULTS,
    AnswerCollection,
    compile_bm25,
    native_output_to,
    pisa_index,
)
from mathir.indexing.formula_tsv import FormulaRecord, iter_formula_index
from mathir.indexing.formula_tuples import FormulaTokenizer, latex_word_tokens
from mathir.indexing.html_text import extract_formulas
from mathir.storage import artifact_meta, build_or_reuse, file_fingerprint, read_manifest
from mathir.tabular import count_lines

INDEX_FORMAT = 3
REPRESENTATIONS = ("tuples", "words")
_CACHE_SIZE = 50_000  # repeated LaTeX (same visual id) is tokenised once
_POOL_MIN_BYTES = 16 << 20
_BATCH = 500


_ALTTEXT = re.compile(r'alttext="([^"]*)"')


def formula_latex(formula: str) -> str:
    """The LaTeX of a formula cell: itself, or the ``alttext`` of an SLT MathML cell.

    >>> formula_latex('<math alttext="x^{2}"><msup><mi>x</mi><mn>2</mn></msup></math>')
    'x^{2}'
    """
    if not formula.lstrip().startswith("<"):
        return formula
    m = _ALTTEXT.search(formula)
    return html.unescape(m.group(1)) if m else ""


def _formula_tokens(tokenizer: FormulaTokenizer, formula: str):
    # An official SLT TSV holds Presentation MathML: build the SLT from it, and fall back
    # to the LaTeX words of its alttext.
    if formula.lstrip().startswith("<"):
        return tokenizer.tokens(formula_latex(formula), mathml=formula)
    return tokenizer.tokens(formula)


def _tokenize_batch(window: int, formulas: list[str]) -> tuple[list[tuple[dict, int]], dict]:
    # Runs in a worker process: tokens and fallback flag of each formula.
    tok = FormulaTokenizer(window=window)
    out = []
    for f in formulas:
        before = tok.fallbacks
        out.append((dict(_formula_tokens(tok, f)), tok.fallbacks - before))
    return out, dict(tok.errors)


def _tokenized(records: Iterator[FormulaRecord], tokenizer: FormulaTokenizer,
               workers: int) -> Iterator[tuple[FormulaRecord, dict]]:
    """``(record, tokens)`` in input order; fallbacks are counted on ``tokenizer``."""
    if workers <= 1:
        cache: dict[str, tuple[dict, int]] = {}
        for rec in records:
            hit = cache.get(rec.formula)
            if hit is None:
                before = tokenizer.fallbacks
                hit = dict(_formula_tokens(tokenizer, rec.formula)), tokenizer.fallbacks - before
                if len(cache) < _CACHE_SIZE:
                    cache[rec.formula] = hit
            else:  # a repeated formula counts as its own instance
                tokenizer.formulas += 1
                tokenizer.fallbacks += hit[1]
            yield rec, hit[0]
        return
    # "spawn": the PISA indexer runs threads, which fork would copy in a bad state.
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        pending: deque = deque()

        def drain():
            chunk, job = pending.popleft()
            results, errors = job.get()
            tokenizer.formulas += len(chunk)
            tokenizer.fallbacks += sum(fb for _, fb in results)
            tokenizer.errors.update(errors)
            for rec, (toks, _) in zip(chunk, results, strict=True):
                yield rec, toks

        while True:
            chunk = list(islice(records, _BATCH))
            if not chunk:
                break
            pending.append((chunk, pool.apply_async(
                _tokenize_batch, (tokenizer.window, [r.formula for r in chunk]))))
            if len(pending) >= 3 * workers:  # bounded memory: a few batches in flight
                yield from drain()
        while pending:
            yield from drain()


def iter_formula_source(path: str | Path) -> Iterator[FormulaRecord]:
    """Formula instances of a TSV file, or of the posts (``Posts.V1.3.xml`` / thread HTML).

    >>> from mathir.samples import arqmath_sample
    >>> next(iter_formula_source(arqmath_sample().posts)).post_id
    '1001'
    """
    p = Path(path)
    if p.is_file() and p.suffix.lower() in (".tsv", ".txt", ".csv"):
        yield from iter_formula_index(p)
        return
    for post in AnswerCollection.at(p).iter_posts():
        parts = [("title", post.title), (post.post_type, post.body)]
        for kind, fragment in parts:
            for f in extract_formulas(fragment or ""):
                if f.formula_id:
                    yield FormulaRecord(f.formula_id, post.post_id, post.thread_id, kind,
                                        "", "", "", "", f.latex)


class FormulaIndex(pt.Artifact):
    """A built formula index; open with ``FormulaIndex(path)`` or build with :meth:`build`.

    A PyTerrier artifact: ``pt.Artifact.load(path)`` opens it too (``pt_meta.json``).
    """

    ARTIFACT_TYPE = "sparse_index"
    ARTIFACT_FORMAT = "mathir.formulas"

    def __init__(self, path: str | Path):
        super().__init__(path)
        self.manifest = read_manifest(self.path)
        if self.manifest is None or self.manifest.get("kind") != "arqmath-formulas":
            raise InputError("not a mathir formula index (no manifest.json)", path=self.path)
        self._pisa: dict[str, object] = {}
        self._meta: pd.DataFrame | None = None
        self._columns: dict = {}

    def __repr__(self) -> str:
        return f"FormulaIndex({str(self.path)!r}, {self.num_docs} formulas)"

    @property
    def num_docs(self) -> int:
        """Number of indexed formula instances."""
        return int(self.manifest["num_formulas"])

    @property
    def fallbacks(self) -> int:
        """Formulas indexed as LaTeX tokens because they did not parse."""
        return int(self.manifest["fallbacks"])

    @property
    def meta(self) -> pd.DataFrame:
        """``formula_id`` (index) -> ``post_id, thread_id, visual_id`` (strings)."""
        if self._meta is None:
            # Plain object arrays: retrieval looks rows up once per query, and pandas'
            # string dtype would convert the whole column to objects on every lookup.
            table = pd.read_csv(self.path / "meta.tsv", sep="\t", dtype=object,
                                keep_default_na=False, quoting=3,
                                names=["formula_id", "post_id", "thread_id", "visual_id"])
            self._meta = pd.DataFrame(
                {c: table[c].to_numpy(dtype=object) for c in ("post_id", "thread_id",
                                                             "visual_id")},
                index=pd.Index(table["formula_id"].to_numpy(dtype=object), dtype=object,
                               name="formula_id"))
            self._columns = {c: self._meta[c].to_numpy(dtype=object) for c in self._meta}
        return self._meta

    def lookup(self, formula_ids) -> tuple:
        """Row positions of ``formula_ids`` in :attr:`meta` (-1 when unknown) and the
        ``post_id``, ``thread_id``, ``visual_id`` arrays to take them from."""
        meta = self.meta
        pos = meta.index.get_indexer(pd.Index(formula_ids, dtype=object))
        return pos, self._columns

    def docnos(self) -> list[str]:
        """The indexed formula ids."""
        return self.meta.index.tolist()

    def pisa(self, representation: str):
        """The ``pyterrier_pisa.PisaIndex`` of ``tuples`` or ``words``."""
        if representation not in REPRESENTATIONS:
            raise InputError(f"unknown formula representation {representation!r}; "
                             f"expected one of {list(REPRESENTATIONS)}")
        if representation not in self._pisa:
            self._pisa[representation] = pisa_index(self.path / representation,
                                                    stemmer="none", threads=1)
        return self._pisa[representation]

    @classmethod
    def build(cls, source: str | Path, path: str | Path, *, window: int = 2,
              overwrite: bool = False, quiet: bool = False,
              workers: int | None = None) -> FormulaIndex:
        """Index the formulas of ``source`` (a formula TSV or a posts collection) into ``path``.

        ``workers`` processes parse the formulas (default: up to 4 for sources of 16 MB
        or more, else none); repeated LaTeX is parsed once in a single process.

        >>> import tempfile
        >>> from mathir.samples import arqmath_sample
        >>> idx = FormulaIndex.build(arqmath_sample().formulas, tempfile.mkdtemp() + "/f", quiet=True)
        >>> idx.num_docs > 1000, idx.fallbacks < 5
        (True, True)
        """
        source = Path(source)
        if not source.exists():
            raise InputError("formula source not found (a formula TSV, Posts.V1.3.xml or a "
                             "thread HTML directory)", path=source)
        path = Path(path)
        wanted = {
            "kind": "arqmath-formulas",
            "format": INDEX_FORMAT,
            "source": file_fingerprint(source),
            "params": {"window": window, "end_of_baseline": True, "location": False,
                       "abstract": True, "symbols": True},
        }
        build_or_reuse(path, wanted, lambda tmp: _build_into(tmp, source, window, quiet, workers),
                       overwrite=overwrite, pt_meta=artifact_meta(cls))
        return cls(path)


def _build_into(tmp: Path, source: Path, window: int, quiet: bool, workers: int | None) -> dict:
    """Index the formulas of ``source`` into the empty folder ``tmp``; the manifest's counts."""
    from pyterrier_pisa import PisaIndex

    tokenizer = FormulaTokenizer(window=window)
    if workers is None:  # worker processes pay off for large sources only
        size = source.stat().st_size if source.is_file() else 0
        workers = min(4, os.cpu_count() or 1) if size >= _POOL_MIN_BYTES else 1
    n_workers = max(1, workers)
    counts = {"formulas": 0, "empty": 0, "repeated_ids": 0}
    seen: set[str] = set()
    failures: list[BaseException] = []
    with native_output_to(tmp / "pisa.log") as visible:
        # A TSV's size is known (its lines, less the header): the bar shows a total and
        # an ETA. Posts are not counted ahead: formulas per post vary too much.
        tsv = source.is_file() and source.suffix.lower() in (".tsv", ".txt", ".csv")
        bar = tqdm(desc="indexing formulas", unit=" formulas", disable=quiet,
                   total=max(count_lines(source) - 1, 0) if tsv and not quiet else None,
                   file=visible, mininterval=0.5)

        def tuple_docs(meta):
            # pyterrier-pisa consumes this in a writer thread and would index a
            # truncated collection if it raised: keep the error for this thread.
            try:
                for rec, toks in _tokenized(_new_records(), tokenizer, n_workers):
                    if not toks:
                        counts["empty"] += 1
                        continue
                    counts["formulas"] += 1
                    meta.write(f"{rec.formula_id}\t{rec.post_id}\t{rec.thread_id}\t"
                               f"{rec.visual_id}\n")
                    yield {"docno": rec.formula_id, "toks": toks}
            except BaseException as e:  # noqa: BLE001 - re-raised below
                failures.append(e)

        def _new_records():
            for rec in iter_formula_source(source):
                bar.update()
                if not rec.formula.strip():
                    counts["empty"] += 1
                    continue
                if rec.formula_id in seen:  # e.g. a question in many thread files
                    counts["repeated_ids"] += 1
                    continue
                seen.add(rec.formula_id)
                yield rec

        def word_docs():
            done: set[str] = set()
            try:
                for rec in iter_formula_source(source):
                    if rec.formula_id in done or rec.formula_id not in seen:
                        continue
                    done.add(rec.formula_id)
                    toks = dict(latex_word_tokens(formula_latex(rec.formula)))
                    if toks:
                        yield {"docno": rec.formula_id, "toks": toks}
            except BaseException as e:  # noqa: BLE001 - re-raised below
                failures.append(e)

        threads = max(1, min(4, os.cpu_count() or 1))
        with open(tmp / "meta.tsv", "w", encoding="utf-8") as meta:
            PisaIndex(str(tmp / "tuples"), stemmer="none", threads=threads) \
                .toks_indexer(scale=1.0).index(tuple_docs(meta))
        if failures:
            raise failures[0]
        bar.close()
        if counts["formulas"] == 0:
            raise InputError("the source has no formulas", path=source)
        PisaIndex(str(tmp / "words"), stemmer="none", threads=threads) \
            .toks_indexer(scale=1.0).index(word_docs())
        if failures:
            raise failures[0]
        for representation in REPRESENTATIONS:  # searching then writes nothing
            if (tmp / representation / "pt_meta.json").exists():
                compile_bm25(tmp / representation, *BM25_DEFAULTS)
    return {"num_formulas": counts["formulas"], "empty": counts["empty"],
            "repeated_ids": counts["repeated_ids"], "fallbacks": tokenizer.fallbacks,
            "fallback_rate": tokenizer.fallback_rate,
            "fallback_reasons": dict(tokenizer.errors.most_common(20))}
