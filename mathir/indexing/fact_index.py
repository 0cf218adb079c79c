"""The WorldTree tablestore: table TSVs -> facts, the lemma list, and the fact index.

A tablestore is a directory of TSV tables (``tables/*.tsv`` in the official
distribution). Each table's first row is its header; a fact is one row with a UID:

* its text is the cells of the columns whose name does not start with ``[SKIP]``
  (data columns and ``[FILL]`` connectives), in header order, empty cells dropped,
  each cell's whitespace collapsed, joined with one space;
* its id is the ``[SKIP] UID`` cell, lower-cased (the official scorer lower-cases ids);
* a table without a ``[SKIP] UID`` column (``LemmatizerAdditions``, ``Decompositions``)
  holds no facts and is skipped, as both official baselines do.

A UID repeated with the same text is kept once (reported in ``duplicates``); a UID
repeated with a *different* text keeps its first text and is reported in
``conflicts`` (with a warning), never merged silently.

The :class:`FactIndex` holds the facts and their term counts (PISA's Porter2 tokenizer,
Terrier stopwords removed) in a directory, for the lexical models of
:mod:`mathir.pipelines.worldtree_lexical`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt
from scipy import sparse

from mathir.errors import InputError, require_files
from mathir.indexing.artifact import MathirIndex
from mathir.indexing.identity import writer_identity
from mathir.readers.tabular import iter_lines
from mathir.storage import (
    artifact_meta,
    build_or_reuse,
    file_fingerprint,
)

UID_COLUMN = "[SKIP] UID"
INDEX_FORMAT = 1
STEMMER = "porter2"
#: The libraries that write a fact index (PISA's tokenizer and stopwords, pandas reads the
#: tables and writes facts.tsv, scipy the counts): their versions are part of its identity
#: (:mod:`mathir.indexing.identity`), as this module's code is.
PACKAGES = ("pyterrier-pisa", "pandas", "scipy", "numpy")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Fact:
    """One tablestore row: ``uid`` (lower-cased), ``table`` (file stem), ``text``."""

    uid: str
    table: str
    text: str
    line: int


def iter_table_facts(path: str | Path) -> Iterator[Fact]:
    """The facts of one table TSV, in file order (nothing when it has no UID column).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "KINDOF.tsv"
    >>> _ = p.write_text("[FILL] a\\tX\\t[FILL] is a kind of\\tY\\t[SKIP] COMMENTS\\t[SKIP] UID\\t\\n"
    ...                  "an\\tapple\\tis a kind of\\tfruit\\t#1\\tAB-01\\t\\n")
    >>> [(f.uid, f.text) for f in iter_table_facts(p)]
    [('ab-01', 'an apple is a kind of fruit')]
    """
    path = Path(path)
    lines = iter_lines(path)
    try:
        _, header_line = next(lines)
    except StopIteration:
        return
    header = header_line.lstrip("\ufeff").split("\t")
    while header and not header[-1].strip():  # most tables end every line with a tab
        header.pop()
    uid_cols = [i for i, h in enumerate(header) if h.strip() == UID_COLUMN]
    if not uid_cols:
        return
    uid_col = uid_cols[0]
    text_cols = [i for i, h in enumerate(header) if not h.strip().startswith("[SKIP]")]
    for lineno, line in lines:
        cells = line.split("\t")
        if len(cells) > len(header) and any(c.strip() for c in cells[len(header):]):
            raise InputError(f"row has {len(cells)} cells but the header names {len(header)} "
                             "columns", path=path, line=lineno)
        cells += [""] * (len(header) - len(cells))
        uid = cells[uid_col].strip().lower()
        if not uid:
            continue
        words = [_SPACES.sub(" ", cells[i]).strip() for i in text_cols]
        text = " ".join(w for w in words if w)
        yield Fact(uid, path.stem, text, lineno)


def table_files(path: str | Path) -> list[Path]:
    """The table TSVs, in name order, of ``path`` itself or of its ``tables/`` subdirectory
    (an InputError naming the folder when there are none)."""
    p = Path(path)
    if (p / "tables").is_dir():
        p = p / "tables"
    return require_files(p, "*.tsv", "table files")


def tables_dir(path: str | Path) -> Path:
    """The directory of table TSVs: ``path`` itself or its ``tables/`` subdirectory."""
    return table_files(path)[0].parent


@dataclass
class Tablestore:
    """All facts of a tablestore, with what was found wrong in it.

    ``facts``: frame ``docno, table, text`` (docno = lower-cased UID, unique, first
    occurrence kept); ``duplicates``: UIDs repeated with the same text;
    ``conflicts``: frame ``docno, table, line, text, kept_text`` for UIDs repeated with
    another text (the first text is kept); ``skipped_tables``: tables without UIDs.
    """

    path: Path
    facts: pd.DataFrame
    duplicates: list[str] = field(default_factory=list)
    conflicts: pd.DataFrame = field(default_factory=pd.DataFrame)
    skipped_tables: list[str] = field(default_factory=list)

    def texts(self) -> dict[str, str]:
        """docno -> text."""
        return dict(zip(self.facts["docno"], self.facts["text"], strict=True))


def read_tablestore(path: str | Path, warn: bool = True) -> Tablestore:
    """Read every table of a tablestore directory (files in name order).

    >>> from mathir.samples import worldtree_sample
    >>> ts = read_tablestore(worldtree_sample().tables)
    >>> len(ts.facts) > 50, ts.skipped_tables
    (True, ['LemmatizerAdditions'])
    """
    tables = table_files(path)
    root = tables[0].parent
    seen: dict[str, Fact] = {}
    duplicates: list[str] = []
    conflicts = []
    skipped = []
    for table in tables:
        n = 0
        for fact in iter_table_facts(table):
            n += 1
            first = seen.get(fact.uid)
            if first is None:
                seen[fact.uid] = fact
            elif first.text == fact.text:
                duplicates.append(fact.uid)
            else:
                conflicts.append((fact.uid, fact.table, fact.line, fact.text, first.text))
        if n == 0:
            with open(table, encoding="utf-8") as f:
                if UID_COLUMN not in f.readline():
                    skipped.append(table.stem)
    if not seen:
        raise InputError("the tablestore has no facts (no rows with a [SKIP] UID)", path=root)
    facts = pd.DataFrame({"docno": list(seen), "table": [f.table for f in seen.values()],
                          "text": [f.text for f in seen.values()]})
    conflict_frame = pd.DataFrame(conflicts, columns=["docno", "table", "line", "text", "kept_text"])
    if warn and conflicts:
        warnings.warn(f"{root}: {len(conflicts)} UID(s) with two different texts, first kept: "
                      + ", ".join(sorted({c[0] for c in conflicts})), stacklevel=2)
    return Tablestore(root, facts, sorted(set(duplicates)), conflict_frame, skipped)


def read_lemmas(path: str | Path) -> dict[str, str]:
    """The lemma list (``lemma<TAB>word`` per line, BOM allowed): word -> lemma.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "lemmatization-en.txt"
    >>> _ = p.write_bytes("\\ufeffbe\\twas\\r\\nmelt\\tmelting\\r\\n".encode())
    >>> read_lemmas(p)
    {'was': 'be', 'melting': 'melt'}
    """
    lemmas: dict[str, str] = {}
    for lineno, line in iter_lines(path):
        parts = line.lstrip("\ufeff").split("\t")
        if len(parts) != 2:
            raise InputError(f"expected 2 columns (lemma, word), found {len(parts)}",
                             path=path, line=lineno)
        lemma, word = (p.strip().lower() for p in parts)
        lemmas.setdefault(word, lemma)
    return lemmas


def find_lemma_file(tables: str | Path) -> Path | None:
    """``lemmatization-en.txt`` of the distribution holding ``tables`` (None when absent).

    The official layout puts it in ``annotation/``, two levels above ``tables/``.

    >>> from mathir.samples import worldtree_sample
    >>> find_lemma_file(worldtree_sample().tables).name
    'lemmatization-en.txt'
    """
    tables = Path(tables)
    for d in (tables.parent, tables.parent.parent, tables.parent.parent.parent):
        if (d / "lemmatization-en.txt").is_file():
            return d / "lemmatization-en.txt"
    return None


def tokenize(text: str) -> list[str]:
    """PISA's Porter2 tokens of ``text`` (the tokens a PISA index would hold).

    >>> tokenize("Melting is a kind of process")
    ['melt', 'is', 'a', 'kind', 'of', 'process']
    """
    import pyterrier_pisa

    return list(pyterrier_pisa.tokenize(text, STEMMER))


def stopword_stems() -> frozenset[str]:
    """Terrier's stopword list, stemmed like the index (removed from facts and queries)."""
    from mathir.indexing.tfidf import stop_stems

    return frozenset(stop_stems(STEMMER))


class FactIndex(MathirIndex):
    """The facts of a tablestore and their term counts; open with ``FactIndex(path)``.

    Directory contents: ``facts.tsv`` (docno, table, text), ``counts.npz`` (facts x terms,
    CSR), ``terms.txt``, ``manifest.json``, ``pt_meta.json`` (a PyTerrier artifact:
    ``pt.Artifact.load(path)`` opens it too). Built in a temporary directory and renamed
    into place; reused while the tablestore is unchanged
    (:func:`mathir.storage.build_or_reuse`).
    """

    ARTIFACT_FORMAT = "mathir.facts"
    KIND, WHAT, UNIT = "worldtree-facts", "WorldTree fact index", "facts"

    def _open(self) -> None:
        self.facts = pd.read_csv(self.path / "facts.tsv", sep="\t", dtype=str, quoting=3,
                                 keep_default_na=False)
        self.counts = sparse.load_npz(self.path / "counts.npz").tocsr()
        terms = (self.path / "terms.txt").read_text(encoding="utf-8").split("\n")[:-1]
        self.vocabulary = {t: i for i, t in enumerate(terms)}
        self._stops = stopword_stems()

    @property
    def tablestore(self) -> Path:
        """The table directory the index was built from (an InputError for a packaged
        index, which does not record it)."""
        path = self.manifest["tablestore"].get("path")
        if path is None:
            raise InputError("the fact index does not record its tablestore (a packaged "
                             "index): pass the Train file or lemma list explicitly",
                             path=self.path)
        return Path(path)

    def text_loader(self, fields: str | Sequence[str] = "*", *,
                    verbose: bool = False) -> pt.Transformer:
        """PyTerrier's text loader (``pt.text.get_text(index, fields)``): adds each fact's
        ``text`` and ``table`` by ``docno``.

        >>> from mathir.samples import worldtree_sample
        >>> idx = FactIndex.build(worldtree_sample().tables, "sample-facts")
        >>> res = pd.DataFrame({"qid": ["1"], "docno": [idx.docnos()[0]]})
        >>> pt.text.get_text(idx, "text")(res)["text"][0] == idx.texts()[idx.docnos()[0]]
        True
        """
        from mathir.indexing.text_loader import TextLoader

        return TextLoader(self._text_fields, ("text", "table"), fields, verbose=verbose,
                          name=f"fact index {self.path}")

    def _text_fields(self, docnos: list[str], fields: list[str]) -> dict[str, tuple]:
        rows = self.facts.set_index("docno", drop=False)
        found = [d for d in docnos if d in rows.index]
        values = rows.loc[found, list(fields)].itertuples(index=False, name=None)
        return dict(zip(found, values, strict=True))

    @property
    def num_docs(self) -> int:
        """Number of facts."""
        return len(self.facts)

    def docnos(self) -> list[str]:
        """Fact ids (lower-cased UIDs) in index order."""
        return self.facts["docno"].tolist()

    def texts(self) -> dict[str, str]:
        """docno -> fact text."""
        return dict(zip(self.facts["docno"], self.facts["text"], strict=True))

    def document_texts(self) -> dict[str, str]:
        """docno -> fact text (what a reranker reads; see ``mathir train-reranker``)."""
        return self.texts()

    def query_counts(self, texts: list[str]) -> sparse.csr_matrix:
        """Term counts of ``texts`` over the index vocabulary (unknown terms dropped)."""
        rows, cols = [], []
        for i, text in enumerate(texts):
            for t in tokenize(text):
                j = self.vocabulary.get(t)
                if j is not None and t not in self._stops:
                    rows.append(i)
                    cols.append(j)
        data = np.ones(len(rows), dtype=np.float64)
        m = sparse.csr_matrix((data, (rows, cols)), shape=(len(texts), len(self.vocabulary)))
        m.sum_duplicates()
        return m

    @classmethod
    def build(cls, tablestore: str | Path, path: str | Path, *, overwrite: bool = False,
              quiet: bool = True) -> FactIndex:
        """Index the facts of the tablestore at ``tablestore`` into ``path``.

        >>> from mathir.samples import worldtree_sample
        >>> idx = FactIndex.build(worldtree_sample().tables, "sample-facts")
        >>> idx.num_docs == len(read_tablestore(worldtree_sample().tables).facts)
        True
        """
        root = tables_dir(tablestore)
        wanted = {"kind": "worldtree-facts", "format": INDEX_FORMAT,
                  "tablestore": file_fingerprint(root), "params": {"stemmer": STEMMER},
                  "writer": writer_identity(__name__, PACKAGES)}
        build_or_reuse(path, wanted, lambda tmp: _build_into(tmp, root),
                       overwrite=overwrite, pt_meta=artifact_meta(cls))
        return cls(path)


def _build_into(tmp: Path, root: Path) -> dict:
    """Write the facts of the table directory ``root`` and their term counts into ``tmp``."""
    ts = read_tablestore(root)
    stops = stopword_stems()
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, text in enumerate(ts.facts["text"]):
        for t in tokenize(text):
            if t in stops:
                continue
            rows.append(i)
            cols.append(vocab.setdefault(t, len(vocab)))
    counts = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)),
                               shape=(len(ts.facts), len(vocab)))
    counts.sum_duplicates()
    ts.facts.to_csv(tmp / "facts.tsv", sep="\t", index=False, quoting=3)
    sparse.save_npz(tmp / "counts.npz", counts, compressed=False)
    (tmp / "terms.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
    return {"num_docs": len(ts.facts), "duplicates": ts.duplicates,
            "conflicts": ts.conflicts["docno"].tolist()}
