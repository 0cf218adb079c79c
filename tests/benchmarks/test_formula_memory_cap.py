"""benchmarks/formula_memory_cap.py: the cgroup it makes really limits the search."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from benchmarks import formula_memory_cap as cap
from mathir.indexing.formula_index import FormulaIndex
from mathir.samples import arqmath_sample


def test_memory_cgroup_of_v1_and_v2_lines():
    text = "9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n"
    assert cap.memory_cgroup_parent(text, Path("/cg")) == (Path("/cg/memory/process_api/abc"), 1)
    assert cap.memory_cgroup_parent("0::/user.slice/u.scope\n", Path("/cg")) == (
        Path("/cg/user.slice/u.scope"), 2)
    with pytest.raises(cap.CgroupUnavailable):
        cap.memory_cgroup_parent("1:cpu:/\n", Path("/cg"))


def test_cgroup_figures_v1_and_v2(tmp_path):
    (tmp_path / "memory.max_usage_in_bytes").write_text(str(300 * 2**20))
    (tmp_path / "memory.failcnt").write_text("17\n")
    (tmp_path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert cap.cgroup_figures(tmp_path, 1) == {"cgroup_peak_mb": 300, "limit_reached": 17,
                                               "oom_kills": 2}
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "memory.peak").write_text(str(5 * 2**20))
    (v2 / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n")
    assert cap.cgroup_figures(v2, 2) == {"cgroup_peak_mb": 5, "limit_reached": 4,
                                         "oom_kills": 1}


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory):
    try:  # skip, with the reason, where no memory cgroup can be made
        group, _ = cap.make_cgroup(2**30)
        group.rmdir()
    except cap.CgroupUnavailable as e:
        pytest.skip(f"no writable memory cgroup here: {e}")
    root = tmp_path_factory.mktemp("cap")
    sample = arqmath_sample()
    FormulaIndex.build(sample.formulas, root / "index", quiet=True)
    (root / "data" / "topics" / "task2").mkdir(parents=True)
    shutil.copy(sample.task2_topics, root / "data" / "topics" / "task2" / "Topics_Task2_s.xml")
    return root


def _run(root: Path, limit_mb: int, capsys) -> tuple[int, dict]:
    code = cap.main(["--index", str(root / "index"), "--data", str(root / "data"),
                     "--limit-mb", str(limit_mb), "--queries", "5", "--rounds", "1", "--json"])
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # --json: one line and nothing else
    return code, json.loads(out)


def test_search_within_the_limit(sample_index, capsys):
    code, report = _run(sample_index, 1024, capsys)
    assert code == 0 and report["oom_kills"] == 0
    assert len(report["rounds"]) == 1 and report["rounds"][0]["median_ms"] > 0
    assert 0 < report["cgroup_peak_mb"] <= 1024
    assert report["anon_rss_mb"] <= report["rss_mb"]
    # this process's cgroup is gone (another xdist worker may be capping its own search
    # beside it: the cgroups are named by the process that makes them)
    parent = cap.memory_cgroup_parent(Path("/proc/self/cgroup").read_text())[0]
    assert not (parent / f"mathir-memory-cap-{os.getpid()}").exists()


def test_a_limit_too_small_kills_the_search_and_says_so(sample_index, capsys):
    # Python with pandas and PISA needs far more than 64 MB: if the cgroup did not limit
    # the search, it would report query times measured without any limit.
    code, report = _run(sample_index, 64, capsys)
    assert code == 1
    assert report["exitcode"] != 0 and report["oom_kills"] >= 1
    assert "rounds" not in report
