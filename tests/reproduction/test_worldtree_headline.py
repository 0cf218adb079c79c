"""`mathir reproduce worldtree`: seeded training gives the same weights, models are reused
only when their manifest matches, and the command runs end to end on the sample."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mathir.models import extra_available
from mathir.reproduction.worldtree_headline import combine_reports
from mathir.reproduction.worldtree_report import summarise
from mathir.reproduction.worldtree_training import (
    WORLDTREE_RECIPES,
    model_key,
    train_model,
    weights_checksum,
    why_not_done,
)
from mathir.storage import read_manifest, write_manifest

# --- LambdaMART: the trees do not depend on the thread count ---------------------------


def _ltr_frame(n_queries: int = 40, depth: int = 30, seed: int = 0):
    from mathir.pipelines.worldtree_features import FEATURES

    rng = np.random.default_rng(seed)
    rows, gold = [], []
    for q in range(n_queries):
        x = rng.normal(size=(depth, len(FEATURES)))
        x[:, FEATURES.index("table")] = rng.integers(0, 5, size=depth)
        for r in range(depth):
            rows.append((f"q{q}", f"d{r}", r, x[r]))
        gold += [(f"q{q}", f"d{r}") for r in np.argsort(-x[:, 0])[:3]]
    frame = pd.DataFrame(rows, columns=["qid", "docno", "rank", "features"])
    return frame, pd.DataFrame(gold, columns=["qid", "docno"])


def test_lambdamart_gives_the_same_scores_on_any_number_of_threads():
    from mathir.pipelines.worldtree_lambdamart import RANKER_THREADS, RankerSettings, train_ranker

    frame, qrels = _ltr_frame()
    x = np.stack(frame["features"].to_numpy())
    settings = RankerSettings(rounds=40, min_data_in_leaf=5)
    scores = [train_ranker(frame, qrels, settings, threads=t).predict(x) for t in (1, 2, 3)]
    assert scores[0].std() > 0  # it learned something
    assert all(np.array_equal(scores[0], s) for s in scores[1:])
    # The default is a fixed number, not 0 (OpenMP's default: the machine's core count).
    assert RANKER_THREADS > 0


class _HashEncoder:
    """A stand-in for MiniLM: a fixed pseudo-random vector per text, in ``dtype``."""

    def __init__(self, dtype):
        self.dtype = dtype

    def encode(self, texts):
        import zlib

        return np.stack([np.random.default_rng(zlib.crc32(t.encode())).normal(size=16)
                         .astype(np.float32) for t in texts]).astype(self.dtype)


def test_semantic_features_do_not_depend_on_the_float_type_the_encoder_returns(tmp_path):
    # The drift of Dev ltr-minilm (0.5216 here against 0.5239 in the docs): the same
    # MiniLM embeddings, handed back as float32 by today's libraries and as float64 by
    # the stack the docs were measured with, gave cosines that differ in their last bits,
    # and LambdaMART other trees. The features are now computed in float64 either way.
    from mathir.indexing.fact_index import FactIndex
    from mathir.pipelines.worldtree_features import ExplanationStatistics, FactFeatures
    from mathir.pipelines.worldtree_lexical import ExplanationQuery
    from mathir.qrels.worldtree import qrels_from_topics
    from mathir.samples import worldtree_sample
    from mathir.topics.worldtree import read_questions

    sample = worldtree_sample()
    index = FactIndex.build(sample.tables, tmp_path / "facts", quiet=True)
    train = read_questions(sample.questions("Train"), explained_only=True)
    qrels = qrels_from_topics(train, sample.questions("Train"))
    dev = ExplanationQuery()(read_questions(sample.questions("Dev"), explained_only=True))
    features = []
    for dtype in (np.float32, np.float64):
        stats = ExplanationStatistics(index, train, qrels)
        ff = FactFeatures(index, stats, encoder=_HashEncoder(dtype))
        features.append(np.stack(ff.transform(dev)["features"].to_numpy()))
    semantic = [ff.names.index(n) for n in ("minilm", "knn_minilm10", "knn_minilm50")]
    assert features[0][:, semantic].std() > 0
    assert np.array_equal(features[0], features[1])


# --- resumable models -------------------------------------------------------------------


def _fake_model(path: Path, key: dict, weights: bytes = b"weights") -> Path:
    path.mkdir(parents=True)
    (path / "model.safetensors").write_bytes(weights)
    write_manifest(path, {"kind": "mathir-bi-encoder", "reproduce": key,
                          "weights_sha256": weights_checksum(path)})
    return path


def test_a_model_counts_as_done_only_when_its_manifest_matches(tmp_path):
    key = model_key(WORLDTREE_RECIPES[0], 0, "pairs", "train", "base", "cpu")
    model = _fake_model(tmp_path / "seed0" / "bi", key)
    assert why_not_done(model, key) is None
    other = model_key(WORLDTREE_RECIPES[0], 1, "pairs", "train", "base", "cpu")
    assert why_not_done(model, other) == "changed: seed"
    moved = model_key(WORLDTREE_RECIPES[0], 0, "other pairs", "train", "other base", "cpu")
    assert why_not_done(model, moved) == "changed: base_weights_sha256, training_pairs_sha256"
    recipe = dataclasses.replace(WORLDTREE_RECIPES[0], learning_rate=2e-5)
    assert why_not_done(model, model_key(recipe, 0, "pairs", "train", "base", "cpu")) == \
        "changed: recipe"
    # Weights changed after the manifest was written (a copy cut short, an edit).
    (model / "model.safetensors").write_bytes(b"other")
    assert "weight files differ" in why_not_done(model, key)
    # A model trained by `mathir train-reranker` (no reproduce entry) is not taken.
    plain = tmp_path / "plain"
    plain.mkdir()
    write_manifest(plain, {"kind": "mathir-bi-encoder"})
    assert "no reproduce entry" in why_not_done(plain, key)


def test_a_half_written_model_is_never_taken_for_a_finished_one(tmp_path):
    key = model_key(WORLDTREE_RECIPES[1], 0, "pairs", "train", "base", "cpu")
    # What a killed training leaves: its temporary sibling, complete or not.
    _fake_model(tmp_path / ".ce1.4242-1a2b3c4d.x9q1.tmp", key)
    assert why_not_done(tmp_path / "ce1", key) == "not trained yet"


@pytest.mark.parametrize("argv, message", [
    (["--seeds", "0"], "error: --seeds must be at least 1"),
    (["--max-steps", "0"], "error: --max-steps must be at least 1"),
])
def test_reproduce_user_errors_are_one_line_before_any_work(argv, message, tmp_path, capsys):
    from mathir.cli import main

    assert main(["reproduce", "worldtree", "--models", str(tmp_path / "m"), *argv]) == 2
    assert capsys.readouterr().err.strip() == message
    assert not (tmp_path / "m").exists()


def test_summary_is_the_mean_and_sample_deviation_over_seeds():
    runs = {"test": {"seed0": {"p": {"MAP": 0.56}}, "seed1": {"p": {"MAP": 0.58}},
                     "seed2": {"p": {"MAP": 0.57}}, "ensemble": {"p": {"MAP": 0.59}}}}
    row = summarise(runs, [0, 1, 2])["test"]["p"]
    assert (row["mean"], row["sd"], row["min"], row["ensemble"]) == (0.57, 0.01, 0.56, 0.59)


def _report(seeds, maps, code="c1", reference=0.51):
    """A report of ``mathir reproduce worldtree`` for ``seeds`` (their Test MAPs)."""
    key = {"task": "worldtree", "recipe": {"lr": 1}, "device": "cpu",
           "training_pairs_sha256": "p", "train_file_sha256": "t",
           "base_weights_sha256": "b", "training_code_sha256": code, "packages": {"torch": "2"}}
    # As real reports: the pairs are drawn with the seed, and the second stage starts
    # from the seed's own first stage (other base weights for each seed).
    models = {str(s): {m: {"path": f"m/{s}/{m}", "manifest": {"reproduce": {
        **key, "seed": s, "recipe": {"name": m, "base": "ce1" if m == "ce2" else None},
        "training_pairs_sha256": f"{m} of seed {s}",
        "base_weights_sha256": f"ce1 of seed {s}" if m == "ce2" else "b"}}}
        for m in ("bi", "ce1", "ce2")} for s in seeds}
    return {"task": "worldtree", "data": "d", "splits": ["test"], "smoke": False,
            "seeds": list(seeds), "models": models, "recipes": [],
            "runs": {"test": {f"seed{s}": {"ltr-dense-crossencoder": {"MAP": v}}
                              for s, v in zip(seeds, maps, strict=True)}},
            "reference": {"ltr": {"test": {"MAP": reference}}},
            "test_evaluations": {"computed_now": ["x"]}}


def test_reports_of_single_seeds_combine_into_one_table(tmp_path):
    paths = []
    for seed, value in ((2, 0.58), (0, 0.56), (1, 0.57)):
        paths.append(tmp_path / f"seed{seed}.json")
        paths[-1].write_text(json.dumps(_report([seed], [value])))
    combined = combine_reports(paths, tmp_path / "out")
    row = combined["summary"]["test"]["ltr-dense-crossencoder"]
    assert (row["mean"], row["sd"], row["min"]) == (0.57, 0.01, 0.56)
    assert combined["seeds"] == [2, 0, 1] and combined["headline"]["test_mean"] == 0.57
    assert combined["headline"]["every_seed_above_winner"] is False  # 0.56 < 0.5625
    assert [c["seeds"] for c in combined["combined_from"]] == [[2], [0], [1]]
    assert combined["reference"] == {"ltr": {"test": {"MAP": 0.51}}}
    assert combined["reference_differs"] == {}
    table = (tmp_path / "out" / "worldtree.md").read_text()
    assert "0.5700 ± 0.0100" in table and "ltr (no seed)" in table
    assert json.loads((tmp_path / "out" / "worldtree.json").read_text())["seeds"] == [2, 0, 1]


@pytest.mark.parametrize(("second", "message"), [
    (_report([0], [0.57]), "seed 0 is in two reports"),
    (_report([1], [0.57], code="c2"), "trained differently from seed 0's: training_code_sha256"),
    ({**_report([1], [0.57]), "models": {"1": {"bi": {"manifest": {"reproduce": {
        **_report([1], [0.57])["models"]["1"]["bi"]["manifest"]["reproduce"],
        "base_weights_sha256": "another"}}}}}},
     "seed 1's bi was trained differently from seed 0's: base_weights_sha256"),
    ({**_report([1], [0.57]), "data": "other"}, "its data"),
    ({"task": "other"}, "not a report"),
])
def test_reports_of_other_trainings_are_not_combined(tmp_path, second, message):
    from mathir.errors import InputError

    (tmp_path / "a.json").write_text(json.dumps(_report([0], [0.56])))
    (tmp_path / "b.json").write_text(json.dumps(second))
    with pytest.raises(InputError, match=message):
        combine_reports([tmp_path / "a.json", tmp_path / "b.json"])


def test_reports_combine_from_the_command_line(tmp_path, capsys):
    from mathir.cli import main

    for seed, value in ((0, 0.56), (1, 0.58)):
        (tmp_path / f"{seed}.json").write_text(json.dumps(_report([seed], [value])))
    assert main(["reproduce", "worldtree", "--combine", str(tmp_path / "0.json"),
                 str(tmp_path / "1.json"), "--out", str(tmp_path / "o"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["test"]["ltr-dense-crossencoder"]["mean"] == 0.57
    assert main(["reproduce", "worldtree", "--combine", str(tmp_path / "none.json"),
                 "--out", str(tmp_path / "o")]) == 2


def test_the_ensemble_of_combined_reports_needs_their_very_models(tmp_path):
    # The ensemble is evaluated with the models the reports evaluated: a model missing
    # here, or trained again since (other weights), would give another seed's number
    # under the report's name; both are refused before anything is evaluated.
    from mathir.errors import InputError

    paths = [tmp_path / "0.json", tmp_path / "1.json"]
    reports = [_report([0], [0.56]), _report([1], [0.58])]
    for report in reports:
        for entry in report["models"][str(report["seeds"][0])].values():
            entry["path"] = str(tmp_path / entry["path"])
    for path, report in zip(paths, reports, strict=True):
        path.write_text(json.dumps(report))
    with pytest.raises(InputError, match="seed 0's bi model is not on this machine"):
        combine_reports(paths, tmp_path / "out", ensemble=True)
    for report in reports:
        for entry in report["models"][str(report["seeds"][0])].values():
            Path(entry["path"]).mkdir(parents=True)
            (Path(entry["path"]) / "model.safetensors").write_bytes(entry["path"].encode())
            entry["manifest"]["weights_sha256"] = weights_checksum(entry["path"])
    reports[1]["models"]["1"]["ce2"]["manifest"]["weights_sha256"] = "trained before"
    for path, report in zip(paths, reports, strict=True):
        path.write_text(json.dumps(report))
    with pytest.raises(InputError, match="seed 1's ce2 model is not the one its report"):
        combine_reports(paths, tmp_path / "out", ensemble=True)
    assert not (tmp_path / "out" / "runs").exists()  # nothing evaluated
    with pytest.raises(InputError, match="two seeds or more"):
        combine_reports(paths[:1], tmp_path / "out", ensemble=True)
    with pytest.raises(InputError, match="--out folder"):
        combine_reports(paths, ensemble=True)


def test_combine_on_the_command_line_does_not_drop_the_ensemble(tmp_path, capsys):
    # --ensemble with --combine used to be ignored: a table without the ensemble row
    # that was asked for. It is evaluated now, or refused with the reason.
    from mathir.cli import main

    for seed, value in ((0, 0.56), (1, 0.58)):
        (tmp_path / f"{seed}.json").write_text(json.dumps(_report([seed], [value])))
    assert main(["reproduce", "worldtree", "--combine", str(tmp_path / "0.json"),
                 str(tmp_path / "1.json"), "--ensemble", "--out", str(tmp_path / "o")]) == 2
    assert "seed 0's bi model is not on this machine" in capsys.readouterr().err


# --- seeded training: same seed, same weights ------------------------------------------

needs_neural = pytest.mark.skipif(not extra_available("neural"),
                                  reason="needs the neural extra (torch, sentence-transformers)")


@pytest.fixture(scope="module")
def sample_pairs(tmp_path_factory):
    """Training pairs of the embedded sample's Train questions (TF-IDF negatives)."""
    from mathir.pipelines.reranker_training import task_training_pairs
    from mathir.tasks import get_task

    task = get_task("worldtree")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path_factory.mktemp("pairs"))  # the index cache goes there
        pairs = task_training_pairs(task, [task.data(None, "train")], negatives_per_positive=1,
                                    first_stage="tfidf", quiet=True)
    assert pairs["label"].nunique() == 2
    return pairs


@needs_neural
@pytest.mark.parametrize("recipe", WORLDTREE_RECIPES[:2], ids=lambda r: r.kind)
def test_same_seed_gives_identical_weights_another_seed_other_weights(recipe, sample_pairs,
                                                                      tmp_path, two_layer_minilm):
    # One step from MiniLM's first 2 layers: the seed decides the new head, the batches
    # and the dropout from the first step on, at any depth.
    tiny = dataclasses.replace(recipe, max_steps=1, max_length=32, batch_size=4)
    key = {"test": True}
    trained = {name: train_model(tiny, sample_pairs, tmp_path / name, seed, key,
                                 base=two_layer_minilm)
               for name, seed in (("a", 0), ("b", 0), ("c", 1))}
    sums = {name: read_manifest(path)["weights_sha256"] for name, path in trained.items()}
    assert sums["a"] == sums["b"] != sums["c"]
    assert sums["a"] == weights_checksum(trained["a"])  # the manifest tells the truth
    assert sums["a"] != weights_checksum(two_layer_minilm)  # and training moved them
    manifest = read_manifest(trained["a"])
    assert manifest["reproduce"] == key and manifest["steps"] == 1 and manifest["seed"] == 0
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary left behind


@needs_neural
def test_a_seed_ensemble_of_one_model_twice_ranks_like_the_model(tmp_path):
    from mathir.experiment import run_experiment
    from mathir.models import resolve_model

    model = resolve_model(None)  # the packaged MiniLM, as a bi-encoder
    tables = [run_experiment("worldtree", pipelines=["ltr-dense"], out=tmp_path / str(i),
                             quiet=True, options={"bi_encoder": m}).table.loc["ltr-dense"]
              for i, m in enumerate((model, (model, model)))]
    pd.testing.assert_series_equal(tables[0], tables[1], atol=1e-4)


@needs_neural
@pytest.mark.slow
def test_reproduce_command_end_to_end_then_resumes(tmp_path, monkeypatch, capsys):
    from mathir.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # Two questions of each split (--smoke alone takes 20, every one of the sample's 6)
    # and one training step (--smoke alone: 2): what is checked is the machinery
    # (subprocesses, reuse, --combine, the ensemble), the same on any number of questions
    # and steps; each neural pipeline costs per question.
    args = ["reproduce", "worldtree", "--seeds", "1", "--smoke", "--max-questions", "2",
            "--max-steps", "1", "--no-test", "--models", "m", "--out", "o", "--json"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["smoke"] and report["seeds"] == [0] and report["splits"] == ["dev"]
    assert set(report["runs"]["dev"]["seed0"]) == {"ltr-dense", "ltr-crossencoder",
                                                   "ltr-dense-crossencoder"}
    assert set(report["reference"]) == {"ltr", "ltr-minilm"}
    # Trained in subprocesses (the bi-encoder and stage 1 side by side), then stage 2.
    assert err.count("training in process") == 3
    models = report["models"]["0"]
    assert models["ce2"]["manifest"]["base"] == str(Path(models["ce1"]["path"]).resolve())
    assert models["ce2"]["manifest"]["reproduce"]["base_weights_sha256"] == \
        models["ce1"]["manifest"]["weights_sha256"]
    assert (tmp_path / "o" / "worldtree.md").read_text().startswith("| pipeline |")
    assert report["test_evaluations"]["computed_now"] == []
    # Again: every model and every run reused, the same figures.
    assert main(args) == 0
    out, err = capsys.readouterr()
    again = json.loads(out)
    assert err.count("reused (") == 3 and "training in process" not in err
    assert again["runs"] == report["runs"]
    assert again["models"]["0"]["bi"]["manifest"] == models["bi"]["manifest"]
    # A report of one seed (one session's) is what --combine puts together.
    assert main(["reproduce", "worldtree", "--combine", "o/worldtree.json", "--out", "c",
                 "--json"]) == 0
    combined = json.loads(capsys.readouterr().out)
    assert combined["summary"] == report["summary"] and combined["models"] == report["models"]
    assert combined["reference"] == report["reference"]
    # The ensemble of combined reports, here seed 0's models under a second seed's name:
    # one model twice ranks like the model, so the ensemble scores as seed 0 does.
    second = json.loads(json.dumps(report))
    second["seeds"] = [1]
    second["models"] = {"1": second["models"].pop("0")}
    for entry in second["models"]["1"].values():
        entry["manifest"]["reproduce"]["seed"] = 1
    second["runs"] = {"dev": {"seed1": second["runs"]["dev"].pop("seed0")}}
    Path("seed1.json").write_text(json.dumps(second))
    assert main(["reproduce", "worldtree", "--combine", "o/worldtree.json", "seed1.json",
                 "--ensemble", "--out", "e", "--json"]) == 0
    out, err = capsys.readouterr()
    both = json.loads(out)
    assert both["ensemble"] and "Dev ensemble of seeds 0, 1" in err
    for pipeline, seed0 in report["runs"]["dev"]["seed0"].items():
        assert both["runs"]["dev"]["ensemble"][pipeline]["MAP"] == \
            pytest.approx(seed0["MAP"], abs=1e-4), pipeline
    assert both["summary"]["dev"]["ltr-dense"]["ensemble"] == pytest.approx(
        report["summary"]["dev"]["ltr-dense"]["mean"], abs=1e-4)
    assert both["test_evaluations"]["computed_now"] == []  # Dev only
    assert "seed ensemble" in (tmp_path / "e" / "worldtree.md").read_text()


# --- the order of the trainings --------------------------------------------------------


def _jobs(seeds, reused=()):
    jobs = []
    for seed in seeds:
        for r in WORLDTREE_RECIPES:
            jobs.append({"recipe": r, "seed": seed, "out": f"s{seed}/{r.name}",
                         "title": f"{seed} {r.name}", "pairs": None, "device": "cpu",
                         "base_dir": None if r.base is None else f"s{seed}/{r.base}",
                         "reused": f"s{seed}/{r.name}" in reused})
    return jobs


def _trained_in_order(monkeypatch, jobs):
    import mathir.reproduction.scheduling as reproduce

    order = []

    def prepare(job):
        job["key"], job["base"] = {}, job["base_dir"]
        return not job["reused"]

    monkeypatch.setattr(reproduce, "train_model",
                        lambda recipe, pairs, out, *a, **k: order.append(out))
    reproduce._run_jobs(jobs, 2, False, lambda line: None, prepare)
    return order


def test_a_seed_is_trained_whole_before_the_next(monkeypatch):
    # Seed by seed, stage 2 right after stage 1: a stopped command keeps whole seeds.
    assert _trained_in_order(monkeypatch, _jobs([0, 1])) == [
        "s0/bi", "s0/ce1", "s0/ce2", "s1/bi", "s1/ce1", "s1/ce2"]


def test_a_reused_model_lets_the_models_built_on_it_train(monkeypatch):
    order = _trained_in_order(monkeypatch, _jobs([0, 1], reused={"s0/bi", "s0/ce1", "s1/bi"}))
    assert order == ["s0/ce2", "s1/ce1", "s1/ce2"]


def test_no_recipe_asks_for_more_threads_than_two_jobs_side_by_side_leave():
    # Two jobs of one thread each keep both cores busy to the end; a job of two threads
    # would wait for both and leave one idle meanwhile.
    assert {r.threads for r in WORLDTREE_RECIPES} == {1}


def test_a_training_process_runs_in_the_folder_and_environment_of_the_command_now(
        tmp_path, monkeypatch):
    """A training is forked from a fork server, which keeps the folder and environment of
    the moment it started: it runs in the command's current ones (a relative --models
    path is the command's), as a spawned process does."""
    import subprocess

    from mathir.reproduction import scheduling

    ctx = scheduling._training_context()
    script = 'echo "$MATHIR_PROBE" > seen.txt'
    for name in ("first", "second"):  # the second is forked by the server the first started
        folder = tmp_path / name
        folder.mkdir()
        monkeypatch.chdir(folder)
        monkeypatch.setenv("MATHIR_PROBE", name)
        proc = ctx.Process(target=scheduling._in_parent_state,
                           args=(scheduling._parent_state(), subprocess.run, ["sh", "-c", script]))
        proc.start()
        proc.join(timeout=120)
        assert proc.exitcode == 0
        assert (folder / "seen.txt").read_text() == f"{name}\n"


# --- provenance ------------------------------------------------------------------------


@needs_neural  # (train_model seeds torch)
def test_a_model_records_the_commit_it_started_from(tmp_path, monkeypatch):
    # A commit made while a model trains (an hour here) is not the code that trained it.
    import mathir.experiment.identity as provenance
    import mathir.pipelines.reranker_training as training

    state = {"commit": "started-here", "dirty": True}
    monkeypatch.setattr(provenance, "git_state", lambda: dict(state))

    def fake_train(pairs, out, **options):
        out = Path(out)
        out.mkdir(parents=True)
        (out / "model.safetensors").write_bytes(b"weights")
        state.update(commit="committed-meanwhile", dirty=False)
        return out

    monkeypatch.setattr(training, "train_bi_encoder", fake_train)
    recipe = dataclasses.replace(WORLDTREE_RECIPES[0], max_steps=1)
    out = train_model(recipe, None, tmp_path / "bi", 0, {"seed": 0})
    assert read_manifest(out)["git"] == {"commit": "started-here", "dirty": True}
