import json
import re
import tempfile
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mathir.errors import InputError
from mathir.runs.trec import read_run, validate_run, write_run
from tests.conftest import real_path


def results():
    return pd.DataFrame({"qid": ["A.1", "A.1", "A.2"], "docno": ["5", "7", "5"],
                         "score": [0.5, 2.0, 1.0]})


@pytest.mark.parametrize("fmt,first", [("arqmath", "A.1\t7\t1\t2.0\tmyrun"),
                                       ("trec", "A.1\tQ0\t7\t1\t2.0\tmyrun")])
def test_write_then_read_round_trip(tmp_path, fmt, first):
    p = write_run(results(), tmp_path / "x.tsv", name="myrun", format=fmt)
    assert p.read_text().splitlines()[0] == first
    run = read_run(p)
    assert run[["qid", "docno", "rank"]].values.tolist() == [["A.1", "7", 1], ["A.1", "5", 2], ["A.2", "5", 1]]
    assert set(run.name) == {"myrun"}


def test_default_run_name_is_file_stem(tmp_path):
    p = write_run(results(), tmp_path / "bm25.tsv")
    assert p.read_text().split("\n")[0].endswith("\tbm25")


@pytest.mark.parametrize("line,msg", [
    ("A.1 5 1 nan r", "score is not finite: 'nan'"),
    ("A.1 5 1 1e999 r", "score is not finite"),
    ("A.1 5 1", "expected at least 5 columns"),
    ("A.1 Q0 5 1 1.0", "5 columns with Q0 second: a TREC line without its run tag"),
    ("A.1 Q0 5 1 1.0 r", "6 columns, but line 1 has 5"),
])
def test_bad_run_lines_name_file_and_line(tmp_path, line, msg):
    p = tmp_path / "r.tsv"
    p.write_text("A.1 4 1 2.0 r\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=f"r.tsv:2: {msg}"):  # noqa: B907
        read_run(p)


@pytest.mark.parametrize("text,score", [
    # C's atof, as trec_eval reads scores; Python's float() reads 1000, 3 and fails
    ("1_000", 1.0), ("\u0663", 0.0), ("3abc", 3.0), ("high", 0.0), ("0x10", 16.0),
])
def test_scores_are_read_as_trec_eval_reads_them_with_a_warning(tmp_path, text, score):
    p = tmp_path / "r.tsv"
    p.write_text(f"A.1 4 1 2.0 r\nA.1 5 2 {text} r\n", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"r.tsv:2: score .* is not a number in ASCII "
                                         rf"digits: read as {score!r}"):
        run = read_run(p)
    assert dict(zip(run.docno, run.score, strict=True))["5"] == score


def test_a_rank_that_is_not_an_integer_is_noted_in_a_trec_line(tmp_path):
    # trec_eval never reads the rank of a 6-column line: read with atol, with a warning
    p = tmp_path / "r.tsv"
    p.write_text("A.1 Q0 4 1 2.0 r\nA.1 Q0 5 one 1.0 r\n")
    with pytest.warns(UserWarning, match=r"r.tsv:2: rank 'one' is not an integer"):
        assert read_run(p).docno.tolist() == ["4", "5"]


@pytest.mark.parametrize("line,msg", [
    # a TREC line without its run tag, read as 'topic post_id rank score run', used to
    # score 0.0000 everywhere (rank 'd3' read as 0 with a warning); trec_eval refuses it
    ("A.1 0 d3 1 9.5", "rank 'd3' is not an integer in ASCII digits"),
    ("A.1 q0 d3 1 9.5", "5 columns with q0 second"),
    ("A.1 q0 5 1 9.5", "5 columns with q0 second"),
    ("A.1 Q0 5 1 9.5", "5 columns with Q0 second"),
    ("A.1 0 1002 1 9.5", "5 columns with post id 0 and a number as run tag"),
    ("A.1 5 one 1.0 r", "rank 'one' is not an integer in ASCII digits"),
    ("A.1 5 2.0 1.0 r", "rank '2.0' is not an integer in ASCII digits"),
])
def test_a_five_column_line_must_have_an_integer_rank(tmp_path, line, msg):
    p = tmp_path / "r.tsv"
    p.write_text("A.1 4 1 2.0 r\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=f"r.tsv:2: {msg}") as e:  # noqa: B907
        read_run(p)
    assert "TREC line without its run tag" in str(e.value) and "\n" not in str(e.value)


def test_a_run_tag_that_is_a_number_is_fine_beside_a_real_post_id(tmp_path):
    p = tmp_path / "r.tsv"
    p.write_text("A.1 1002 1 2.0 7\nA.1 0 2 1.0 r0\n")  # post id 0 exists in real runs
    assert read_run(p).docno.tolist() == ["1002", "0"]


@pytest.mark.parametrize("score", ["0x1p99999", "-0x1p99999", "0X1.8P+2000", "1e99999",
                                   "-1e99999", "0x1p99999abc"])
@pytest.mark.parametrize("trec", [False, True])
def test_a_score_that_overflows_is_refused_as_not_finite(tmp_path, score, trec):
    # trec_eval's atof reads +/-inf (C's strtod saturates); float.fromhex raised
    # OverflowError (a traceback) for the hexadecimal ones
    p = tmp_path / "r.tsv"
    p.write_text("A.1 Q0 4 1 2.0 r\nA.1 Q0 5 2 " + score + " r\n" if trec
                 else "A.1 4 1 2.0 r\nA.1 5 2 " + score + " r\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError, match="r.tsv:2: score is not finite: "
                                             + re.escape(repr(score))):
            read_run(p)


@pytest.mark.parametrize("rank,value", [
    ("99999999999999999999", 2**63 - 1), ("-99999999999999999999", -2**63),
    ("9" * 5000, 2**63 - 1), ("0" * 5000 + "7", 7), ("9223372036854775807", 2**63 - 1),
])
@pytest.mark.parametrize("trec", [False, True])
def test_huge_ranks_are_read_as_c_atol_reads_them(tmp_path, rank, value, trec):
    # glibc's atol (strtol) saturates at LONG_MAX / LONG_MIN; trec_eval never reads the
    # rank. A 20-digit rank overflowed array('q') (OverflowError), a 5,000-digit one
    # hit Python's int string-conversion limit (ValueError)
    p = tmp_path / "r.tsv"
    p.write_text(f"A.1 Q0 5 {rank} 1.0 r\nA.1 Q0 6 1 2.0 r\n" if trec
                 else f"A.1 5 {rank} 1.0 r\nA.1 6 1 2.0 r\n")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        run = read_run(p)
    assert dict(zip(run.docno, run["rank"], strict=True))["5"] == value
    assert run.docno.tolist() == ["6", "5"]  # by score
    noted = [str(x.message) for x in w if "rank" in str(x.message)]
    if abs(value) == 2**63 - 1 and rank != "9223372036854775807" or value == -2**63:
        assert len(noted) == 1 and noted[0].startswith(f"{p}:1: rank '")
        assert "beyond a 64-bit integer" in noted[0] and len(noted[0]) < 400
    else:
        assert not noted


@pytest.mark.parametrize("line,msg", [
    ("A.1 q0 5 1 9.5", "5 columns with q0 second"),
    ("A.1 0 d3 1 9.5", "rank 'd3' is not an integer in ASCII digits"),
    ("A.1 Q0 5 1 0x1p99999 r", "score is not finite: '0x1p99999'"),
])
def test_the_cli_prints_one_error_line(tmp_path, capsys, sample, line, msg):
    from mathir.cli import main

    run = tmp_path / "run.tsv"
    run.write_text(line + "\n")
    assert main(["evaluate", "arqmath-task1", "--qrels", str(sample.task1_qrels),
                 str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {run}:1: {msg}")


@pytest.mark.parametrize("rank", ["99999999999999999999", "9" * 5000])
def test_the_cli_scores_a_run_with_a_huge_rank(tmp_path, capsys, sample, rank):
    from mathir.cli import main

    run = tmp_path / "run.tsv"
    run.write_text(f"A.1 Q0 1002 {rank} 1.0 r\n")
    with pytest.warns(UserWarning, match=r"run.tsv:1: rank .* is beyond a 64-bit integer"):
        assert main(["evaluate", "arqmath-task1", "--qrels", str(sample.task1_qrels),
                     "--format", "json", str(run)]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err and json.loads(out.out)["run"]["P'@10"] == 0.01


def test_trec_run_without_its_tag_is_refused_not_scored_zero(tmp_path):
    # it was read as the 5-column format: docno 'Q0', rank = the post id; every
    # measure 0.0 with a "dropped repeated rows" warning
    p = tmp_path / "r.tsv"
    p.write_text("A.1 Q0 1376776 1 1.0\nA.1 Q0 1376777 2 0.5\n")
    with pytest.raises(InputError, match=r"r.tsv:1: 5 columns with Q0 second"):
        read_run(p)


def test_trec_lines_as_trec_eval_reads_them(tmp_path):
    # any second column, fields beyond the sixth ignored, '#' comments, blank lines,
    # and a non-breaking space that is part of a document id
    p = tmp_path / "r.tsv"
    p.write_text("# a run\n  # indented comment\n\nA.1 0 12\u00a034 1 2.0 r extra\n"
                 "A.1 Q0 7 2 1.0 r\n", encoding="utf-8")
    run = read_run(p)
    assert run[["docno", "name"]].values.tolist() == [["12\u00a034", "r"], ["7", "r"]]


def test_unknown_topic_and_empty_run(tmp_path):
    p = tmp_path / "r.tsv"
    p.write_text("A.1 4 1 2.0 r\nA.99 4 1 2.0 r\n")
    with pytest.raises(InputError, match=r"r.tsv:2: topic 'A.99' is not in the topics"):
        read_run(p, topics=["A.1"])
    p.write_text("\n\n# only a comment\n")
    with pytest.raises(InputError, match="run file has no results"):
        read_run(p)


def test_duplicates_keep_first_and_nothing_is_cut_at_1000(tmp_path):
    p = tmp_path / "r.tsv"
    lines = ["A.1 4 1 9.0 r", "A.1 4 2 1.0 r"] + [f"A.1 {i} {i} {-i} r" for i in range(10, 1200)]
    p.write_text("\r\n".join(lines))  # CRLF, no final newline
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        run = read_run(p)
    assert len(run) == 1191  # trec_eval keeps every row
    assert run.iloc[0].docno == "4" and run.iloc[0].score == 9.0
    messages = [str(x.message) for x in w]
    assert any("r.tsv:2: topic A.1 document 4 repeats line 1" in m for m in messages)
    assert any("more than 1,000 rows" in m for m in messages)
    assert len(read_run(p, max_results=1000)) == 1000


def test_ties_are_kept(tmp_path):
    p = tmp_path / "r.tsv"
    p.write_text("A.1 4 1 1.0 r\nA.1 5 2 1.0 r\n")
    assert read_run(p).docno.tolist() == ["4", "5"]


def test_validate_refuses_nan_and_unknown_topics():
    bad = results().assign(score=[1.0, float("nan"), 2.0])
    with pytest.raises(InputError, match="not finite"):
        validate_run(bad)
    with pytest.raises(InputError, match="not in the topics"):
        validate_run(results(), topics=["A.1"])
    with pytest.raises(InputError, match="empty run"):
        validate_run(results().iloc[:0])


def test_write_is_atomic_on_failure(tmp_path):
    p = write_run(results(), tmp_path / "keep.tsv")
    before = p.read_text()
    with pytest.raises(InputError):
        write_run(results().assign(score=[1.0, float("inf"), 2.0]), p)
    assert p.read_text() == before
    assert [f.name for f in tmp_path.iterdir()] == ["keep.tsv"]


@pytest.mark.realdata
def test_real_trec_six_column_run():
    run = read_run(real_path("arqmath", "runs", "arqmath1", "prim_MIRMU-task1-Ensemble-auto-both-A.tsv"))
    assert len(run) == 13905 and run.qid.nunique() == 77


@pytest.mark.realdata
def test_real_five_column_run():
    run = read_run(real_path("arqmath", "runs", "arqmath1", "MIRMU-posthoc-ensemble-all-runs-task1.tsv"))
    assert len(run) == 98000 and set(run.name) == {"Run_Ensemble_0"}


# --- streaming reader == the documented semantics, worked out with pandas on all rows

def _reference(rows: list[tuple], max_results: int) -> tuple[pd.DataFrame, list[str]]:
    """Read all rows, drop repeated pairs (first kept), sort, cut: what read_run promises."""
    run = pd.DataFrame(rows, columns=["qid", "docno", "rank", "score", "name"])
    messages = []
    kept = run.drop_duplicates(["qid", "docno"], keep="first")
    if len(kept) < len(run):
        repeat = int(run.duplicated(["qid", "docno"]).to_numpy().argmax())
        q, d = run.qid[repeat], run.docno[repeat]
        earlier = int(((run.qid == q) & (run.docno == d)).to_numpy().argmax())
        messages.append(f"topic {q} document {d} repeats line {earlier + 1}; kept the first "
                        f"row of each of {len(run) - len(kept)} repeated (topic, document) "
                        "row(s) (trec_eval refuses a run with repeated documents)")
    kept = kept.sort_values(["qid", "score", "rank"], ascending=[True, False, True],
                            kind="stable")
    counts = kept.groupby("qid", sort=False).cumcount()
    if (counts >= max_results).any():
        messages.append(f"kept the best {max_results} rows of topics with more")
    return kept[counts < max_results].reset_index(drop=True), messages


def _read_with_warnings(path, **kwargs):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        run = read_run(path, **kwargs)
    return run, [str(x.message).split(": ", 1)[1] for x in w]  # after "path:line"


row_strategy = st.tuples(st.sampled_from(["A.1", "A.2", "A.10", "B.1"]),
                         st.sampled_from([str(i) for i in range(8)]),
                         st.integers(-2, 6), st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.0, -1.5]),
                         st.just("r"))


@given(rows=st.lists(row_strategy, min_size=1, max_size=60), max_results=st.integers(1, 5))
def test_streamed_reading_matches_reading_everything(rows, max_results):
    p = Path(tempfile.mkdtemp()) / "r.tsv"
    p.write_text("".join(f"{q}\t{d}\t{r}\t{s!r}\t{n}\n" for q, d, r, s, n in rows))
    run, messages = _read_with_warnings(p, max_results=max_results)
    expected, expected_messages = _reference(rows, max_results)
    pd.testing.assert_frame_equal(run, expected)
    assert messages == expected_messages


def test_a_repeat_of_a_cut_row_stays_dropped(tmp_path):
    # the first row of pair (A.1, x) is cut (worse than two others); its later repeat
    # scores best but is a repeat: it must not come back
    p = tmp_path / "r.tsv"
    p.write_text("A.1 x 1 0.1 r\nA.1 a 2 5 r\nA.1 b 3 4 r\nA.1 x 4 9 r\n")
    run, messages = _read_with_warnings(p, max_results=2)
    assert run["docno"].tolist() == ["a", "b"]
    assert messages[0].startswith("topic A.1 document x repeats line 1")
    assert messages[1:] == ["kept the best 2 rows of topics with more"]


def test_hash_collisions_drop_nothing(tmp_path, monkeypatch):
    # every pair gets the same fingerprint: the second pass tells pairs apart exactly
    import mathir.runs.trec as arqmath

    monkeypatch.setattr(arqmath, "hash", lambda pair: 7, raising=False)
    p = tmp_path / "r.tsv"
    p.write_text("A.1 x 1 1.0 r\nA.1 y 2 3.0 r\nA.2 x 1 2.0 r\nA.1 x 3 5.0 r\n")
    run, messages = _read_with_warnings(p)
    assert run[["qid", "docno", "score"]].values.tolist() == [["A.1", "y", 3.0],
                                                              ["A.1", "x", 1.0],
                                                              ["A.2", "x", 2.0]]
    assert len(messages) == 1 and messages[0].startswith("topic A.1 document x repeats line 1")


@pytest.mark.parametrize("fmt", ["arqmath", "trec"])
def test_a_gz_name_is_written_compressed(tmp_path, fmt):
    # write_run(res, "x.trec.gz") wrote plain text under a .gz name
    import gzip

    p = write_run(results(), tmp_path / "x.trec.gz", name="x", format=fmt)
    assert p.read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress(p.read_bytes()).decode().count("\n") == 3
    assert read_run(p).docno.tolist() == ["7", "5", "5"]


def test_formula_results_are_written_as_a_task2_run(tmp_path):
    # mathir.write_run on a Task 2 frame wrote the Task 1 format (post ids lost), which
    # `mathir evaluate arqmath-task2` then refused
    import mathir
    from mathir.runs.arqmath_task2 import read_task2_run

    res = pd.DataFrame({"qid": ["B.1", "B.1"], "docno": ["70", "71"], "post_id": ["7", "8"],
                        "visual_id": ["1", "2"], "score": [2.0, 1.0]})
    p = mathir.write_run(res, tmp_path / "tuples.tsv")
    assert p.read_text().splitlines()[0] == "B.1\t70\t7\t1\t2.0\ttuples"
    assert read_task2_run(p).post_id.tolist() == ["7", "8"]
    with pytest.raises(InputError, match="formula results"):
        mathir.write_run(res, tmp_path / "t.tsv", format="trec")
    with pytest.raises(InputError, match="formula results"):
        write_run(res, tmp_path / "t.tsv")  # the Task 1 writer says it cannot
