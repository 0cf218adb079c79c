"""BM25 impacts from a whole collection's statistics: shards searched side by side give
the unsharded ranking exactly (run files byte for byte), ties included."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mathir.errors import InputError
from mathir.indexing.formula_index import FormulaIndex
from mathir.indexing.pisa_impacts import (
    LEVELS,
    ImpactShards,
    check_query_weight,
    idf_weights,
    write_impacts,
)
from mathir.indexing.pisa_postings import write_pisa_index
from mathir.pipelines.formula import FormulaRetriever, formula_tuples, formula_words
from mathir.runs.formats import write_run


@pytest.fixture(scope="module")
def impact_indexes(tmp_path_factory):
    from mathir.samples import arqmath_sample

    source = arqmath_sample().formulas
    root = tmp_path_factory.mktemp("impacts")
    return {n: FormulaIndex.build(source, root / f"shards{n}", quiet=True,
                                  scoring="bm25-impacts", shards=n) for n in (1, 3)}


@pytest.fixture(scope="module")
def queries(sample):
    from mathir.readers.formula_tsv import iter_formula_index
    from mathir.topics.arqmath import read_task2_topics

    topics = read_task2_topics(sample.task2_topics)
    # And formulas of the collection itself: each ties with its own copies at the top.
    formulas = [r.formula for r in iter_formula_index(sample.formulas)][::40]
    extra = pd.DataFrame({"qid": [f"X.{i}" for i in range(len(formulas))], "query": formulas})
    return pd.concat([topics[["qid", "query"]], extra], ignore_index=True)


@pytest.mark.parametrize("pipeline", [formula_tuples, formula_words])
@pytest.mark.parametrize("k", [3, 100])
def test_three_shards_write_the_run_of_one(impact_indexes, queries, pipeline, k, tmp_path):
    one, three = impact_indexes[1], impact_indexes[3]
    assert len(three.impacts("tuples")["shard_docs"]) == 3
    runs = []
    for n, index in ((1, one), (3, three)):
        path = tmp_path / f"shards{n}.tsv"
        write_run(pipeline(index, k).transform(queries), path, name="impacts")
        runs.append(path.read_bytes())
    assert runs[0] == runs[1]
    assert len(runs[0].splitlines()) > 2 * len(queries)


def test_impacts_use_the_statistics_of_every_shard(impact_indexes):
    one, three = (impact_indexes[n].impacts("tuples") for n in (1, 3))
    for key in ("num_docs", "avg_length", "num_terms", "scale", "levels", "k1", "b"):
        assert one[key] == three[key], key
    assert sum(three["shard_docs"]) == one["num_docs"]


def test_impacts_rank_as_bm25_does(impact_indexes, queries):
    # The same formulas come first as with BM25 computed when searching (the order of
    # hits whose scores differ by less than a quantisation step may differ).
    from mathir.samples import arqmath_sample

    float_index = FormulaIndex.build(arqmath_sample().formulas,
                                     impact_indexes[1].path.parent / "float", quiet=True)
    a = formula_tuples(impact_indexes[1], 1).transform(queries)
    b = formula_tuples(float_index, 1).transform(queries)
    agree = (a.set_index("qid")["visual_id"] == b.set_index("qid")["visual_id"]).mean()
    assert agree > 0.95


def _impact_collection(tmp_path, docs, cut):
    """``docs`` (term counts) as two impact shards split at ``cut`` and as one index."""
    named = [(f"d{i}", d) for i, d in enumerate(docs)]
    write_pisa_index(tmp_path / "a", named[:cut])
    write_pisa_index(tmp_path / "b", named[cut:])
    write_pisa_index(tmp_path / "all", named)
    info = write_impacts([tmp_path / "a", tmp_path / "b"], 1.2, 0.75)
    write_impacts([tmp_path / "all"], 1.2, 0.75)
    return (ImpactShards([tmp_path / "a", tmp_path / "b"], _positions, info["levels"]),
            ImpactShards([tmp_path / "all"], _positions, info["levels"]), info)


def _positions(docnos):
    return np.array([int(d[1:]) for d in docnos])  # "d17" is document 17


def test_impacts_are_pisa_bm25_from_the_global_statistics(tmp_path):
    docs = [{"x": 1, "y": 2}, {"x": 3}, {"z": 1, "y": 1}, {"x": 1, "z": 4, "w": 2}]
    _, _, info = _impact_collection(tmp_path, docs, 1)
    n, avg = 4, sum(sum(d.values()) for d in docs) / 4
    df = {"w": 1, "x": 3, "y": 2, "z": 2}
    idf = {t: max(1e-6, math.log((n - f + 0.5) / (f + 0.5))) * 2.2 for t, f in df.items()}
    scale = LEVELS / max(idf.values())
    assert info["num_docs"] == n and info["avg_length"] == avg
    assert info["scale"] == pytest.approx(scale)
    # Shard b holds documents 1..3: its lists, term by term (w, x, y, z), in inv.freqs.
    freqs = np.fromfile(tmp_path / "b" / "inv.freqs", dtype=np.uint32).tolist()
    expected = []
    for term in sorted(df):
        postings = [(i, d[term]) for i, d in enumerate(docs) if term in d and i >= 1]
        expected.append(len(postings))
        for i, tf in postings:
            length = sum(docs[i].values())
            bm25 = idf[term] * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * length / avg))
            expected.append(max(1, min(LEVELS, round(bm25 * scale))))
    assert freqs == expected
    assert idf_weights(np.array([df["x"]]), n, 1.2)[0] == pytest.approx(idf["x"])


def test_ties_at_the_cut_keep_the_first_documents_of_the_collection(tmp_path):
    # 60 identical documents tie everywhere: the top k are the first k of the collection,
    # in order, however the shards and PISA's heap split them.
    docs = [{"t": 1, "u": 1}] * 60 + [{"v": 1}] * 5
    two, one, _ = _impact_collection(tmp_path, docs, 37)
    queries = pd.DataFrame({"qid": ["q", "r"], "query_toks": [{"t": 1.0}, {"u": 1.0, "t": 1.0}]})
    for k in (1, 10, 36, 37, 50, 60, 64):
        a, b = two.search(queries, k), one.search(queries, k)
        pd.testing.assert_frame_equal(a, b)
        for qid in ("q", "r"):
            hits = a[a["qid"] == qid]
            assert hits["position"].tolist() == list(range(min(k, 60)))
            assert hits["rank"].tolist() == list(range(min(k, 60)))


def test_a_shard_asked_again_where_ties_reach_its_cut(tmp_path):
    # 500 tied documents in one shard: its first answer (k plus a margin) ends inside
    # the ties, so it is asked again deeper; the merged top k is still the first k.
    docs = [{"a": 1}] * 3 + [{"t": 1}] * 500 + [{"t": 1, "s": 1}]
    two, one, _ = _impact_collection(tmp_path, docs, 3)
    queries = pd.DataFrame({"qid": ["q"], "query_toks": [{"t": 1.0, "s": 1.0}]})
    a = two.search(queries, 20)
    pd.testing.assert_frame_equal(a, one.search(queries, 20))
    assert a["position"].tolist() == [503] + list(range(3, 22))


def test_an_impact_index_refuses_other_bm25_parameters(impact_indexes, queries):
    retriever = FormulaRetriever(impact_indexes[3], "tuples", k1=0.9)
    from mathir.pipelines.formula import FormulaQuery

    with pytest.raises(InputError, match="k1=1.2"):
        retriever.transform(FormulaQuery("tuples").transform(queries.head(2)))
    with pytest.raises(InputError, match="impact_shards"):
        impact_indexes[3].pisa("tuples")


def test_a_bm25_index_has_no_impacts(sample, tmp_path):
    index = FormulaIndex.build(sample.formulas, tmp_path / "f", quiet=True)
    assert index.scoring == "bm25"
    with pytest.raises(InputError, match="no impacts"):
        index.impacts("tuples")


def test_a_query_too_long_for_exact_sums_is_refused():
    check_query_weight({str(i): 1.0 for i in range(1024)}, LEVELS)
    check_query_weight({str(i): 0.5 for i in range(5000)}, LEVELS)  # PISA drops these
    with pytest.raises(InputError, match="at most 1024 terms"):
        check_query_weight({str(i): 1.0 for i in range(1025)}, LEVELS)


def test_unknown_scoring_is_refused(sample, tmp_path):
    with pytest.raises(InputError, match="unknown formula index scoring"):
        FormulaIndex.build(sample.formulas, tmp_path / "f", quiet=True, scoring="tfidf")


def test_shards_searched_after_pickling(tmp_path):
    import pickle

    two, _, _ = _impact_collection(tmp_path, [{"t": 1}, {"t": 2}, {"u": 1}], 1)
    queries = pd.DataFrame({"qid": ["q"], "query_toks": [{"t": 1.0}]})
    before = two.search(queries, 5)
    again = pickle.loads(pickle.dumps(two))
    pd.testing.assert_frame_equal(again.search(queries, 5), before)
