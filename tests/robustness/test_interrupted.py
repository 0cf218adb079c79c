"""Interrupted and concurrent work never loses or corrupts what a user already has."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mathir.indexing.answer_index import AnswerIndex
from mathir.runs.arqmath import read_run

ROOT = Path(__file__).resolve().parents[2]


def test_killed_indexing_leaves_previous_index_and_next_build_works(tmp_path, sample):
    from benchmarks.index_mse import generate_posts

    index = tmp_path / "idx"
    AnswerIndex.build(sample.posts, index, quiet=True)
    big = tmp_path / "Posts.V1.3.xml"
    generate_posts(big, 60_000)
    code = ("import sys; from mathir.indexing.answer_index import AnswerIndex; "
            f"AnswerIndex.build({str(big)!r}, {str(index)!r}, quiet=True)")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    deadline = time.time() + 60
    while time.time() < deadline and not list(tmp_path.glob(".idx.*.tmp")):
        time.sleep(0.05)
    time.sleep(0.5)  # well inside the build
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert AnswerIndex(index).num_docs == 250  # the previous index is intact
    assert list(tmp_path.glob(".idx.*.tmp"))  # the killed build's temporary is left...
    rebuilt = AnswerIndex.build(big, index, quiet=True)  # ...and cleaned by the next build
    assert rebuilt.num_docs > 250 and not list(tmp_path.glob(".idx.*.tmp"))


def test_two_experiments_into_one_runs_folder(tmp_path):
    cmd = [sys.executable, "-m", "mathir.cli", "experiment", "arqmath-task1", "--out",
           str(tmp_path / "runs"), "--quiet", "--format", "json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-1000:] for o in outs]
    assert outs[0][0] == outs[1][0]  # same table
    for name in ("bm25", "tfidf"):
        run = read_run(tmp_path / "runs" / "arqmath-task1" / "sample" / f"{name}.tsv")
        assert run.qid.nunique() == 10
    leftovers = [p.name for p in (tmp_path / "runs").rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []
