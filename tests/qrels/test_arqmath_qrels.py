import pytest

from mathir.errors import InputError
from mathir.qrels.arqmath import judged_only, read_qrels
from tests.conftest import real_path


def test_float_labels_crlf_and_duplicates(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_bytes(b"B.1 0 60069 2.0\r\nB.1\t0\t60070\t3\r\nB.1 0 60069 1")
    q = read_qrels(p, key="visual_id")
    assert q[["qid", "docno", "label"]].values.tolist() == [["B.1", "60069", 2], ["B.1", "60070", 3]]
    assert q.visual_id.tolist() == ["60069", "60070"]


@pytest.mark.parametrize("line,msg", [("A.1 0 5", "expected 4 columns"), ("A.1 0 5 x", "not a number"),
                                      ("A.1 0 5 4", "is not one of"), ("A.1 0 5 2.5", "is not one of")])
def test_bad_lines(tmp_path, line, msg):
    p = tmp_path / "q.tsv"
    p.write_text("A.1 0 4 1\n" + line + "\n")
    with pytest.raises(InputError, match=f"q.tsv:2: .*{msg}"):
        read_qrels(p)


def test_empty_qrels(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("\n")
    with pytest.raises(InputError, match="no judgments"):
        read_qrels(p)


@pytest.mark.realdata
@pytest.mark.parametrize("name,topics,rows", [
    ("task1/qrel_task1_2020_official.tsv", 77, 39124),
    ("task1/qrel_task1_2021_official.tsv", 71, 31788),
    ("task1/qrel_task1_2022_official.tsv", 78, 34847),
    ("task2/qrel_task2_2022_formula_id_official.tsv", 76, 16189),
    ("task2/qrel_task2_2021_visual_id_official.tsv", 58, 8108),
    ("task2/qrel_task2_2020_visual_id_v1_all.tsv", 74, 10575),
])
def test_real_qrels(name, topics, rows):
    q = read_qrels(real_path("arqmath", "qrels", name))
    assert q.qid.nunique() == topics and len(q) == rows
    assert set(q.label) <= {0, 1, 2, 3}


@pytest.mark.realdata
def test_real_task3_codes_count_as_unjudged():
    q = read_qrels(real_path("arqmath", "qrels", "task3", "qrel_task3_2022_official_complete.tsv"))
    assert len(q) == 792 and q.qid.nunique() == 78
    assert (q.label == 5).sum() == 67 and (q.label == 6).sum() == 3
    assert len(judged_only(q)) == 792 - 70
