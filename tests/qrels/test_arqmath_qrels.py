import pytest

from mathir.errors import InputError
from mathir.qrels.arqmath import judged_only, read_task3_qrels
from mathir.qrels.trec import read_qrels
from tests.conftest import real_path


def test_float_labels_and_crlf(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_bytes(b"B.1 0 60069 2.0\r\nB.1\t0\t60070\t3\r\nB.1 0 60071 1")
    q = read_qrels(p, key="visual_id")
    assert q[["qid", "docno", "label"]].values.tolist() == [
        ["B.1", "60069", 2], ["B.1", "60070", 3], ["B.1", "60071", 1]]
    assert q.visual_id.tolist() == ["60069", "60070", "60071"]


def test_conflicting_duplicates_are_refused_naming_both_lines(tmp_path):
    # trec_eval stops with "duplicate docs"; the old reader kept the first silently
    p = tmp_path / "q.tsv"
    p.write_text("A.1 0 5 3\nA.1 0 6 1\nA.1 0 5 0\n")
    with pytest.raises(InputError, match=r"q.tsv:3: topic A.1 document 5 is judged twice, "
                                         r"here \(0\) and on line 1 \(3\)"):
        read_qrels(p)
    q = read_qrels(p, duplicates="last")  # ir_measures' rule
    assert q[["docno", "label"]].values.tolist() == [["6", 1], ["5", 0]]


def test_task3_codes_only_in_task3_qrels(tmp_path):
    # Task 3's 5 (system failure) and 6 (do not know) used to pass in Task 1 qrels
    # and count as unjudged; trec_eval reads a 5 as a grade
    p = tmp_path / "q.tsv"
    p.write_text("A.1 0 5 3\nA.1 0 6 5\n")
    with pytest.raises(InputError, match=r"q.tsv:2: relevance '5' is not one of \[0, 1, 2, 3\]"):
        read_qrels(p)
    assert read_task3_qrels(p).label.tolist() == [3, 5]


def test_comments_and_ascii_whitespace(tmp_path):
    p = tmp_path / "q.tsv"
    # '#' lines are comments; U+00A0 is part of a document id, not a separator
    p.write_text("# made by hand\nA.1 0 12\u00a034 2\n", encoding="utf-8")
    assert read_qrels(p).docno.tolist() == ["12\u00a034"]


def test_blank_lines_are_skipped_with_a_warning(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("A.1 0 5 3\n\nA.1 0 6 1\n")
    with pytest.warns(UserWarning, match=r"q.tsv:2: skipped 1 blank line"):
        assert len(read_qrels(p)) == 2


@pytest.mark.parametrize("line,msg", [
    ("A.1 0 5", "expected 4 columns"), ("A.1 0 5 2 extra", "expected 4 columns"),
    ("A.1 0 5 4", "is not one of"), ("A.1 0 5 -1", "is not one of"),
])
def test_bad_lines(tmp_path, line, msg):
    p = tmp_path / "q.tsv"
    p.write_text("A.1 0 4 1\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=f"q.tsv:2: .*{msg}"):
        read_qrels(p)


@pytest.mark.parametrize("text,label", [
    # C's atol, as trec_eval reads labels; Python's int()/float() read 3, 3, 2.5 and 3
    ("0_3", 0), ("\u0663", 0), ("2.5", 2), ("3abc", 3), ("x", 0),
])
def test_labels_are_read_as_trec_eval_reads_them_with_a_warning(tmp_path, text, label):
    p = tmp_path / "q.tsv"
    p.write_text(f"A.1 0 4 1\nA.1 0 5 {text}\n", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"q.tsv:2: relevance .* is not an integer in ASCII "
                                         rf"digits: read as {label} "):
        q = read_qrels(p)
    assert q.label.tolist() == [1, label]


def test_empty_qrels(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("# nothing\n")
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
    path = real_path("arqmath", "qrels", "task3", "qrel_task3_2022_official_complete.tsv")
    with pytest.raises(InputError, match="is not one of"):
        read_qrels(path)  # Task 1/2 labels
    q = read_task3_qrels(path)
    assert len(q) == 792 and q.qid.nunique() == 78
    assert (q.label == 5).sum() == 67 and (q.label == 6).sum() == 3
    assert len(judged_only(q)) == 792 - 70


@pytest.mark.parametrize("label,shown", [
    ("99999999999999999999", "'99999999999999999999'"),
    ("-99999999999999999999", "'-99999999999999999999'"),
    ("99999999999999999999.0", "'99999999999999999999.0'"),
    ("9" * 5000, r"'9+…' \(5,000 characters\)"),
    ("9" * 5000 + ".0", r"'9+…' \(5,002 characters\)"),
])
@pytest.mark.parametrize("reader", [read_qrels, read_task3_qrels])
def test_a_huge_label_is_refused_on_one_short_line(tmp_path, label, shown, reader):
    # C's atol saturates at LONG_MAX, which no task allows (trec_eval itself cannot
    # score such qrels); a 5,000-digit label was a ValueError traceback (Python's int
    # string-conversion limit)
    p = tmp_path / "q.tsv"
    p.write_text(f"A.1 0 4 1\nA.1 0 5 {label}\n")
    with pytest.raises(InputError, match=rf"q.tsv:2: relevance {shown} is not one of") as e:
        reader(p)
    assert len(str(e.value)) < 300
