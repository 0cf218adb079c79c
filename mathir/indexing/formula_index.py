"""The formula index: one entry per formula instance, searchable as SLT tuples or LaTeX words.

An index directory holds ``meta/`` (the ``formula_id``, ``post_id``, ``thread_id`` and
``visual_id`` of each indexed instance as memory-mapped arrays, plus a sorted copy of the
formula ids to find rows; :mod:`mathir.indexing.id_arrays`), two PISA indexes written
from pre-tokenised documents (:mod:`mathir.indexing.pisa_postings`; ``tuples/``:
Tangent-S symbol-pair tuples; ``words/``: the LaTeX-as-words tokens),
``manifest.json`` with the counts, among them the formulas that fell back to LaTeX
tokens because they did not parse, and ``pt_meta.json`` (what ``pt.Artifact.load``
reads). Both representations are made in one pass over the source, and each distinct
formula is parsed once (:mod:`mathir.indexing.formula_build`). It is built in a
temporary directory, renamed into place, and reused when the manifest matches
(:func:`mathir.storage.build_or_reuse`).

Sources (:mod:`mathir.indexing.formula_source`): a formula index TSV
(:mod:`mathir.readers.formula_tsv`, any layout; the SLT files' Presentation MathML is
read as such, its ``alttext`` giving the words) or, when no TSV is given, the
``math-container`` formulas of a ``Posts.V1.3.xml`` file or thread HTML directory (no
visual ids then).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt

from mathir.errors import InputError
from mathir.indexing.artifact import MathirIndex
from mathir.indexing.formula_build import CACHE_SIZE, META_COLUMNS, REPRESENTATIONS, build_into
from mathir.indexing.formula_source import formula_latex, iter_formula_source
from mathir.indexing.id_arrays import IdLookup, as_texts, load_column
from mathir.indexing.identity import writer_identity
from mathir.indexing.pisa_bm25 import packaged, pisa_index
from mathir.indexing.pisa_impacts import ImpactShards, resolve_scoring
from mathir.indexing.pisa_postings import PisaLexicon, document_frequencies
from mathir.storage import (
    artifact_meta,
    build_or_reuse,
    file_fingerprint,
)

INDEX_FORMAT = 4
#: The libraries that write a formula index (PISA in pyterrier-pisa's wheel; lxml and
#: latex2mathml parse the formulas into trees): their versions are part of its identity
#: (:mod:`mathir.indexing.identity`), as this module's code is.
PACKAGES = ("pyterrier-pisa", "pyterrier", "numpy", "lxml", "latex2mathml")
#: The fields the text loader adds (:meth:`FormulaIndex.text_loader`).
TEXT_FIELDS = ("text", "post_id", "thread_id", "visual_id")


class FormulaIndex(MathirIndex):
    """A built formula index; open with ``FormulaIndex(path)`` or build with :meth:`build`.

    A PyTerrier artifact: ``pt.Artifact.load(path)`` opens it too (``pt_meta.json``).
    Opening reads no rows: the id columns are memory-mapped arrays
    (:mod:`mathir.indexing.id_arrays`), and PISA memory-maps its own files.
    """

    ARTIFACT_FORMAT = "mathir.formulas"
    KIND, WHAT, UNIT, FORMAT = "arqmath-formulas", "formula index", "formulas", INDEX_FORMAT
    PACKAGED = staticmethod(packaged)

    def _open(self) -> None:
        self._pisa: dict[str, object] = {}
        self._df: dict[str, list] = {}
        self._columns: dict[str, np.ndarray] = {}
        self._lookup: IdLookup | None = None

    def __getstate__(self) -> dict:
        # What it opened (PISA, memory maps, lexicons) is opened again where unpickled.
        return {**self.__dict__, "_pisa": {}, "_df": {}, "_columns": {}, "_lookup": None}

    def text_loader(self, fields: str | Sequence[str] = "*", *,
                    verbose: bool = False) -> pt.Transformer:
        """PyTerrier's text loader (``pt.text.get_text(index, fields)``): adds, by formula
        id (``docno``), ``text`` (the formula's LaTeX) and the ids ``post_id``,
        ``thread_id``, ``visual_id`` (:data:`TEXT_FIELDS`).

        The LaTeX is read from the source the index was built from, one pass over it per
        call (seconds for a posts file, minutes for the full formula TSV): for looking at
        results rather than reranking every topic's list. The ids come from the index.

        >>> import pandas as pd
        >>> from mathir.samples import arqmath_sample
        >>> idx = FormulaIndex.build(arqmath_sample().formulas, "sample-formulas", quiet=True)
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

        >>> from mathir.samples import arqmath_sample
        >>> idx = FormulaIndex.build(arqmath_sample().formulas, "sample-formulas", quiet=True)
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

        >>> from mathir.samples import arqmath_sample
        >>> idx = FormulaIndex.build(arqmath_sample().formulas, "sample-formulas", quiet=True)
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
        :mod:`mathir.indexing.formula_build`). With ``shards``
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

        >>> from mathir.samples import arqmath_sample
        >>> idx = FormulaIndex.build(arqmath_sample().formulas, "sample-formulas", quiet=True)
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
                       lambda tmp: build_into(tmp, source, window, quiet, workers, cache_size,
                                              shards, ray_address, scoring),
                       overwrite=overwrite, pt_meta=artifact_meta(cls))
        return cls(path)


def _check(representation: str) -> None:
    if representation not in REPRESENTATIONS:
        raise InputError(f"unknown formula representation {representation!r}; "
                         f"expected one of {list(REPRESENTATIONS)}")
