import tempfile
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    # an OverflowError traceback before (array('q')); WorldTree runs are not read by
    # trec_eval, and this reader refuses a rank it cannot read
    ("Q1\tQ0\tb\t99999999999999999999\t1.0\tr\n",
     "p.txt:1: rank '99999999999999999999' is beyond a 64-bit integer"),
    ("Q1\tQ0\tb\t" + "9" * 5000 + "\t1.0\tr\n", r"p.txt:1: rank '9+…' \(5,000 characters\)"),
    ("Q1\tQ0\tb\t\u0663\t1.0\tr\n", "p.txt:1: rank is not an integer in ASCII digits"),
    ("Q1\tQ0\tb\t1\t1e99999\tr\n", "p.txt:1: score is not finite"),
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


# --- the compact reader == the documented semantics, worked out with pandas

def _reference(lines: list[tuple], width: int, stem: str) -> pd.DataFrame:
    if width == 2:
        run = pd.DataFrame({"qid": [x[0] for x in lines], "docno": [x[1] for x in lines]})
        run["score"], run["name"] = float("nan"), stem
    else:
        run = pd.DataFrame(lines, columns=["qid", "docno", "file_rank", "score", "name"])
        run = run.sort_values(["qid", "score", "file_rank"], ascending=[True, False, True],
                              kind="stable").drop(columns="file_rank")
    key = run["qid"].str.lower() + "\t" + run["docno"].str.lower()
    run = run[~key.duplicated()].reset_index(drop=True)
    run["rank"] = run.groupby("qid", sort=False).cumcount() + 1
    if width == 2:
        run["score"] = -run["rank"].astype(float)
    return run[["qid", "docno", "rank", "score", "name"]]


wt_line = st.tuples(st.sampled_from(["Q1", "q1", "Q2", "Q10"]), st.sampled_from(["a", "A", "b", "c"]),
                    st.integers(1, 4), st.sampled_from([0.0, -0.0, 1.0, 2.5]),
                    st.sampled_from(["r", "s"]))


@given(lines=st.lists(wt_line, min_size=1, max_size=40), width=st.sampled_from([2, 6]),
       sep=st.sampled_from(["\t", " "]))
def test_reading_matches_reading_everything_with_pandas(lines, width, sep):
    p = Path(tempfile.mkdtemp()) / "predict.txt"
    if width == 2:
        p.write_text("".join(f"{q}{sep}{d}\n" for q, d, *_ in lines))
    else:
        p.write_text("".join(f"{q}{sep}Q0{sep}{d}{sep}{r}{sep}{s!r}{sep}{n}\n"
                             for q, d, r, s, n in lines))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = read_run(p)
    pd.testing.assert_frame_equal(run, _reference(lines, width, "predict"))


def test_a_file_the_fast_reader_refuses_is_closed(tmp_path):
    import gc

    bad = tmp_path / "p.txt"
    # three columns: the fast reader (pandas) gives up on it and the line reader names
    # the line; the file the fast reader opened is closed all the same
    bad.write_text("WT_DEV_01\tx\ty\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(InputError, match=r"p.txt:1: expected 2 columns"):
            read_run(bad)
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
