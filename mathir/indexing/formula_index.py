"""The formula index: one entry per formula instance, searchable as SLT tuples or LaTeX words.

An index directory holds ``meta/`` (the ``formula_id``, ``post_id``, ``thread_id`` and
``visual_id`` of each indexed instance as memory-mapped arrays, plus a sorted copy of the
formula ids to find rows; :mod:`mathir.indexing.id_arrays`), two PISA indexes written
from pre-tokenised documents (:mod:`mathir.indexing.pisa_postings`; ``tuples/``:
Tangent-S symbol-pair tuples; ``words/``: the LaTeX-as-words tokens),
``manifest.json`` with the counts, among them the formulas that fell back to LaTeX
tokens because they did not parse, and ``pt_meta.json`` (what ``pt.Artifact.load``
reads). Both representations are made in one pass over the source, and each distinct
formula is parsed once (:class:`_Entries`). It is built in a temporary directory, renamed into place,
and reused when the manifest matches (:func:`mathir.storage.build_or_reuse`).

Sources: a formula index TSV (:mod:`mathir.indexing.formula_tsv`, any layout; the SLT
files' Presentation MathML is read as such, its ``alttext`` giving the words) or, when
no TSV is given, the ``math-container`` formulas of a ``Posts.V1.3.xml`` file or thread
HTML directory (no visual ids then).
"""

from __future__ import annotations

import hashlib
import html
import json
import multiprocessing
import os
import re
import shutil
from collections import Counter, OrderedDict, deque
from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt
from tqdm.auto import tqdm

from mathir.errors import InputError
from mathir.indexing.answer_index import (
    BM25_DEFAULTS,
    AnswerCollection,
    compile_bm25,
    packaged,
    pisa_index,
)
from mathir.indexing.formula_tsv import FormulaRecord, iter_formula_index
from mathir.indexing.formula_tuples import FormulaTokenizer, latex_word_tokens
from mathir.indexing.html_text import extract_formulas
from mathir.indexing.id_arrays import (
    IdColumnWriter,
    IdLookup,
    SeenIds,
    as_texts,
    load_column,
    save_column,
)
from mathir.indexing.identity import writer_identity
from mathir.indexing.native_output import native_output_to
from mathir.indexing.pisa_impacts import ImpactShards, resolve_scoring, write_impacts
from mathir.indexing.pisa_postings import (
    PisaLexicon,
    PostingsWriter,
    document_frequencies,
    write_index,
)
from mathir.indexing.shard_jobs import run_shard_jobs
from mathir.storage import (
    artifact_meta,
    build_or_reuse,
    file_fingerprint,
    package_files,
    read_manifest,
)
from mathir.tabular import count_lines

INDEX_FORMAT = 4
#: The libraries that write a formula index (PISA in pyterrier-pisa's wheel; lxml and
#: latex2mathml parse the formulas into trees): their versions are part of its identity
#: (:mod:`mathir.indexing.identity`), as this module's code is.
PACKAGES = ("pyterrier-pisa", "pyterrier", "numpy", "lxml", "latex2mathml")
REPRESENTATIONS = ("tuples", "words")
META_COLUMNS = ("formula_id", "post_id", "thread_id", "visual_id")
#: The fields the text loader adds (:meth:`FormulaIndex.text_loader`).
TEXT_FIELDS = ("text", "post_id", "thread_id", "visual_id")
#: Distinct formulas whose encoded tokens are kept decoded in memory while building
#: (about 0.5 KB each); the others are read back from a file (see :class:`_Entries`).
CACHE_SIZE = 200_000
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
    Opening reads no rows: the id columns are memory-mapped arrays
    (:mod:`mathir.indexing.id_arrays`), and PISA memory-maps its own files.
    """

    ARTIFACT_TYPE = "sparse_index"
    ARTIFACT_FORMAT = "mathir.formulas"

    def __init__(self, path: str | Path):
        super().__init__(path)
        self.manifest = read_manifest(self.path)
        if self.manifest is None or self.manifest.get("kind") != "arqmath-formulas":
            raise InputError("not a mathir formula index (no manifest.json)", path=self.path)
        if self.manifest.get("format") != INDEX_FORMAT:
            raise InputError(f"formula index of format {self.manifest.get('format')} (this "
                             f"mathir reads format {INDEX_FORMAT}): build it again with "
                             "FormulaIndex.build or `mathir index`", path=self.path)
        self._pisa: dict[str, object] = {}
        self._df: dict[str, list] = {}
        self._columns: dict[str, np.ndarray] = {}
        self._lookup: IdLookup | None = None

    def __repr__(self) -> str:
        return f"FormulaIndex({str(self.path)!r}, {self.num_docs} formulas)"

    def __getstate__(self) -> dict:
        # What it opened (PISA, memory maps, lexicons) is opened again where unpickled.
        return {**self.__dict__, "_pisa": {}, "_df": {}, "_columns": {}, "_lookup": None}

    def _package_files(self):
        # What build_package() and to_hf() ship (pt.Artifact's hook): what opening and
        # searching read, no lock, log or absolute path (mathir.storage.package_files).
        return package_files(self.path, packaged, artifact_meta(type(self)))

    def text_loader(self, fields: str | Sequence[str] = "*", *,
                    verbose: bool = False) -> pt.Transformer:
        """PyTerrier's text loader (``pt.text.get_text(index, fields)``): adds, by formula
        id (``docno``), ``text`` (the formula's LaTeX) and the ids ``post_id``,
        ``thread_id``, ``visual_id`` (:data:`TEXT_FIELDS`).

        The LaTeX is read from the source the index was built from, one pass over it per
        call (seconds for a posts file, minutes for the full formula TSV): for looking at
        results rather than reranking every topic's list. The ids come from the index.

        >>> import tempfile
        >>> import pandas as pd
        >>> from mathir.samples import arqmath_sample
        >>> idx = FormulaIndex.build(arqmath_sample().formulas, tempfile.mkdtemp() + "/f", quiet=True)
        >>> res = pd.DataFrame({"qid": ["1"], "docno": [idx.docnos()[0]]})
        >>> pt.text.get_text(idx, ["text", "post_id"])(res)[["text", "post_id"]].values.tolist()
        [['x^x', '1001']]
        """
        from mathir.indexing.text_loader import TextLoader

        return TextLoader(self._text_fields, TEXT_FIELDS, fields, verbose=verbose,
                          name=f"formula index {self.path}")

    def _text_fields(self, docnos: list[str], fields: list[str]) -> dict[str, tuple]:
        """``{formula id: values of fields}`` of the given ids that are indexed."""
        positions = self.positions(docnos)
        found = positions >= 0
        ids = [d for d, f in zip(docnos, found, strict=True) if f]
        columns = self.rows(positions[found], [f for f in fields if f != "text"])
        if "text" in fields:
            latex = self._latex(set(ids))
            columns["text"] = [latex.get(d, "") for d in ids]
        return {d: tuple(columns[f][i] for f in fields) for i, d in enumerate(ids)}

    def _latex(self, formula_ids: set[str]) -> dict[str, str]:
        """The LaTeX of the given formula ids, read from the index's source (first
        occurrence of an id, as the index kept)."""
        source = self.manifest.get("source", {}).get("path")
        if not source or not Path(source).exists():
            raise InputError("the formula index does not record where its source is (a "
                             "packaged index) or the source moved: its LaTeX cannot be "
                             "read", path=source or self.path)
        out: dict[str, str] = {}
        for rec in iter_formula_source(source):
            if rec.formula_id in formula_ids and rec.formula_id not in out:
                out[rec.formula_id] = formula_latex(rec.formula)
        return out

    @property
    def num_docs(self) -> int:
        """Number of indexed formula instances."""
        return int(self.manifest["num_formulas"])

    @property
    def fallbacks(self) -> int:
        """Formulas indexed as LaTeX tokens because they did not parse."""
        return int(self.manifest["fallbacks"])

    def column(self, name: str) -> np.ndarray:
        """One id column (``formula_id``, ``post_id``, ``thread_id``, ``visual_id``) in
        index order, memory-mapped: ``int64`` (-1 for empty) or unicode."""
        if name not in META_COLUMNS:
            raise InputError(f"unknown formula index column {name!r}; expected one of "
                             f"{list(META_COLUMNS)}")
        if name not in self._columns:
            self._columns[name] = load_column(self.path / "meta", name)
        return self._columns[name]

    def positions(self, formula_ids) -> np.ndarray:
        """Row of each formula id (strings) in index order; -1 when not indexed.

        >>> import tempfile
        >>> from mathir.samples import arqmath_sample
        >>> idx = FormulaIndex.build(arqmath_sample().formulas, tempfile.mkdtemp() + "/f", quiet=True)
        >>> idx.positions([idx.docnos()[3], "no such id"]).tolist()
        [3, -1]
        """
        if self._lookup is None:
            self._lookup = IdLookup.load(self.path / "meta", "formula_id")
        return self._lookup.positions(formula_ids)

    def rows(self, positions: np.ndarray, columns=("post_id", "thread_id", "visual_id")
             ) -> dict[str, np.ndarray]:
        """The given columns' strings (object arrays) at ``positions`` (all >= 0)."""
        positions = np.asarray(positions, dtype=np.int64)
        return {c: as_texts(np.asarray(self.column(c)[positions])) for c in columns}

    @property
    def meta(self) -> pd.DataFrame:
        """``formula_id`` (index) -> ``post_id, thread_id, visual_id`` as strings.

        Builds Python strings for every row: for inspecting small indexes; searches use
        :meth:`positions` and :meth:`rows`.
        """
        every = np.arange(self.num_docs)
        data = self.rows(every)
        index = pd.Index(self.rows(every, ("formula_id",))["formula_id"], dtype=object,
                         name="formula_id")
        return pd.DataFrame(data, index=index)

    def docnos(self) -> list[str]:
        """The indexed formula ids."""
        return as_texts(np.asarray(self.column("formula_id"))).tolist()

    @property
    def scoring(self) -> str:
        """``bm25`` (one PISA index per representation) or ``bm25-impacts`` (shards of
        impacts, :meth:`impact_shards`)."""
        return self.manifest.get("scoring", "bm25")

    def impacts(self, representation: str) -> dict:
        """How a ``bm25-impacts`` index's impacts were computed: ``k1``, ``b``,
        ``levels``, the collection's statistics and each shard's documents."""
        _check(representation)
        if self.scoring != "bm25-impacts":
            raise InputError("this formula index scores BM25 when searching: it has no "
                             "impacts (build it with scoring='bm25-impacts')", path=self.path)
        return self.manifest["impacts"][representation]

    def impact_shards(self, representation: str, query_algorithm: str = "maxscore"
                      ) -> ImpactShards:
        """The shards of ``representation`` of a ``bm25-impacts`` index, searched side by
        side and merged into the unsharded ranking."""
        info = self.impacts(representation)
        shards = [self.path / representation / f"shard-{i}"
                  for i in range(len(info["shard_docs"]))]
        return ImpactShards(shards, self.positions, info["levels"],
                            query_algorithm=query_algorithm)

    def document_frequency(self, representation: str, tokens) -> np.ndarray:
        """How many indexed formulas hold each of ``tokens`` in ``representation`` (0 for
        a token the index does not hold), summed over the shards of a sharded index.

        A build saves them (``df.npy`` beside each PISA index); for an index built before
        it did, they are counted from PISA's postings on first use (seconds at millions of
        terms).

        >>> import tempfile
        >>> from mathir.samples import arqmath_sample
        >>> idx = FormulaIndex.build(arqmath_sample().formulas, tempfile.mkdtemp() + "/f", quiet=True)
        >>> idx.document_frequency("words", ["x", "no-such-token"]).tolist()
        [352, 0]
        """
        _check(representation)
        tokens = list(tokens)
        if representation not in self._df:
            folder = self.path / representation
            folders = ([folder] if self.scoring == "bm25" else
                       [folder / f"shard-{i}"
                        for i in range(len(self.impacts(representation)["shard_docs"]))])
            self._df[representation] = [(PisaLexicon(f), document_frequencies(f))
                                        for f in folders]
        out = np.zeros(len(tokens), dtype=np.int64)
        for lexicon, df in self._df[representation]:
            ids = lexicon.ids(tokens)
            found = ids >= 0
            out[found] += df[ids[found]]
        return out

    def pisa(self, representation: str):
        """The ``pyterrier_pisa.PisaIndex`` of ``tuples`` or ``words`` (``bm25`` scoring)."""
        _check(representation)
        if self.scoring != "bm25":
            raise InputError(f"this formula index is in shards of {self.scoring}: search "
                             "it with impact_shards()", path=self.path)
        if representation not in self._pisa:
            self._pisa[representation] = pisa_index(self.path / representation,
                                                    stemmer="none", threads=1)
        return self._pisa[representation]

    @classmethod
    def build(cls, source: str | Path, path: str | Path, *, window: int = 2,
              overwrite: bool = False, quiet: bool = False,
              workers: int | None = None, cache_size: int = CACHE_SIZE, shards: int = 1,
              ray_address: str | None = None, scoring: str | None = None) -> FormulaIndex:
        """Index the formulas of ``source`` (a formula TSV or a posts collection) into ``path``.

        ``workers`` processes parse the formulas (default: up to 4 for sources of 16 MB
        or more, else none); each distinct formula is parsed once, and the
        ``cache_size`` most recently used are kept decoded in memory (see
        :class:`_Entries`). With ``shards``
        above 1, a formula TSV is cut into that many consecutive slices indexed in
        parallel processes (Ray tasks on the cluster at ``ray_address``, or ``"local"``
        for a local Ray), each with ``workers`` parsing processes (default none), and
        merged: the index is the same, byte for byte, as an unsharded build's.

        ``scoring="bm25-impacts"`` keeps the shards (one if ``shards`` is 1) as PISA
        indexes of BM25 impacts (k1 1.2, b 0.75) from the whole source's statistics,
        searched side by side: any number of shards gives the same ranking, hit for hit
        (:mod:`mathir.indexing.pisa_impacts`). ``scoring=None`` (the default) reuses the
        index at ``path`` whatever its scoring and shards, and builds ``bm25`` where
        there is none: a command that only opens an index never turns one into the other.

        >>> import tempfile
        >>> from mathir.samples import arqmath_sample
        >>> idx = FormulaIndex.build(arqmath_sample().formulas, tempfile.mkdtemp() + "/f", quiet=True)
        >>> idx.num_docs > 1000, idx.fallbacks < 5
        (True, True)
        """
        scoring, shards = resolve_scoring(path, scoring, shards, "formula")
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
            "writer": writer_identity(__name__, PACKAGES),
        }
        if scoring != "bm25":  # (a key only where it is not the default: older indexes match)
            wanted["params"]["scoring"] = scoring
            wanted["params"]["shards"] = max(1, shards)
        build_or_reuse(path, wanted,
                       lambda tmp: _build_into(tmp, source, window, quiet, workers, cache_size,
                                               shards, ray_address, scoring),
                       overwrite=overwrite, pt_meta=artifact_meta(cls))
        return cls(path)


def _is_tsv(source: Path) -> bool:
    return source.is_file() and source.suffix.lower() in (".tsv", ".txt", ".csv")


def _check(representation: str) -> None:
    if representation not in REPRESENTATIONS:
        raise InputError(f"unknown formula representation {representation!r}; "
                         f"expected one of {list(REPRESENTATIONS)}")


def _build_into(tmp: Path, source: Path, window: int, quiet: bool, workers: int | None,
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
