import pytest

from mathir.errors import InputError
from mathir.indexing.fact_index import (
    FactIndex,
    iter_table_facts,
    read_lemmas,
    read_tablestore,
)
from mathir.samples import worldtree_sample
from tests.conftest import real_path

HEADER = "[FILL] a\tX\t[FILL] is a kind of\tSCOPE\tY\t[SKIP] COMMENTS\t[SKIP] UID\t\n"


def write_table(path, rows, header=HEADER):
    path.write_text(header + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def test_fact_text_keeps_fill_drops_skip_and_empty_cells(tmp_path):
    t = write_table(tmp_path / "KINDOF.tsv", ["an\t  ice   cube \tis a kind of\t\tsolid\tnote\tAB-CD\t"])
    (fact,) = iter_table_facts(t)
    assert (fact.uid, fact.table, fact.text, fact.line) == ("ab-cd", "KINDOF", "an ice cube is a kind of solid", 2)


def test_rows_without_uid_and_tables_without_uid_column(tmp_path):
    write_table(tmp_path / "A.tsv", ["a\tb\tc\t\td\t\t\t", "a\tdog\tis a kind of\t\tanimal\t\tx1\t"])
    write_table(tmp_path / "Lemmas.tsv", ["dogs\tdog"], header="WORD\tLEMMA\n")
    ts = read_tablestore(tmp_path)
    assert ts.facts["docno"].tolist() == ["x1"]
    assert ts.skipped_tables == ["Lemmas"]


def test_duplicates_and_conflicts_are_reported_not_merged(tmp_path):
    write_table(tmp_path / "A.tsv", ["a\tdog\tis a kind of\t\tanimal\t\tU1\t",
                                     "a\tdog\tis a kind of\t\tanimal\t\tu1\t",
                                     "a\tcat\tis a kind of\t\tanimal\t\tU2\t"])
    write_table(tmp_path / "B.tsv", ["a\tfoot\tis a kind of\t\tunit\t\tu2\t"])
    with pytest.warns(UserWarning, match="1 UID.*two different texts.*u2"):
        ts = read_tablestore(tmp_path)
    assert ts.duplicates == ["u1"]
    assert ts.conflicts[["docno", "table", "line"]].values.tolist() == [["u2", "B", 2]]
    assert ts.texts()["u2"] == "a cat is a kind of animal"  # the first text is kept


def test_extra_non_empty_cell_is_an_error_naming_the_line(tmp_path):
    t = write_table(tmp_path / "A.tsv", ["a\tdog\tis a kind of\t\tanimal\t\tU1\t", "a\tb\tc\td\te\tf\tU3\tEXTRA"])
    with pytest.raises(InputError, match=r"A.tsv:3: row has 8 cells"):
        list(iter_table_facts(t))


def test_empty_tablestore_is_an_error(tmp_path):
    (tmp_path / "x.tsv").write_text("WORD\tLEMMA\n")
    with pytest.raises(InputError, match="no facts"):
        read_tablestore(tmp_path)
    with pytest.raises(InputError, match="folder of table files not found"):
        read_tablestore(tmp_path / "missing")


def test_lemmas_bad_line(tmp_path):
    p = tmp_path / "l.txt"
    p.write_text("be\twas\nonly-one-column\n")
    with pytest.raises(InputError, match=r"l.txt:2: expected 2 columns"):
        read_lemmas(p)


def test_fact_index_is_reused_and_rebuilt(tmp_path):
    import shutil

    tables = tmp_path / "tables"
    shutil.copytree(worldtree_sample().tables, tables)
    idx = FactIndex.build(tables, tmp_path / "idx")
    stamp = (tmp_path / "idx" / "manifest.json").stat().st_mtime_ns
    FactIndex.build(tables, tmp_path / "idx")
    assert (tmp_path / "idx" / "manifest.json").stat().st_mtime_ns == stamp
    with open(tables / "KINDOF.tsv", "a", encoding="utf-8") as f:
        f.write("a\tnewt\tis a kind of\t\tamphibian\t#99\tffff-0000-1111-2222\t\n")
    again = FactIndex.build(tables, tmp_path / "idx")
    assert again.num_docs == idx.num_docs + 1
    assert "ffff-0000-1111-2222" in again.docnos()
    counts = again.query_counts(["a newt is an amphibian", "zzzz"])
    assert counts.shape[0] == 2 and counts[1].nnz == 0 and counts[0].nnz >= 2


@pytest.mark.realdata
def test_real_tablestore_quirks():
    tables = real_path("worldtree", "annotation", "expl-tablestore-export-2017-08-25-230344", "tables")
    with pytest.warns(UserWarning, match="b69d-9d08-0ad6-3023"):
        ts = read_tablestore(tables)
    assert len(ts.facts) == 4947  # 4,950 rows with a UID, 3 repeated
    assert ts.duplicates == ["2a93-fc4e-e52c-6897", "af4e-1838-d667-16e7"]
    assert ts.conflicts["docno"].tolist() == ["b69d-9d08-0ad6-3023"]
    assert ts.skipped_tables == ["Decompositions", "LemmatizerAdditions"]
    texts = ts.texts()
    assert texts["good"] == "a food contains nutrients for living things"
    assert texts["0d2a-34ad-e231-a167"] == "the ability to grow is a kind of trait"
    lemmas = read_lemmas(real_path("worldtree", "annotation", "lemmatization-en.txt"))
    assert len(lemmas) == 41664  # distinct words (a word listed twice keeps its first lemma)
