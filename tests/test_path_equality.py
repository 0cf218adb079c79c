"""One experiment, one number, whichever way it is run.

``pt.get_dataset("mathir:...")`` with ``pt.Experiment``, :func:`mathir.run_experiment`
and ``mathir experiment`` evaluate ARQMath Task 1 alike, on the sample and on the real
2022 judged pool. Before, the dataset's ``get_qrels()`` judged every document of the
official qrels while the experiment judged only those of the collection: nDCG' 0.0957
through PyTerrier against 0.7389 through mathir on 2022.
"""

from __future__ import annotations

import json
import warnings

import pyterrier as pt
import pytest

import mathir
from mathir.cli import main
from mathir.evaluation.prime import ARQMATH_MEASURES
from tests.conftest import real_path


def _three_ways(name: str, tmp_path, capsys, data=None, year=None, collection=None):
    kwargs = {"data": str(data)} if data else {}
    if collection:
        kwargs["collection"] = str(collection)
    ds = pt.get_dataset(f"mathir:{name}", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "the collection holds N of the M judged documents"
        qrels = ds.get_qrels()
    measures = list(ARQMATH_MEASURES.values())
    through_pt = pt.Experiment([mathir.bm25(ds.get_index())], ds.get_topics(), qrels,
                               measures, names=["bm25"]).set_index("name").loc["bm25"]
    task = mathir.tasks.get_task("arqmath-task1")
    files = task.data(data, year, collection) if data else task.data()
    res = mathir.run_experiment(task, files, out=tmp_path / "lib", quiet=True,
                                pipelines=["bm25"])
    argv = ["experiment", "arqmath-task1", "--pipelines", "bm25", "--out", str(tmp_path / "cli"),
            "--format", "json", "--quiet"]
    if data:
        argv += ["--data", str(data), "--year", year]
    if collection:
        argv += ["--collection", str(collection)]
    capsys.readouterr()
    assert main(argv) == 0
    cli = json.loads(capsys.readouterr().out)["bm25"]
    for label, measure in ARQMATH_MEASURES.items():
        a, b, c = through_pt[str(measure)], res.table.loc["bm25", label], cli[label]
        assert a == pytest.approx(b, abs=1e-9) and b == pytest.approx(c, abs=1e-4), label
    return res.table.loc["bm25"]


def test_the_sample_gives_one_number_three_ways(tmp_path, capsys):
    _three_ways("arqmath/task1/sample", tmp_path, capsys)


@pytest.mark.realdata
def test_the_2022_judged_pool_gives_one_number_three_ways(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PYTERRIER_HOME", str(tmp_path / "pyterrier"))  # the dataset's index
    data = real_path("arqmath")
    threads = real_path("arqmath", "collection_sample", "threads_all")
    row = _three_ways("arqmath/task1/2022", tmp_path, capsys, data, "2022", threads)
    assert row["nDCG'"] > 0.5  # the pool's figure, not the 0.0957 of judging all 34,847
    ds = pt.get_dataset("mathir:arqmath/task1/2022", data=str(data), collection=str(threads))
    with pytest.warns(UserWarning, match=r"the collection holds [\d,]+ of the 34,847 judged"):
        held = ds.get_qrels()
    assert len(ds.get_qrels("official")) == 34847 > len(held)
