import pytest

from mathir.errors import InputError
from mathir.readers.formula_tsv import iter_formula_index, read_formula_index
from tests.conftest import real_path

V3 = ("id\tpost_id\tthread_id\ttype\tcomment_id\told_visual_id\tvisual_id\tissue\tformula\r\n"
      "1\t10\t9\tanswer\t\t5\t6\t\tx^2\r\n"
      "2\t11\t9\tcomment\t77\t5\t6\td\ta\tb")  # CRLF, tab in formula, no final newline


def test_v3_layout_crlf_and_missing_final_newline(tmp_path):
    p = tmp_path / "f.tsv"
    p.write_bytes(V3.encode())
    recs = list(iter_formula_index(p))
    assert [r.formula for r in recs] == ["x^2", "a\tb"]
    assert recs[1].comment_id == "77" and recs[1].issue == "d" and recs[1].visual_id == "6"


def test_six_and_seven_column_layouts(tmp_path):
    p6 = tmp_path / "6.tsv"
    p6.write_text("id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n3\t4\t5\tanswer\t8\t\\pi\n")
    p7 = tmp_path / "7.tsv"
    p7.write_text("id\tpost_id\tthread_id\ttype\tcomment_id\tvisual_id\tformula\n3\t4\t5\tcomment\t\t8\t\\pi\n")
    for p in (p6, p7):
        df = read_formula_index(p)
        assert df.loc[0, "visual_id"] == "8" and df.loc[0, "formula"] == "\\pi"


def test_wrong_column_count_names_file_and_line(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text("id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n1\t2\t3\tanswer\t4\tx\n1\t2\n")
    with pytest.raises(InputError, match=r"bad.tsv:3: expected 6 columns, found 2"):
        list(iter_formula_index(p))


def test_missing_header_is_refused(tmp_path):
    p = tmp_path / "nohead.tsv"
    p.write_text("1\t2\t3\tanswer\t4\tx\n")
    with pytest.raises(InputError, match="header"):
        list(iter_formula_index(p))


@pytest.mark.realdata
def test_real_six_column_sample():
    df = read_formula_index(real_path("arqmath", "collection_sample", "latex_representation_sample_1000.tsv"))
    assert len(df) == 1000
    assert df.loc[0, ["formula_id", "post_id", "thread_id", "visual_id", "formula"]].tolist() == [
        "14395887", "1597292", "1558734", "16029", "(\\mathbb{R},+)"]


@pytest.mark.realdata
def test_real_derived_seven_column_index():
    df = read_formula_index(real_path("arqmath", "collection_sample", "derived", "formula_index_from_thread_html.tsv"))
    assert len(df) == 76970
    assert (df["type"] == "comment").sum() > 0
    # The MANIFEST's "691 formulas without visual_id" are 589 comment, 83 answer, 19 question.
    assert (df["visual_id"] == "").sum() == 691
    assert ((df["type"] == "comment") & (df["visual_id"] == "")).sum() == 589
