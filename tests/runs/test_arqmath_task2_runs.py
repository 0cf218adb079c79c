"""Task 2 run files: topic formula_id post_id rank score run."""

from __future__ import annotations

import pandas as pd
import pytest

from mathir.errors import InputError
from mathir.runs.arqmath_task2 import read_task2_run, write_task2_run


def test_round_trip(tmp_path):
    res = pd.DataFrame({"qid": ["B.1", "B.1", "B.2"], "docno": ["5", "6", "7"],
                        "post_id": ["50", "60", "70"], "score": [0.5, 0.9, 1.0]})
    p = write_task2_run(res, tmp_path / "tuples.tsv")
    assert p.read_text().splitlines() == ["B.1\t6\t60\t1\t0.9\ttuples",
                                          "B.1\t5\t50\t2\t0.5\ttuples",
                                          "B.2\t7\t70\t1\t1.0\ttuples"]
    back = read_task2_run(p)
    assert back[["qid", "formula_id", "post_id", "rank"]].values.tolist() == [
        ["B.1", "6", "60", 1], ["B.1", "5", "50", 2], ["B.2", "7", "70", 1]]


@pytest.mark.parametrize(("line", "msg"), [
    ("B.1\t5\t50\t1\tinf\tr", "score is not finite"),
    ("B.1\tQ0\t5\t1\t1.0\tr", "Q0"),
    ("B.1\t5\t1\t1.0\tr", "columns"),
])
def test_bad_lines_name_the_line(tmp_path, line, msg):
    p = tmp_path / "r.tsv"
    p.write_text("B.1\t4\t40\t1\t2.0\tr\n" + line + "\n")
    with pytest.raises(InputError, match=msg) as e:
        read_task2_run(p)
    assert ":2:" in str(e.value)


@pytest.mark.parametrize(("line", "msg"), [
    ("B.1\t5\t50\t1\tx\tr", "score 'x' is not a number in ASCII digits: read as 0.0"),
    ("B.1\t5\t50\tone\t1.0\tr", "rank 'one' is not an integer in ASCII digits: read as 0"),
])
def test_numbers_are_read_as_trec_eval_reads_them_with_a_warning(tmp_path, line, msg):
    p = tmp_path / "r.tsv"
    p.write_text("B.1\t4\t40\t1\t2.0\tr\n" + line + "\n")
    with pytest.warns(UserWarning, match=":2: " + msg):
        assert len(read_task2_run(p)) == 2


def test_unknown_topic_and_empty_file(tmp_path):
    p = tmp_path / "r.tsv"
    p.write_text("B.9\t4\t40\t1\t2.0\tr\n")
    with pytest.raises(InputError, match="not in the topics"):
        read_task2_run(p, topics={"B.1"})
    p.write_text("")
    with pytest.raises(InputError, match="empty"):
        read_task2_run(p)


def test_write_rejects_trec_format_and_missing_post(tmp_path):
    res = pd.DataFrame({"qid": ["B.1"], "docno": ["5"], "post_id": ["50"], "score": [1.0]})
    with pytest.raises(InputError, match="one format"):
        write_task2_run(res, tmp_path / "r.tsv", format="trec")
    with pytest.raises(InputError, match="post_id"):
        write_task2_run(res.drop(columns="post_id"), tmp_path / "r.tsv")
    assert not (tmp_path / "r.tsv").exists()


def test_crlf_and_spaces(tmp_path):
    p = tmp_path / "r.tsv"
    p.write_bytes(b"B.1 5 50 1 0.5 r\r\nB.1 6 60 2 0.25 r\r\n")
    assert read_task2_run(p).docno.tolist() == ["5", "6"]
