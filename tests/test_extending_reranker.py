"""The "new reranker" example of docs/extending.md runs as written and ranks BM25's top
answers by its own scorer."""

from __future__ import annotations

import runpy

from tests.test_extending import doc_files


def test_the_reranker_example_returns_a_ranked_frame(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    snippet = tmp_path / "reranker_example.py"
    snippet.write_text(doc_files()["reranker_example.py"])
    namespace = runpy.run_path(str(snippet), run_name="__main__")
    results = namespace["results"]
    assert {"qid", "query", "docno", "score", "rank"} <= set(results.columns)
    assert not {"text", "title", "query_0"} & set(results.columns)
    for _, one in results.groupby("qid"):
        assert len(one) == 20
        ranked = one.sort_values("rank")
        assert ranked["rank"].tolist() == list(range(20))
        assert ranked["score"].is_monotonic_decreasing
        # the scores are the word overlap of the answer's text, not BM25's
        assert ranked["score"].between(0, 1).all()
    index = namespace["index"]
    first = results.iloc[0]
    texts = namespace["mathir"].text_store(index).fetch([first["docno"]])[first["docno"]]
    row = {"query": first["query"], "title": texts[0], "text": texts[1]}
    assert first["score"] == namespace["word_overlap"](row)
    table = namespace["res"].table
    assert list(table.index) == ["bm25", "overlap"]
    out = capsys.readouterr().out
    assert "overlap" in out and "nDCG'" in out
