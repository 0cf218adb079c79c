"""Interrupted and concurrent work never loses or corrupts what a user already has."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mathir.indexing.answer_index import AnswerIndex
from mathir.runs.trec import read_run

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
# Runs `mathir` ROUNDS times in one process (argv: ROUNDS, then the mathir arguments),
# printing SEPARATOR after each: many experiments without paying the imports each time.
SEPARATOR = "=== end of round ==="
LOOP = textwrap.dedent(f"""
    import sys
    from mathir.cli import main
    for _ in range(int(sys.argv[1])):
        status = main(sys.argv[2:])
        print({SEPARATOR!r}, flush=True)
        if status:
            sys.exit(status)
""")


@pytest.mark.slow  # among the longest: left out of the quick loop (-m 'not slow')
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


def _half_the_answers(sample, folder: Path) -> Path:
    """A copy of the sample collection without every second answer (other scores)."""
    lines = sample.posts.read_text(encoding="utf-8").splitlines(keepends=True)
    answers = [i for i, line in enumerate(lines) if 'PostTypeId="2"' in line]
    drop = set(answers[1::2])
    posts = folder / "Posts.V1.3.xml"
    posts.parent.mkdir(parents=True)
    posts.write_text("".join(x for i, x in enumerate(lines) if i not in drop), encoding="utf-8")
    return posts


def _experiments(out: Path, collections: list[Path | None], rounds: int) -> list[list[dict]]:
    """Run one looping `mathir experiment` process per collection, all at once, into
    ``out``; the JSON table each process printed in each round."""
    procs = []
    for collection in collections:
        argv = ["experiment", "arqmath-task1", "--out", str(out), "--quiet", "--format", "json"]
        argv += ["--collection", str(collection)] if collection else []
        procs.append(subprocess.Popen([sys.executable, "-c", LOOP, str(rounds), *argv],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=ENV, cwd=out.parent))
    outs = [p.communicate(timeout=900) for p in procs]
    assert [p.returncode for p in procs] == [0] * len(procs), [e[-2000:] for _, e in outs]
    return [[json.loads(t) for t in o.split(SEPARATOR)[:-1]] for o, _ in outs]


@pytest.mark.slow
def test_two_different_experiments_into_one_runs_folder_score_their_own_runs(tmp_path, sample,
                                                                            capsys):
    # Same task, same --out, same data label ("sample"), different collections: both
    # write arqmath-task1/sample/{tfidf,bm25}.tsv. Each must print the scores of its own
    # runs (before the fix, one in a few rounds printed the other's: P'@10 0.18, not 0.37).
    other = _half_the_answers(sample, tmp_path / "other")
    # each experiment alone: the same `mathir experiment`, in this process (the processes
    # below are what runs concurrently)
    from mathir.cli import main

    expected = []
    for i, collection in enumerate([None, other]):
        argv = ["experiment", "arqmath-task1", "--out", str(tmp_path / f"alone{i}"), "--quiet",
                "--format", "json"]
        argv += ["--collection", str(collection)] if collection else []
        capsys.readouterr()
        assert main(argv) == 0
        expected.append(json.loads(capsys.readouterr().out))
    assert expected[0]["tfidf"]["P'@10"] != expected[1]["tfidf"]["P'@10"]
    rounds = 15
    printed = _experiments(tmp_path / "shared", [None, other], rounds)
    for mine, tables in zip(expected, printed, strict=True):
        assert len(tables) == rounds
        wrong = [i for i, t in enumerate(tables) if t != mine]
        assert wrong == [], f"rounds {wrong} printed another experiment's scores"
    folder = tmp_path / "shared" / "arqmath-task1" / "sample"
    for name in ("bm25", "tfidf"):
        assert read_run(folder / f"{name}.tsv").qid.nunique() == 10
        manifest = json.loads((folder / f"{name}.manifest.json").read_text())
        assert manifest["data"]["collection"]["path"] in (str(sample.posts.resolve()),
                                                          str(other.resolve()))
    leftovers = [p.name for p in (tmp_path / "shared").rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


@pytest.mark.slow
def test_identical_experiments_into_one_runs_folder_agree(tmp_path):
    tables = _experiments(tmp_path / "runs", [None, None], 2)
    assert tables[0] == tables[1]


def _experiment_stuck_in_run_write(out: Path) -> subprocess.Popen:
    """`mathir experiment` (through the CLI's main) that stops while a run file is half
    written: it prints "writing" then sleeps inside the temporary file."""
    script = textwrap.dedent(f"""
        import contextlib, sys, time
        import mathir.runs.trec as runs
        from mathir.cli import main
        atomic_file = runs.atomic_file

        @contextlib.contextmanager
        def stuck(path, *args, **kwargs):
            with atomic_file(path, *args, **kwargs) as f:
                f.write("A.1\\t1\\t1\\t1.0\\thalf\\n")
                f.flush()
                print("writing", flush=True)
                time.sleep(120)
                yield f

        runs.atomic_file = stuck
        sys.exit(main(["experiment", "arqmath-task1", "--out", {str(out)!r}, "--quiet",
                       "--no-reuse"]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)
    assert proc.stdout.readline().strip() == "writing", proc.communicate()[1][-2000:]
    return proc


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


def test_sigterm_during_experiment_removes_its_temporary_and_keeps_the_old_run(tmp_path):
    out = tmp_path / "runs"
    from mathir.cli import main

    assert main(["experiment", "arqmath-task1", "--out", str(out), "--quiet"]) == 0
    run = out / "arqmath-task1" / "sample" / "tfidf.tsv"
    before = run.read_bytes()
    proc = _experiment_stuck_in_run_write(out)
    assert _temporaries(out)  # the half-written run
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert err.strip().splitlines()[-1] == "error: terminated" and "Traceback" not in err
    assert _temporaries(out) == []
    assert run.read_bytes() == before


def test_next_experiment_removes_temporaries_of_killed_runs(tmp_path):
    out = tmp_path / "runs"
    proc = _experiment_stuck_in_run_write(out)
    left = _temporaries(out)
    assert len(left) == 1 and left[0].startswith(f".tfidf.tsv.{proc.pid}-")
    proc.send_signal(signal.SIGKILL)  # no chance to clean up
    proc.communicate()
    assert _temporaries(out) == left
    from mathir.cli import main

    assert main(["experiment", "arqmath-task1", "--out", str(out), "--quiet"]) == 0
    assert _temporaries(out) == []


def test_sigterm_ends_a_command_stuck_in_native_code():
    # The handler runs only when the main thread executes Python code; PISA can sit in
    # C++ for minutes. A watchdog thread then ends the process after a grace period.
    script = textwrap.dedent("""
        import ctypes, signal, sys
        import mathir.cli as cli

        def stuck(args):
            # SIGTERM now goes to another thread; the main thread waits in C forever.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            print("stuck", flush=True)
            ctypes.CDLL(None).pause()

        cli.COMMANDS["demo"] = stuck
        sys.exit(cli.main(["demo"]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)
    assert proc.stdout.readline().strip() == "stuck"
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=120)  # a hang guard, not a timing assertion
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM and err == "error: terminated\n"
