"""The formula index: built from a TSV or from posts, reused, atomic, counts fallbacks."""

from __future__ import annotations

import json

import pytest

from mathir.errors import InputError
from mathir.indexing.formula_index import FormulaIndex, iter_formula_source
from mathir.indexing.formula_tsv import read_formula_index


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
