"""mathir.storage.files: atomic files and folders, dead writers' temporaries, the writers' lock."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from mathir.storage import atomic_directory, atomic_file


def test_atomic_file_leaves_old_content_on_exception(tmp_path):
    p = tmp_path / "out.tsv"
    p.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_file(p) as f:
        f.write("half")
        raise RuntimeError("boom")
    assert p.read_text() == "old\n" and os.listdir(tmp_path) == ["out.tsv"]


def test_atomic_directory_replaces_whole(tmp_path):
    d = tmp_path / "index"
    with atomic_directory(d) as tmp:
        (tmp / "a").write_text("1")
    with pytest.raises(RuntimeError), atomic_directory(d) as tmp:
        (tmp / "b").write_text("2")
        raise RuntimeError
    assert sorted(os.listdir(d)) == ["a"] and os.listdir(tmp_path) == ["index"]


def test_killed_writer_leaves_previous_file_intact(tmp_path):
    target = tmp_path / "run.tsv"
    target.write_text("previous\n")
    script = textwrap.dedent(f"""
        import time
        from mathir.storage import atomic_file
        with atomic_file({str(target)!r}) as f:
            for i in range(10**6):
                f.write("A.1\\t%d\\t1\\t1.0\\tx\\n" % i)
                if i == 1000:
                    print("writing", flush=True)
                    time.sleep(30)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert target.read_text() == "previous\n"



def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _host_tag(folder) -> str:
    """The host part of this machine's temporary names (``.NAME.PID-HOST.RANDOM.tmp``)."""
    with atomic_file(folder / "probe") as f:
        f.write("x")
        (name,) = [n for n in os.listdir(folder) if n.startswith(".probe.")]
    (folder / "probe").unlink()
    pid, host = name.split(".")[2].split("-")
    assert int(pid) == os.getpid()
    return host


def test_next_writer_removes_temporaries_of_dead_writers_only(tmp_path):
    host = _host_tag(tmp_path)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        names = {
            "dead": f".run.tsv.{_dead_pid()}-{host}.abc123_x.tmp",
            "live": f".run.tsv.{live.pid}-{host}.abc123_x.tmp",  # a concurrent writer's
            "other host": f".run.tsv.{_dead_pid()}-00000000.abc123_x.tmp",
            "other file": f".run.tsv.gz.{_dead_pid()}-{host}.abc123_x.tmp",
            "legacy": ".run.tsv.k3j_x9q1.tmp",  # named by mathir before pids were
        }
        for n in names.values():
            (tmp_path / n).write_text("half")
        old_dir = tmp_path / f".run.tsv.{_dead_pid()}-{host}.old"  # atomic_directory's
        old_dir.mkdir()
        (old_dir / "x").write_text("x")
        with atomic_file(tmp_path / "run.tsv") as f:
            f.write("new\n")
        left = sorted(os.listdir(tmp_path))
        assert left == sorted([names["live"], names["other host"], names["other file"],
                               "run.tsv"])
    finally:
        live.kill()
        live.wait()


def test_atomic_directory_removes_dead_writers_temporary_folders(tmp_path):
    host = _host_tag(tmp_path)
    dead = tmp_path / f".idx.{_dead_pid()}-{host}.abc123_x.tmp"
    dead.mkdir()
    (dead / "half").write_text("x")
    with atomic_directory(tmp_path / "idx") as d:
        (d / "a").write_text("1")
    assert sorted(os.listdir(tmp_path)) == ["idx"]

def test_sigterm_in_the_cli_runs_finally_blocks(tmp_path):
    target = tmp_path / "run.tsv"
    target.write_text("previous\n")
    script = textwrap.dedent(f"""
        import sys, time
        import mathir.cli as cli
        from mathir.storage import atomic_file

        def write(args):
            with atomic_file({str(target)!r}) as f:
                f.write("half")
                print("writing", flush=True)
                time.sleep(30)

        cli.COMMANDS["demo"] = write
        sys.exit(cli.main(["demo"]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and err.strip() == "error: terminated"
    assert sorted(os.listdir(tmp_path)) == ["run.tsv"] and target.read_text() == "previous\n"


def test_walk_glob_follows_linked_folders_once(tmp_path):
    from mathir.storage import walk_glob

    real = tmp_path / "real" / "deep"
    real.mkdir(parents=True)
    (real / "Posts.V1.3.xml").write_text("x")
    data = tmp_path / "data"
    data.mkdir()
    (data / "linked").symlink_to(tmp_path / "real", target_is_directory=True)
    (data / "loop").symlink_to(data, target_is_directory=True)  # a cycle
    (tmp_path / "real" / "up").symlink_to(tmp_path, target_is_directory=True)  # another
    assert sorted(data.rglob("Posts.V1.3.xml")) == []  # what Path.rglob finds
    hits = walk_glob(data, "Posts.V1.3.xml")
    assert hits == [data / "linked" / "deep" / "Posts.V1.3.xml"]
    assert walk_glob(data, "deep") == [data / "linked" / "deep"]  # folders match too


# --- build_or_reuse: the one build protocol of every index ---------------------------



def test_the_writers_lock_excludes_and_leaves_no_file(tmp_path):
    """The holder removes the lock file before it unlocks (before: every run and index left
    its ``.NAME.lock`` behind, a failed pipeline's too); a waiter that gets the removed
    file locks the new one, so writers still exclude each other."""
    import threading

    from mathir.storage import exclusive_lock

    counter = tmp_path / "count.txt"
    counter.write_text("0")
    inside = []

    def work():
        for _ in range(40):
            with exclusive_lock(counter):
                inside.append(1)
                assert len(inside) == 1  # nobody else holds it
                counter.write_text(str(int(counter.read_text()) + 1))
                inside.pop()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.read_text() == "160"
    assert sorted(os.listdir(tmp_path)) == ["count.txt"]
    with pytest.raises(RuntimeError), exclusive_lock(counter):
        raise RuntimeError("a failing writer")
    assert sorted(os.listdir(tmp_path)) == ["count.txt"]
