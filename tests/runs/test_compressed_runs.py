"""Runs saved by pt.Experiment(save_dir=...) are gzip files: every run reader takes them."""

import gzip

import pytest

from mathir.errors import InputError
from mathir.readers.tabular import iter_lines
from mathir.runs.trec import read_run, write_run
from mathir.runs.worldtree import read_run as read_worldtree_run


def test_pt_experiment_save_dir_runs_read_and_score_the_same(tmp_path):
    import pyterrier as pt

    import mathir

    s = mathir.arqmath_sample()
    index = mathir.AnswerIndex.build(s.posts, tmp_path / "idx", quiet=True)
    topics, qrels = mathir.read_task1_topics(s.task1_topics), mathir.read_qrels(s.task1_qrels)
    bm25 = mathir.bm25(index)
    pt.Experiment([bm25], topics, qrels, ["ndcg"], names=["bm25"], save_dir=str(tmp_path))
    saved = tmp_path / "bm25.res.gz"
    assert saved.read_bytes()[:2] == b"\x1f\x8b"
    write_run(bm25(topics), tmp_path / "bm25.tsv")
    plain = mathir.compare({"bm25": read_run(tmp_path / "bm25.tsv")}, qrels)
    compressed = mathir.compare({"bm25": read_run(saved)}, qrels)
    assert compressed.round(6).equals(plain.round(6))


def test_gzip_is_recognised_by_content_not_name(tmp_path):
    p = tmp_path / "run.txt"
    p.write_bytes(gzip.compress(b"\xef\xbb\xbfq1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n"))
    assert [line for _, line in iter_lines(p)] == ["q1 Q0 d1 1 2.0 r", "q1 Q0 d2 2 1.0 r"]
    assert read_worldtree_run(p)["docno"].tolist() == ["d1", "d2"]


def test_a_truncated_gzip_run_is_one_input_error(tmp_path):
    p = tmp_path / "run.res.gz"
    p.write_bytes(gzip.compress(b"q1 Q0 d1 1 2.0 r\n" * 10000)[:200])
    with pytest.raises(InputError, match="gzip"):
        read_run(p)
