"""One evaluation however it is asked: the settings resolved once per command, and
``mathir experiment``, ``evaluate`` and ``view`` giving one table for the same runs,
qrels and options (issue: "One evaluation, however it is asked")."""

from __future__ import annotations

import inspect
import json
import pkgutil
from importlib import import_module
from pathlib import Path

import pytest

import mathir
from mathir.cli import main
from mathir.evaluation import settings as settings_module
from mathir.samples import arqmath_sample
from mathir.tasks import get_task
from tests.conftest import real_path


@pytest.fixture(scope="module")
def sample_runs(tmp_path_factory):
    """The sample experiment's two Task 1 runs (with manifests) and their table."""
    out = tmp_path_factory.mktemp("scoring")
    res = mathir.run_experiment("arqmath-task1", out=out, quiet=True)
    return res


def _json(argv, capsys) -> dict:
    capsys.readouterr()
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_every_measure_is_calc_aggregates_figure_on_every_command(sample_runs, tmp_path,
                                                                    capsys):
    """33 ir_measures measures (the four counts among them) through ``mathir experiment``,
    ``evaluate`` and ``view`` and a dataset's ``evaluate()``: each ``calc_aggregate``'s
    figure. Before: NumRet 248.3 and NumQ 1.0 (the mean of the per-topic counts), where
    calc_aggregate and trec_eval's summary give 2,483 and 10."""
    import pyterrier as pt

    from tests.evaluation.test_measures import MEASURES as MANY
    from tests.evaluation.test_measures import _calc_aggregate

    spec = ",".join(MANY)
    runs = [str(p) for p in sample_runs.runs.values()]
    experiment = _json(["experiment", "arqmath-task1", "--out", str(tmp_path / "x"), "--quiet",
                        "--measures", spec, "--format", "json"], capsys)
    evaluated = _json(["evaluate", "arqmath-task1", "--measures", spec, "--format", "json",
                       *runs], capsys)
    viewed = _json(["view", "--task", "arqmath-task1", "--measures", spec, "--format",
                    "json", "--out", str(tmp_path / "v.html"), *runs], capsys)
    ds = pt.get_dataset("mathir:arqmath/task1/sample")
    results = {n: mathir.read_run(p) for n, p in sample_runs.runs.items()}
    through_ds = ds.evaluate(results, measures=MANY)
    for name, path in sample_runs.runs.items():
        expected = _calc_aggregate(path, MANY)
        assert expected["NumRet"] == 2483 and expected["NumQ"] == 10
        for how, table in (("experiment", experiment), ("evaluate", evaluated),
                           ("view", viewed), ("ds.evaluate", through_ds.to_dict("index"))):
            for m, v in expected.items():
                assert table[name][m] == pytest.approx(v, abs=1e-9), (how, name, m)


def test_view_and_evaluate_print_the_same_table(sample_runs, tmp_path, capsys):
    runs = [str(p) for p in sample_runs.runs.values()]
    for options in ([], ["--judged", "file"], ["--judged", "collection"],
                    ["--qrels", "official"], ["--measures", "+P@1"]):
        capsys.readouterr()
        assert main(["evaluate", "arqmath-task1", *options, *runs]) == 0
        evaluated = capsys.readouterr()
        assert main(["view", "--task", "arqmath-task1", "--out", str(tmp_path / "v.html"),
                     *options, *runs]) == 0
        viewed = capsys.readouterr()
        assert evaluated.out == viewed.out, options
        judged = [line for line in evaluated.err.splitlines() if line.startswith("judged set")]
        assert judged == [line for line in viewed.err.splitlines()
                          if line.startswith("judged set")], options


def test_evaluate_judges_a_run_without_manifest_on_a_given_collection(sample_runs, tmp_path,
                                                                       capsys):
    """Before: --judged collection refused a run without a manifest; --collection was not an
    option of evaluate for Task 1."""
    bare = tmp_path / "bare.tsv"
    bare.write_bytes(sample_runs.runs["bm25"].read_bytes())  # no manifest beside it
    sample = arqmath_sample()
    table = _json(["evaluate", "arqmath-task1", "--qrels", str(sample.task1_qrels),
                   "--collection", str(sample.posts), "--judged", "collection", "--format",
                   "json", str(bare)], capsys)
    assert table["bare"]["nDCG'"] == pytest.approx(sample_runs.table.loc["bm25", "nDCG'"])


def test_official_is_a_qrels_variant_on_every_command(sample_runs, tmp_path, capsys):
    """Before: `mathir tasks` listed `official (default)`, but --qrels official was an
    error."""
    runs = [str(p) for p in sample_runs.runs.values()]
    got = [_json(["experiment", "arqmath-task1", "--out", str(tmp_path / "x"), "--quiet",
                  "--qrels", "official", "--format", "json"], capsys),
           _json(["evaluate", "arqmath-task1", "--qrels", "official", "--format", "json", *runs],
                 capsys),
           _json(["view", "--task", "arqmath-task1", "--qrels", "official", "--format", "json",
                  "--out", str(tmp_path / "v.html"), *runs], capsys)]
    for table in got:
        assert table["bm25"]["nDCG'"] == pytest.approx(sample_runs.table.loc["bm25", "nDCG'"])
    capsys.readouterr()
    assert main(["evaluate", "arqmath-task1", "--qrels", "nope", *runs]) == 2
    err = capsys.readouterr().err
    assert "error: --qrels nope: neither a qrels variant of arqmath-task1 (its variants: " \
           "official" in err


def test_task2_formula_id_qrels_score_the_same_on_every_command(tmp_path, capsys):
    """Before: view had no --qrels-key, so a formula-id qrels file scored 0.0000 for every
    run while its warning told the user to pass --qrels-key formula_id."""
    qrels = Path(arqmath_sample().root) / "qrels_task2_formula_id.tsv"
    options = ["--qrels", str(qrels), "--qrels-key", "formula_id"]
    experiment = _json(["experiment", "arqmath-task2", "--pipelines", "formula-words", "--out",
                        str(tmp_path), "--quiet", "--format", "json", *options], capsys)
    run = next(tmp_path.glob("arqmath-task2/*/formula-words.tsv"))
    formula_index = get_task("arqmath-task2").data().extras["formula_index"]
    evaluated = _json(["evaluate", "arqmath-task2", "--formula-index", str(formula_index),
                       "--format", "json", *options, str(run)], capsys)
    viewed = _json(["view", "--task", "arqmath-task2", "--format", "json", "--out",
                    str(tmp_path / "v.html"), *options, str(run)], capsys)
    assert experiment["formula-words"]["nDCG'"] > 0
    assert evaluated == viewed == experiment


def test_each_setting_is_resolved_once_per_command(sample_runs, tmp_path, capsys,
                                                   monkeypatch):
    """The judged rule, the measures and the qrels: one function each, called once per
    command (before: check_judged ran three times on one experiment, --measures was parsed
    three times)."""
    calls: dict[str, int] = {}
    for name in ("resolve_judged", "resolve_qrels", "resolve_measures"):
        original = getattr(settings_module, name)

        def counted(*args, _f=original, _n=name, **kwargs):
            calls[_n] = calls.get(_n, 0) + 1
            return _f(*args, **kwargs)

        monkeypatch.setattr(settings_module, name, counted)
    runs = [str(p) for p in sample_runs.runs.values()]
    for argv in (["experiment", "arqmath-task1", "--out", str(tmp_path / "x"), "--quiet",
                  "--measures", "+P@1", "--judged", "collection"],
                 ["evaluate", "arqmath-task1", "--measures", "+P@1", *runs],
                 ["view", "--task", "arqmath-task1", "--measures", "+P@1", "--out",
                  str(tmp_path / "v.html"), *runs]):
        calls.clear()
        assert main(argv) == 0, capsys.readouterr().err
        assert calls == {"resolve_judged": 1, "resolve_qrels": 1, "resolve_measures": 1}, argv


def test_the_manifest_records_the_settings(tmp_path):
    res = mathir.run_experiment("arqmath-task1", pipelines=["bm25"], out=tmp_path, quiet=True,
                                measures="+P@1", judged="file")
    manifest = json.loads(res.runs["bm25"].with_name("bm25.manifest.json").read_text())
    assert manifest["evaluation"]["judged"] == "file"
    assert manifest["evaluation"]["qrels"] == "official"
    assert manifest["evaluation"]["measures"] == ["+", "P@1"]


def _experiment_path_functions():
    import mathir.evaluation.evaluated as evaluated
    import mathir.evaluation.settings as settings
    import mathir.experiment as experiment

    modules = [evaluated, settings]
    for info in pkgutil.iter_modules(experiment.__path__):
        modules.append(import_module(f"mathir.experiment.{info.name}"))
    for module in modules:
        for name, f in vars(module).items():
            if inspect.isfunction(f) and f.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", f


def test_no_function_on_the_experiment_path_takes_more_than_six_positional_parameters():
    """Before: workers travelled through 15, 10 and 9 positional parameters."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    too_many = {name: n for name, f in _experiment_path_functions()
                if (n := sum(p.kind in kinds for p in inspect.signature(f).parameters.values()))
                > 6}
    assert not too_many


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.parametrize("judged", ["collection", "file"])
def test_view_and_evaluate_agree_on_arqmath1_participant_runs(judged, tmp_path, capsys):
    """Before: view scored Linked_MSE_baseline 2020 on the collection's judgments (nDCG'
    0.2826), evaluate on the whole file (0.2791), and evaluate could not be told otherwise."""
    data = real_path("arqmath")
    threads = real_path("arqmath", "collection_sample", "threads_all")
    runs = [str(real_path("arqmath", "runs", "arqmath1", f"{n}.tsv"))
            for n in ("Linked_MSE_baseline", "prim_Approach0")]
    common = ["--data", str(data), "--year", "2020", "--collection", str(threads),
              "--judged", judged, "--format", "json", "--quiet"]
    evaluated = _json(["evaluate", "arqmath-task1", *common, *runs], capsys)
    viewed = _json(["view", "--task", "arqmath-task1", *common, "--out",
                    str(tmp_path / "v.html"), *runs], capsys)
    assert evaluated == viewed
    expected = 0.2826 if judged == "collection" else 0.2791
    assert round(evaluated["Linked_MSE_baseline"]["nDCG'"], 4) == expected


@pytest.mark.realdata
def test_a_qrels_variant_says_the_topics_it_adds(tmp_path, capsys):
    """Before: --qrels all on 2021 said only the judgment counts, not that 18 more topics
    were averaged (71 -> 89)."""
    data = real_path("arqmath")
    task = get_task("arqmath-task1")
    qrels = task.qrels(task.data(data, "2021", qrels="all"))
    run = tmp_path / "perfect.tsv"  # every judged answer, ranked by its label
    ordered = qrels.sort_values(["qid", "label"], ascending=[True, False])
    ordered = ordered.assign(rank=ordered.groupby("qid").cumcount() + 1)
    run.write_text("".join(f"{q}\tQ0\t{d}\t{r}\t{1000 - r}\tperfect\n" for q, d, r in
                           zip(ordered["qid"], ordered["docno"], ordered["rank"], strict=True)))
    capsys.readouterr()
    assert main(["evaluate", "arqmath-task1", "--data", str(data), "--year", "2021",
                 "--qrels", "all", "--judged", "file", str(run)]) == 0
    err = capsys.readouterr().err
    assert "note: qrels all: 89 topics" in err and "(the official qrels: 71 topics" in err


def test_a_failing_pipeline_leaves_no_lock_or_partial_file(tmp_path):
    """Before: a pipeline that raised left ``.NAME.tsv.lock`` in the runs folder."""
    from mathir.experiment import PipelineError

    def broken(index):
        import pyterrier as pt

        def fail(frame):
            raise ZeroDivisionError("the user's bug")

        return pt.apply.generic(fail)

    with pytest.raises(PipelineError, match="the user's bug"):
        mathir.run_experiment("arqmath-task1", pipelines=[{"broken": broken}], out=tmp_path,
                              quiet=True)
    folder = tmp_path / "arqmath-task1" / "sample"
    assert sorted(p.name for p in folder.iterdir()) == []


def test_no_third_party_deprecation_warning_reaches_the_user(tmp_path, capsys):
    """Before: every WorldTree experiment printed pandas' deprecation of ``inplace`` in
    ``DataFrame.drop`` (called by PyTerrier)."""
    assert main(["experiment", "worldtree", "--out", str(tmp_path), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "deprecated" not in err.lower(), err


def test_a_misspelt_pipeline_of_a_pipelines_file_gets_did_you_mean(tmp_path, capsys):
    """Before: no "did you mean", and the list of pipelines left the file's own out."""
    own = tmp_path / "mine.py"
    own.write_text("import mathir\nPIPELINES = {'mybm25': lambda index: mathir.bm25(index)}\n")
    assert main(["experiment", "arqmath-task1", "--pipelines-file", str(own), "--pipelines",
                 "mybm2", "--out", str(tmp_path / "runs"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'mybm25'" in err and "mybm25" in err.split("available:")[1]


def test_a_runs_judged_set_is_not_taken_from_an_index_rebuilt_since(tmp_path):
    """A run's manifest names the index its collection's documents were listed from; when
    that folder has since been rebuilt from another collection, ``mathir evaluate`` lists
    the documents from the recorded collection, not from the other index (before: nDCG'
    0.8905 for the experiment's 0.9281, in the order a random test run happened to take)."""
    from mathir.tasks import TaskData
    from tests.evaluation.test_evaluated import _cut_collection

    sample = arqmath_sample()
    qrels = mathir.read_qrels(sample.task1_qrels)
    gone = qrels[(qrels.qid == "A.1") & (qrels.label >= 2)].docno.tolist()[:2]
    data = TaskData("sample", _cut_collection(tmp_path, set(gone)), sample.task1_topics,
                    sample.task1_qrels)
    index = tmp_path / "index"
    res = mathir.run_experiment("arqmath-task1", data, ["bm25"], out=tmp_path / "runs",
                                quiet=True, index_dir=index)
    get_task("arqmath-task1").index(get_task("arqmath-task1").data(), index, quiet=True)
    again = mathir.evaluate_runs("arqmath-task1", sample.task1_qrels, [res.runs["bm25"]])
    assert again.loc["bm25"].tolist() == res.table.loc["bm25"].tolist()
