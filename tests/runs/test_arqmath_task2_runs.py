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


@pytest.mark.parametrize(("line", "msg"), [
    ("B.1\tq0\t5\t1\t1.0\tr", "q0"),  # a TREC line: formula id 'q0', post id '5'
    ("B.1\t5\t50\t1\t0x1p99999\tr", "score is not finite: '0x1p99999'"),
    ("B.1\t5\t50\t1\t-1e99999\tr", "score is not finite: '-1e99999'"),
])
def test_lowercase_q0_and_overflowing_scores_are_refused(tmp_path, line, msg):
    p = tmp_path / "r.tsv"
    p.write_text("B.1\t4\t40\t1\t2.0\tr\n" + line + "\n")
    with pytest.raises(InputError, match=":2: .*" + msg):
        read_task2_run(p)


@pytest.mark.parametrize("rank", ["99999999999999999999", "9" * 5000])
def test_a_huge_rank_is_read_as_c_atol_reads_it(tmp_path, rank):
    # it overflowed array('q') (20 digits) or Python's int conversion limit (5,000)
    p = tmp_path / "r.tsv"
    p.write_text(f"B.1\t4\t40\t{rank}\t2.0\tr\nB.1\t5\t50\t1\t1.0\tr\n")
    with pytest.warns(UserWarning, match=r":1: rank '9+('|…' \(5,000 characters\)) is beyond "
                                         "a 64-bit integer: read as 9223372036854775807"):
        run = read_task2_run(p)
    assert run["rank"].tolist() == [2**63 - 1, 1]
