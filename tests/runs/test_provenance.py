from mathir.runs.provenance import manifest_path, reusable, run_manifest, write_manifest


def test_manifest_beside_run_and_reuse_rules(tmp_path):
    topics = tmp_path / "topics.xml"
    topics.write_text("<Topics/>")
    index = tmp_path / "idx"
    index.mkdir()
    (index / "manifest.json").write_text('{"collection": 1}')
    run = tmp_path / "bm25.tsv"
    run.write_text("A.1\t1\t1\t1.0\tbm25\n")
    m = run_manifest("arqmath-task1", "PisaBM25(k1=1.2)", topics, index_dir=index)
    assert write_manifest(run, m) == manifest_path(run) == tmp_path / "bm25.manifest.json"
    assert m["topics"]["sha256"] and m["index"] and "mathir" in m["versions"]

    later = run_manifest("arqmath-task1", "PisaBM25(k1=1.2)", topics, index_dir=index)
    assert reusable(run, later)  # only time/command differ

    assert not reusable(run, run_manifest("arqmath-task1", "PisaBM25(k1=0.9)", topics, index_dir=index))
    topics.write_text("<Topics> </Topics>")
    assert not reusable(run, run_manifest("arqmath-task1", "PisaBM25(k1=1.2)", topics, index_dir=index))
    topics.write_text("<Topics/>")
    (index / "manifest.json").write_text('{"collection": 2}')
    assert not reusable(run, run_manifest("arqmath-task1", "PisaBM25(k1=1.2)", topics, index_dir=index))
    (index / "manifest.json").write_text('{"collection": 1}')
    assert reusable(run, later)
    run.unlink()
    assert not reusable(run, later)
