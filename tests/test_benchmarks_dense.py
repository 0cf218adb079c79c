"""The projection arithmetic of benchmarks/dense_encoding.py (numbers given, no timing)."""

from __future__ import annotations

import pytest

from benchmarks.dense_encoding import GB, distribution, project

MEASURED = {"answers": 1444, "passages": 2166, "encode_wall_s": 108.3, "encode_cpu_s": 205.77,
            "vecs_bytes": 2166 * 384 * 4, "docnos_bytes": 45_000, "other_bytes": 75}


def test_projecting_to_the_measured_size_gives_back_the_measurement():
    p = project(**MEASURED, target=1444)
    assert p["passages"] == 2166
    assert p["encoding_hours"] == pytest.approx(108.3 / 3600, abs=1e-3)
    assert p["encoding_cpu_hours"] == pytest.approx(205.77 / 3600, abs=1e-3)
    assert p["vectors_gb"] == pytest.approx(2166 * 1536 / GB, abs=1e-3)


def test_arqmath_size():
    p = project(**MEASURED)  # 1,400,000 answers
    assert p["passages_per_answer"] == 1.5
    assert p["passages"] == 2_100_000
    # 2.1M passages at 108.3 s per 2,166 passages (0.05 s each): 105,000 s
    assert p["encoding_hours"] == pytest.approx(29.167, abs=1e-3)
    assert p["encoding_cpu_hours"] == pytest.approx(2_100_000 * 0.095 / 3600, abs=1e-3)
    assert p["vectors_gb"] == pytest.approx(2_100_000 * 1536 / 1e9, abs=1e-3)  # 3.226
    docnos = 2_100_000 * 45_000 / 2166 / 1e9
    assert p["docnos_gb"] == pytest.approx(docnos, abs=1e-3)
    # disk counts every file; a search keeps only the vectors and the docnos resident
    other = 2_100_000 * 75 / 2166 / 1e9
    assert p["disk_gb"] == pytest.approx(p["vectors_gb"] + docnos + other, abs=2e-3)
    assert p["search_resident_gb"] == pytest.approx(p["vectors_gb"] + docnos, abs=2e-3)
    assert "scan_s" not in p


def test_scan_seconds_scale_with_the_projected_passages():
    p = project(**MEASURED, scan_passages=200_000, scan_s={"batch_1": 0.08, "batch_10": 0.3})
    assert p["scan_s"] == {"batch_1": pytest.approx(0.84), "batch_10": pytest.approx(3.15)}


def test_longer_answers_scale_everything_linearly():
    short = project(**MEASURED)
    long = project(**{**MEASURED, "passages": 4332, "encode_wall_s": 216.6,
                      "encode_cpu_s": 411.54, "vecs_bytes": 2 * MEASURED["vecs_bytes"],
                      "docnos_bytes": 90_000, "other_bytes": 150})
    for key in ("passages", "encoding_hours", "vectors_gb", "disk_gb"):
        assert long[key] == pytest.approx(2 * short[key], rel=1e-3)


def test_nothing_measured_is_an_error():
    with pytest.raises(ValueError, match="nothing was measured"):
        project(**{**MEASURED, "passages": 0})


def test_distribution_percentiles():
    d = distribution([1] * 90 + [5] * 10)
    assert (d["mean"], d["p50"], d["min"], d["max"]) == (1.4, 1.0, 1, 5)
    assert d["p95"] == 5.0
