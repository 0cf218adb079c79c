"""benchmarks/dense_encoding.py and index_mse.py: projection arithmetic, vector agreement,
repeated encoding and option checks (numbers given, nothing timed)."""

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


def test_cosine_agreement_of_vectors_with_themselves_and_others():
    import numpy as np

    from benchmarks.dense_encoding import cosine_agreement

    rng = np.random.default_rng(0)
    a = rng.standard_normal((50, 8)).astype("f4")
    same = cosine_agreement(a, a.copy())
    assert same["min"] == pytest.approx(1.0) and same["max_abs_diff"] == 0.0
    moved = a.copy()
    moved[7] = -moved[7]  # one passage's vector turned around
    assert cosine_agreement(moved, a)["min"] == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="not the same passages"):
        cosine_agreement(a[:49], a)


@pytest.mark.slow
def test_repeated_encoding_writes_every_copy_with_the_same_vectors(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyterrier_dr")
    import numpy as np

    from benchmarks.dense_encoding import encode_repeated, flex_vectors
    from mathir.neural.bi_encoder import load_bi_encoder

    passages = pd.DataFrame({"docno": ["a%p0", "a%p1", "b%p0"],
                             "text": ["Let $x^2$ be", "a square.", "Integrals"]})
    encoder = load_bi_encoder(batch_size=2, device="cpu")
    out = encode_repeated(passages, 3, encoder, 2, tmp_path / "flex")
    assert out["passages"] == 9 and out["repeat"] == 3
    vectors = flex_vectors(tmp_path / "flex")
    assert vectors.shape == (9, 384)
    for k in (1, 2):  # the k-th copy is the passages encoded again
        np.testing.assert_allclose(vectors[3 * k:3 * k + 3], vectors[:3], atol=1e-5)
    assert not np.allclose(vectors[0], vectors[2])


@pytest.mark.parametrize("argv, message", [
    (["--texts", "t", "--answers", "5"], "with --texts every answer"),
    (["--texts", "t", "--repeat", "-1"], "--repeat must be at least 0"),
    (["--texts", "t", "--compare-vectors", "nowhere.npy"], "no vectors at"),
])
def test_dense_benchmark_refuses_bad_options(argv, message, capsys):
    from benchmarks.dense_encoding import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--shards", "2"], "--shards needs --scoring bm25-impacts"),
    (["--shards", "0", "--scoring", "bm25-impacts"], "--shards must be at least 1"),
])
def test_answer_benchmark_refuses_shards_of_float_bm25(argv, message, capsys):
    from benchmarks.index_mse import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_ann_benchmark_splits_search_specs():
    from benchmarks.dense_ann import split_specs

    assert split_specs("hnsw,ivf") == ["hnsw", "ivf"]  # the old form still reads
    assert split_specs("ivf,ivf:f16=1,nprobe=64,hnsw") == ["ivf", "ivf:f16=1,nprobe=64", "hnsw"]
