"""benchmarks/fingerprint_open.py: one JSON line; the old fingerprint is the one before
issue 30 (7); the floor is one stat per file."""

from __future__ import annotations

import json

from benchmarks import fingerprint_open as bench
from mathir import storage
from mathir.storage import fingerprints


def test_json_is_one_line_with_old_cold_and_reopen_figures(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(fingerprints, "RACY_NS", 20_000_000)  # what file_fingerprint reads
    monkeypatch.setattr(storage, "RACY_NS", 20_000_000)  # what the benchmark waits for
    monkeypatch.setenv("MATHIR_CACHE_DIR", str(tmp_path / "unused"))
    assert bench.main(["--posts", "300", "--thread-files", "50", "--repeats", "2",
                       "--workdir", str(tmp_path / "w"), "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    report = json.loads(out)
    for case, files in (("posts_xml", 1), ("thread_folder", 50)):
        figures = report[case]
        assert figures["files"] == files and figures["bytes"] > 0
        for key in ("old_seconds", "old_cpu_seconds", "cold_seconds", "cold_cpu_seconds",
                    "reopen_seconds", "reopen_cpu_seconds", "floor_seconds",
                    "floor_cpu_seconds"):
            assert figures[key] >= 0
    assert report["calibration_ms"] > 0


def test_the_old_fingerprint_misses_an_edit_that_keeps_size_and_mtime(tmp_path):
    import os

    f = tmp_path / "posts.xml"
    f.write_bytes(b"a" * (3 << 20))
    st = f.stat()
    before = bench.old_file_fingerprint(f)
    with open(f, "r+b") as out:
        out.seek(3 << 19)
        out.write(b"b")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert bench.old_file_fingerprint(f) == before  # what issue 30 (7) fixed


def test_the_floor_stats_every_entry_once(tmp_path):
    (tmp_path / "a").mkdir()
    for name in ("x", "a/y", "a/z"):
        (tmp_path / name).write_text(name)
    assert bench.stat_floor(tmp_path) == 4  # x, a, a/y, a/z
