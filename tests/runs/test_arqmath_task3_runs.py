import warnings

import pandas as pd
import pytest

from mathir.errors import InputError
from mathir.runs.arqmath_task3 import (
    MAX_ANSWER_CHARS,
    read_assignments,
    read_task3_run,
    validate_task3_run,
    write_task3_run,
)


def _write(tmp_path, text, name="run.tsv"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_sample_runs_have_one_answer_per_topic(sample):
    runs = sorted(sample.task3_runs.glob("*.tsv"))
    assert len(runs) == 4
    for p in runs:
        run = read_task3_run(p, topics=[f"A.{i}" for i in range(1, 11)])
        assert list(run.columns) == ["qid", "rank", "score", "name", "sources", "answer"]
        assert len(run) == 10 and run.qid.is_unique and (run.name == p.stem).all()


def test_write_then_read_round_trip(tmp_path):
    answers = pd.DataFrame({"qid": ["A.2", "A.1"], "answer": ["It is\t$x^2$\nso.", "No."],
                            "score": [2.0, 1.0], "sources": ["1002", "https://x.org/a b"]})
    p = write_task3_run(answers, tmp_path / "mine.tsv", topics=["A.1", "A.2"])
    run = read_task3_run(p)
    assert run.answer.tolist() == ["It is $x^2$ so.", "No."]
    assert run.sources.tolist() == ["1002", "https://x.org/a b"]
    assert (run.name == "mine").all() and (run["rank"] == 1).all()


def test_length_is_counted_in_unicode_characters(tmp_path):
    ok = "é" * MAX_ANSWER_CHARS  # 2,400 bytes in UTF-8, 1,200 characters
    assert len(read_task3_run(_write(tmp_path, f"A.1\t1\t1\tr\t-\t{ok}\n"))) == 1
    with pytest.raises(InputError, match=r"run.tsv:1: answer for topic A.1 has 1201 Unicode"):
        read_task3_run(_write(tmp_path, f"A.1\t1\t1\tr\t-\t{ok}é\n"))
    with pytest.raises(InputError, match="1201 Unicode characters"):
        validate_task3_run(pd.DataFrame({"qid": ["A.1"], "answer": [ok + "é"]}))


@pytest.mark.parametrize("text, message", [
    ("A.1\t1\t1\tr\t-\tyes\nA.1\t1\t1\tr\t-\tno\n", r":2: a second answer for topic A.1 \(first on line 1\)"),
    ("A.1\t1\t1\tr\t-\t  \n", ":1: empty answer"),
    ("A.1\tx\t1\tr\t-\tyes\n", ":1: rank is not an integer"),
    # a traceback before: int() refuses more than 4,300 digits (ValueError)
    ("A.1\t" + "9" * 5000 + "\t1\tr\t-\tyes\n",
     r":1: rank '9+…' \(5,000 characters\) is beyond a 64-bit integer"),
    ("A.1\t99999999999999999999\t1\tr\t-\tyes\n",
     ":1: rank '99999999999999999999' is beyond a 64-bit integer"),
    ("A.1\t1\t0x1p99999\tr\t-\tyes\n", ":1: score is not a number in ASCII digits"),
    ("A.1\t1\t1e99999\tr\t-\tyes\n", ":1: score is not finite: '1e99999'"),
    ("A.1\t1\tnan\tr\t-\tyes\n", ":1: score is not a number in ASCII digits: 'nan'"),
    ("A.1\t1\t1\tr\tyes\n", ":1: expected 6 columns, found 5"),
    ("A.9\t1\t1\tr\t-\tyes\n", ":1: topic 'A.9' is not in the topics"),
])
def test_bad_lines_name_the_line(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        read_task3_run(_write(tmp_path, text), topics=["A.1"])


def test_empty_file_and_missing_topics(tmp_path):
    with pytest.raises(InputError, match="run file is empty"):
        read_task3_run(_write(tmp_path, "\n"))
    with pytest.warns(UserWarning, match=r"no answer for 1 topics: \['A.2'\]"):
        read_task3_run(_write(tmp_path, "A.1\t1\t1\tr\t-\tyes\n"), topics=["A.1", "A.2"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_task3_run(_write(tmp_path, "A.1\t1\t1\tr\t-\tyes\n"), topics=["A.1"])


def test_writer_refuses_two_answers_and_unknown_topics(tmp_path):
    two = pd.DataFrame({"qid": ["A.1", "A.1"], "answer": ["a", "b"]})
    with pytest.raises(InputError, match="more than one answer for topic A.1"):
        write_task3_run(two, tmp_path / "r.tsv")
    with pytest.raises(InputError, match="not in the topics"):
        write_task3_run(two.iloc[:1], tmp_path / "r.tsv", topics=["A.2"])
    with pytest.raises(InputError, match="one format"):
        write_task3_run(two.iloc[:1], tmp_path / "r.tsv", format="trec")
    assert not (tmp_path / "r.tsv").exists()


def test_assignments(sample, tmp_path):
    a = read_assignments(sample.task3_assignments)
    assert len(a) == 40 and a.run.nunique() == 4
    # identical answers of two runs share one id
    pair = a[(a.qid == "A.1") & a.run.str.startswith(("alpha-task3-run1", "gamma"))]
    assert pair.docno.nunique() == 1
    p = _write(tmp_path, "r\tA.1\td_1\nr\tA.1\td_2\n", "a.tsv")
    with pytest.raises(InputError, match=r"a.tsv:2: run r has a second answer id for topic A.1"):
        read_assignments(p)
