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
