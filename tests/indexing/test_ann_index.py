"""Approximate dense search (mathir.indexing.ann_index): recall against the exhaustive
scan on a small synthetic set, reuse, and the dense pipeline's search argument."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mathir.errors import InputError

pytest.importorskip("faiss")
pyterrier_dr = pytest.importorskip("pyterrier_dr")


@pytest.fixture(scope="module")
def flex(tmp_path_factory):
    """5,000 unit vectors in 50 clusters (as embeddings cluster), in a FlexIndex."""
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((50, 64))
    vecs = centres[rng.integers(0, 50, 5000)] + 0.6 * rng.standard_normal((5000, 64))
    vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype("f4")
    path = tmp_path_factory.mktemp("ann") / "flex"
    pyterrier_dr.FlexIndex(str(path), verbose=False).indexer(mode="overwrite").index(
        {"docno": f"d{i}%p0", "doc_vec": v} for i, v in enumerate(vecs))
    queries = centres[:20] + 0.6 * rng.standard_normal((20, 64))
    return path, vecs, (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype("f4")


@pytest.mark.parametrize("kind, params", [("hnsw", {"M": 16, "ef_construction": 40}),
                                          ("ivf", {"nlist": 64, "nprobe": 16})])
def test_recall_against_the_exhaustive_scan(flex, kind, params):
    from mathir.indexing.ann_index import AnnIndex

    path, vecs, queries = flex
    ann = AnnIndex.build(path, kind, **params)
    scores, ids = ann.search(queries, 100)
    exact = np.argsort(-(queries @ vecs.T), axis=1)[:, :100]
    recall = np.mean([len(set(a) & set(b)) / 100 for a, b in zip(ids, exact, strict=True)])
    assert recall >= 0.95
    # rescored: the scores are the exact cosines, best first
    np.testing.assert_allclose(scores[0], vecs[ids[0]] @ queries[0], rtol=1e-5)
    assert (np.diff(scores, axis=1) <= 1e-7).all()


def test_float16_rescoring_keeps_the_candidates_and_scores_within_1e_4(flex):
    from mathir.indexing.ann_index import AnnIndex

    path, vecs, queries = flex
    exact_ann = AnnIndex.build(path, "ivf", nlist=64, nprobe=16)
    half_ann = AnnIndex.build(path, "ivf", nlist=64, nprobe=16, f16=1)
    assert half_ann.path == exact_ann.path  # the same FAISS index, another rescoring
    half = np.fromfile(path.parent / (path.name + "-f16") / "vecs.f2", dtype="<f2")
    np.testing.assert_array_equal(half.reshape(vecs.shape), vecs.astype("f2"))
    scores, ids = half_ann.search(queries, 100)
    exact_scores, exact_ids = exact_ann.search(queries, 100)
    assert np.mean([len(set(a) & set(b)) / 100 for a, b in zip(ids, exact_ids, strict=True)]
                   ) >= 0.99
    np.testing.assert_allclose(scores[0], vecs[ids[0]] @ queries[0], atol=1e-4)
    assert not np.array_equal(scores, exact_scores)  # rescored from the copies, not f4
    # changing f16 on an open index switches the vectors it rescores with
    half_ann.params["f16"] = 0
    np.testing.assert_array_equal(half_ann.search(queries, 100)[0], exact_scores)


def test_half_vectors_follow_a_changed_flex_index(tmp_path):
    from mathir.indexing.ann_index import half_vectors

    path = tmp_path / "flex"
    for seed in (1, 2):
        vecs = np.random.default_rng(seed).standard_normal((300, 8)).astype("f4")
        pyterrier_dr.FlexIndex(str(path), verbose=False).indexer(mode="overwrite").index(
            {"docno": f"d{i}%p0", "doc_vec": v} for i, v in enumerate(vecs))
        np.testing.assert_array_equal(half_vectors(path), vecs.astype("f2"))


def test_search_specs_reach_the_index(flex):
    from mathir.indexing.ann_index import check_search, parse_search

    assert parse_search("ivf:nlist=64,nprobe=8") == ("ivf", {"nlist": 64, "nprobe": 8})
    assert check_search("ivf:nprobe=8,nlist=64") == "ivf:nlist=64,nprobe=8"
    for bad, message in [("ivf:nprobe", "nprobe needs a whole number"),
                         ("ivf:nprobe=-1", "nprobe needs a whole number"),
                         ("ivf:f16=2", "f16 is 0 or 1"),
                         ("exhaustive:nprobe=3", "exhaustive takes no parameters"),
                         ("hnsw:nprobe=3", "unknown hnsw parameter 'nprobe'")]:
        with pytest.raises(InputError, match=message):
            parse_search(bad)


def test_index_is_reused_and_checked(flex):
    from mathir.indexing.ann_index import AnnIndex

    path = flex[0]
    first = AnnIndex.build(path, "hnsw", M=16, ef_construction=40)
    stamp = (first.path / "index.faiss").stat().st_mtime_ns
    again = AnnIndex.build(path, "hnsw", M=16, ef_construction=40, ef_search=64)
    assert (again.path / "index.faiss").stat().st_mtime_ns == stamp
    assert again.params == {"ef_search": 64, "f16": 0}
    with pytest.raises(InputError, match="unknown hnsw parameter"):
        AnnIndex.build(path, "hnsw", nprobe=3)
    with pytest.raises(InputError, match="unknown approximate index"):
        AnnIndex.build(path, "lsh")


def test_retriever_frame(flex):
    import pandas as pd

    from mathir.indexing.ann_index import AnnIndex

    path, _, queries = flex
    retr = AnnIndex.build(path, "hnsw", M=16, ef_construction=40).retriever(10)
    res = retr(pd.DataFrame({"qid": ["1", "2"], "query_vec": list(queries[:2])}))
    assert list(res.columns) == ["qid", "docno", "docid", "score", "rank"]
    assert res.groupby("qid")["rank"].apply(list).tolist() == [list(range(10))] * 2


def test_dense_pipeline_with_hnsw_matches_exhaustive_on_the_sample(sample_index):
    from mathir.pipelines import neural

    topics = __import__("pandas").DataFrame({"qid": ["1"], "query": ["integration by parts"]})
    exact = neural.dense(sample_index, num_results=20)(topics)
    approx = neural.dense(sample_index, num_results=20, search="hnsw")(topics)
    assert "search='hnsw'" in repr(neural.dense(sample_index, search="hnsw"))
    assert set(approx["docno"]) == set(exact["docno"])
    np.testing.assert_allclose(approx["score"], exact["score"], rtol=1e-5)
    # a spec with parameters: the same answers, scores from the float16 copies
    spec = neural.dense(sample_index, num_results=20, search="hnsw: f16=1,ef_search=64")
    assert "search='hnsw:ef_search=64,f16=1'" in repr(spec)
    half = spec(topics)
    assert set(half["docno"]) == set(exact["docno"])
    np.testing.assert_allclose(half["score"], exact["score"], atol=1e-4)


def test_run_identity_differs_by_search_spec():
    from mathir.experiment.identity import pipeline_identity
    from mathir.pipelines import neural

    ids = [pipeline_identity("dense", neural.dense, kw) for kw in
           ({}, {"search": "ivf"}, {"search": "ivf:f16=1"}, {"search": "ivf:nprobe=64"})]
    assert len({json.dumps(i, sort_keys=True, default=str) for i in ids}) == 4


def test_cli_checks_the_spec_before_building_anything(tmp_path, capsys):
    from mathir import cli
    from mathir.cli.commands import pipeline_options

    args = cli.parser().parse_args(["experiment", "arqmath-task1",
                                     "--dense-search", "ivf: nprobe=64,f16=1"])
    assert pipeline_options(args) == {"search": "ivf:f16=1,nprobe=64"}
    status = cli.main(["experiment", "arqmath-task1", "--dense-search", "ivf:nprob=3",
                       "--out", str(tmp_path / "out"), "--index", str(tmp_path / "index")])
    assert status == 2
    assert "unknown ivf parameter 'nprob'; expected one of nlist, nprobe, f16" in \
        capsys.readouterr().err
    assert not (tmp_path / "index").exists()
