import pandas as pd
import pytest

from mathir.errors import InputError
from mathir.runs.worldtree import read_run, write_run


def results():
    return pd.DataFrame({"qid": ["Q1", "Q1", "Q2"], "docno": ["a", "b", "c"], "score": [1.0, 2.0, 0.5]})


def test_predict_round_trip_keeps_rank_order(tmp_path):
    p = write_run(results(), tmp_path / "bm25.txt")
    assert p.read_text().splitlines() == ["Q1\tb", "Q1\ta", "Q2\tc"]
    run = read_run(p)
    assert run[["qid", "docno", "rank"]].values.tolist() == [["Q1", "b", 1], ["Q1", "a", 2], ["Q2", "c", 1]]
    assert (run.groupby("qid")["score"].diff().dropna() < 0).all()


def test_trec_round_trip(tmp_path):
    p = write_run(results(), tmp_path / "r.tsv", format="trec", name="tag")
    assert p.read_text().splitlines()[0] == "Q1\tQ0\tb\t1\t2.0\ttag"
    assert read_run(p)["docno"].tolist() == ["b", "a", "c"]


def test_cli_default_format_means_predict(tmp_path):
    p = write_run(results(), tmp_path / "r.txt", format="arqmath")
    assert p.read_text().splitlines()[0] == "Q1\tb"


def test_repeated_fact_keeps_first_case_insensitive(tmp_path):
    p = tmp_path / "p.txt"
    p.write_text("Q1\tAB\nQ1\tc\nq1\tab\n")
    with pytest.warns(UserWarning, match="dropped 1 repeated"):
        run = read_run(p)
    assert run["docno"].tolist() == ["AB", "c"]


@pytest.mark.parametrize("text,msg", [
    ("", "run file is empty"),
    ("Q1\ta\tb\n", "expected 2 columns"),
    ("Q1\ta\nQ1\tQ0\tb\t1\t1.0\tr\n", r"p.txt:2: expected 2 columns, found 6"),
    ("Q1\tQ0\tb\t1\tnan\tr\n", "score is not finite"),
    ("Q1\tX\tb\t1\t1.0\tr\n", "Q0"),
])
def test_bad_runs(tmp_path, text, msg):
    p = tmp_path / "p.txt"
    p.write_text(text)
    with pytest.raises(InputError, match=msg):
        read_run(p)


def test_unknown_question_and_bad_writes(tmp_path):
    p = tmp_path / "p.txt"
    p.write_text("Q9\ta\n")
    with pytest.raises(InputError, match=r"p.txt:1: question 'Q9' is not in the topics"):
        read_run(p, topics={"Q1"})
    with pytest.raises(InputError, match="unknown run format"):
        write_run(results(), tmp_path / "x.txt", format="csv")
    with pytest.raises(InputError, match="empty run"):
        write_run(results().iloc[:0], tmp_path / "x.txt")
    assert not (tmp_path / "x.txt").exists()


def test_fast_and_line_readers_agree(tmp_path):
    lf, crlf = tmp_path / "lf.txt", tmp_path / "crlf.txt"
    lines = ["Q1\tb", "Q2\tc", "Q1\ta"]
    lf.write_text("\n".join(lines) + "\n")
    crlf.write_bytes(("\r\n".join(lines) + "\r\n").encode())  # CR: the line reader's path
    a, b = read_run(lf), read_run(crlf)
    assert a.drop(columns="name").equals(b.drop(columns="name"))
    assert a[["qid", "docno", "rank"]].values.tolist() == [["Q1", "b", 1], ["Q2", "c", 1], ["Q1", "a", 2]]
