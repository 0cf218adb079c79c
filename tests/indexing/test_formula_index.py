"""The formula index: built from a TSV or from posts, reused, atomic, counts fallbacks."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from mathir.errors import InputError
from mathir.indexing.formula_index import FormulaIndex
from mathir.indexing.formula_source import iter_formula_source
from mathir.readers.formula_tsv import read_formula_index


@pytest.fixture(scope="module")
def tsv_index(tmp_path_factory):
    from mathir.samples import arqmath_sample
    return FormulaIndex.build(arqmath_sample().formulas, tmp_path_factory.mktemp("f") / "idx",
                              quiet=True)


def test_one_entry_per_instance_with_ids(tsv_index, sample):
    table = read_formula_index(sample.formulas)
    meta = tsv_index.meta
    assert tsv_index.num_docs == len(table[table.formula.str.strip() != ""])
    row = table.iloc[0]
    assert meta.loc[row.formula_id, "visual_id"] == row.visual_id
    assert meta.loc[row.formula_id, "post_id"] == row.post_id
    assert meta.loc[row.formula_id, "thread_id"] == row.thread_id


def test_manifest_reports_fallbacks(tsv_index):
    manifest = json.loads((tsv_index.path / "manifest.json").read_text())
    # Every formula of the sample parses (the counting itself: the next tests).
    assert manifest["fallbacks"] == tsv_index.fallbacks == 0
    assert manifest["fallback_rate"] == 0.0 and manifest["fallback_reasons"] == {}


def test_reused_when_up_to_date(tsv_index, sample):
    stamp = (tsv_index.path / "manifest.json").stat().st_mtime_ns
    again = FormulaIndex.build(sample.formulas, tsv_index.path, quiet=True)
    assert (again.path / "manifest.json").stat().st_mtime_ns == stamp


def test_unparsable_formulas_are_indexed_as_latex_words(tmp_path):
    tsv = tmp_path / "f.tsv"
    tsv.write_text("id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n"
                   "1\t10\t10\tanswer\t5\tx^2\n"
                   "2\t11\t10\tanswer\t6\t\\frac{a}{\n"
                   "3\t12\t10\tanswer\t6\t\\frac{a}{\n"
                   "4\t13\t10\tanswer\t7\t \n")
    idx = FormulaIndex.build(tsv, tmp_path / "idx", quiet=True)
    assert idx.num_docs == 3  # the empty formula is left out
    assert idx.fallbacks == 2  # a repeated formula counts once per instance
    assert idx.docnos() == ["1", "2", "3"]
    manifest = json.loads((idx.path / "manifest.json").read_text())
    assert manifest["fallbacks"] == 2 and manifest["fallback_rate"] == pytest.approx(2 / 3)
    assert list(manifest["fallback_reasons"]) == ["latex2mathml"]  # the parser that failed


def test_built_from_posts_without_visual_ids(sample, tmp_path):
    first = next(iter_formula_source(sample.posts))
    assert first.visual_id == ""
    idx = FormulaIndex.build(sample.posts, tmp_path / "idx", quiet=True)
    assert idx.num_docs > 1000
    assert set(idx.meta["visual_id"]) == {""}


def test_missing_source_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="not found"):
        FormulaIndex.build(tmp_path / "nope.tsv", tmp_path / "idx", quiet=True)
    assert not (tmp_path / "idx").exists()


def test_open_non_index_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="not a mathir formula index"):
        FormulaIndex(tmp_path)


def test_worker_processes_build_the_same_index(tsv_index, sample, tmp_path):
    pooled = FormulaIndex.build(sample.formulas, tmp_path / "idx", quiet=True, workers=2)
    assert pooled.docnos() == tsv_index.docnos()
    assert pooled.fallbacks == tsv_index.fallbacks
    assert pooled.meta.equals(tsv_index.meta)


def test_slt_mathml_source_is_read_as_mathml(tmp_path, tsv_index):
    cell = ('"<math alttext=""x^{2}""><msup><mi>x</mi><mn>2</mn></msup></math>"')
    tsv = tmp_path / "slt.tsv"
    tsv.write_text("id\tpost_id\tthread_id\ttype\tvisual_id\tslt\n"
                   f"1\t10\t10\tanswer\t5\t{cell}\n"
                   "2\t11\t10\tanswer\t6\t\"<math alttext=\"\"y\"\"><mi>y</mi>\"\n")
    idx = FormulaIndex.build(tsv, tmp_path / "idx", quiet=True)
    assert idx.num_docs == 2 and idx.fallbacks == 1  # the second cell is broken XML
    from mathir.pipelines.formula import formula_tuples, formula_words
    assert formula_tuples(idx).search("x^2").docno.iloc[0] == "1"
    assert formula_words(idx).search("y").docno.tolist() == ["2"]


def _index_files(idx) -> dict[str, bytes]:
    names = ["inv.docs", "inv.freqs", "inv.sizes", "fwd.documents", "fwd.terms"]
    files = {f"{rep}/{n}": (idx.path / rep / n).read_bytes()
             for rep in ("tuples", "words") for n in names}
    files.update({f"meta/{p.name}": p.read_bytes() for p in (idx.path / "meta").iterdir()})
    return files


def test_cache_size_and_workers_do_not_change_the_index(tsv_index, sample, tmp_path):
    # A cache of 3 formulas evicts all the time (repeats are parsed again), workers parse
    # out of order: the files must be the same bytes either way.
    tiny = FormulaIndex.build(sample.formulas, tmp_path / "tiny", quiet=True, cache_size=3)
    pooled = FormulaIndex.build(sample.formulas, tmp_path / "pooled", quiet=True, workers=2,
                                cache_size=3)
    expected = _index_files(tsv_index)
    assert _index_files(tiny) == expected
    assert _index_files(pooled) == expected
    assert tiny.fallbacks == pooled.fallbacks == tsv_index.fallbacks


@pytest.mark.parametrize("cache_size,workers", [(200_000, 1), (1, 1), (1, 2)])
def test_each_distinct_formula_is_parsed_once(tmp_path, cache_size, workers):
    # Even when the in-memory cache holds one formula: repeats are read back from the
    # scratch file, not parsed again.
    rows = "".join(f"{i}\t{i}\t1\tanswer\t{i % 3}\t{['x^2', 'y+1', 'x^2+y'][i % 3]}\n"
                   for i in range(1, 31))
    tsv = tmp_path / "f.tsv"
    tsv.write_text("id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n" + rows)
    idx = FormulaIndex.build(tsv, tmp_path / "idx", quiet=True, cache_size=cache_size,
                             workers=workers)
    assert idx.num_docs == 30 and idx.manifest["distinct_parsed"] == 3
    assert not (idx.path / "part").exists()  # the scratch file went with the parts


def test_ids_that_are_not_canonical_integers_keep_their_text(tmp_path):
    tsv = tmp_path / "f.tsv"
    tsv.write_text("id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n"
                   "7\t007\tT.1\tanswer\t\tx^2\n"
                   "8\t12\tT.1\tanswer\t5\ty^2\n"
                   "007\t13\t2\tanswer\t5\tz^2\n")
    idx = FormulaIndex.build(tsv, tmp_path / "idx", quiet=True)
    assert idx.column("formula_id").dtype.kind == "U"  # "007" is not the integer 7
    assert idx.column("visual_id").dtype.kind == "i"  # "" is stored as -1
    assert idx.docnos() == ["7", "8", "007"]
    assert idx.positions(["007", "7", "8", "07"]).tolist() == [2, 0, 1, -1]
    rows = idx.rows(idx.positions(["7", "8"]))
    assert rows["post_id"].tolist() == ["007", "12"]
    assert rows["thread_id"].tolist() == ["T.1", "T.1"]
    assert rows["visual_id"].tolist() == ["", "5"]
    from mathir.pipelines.formula import formula_tuples
    hit = formula_tuples(idx).search("x^2").iloc[0]
    assert (hit.formula_id, hit.post_id, hit.visual_id) == ("7", "007", "")


def test_integer_ids_are_memory_mapped_arrays(tsv_index, sample):
    import numpy as np

    table = read_formula_index(sample.formulas)
    for column in ("formula_id", "post_id", "thread_id", "visual_id"):
        values = tsv_index.column(column)
        assert isinstance(values, np.memmap) and values.dtype == np.int64
    assert tsv_index.docnos() == table.formula_id[table.formula.str.strip() != ""].tolist()


def test_an_index_of_an_older_format_is_refused_clearly(tsv_index, tmp_path):
    import shutil

    old = tmp_path / "old"
    shutil.copytree(tsv_index.path, old)
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["format"] = 3
    (old / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="build it again"):
        FormulaIndex(old)


def test_three_shards_build_the_same_index(tsv_index, sample, tmp_path):
    sharded = FormulaIndex.build(sample.formulas, tmp_path / "sharded", quiet=True, shards=3)
    assert sharded.manifest["shards"] == 3
    assert _index_files(sharded) == _index_files(tsv_index)
    for key in ("num_formulas", "empty", "repeated_ids", "fallbacks", "postings", "terms"):
        assert sharded.manifest[key] == tsv_index.manifest[key], key
    from mathir.pipelines.formula import formula_tuples
    from mathir.topics.arqmath import read_task2_topics

    topics = read_task2_topics(sample.task2_topics)
    pd.testing.assert_frame_equal(formula_tuples(sharded).transform(topics),
                                  formula_tuples(tsv_index).transform(topics))


@pytest.mark.slow  # among the longest: left out of the quick loop (-m 'not slow')
def test_shards_on_ray_build_the_same_index(tsv_index, sample, tmp_path):
    pytest.importorskip("ray")
    sharded = FormulaIndex.build(sample.formulas, tmp_path / "ray", quiet=True, shards=2,
                                 ray_address="local")
    assert _index_files(sharded) == _index_files(tsv_index)


def test_shards_that_repeat_an_id_are_refused(tmp_path):
    tsv = tmp_path / "f.tsv"
    tsv.write_text("id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n"
                   "1\t10\t10\tanswer\t5\tx^2\n"
                   "2\t11\t10\tanswer\t6\ty\n"
                   "1\t12\t10\tanswer\t5\tx^2\n")
    unsharded = FormulaIndex.build(tsv, tmp_path / "one", quiet=True)
    assert unsharded.num_docs == 2 and unsharded.manifest["repeated_ids"] == 1
    with pytest.raises(InputError, match="occurs in two shards"):
        FormulaIndex.build(tsv, tmp_path / "two", quiet=True, shards=2)
    assert not (tmp_path / "two").exists()


def test_posts_are_not_sharded(sample, tmp_path):
    with pytest.raises(InputError, match="without shards"):
        FormulaIndex.build(sample.posts, tmp_path / "idx", quiet=True, shards=2)


def _counted_document_frequencies(sample, representation: str) -> dict[str, int]:
    """Each token's document frequency counted from the source with the indexer's own
    tokenizer, independently of PISA's files."""
    from collections import Counter

    from mathir.indexing.formula_tuples import FormulaTokenizer, latex_word_tokens

    tokenizer, df = FormulaTokenizer(window=2), Counter()
    for formula in read_formula_index(sample.formulas)["formula"]:
        if not formula.strip():
            continue
        toks = tokenizer.tokens(formula) if representation == "tuples" else \
            latex_word_tokens(formula)
        df.update(t for t, c in toks.items() if int(c) > 0)
    return dict(df)


@pytest.mark.parametrize("representation", ["tuples", "words"])
def test_document_frequencies_are_the_collections(tsv_index, sample, tmp_path, representation):
    expected = _counted_document_frequencies(sample, representation)
    tokens = sorted(expected) + ["no such token", ""]
    want = [expected.get(t, 0) for t in tokens]
    assert tsv_index.document_frequency(representation, tokens).tolist() == want
    # An index built before the build saved df.npy: counted from PISA's postings.
    import shutil

    older = tmp_path / "older"
    shutil.copytree(tsv_index.path, older)
    (older / representation / "df.npy").unlink()
    manifest = json.loads((older / "manifest.json").read_text(encoding="utf-8"))
    del manifest["data_files"][f"{representation}/df.npy"]  # (nor recorded it)
    (older / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert FormulaIndex(older).document_frequency(representation, tokens).tolist() == want
    # Shards of impacts: each shard's lexicon and frequencies, summed.
    shards = FormulaIndex.build(sample.formulas, tmp_path / "impacts", quiet=True, shards=3,
                                scoring="bm25-impacts")
    assert shards.document_frequency(representation, tokens).tolist() == want
