"""The WorldTree headline, reproduced by one command: ``mathir reproduce worldtree``.

The WorldTree headline (docs/worldtree.md) rests on three models that start from the
packaged all-MiniLM-L6-v2 and are trained on Train: a bi-encoder and a cross-encoder
in two stages (:data:`~mathir.reproduction.worldtree_training.WORLDTREE_RECIPES`, the
``mathir train-reranker`` commands of docs/worldtree.md). :func:`reproduce_worldtree`
trains them for each seed, evaluates ``ltr-dense``, ``ltr-crossencoder`` and
``ltr-dense-crossencoder`` (and, for reference, ``ltr`` and ``ltr-minilm``) on Dev and
Test, and writes the table: each pipeline's MAP as mean ± standard deviation over the
seeds, every seed's, and, with ``ensemble``, the seed ensemble's (scores averaged over
the seeds' models).
:func:`combine_reports` puts the reports of runs of single seeds into one table.

Its parts: the models, their manifests and how one is trained
(:mod:`mathir.reproduction.worldtree_training`), the order and the processes the
trainings run in (:mod:`mathir.reproduction.scheduling`), the splits and the runs
evaluated on them (:mod:`mathir.reproduction.worldtree_evaluation`), the table
(:mod:`mathir.reproduction.worldtree_report`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from mathir.errors import InputError
from mathir.reproduction.scheduling import train_all
from mathir.reproduction.worldtree_evaluation import (
    WORLDTREE_PIPELINES,
    WORLDTREE_REFERENCE,
    Progress,
    evaluate_ensemble,
    evaluate_pipelines,
    log_test_evaluations,
    split_data,
)
from mathir.reproduction.worldtree_report import headline, summarise, write_report
from mathir.reproduction.worldtree_training import WORLDTREE_RECIPES, weights_checksum
from mathir.storage import read_manifest, require_writable_dir

#: Smoke runs (``smoke=True``, ``mathir reproduce worldtree --smoke``): a few questions,
#: steps and word pieces; their models go to ``MODELS/worldtree-smoke``.
SMOKE = {"max_questions": 20, "max_steps": 2, "max_length": 32}


#: What every seed of one table must share: the models' training, all but what the seed
#: changes. The training pairs are drawn with the seed (their negatives), and a second
#: stage starts from its own seed's first stage, so neither checksum is compared; the
#: base weights are, for a model that starts from the packaged one.
_SHARED_KEY = ("task", "recipe", "device", "train_file_sha256", "training_code_sha256",
               "packages")


def recorded_models(report: dict, seed: int, names: Sequence[str] = ("bi", "ce2")
                    ) -> dict[str, Path]:
    """The models ``names`` that a report evaluated for ``seed``, found where it says and
    checked to be the same weights (the ``weights_sha256`` of its manifests), so that a
    model trained again since, or another machine's, is never taken for it.

    >>> recorded_models({"models": {"0": {"bi": {"path": "/no/such/model", "manifest": {}}}}},
    ...                 0, ["bi"])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: seed 0's bi model is not on this machine ...
    """
    found: dict[str, Path] = {}
    entries = (report.get("models") or {}).get(str(seed)) or {}
    for name in names:
        entry = entries.get(name) or {}
        path = Path(entry.get("path") or f"<no {name} model in the report>")
        try:
            weights = weights_checksum(path)
        except InputError:
            raise InputError(f"seed {seed}'s {name} model is not on this machine: the seed "
                             f"ensemble needs every seed's models (`mathir reproduce worldtree "
                             f"--seed {seed}` trains them again, and writes a new report)",
                             path=path) from None
        if weights != (entry.get("manifest") or {}).get("weights_sha256"):
            raise InputError(f"seed {seed}'s {name} model is not the one its report "
                             f"evaluated (its weights differ from the report's "
                             f"weights_sha256): combine the report of the models there now",
                             path=path)
        found[name] = path
    return found


def combine_reports(reports: Sequence[str | Path], out: str | Path | None = None,
                    ensemble: bool = False,
                    progress: Callable[[str], None] | None = None) -> dict:
    """One table from the ``worldtree.json`` reports of runs of single seeds.

    Three seeds' trainings do not fit in one working session of a 2-core machine that
    keeps nothing between sessions; one seed does. Each session runs
    ``mathir reproduce worldtree --seed S`` and keeps its report (a few kB; the models
    are not needed afterwards); this puts the reports together: every seed's MAP, the
    mean ± standard deviation, the reference rows, and how many Test evaluations each
    report logged. The reports must be of distinct seeds and of the same training (the
    ``reproduce`` entries of their models' manifests equal but for what the seed
    changes: recipe, Train file and packaged base-model checksums, training code and
    library versions; not the seeded training pairs); their Dev and
    Test splits and data must agree. Writes ``worldtree.md`` and ``worldtree.json`` to
    ``out`` when given.

    ``ensemble``: also evaluate the seed ensemble on the reports' splits (runs in
    ``out/runs``, Test runs logged in ``out/test_evaluations.jsonl``), with the models
    the reports evaluated: each must still be where its report says, with the same
    weights (:func:`recorded_models`), so the machine must hold every seed's models.
    ``progress`` gets one line per stage (default: stderr).

    >>> combine_reports([])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: no report to combine
    """
    if not reports:
        raise InputError("no report to combine")
    if ensemble and out is None:
        raise InputError("the seed ensemble's runs and table go to an --out folder: give one")
    loaded = []
    for path in reports:
        try:
            report = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise InputError(f"not a readable reproduce report: {e}", path=path) from None
        if not isinstance(report, dict) or report.get("task") != "worldtree" or \
                not isinstance(report.get("models"), dict):
            raise InputError("not a report of `mathir reproduce worldtree` (worldtree.json)",
                             path=path)
        loaded.append((Path(path), report))
    first_path, first = loaded[0]
    seeds: list[int] = []
    runs: dict[str, dict] = {}
    reference_differs: dict[str, dict] = {}
    shared: dict[str, dict] = {}  # model (bi, ce1, ce2) -> its training but for the seed
    for path, report in loaded:
        for key in ("data", "splits", "smoke", "max_questions"):
            if report.get(key) != first.get(key):
                raise InputError(f"its {key} ({report.get(key)!r}) differs from that of "
                                 f"{first_path} ({first.get(key)!r})", path=path)
        for seed in report["seeds"]:
            if seed in seeds:
                raise InputError(f"seed {seed} is in two reports", path=path)
            seeds.append(seed)
            for model, entry in report["models"][str(seed)].items():
                key = ((entry.get("manifest") or {}).get("reproduce") or {})
                mine = {k: key.get(k) for k in _SHARED_KEY}
                if not (key.get("recipe") or {}).get("base"):  # from the packaged model
                    mine["base_weights_sha256"] = key.get("base_weights_sha256")
                if shared.setdefault(model, mine) != mine:
                    changed = sorted(k for k in mine if mine[k] != shared[model].get(k))
                    raise InputError(f"seed {seed}'s {model} was trained differently from "
                                     f"seed {seeds[0]}'s: {', '.join(changed)}", path=path)
            for split, by_run in report["runs"].items():
                if f"seed{seed}" in by_run:
                    runs.setdefault(split, {})[f"seed{seed}"] = by_run[f"seed{seed}"]
        if report.get("reference") != first.get("reference"):  # deterministic: a warning sign
            reference_differs[str(path)] = report.get("reference")
    reference = first.get("reference", {})
    for split in runs:
        if any(split in maps for maps in reference.values()):
            runs[split]["reference"] = {name: maps[split] for name, maps in reference.items()
                                        if split in maps}
    ensemble_test: dict | None = None
    if ensemble:
        ensemble_test = _combined_ensemble(loaded, seeds, runs, Path(out), Progress(progress))
    summary = summarise(runs, seeds)
    combined = {
        "task": "worldtree", "data": first.get("data"), "seeds": seeds,
        "splits": first.get("splits"), "ensemble": bool(ensemble),
        "smoke": first.get("smoke"), "max_questions": first.get("max_questions"),
        "recipes": first.get("recipes"),
        "models": {str(s): r["models"][str(s)] for _, r in loaded for s in r["seeds"]},
        "summary": summary, "runs": runs, "reference": reference,
        "headline": headline(summary),
        "combined_from": [{"report": str(path), "seeds": r["seeds"],
                           "test_evaluations": r.get("test_evaluations"),
                           "seconds": r.get("seconds"), "cpu_seconds": r.get("cpu_seconds")}
                          for path, r in loaded],
        "reference_differs": reference_differs,
    }
    if ensemble_test is not None:
        combined["test_evaluations"] = ensemble_test
    if out is not None:
        write_report(combined, require_writable_dir(out, "--out folder"))
    return combined


def _combined_ensemble(loaded: list[tuple[Path, dict]], seeds: list[int], runs: dict,
                       out: Path, progress: Progress) -> dict:
    """Evaluate the seed ensemble of combined reports into ``runs`` (each split's
    ``ensemble``); what it logged of Test."""
    from mathir.tasks import get_task

    if len(seeds) < 2:
        raise InputError("a seed ensemble needs the reports of two seeds or more")
    _, first = loaded[0]
    if first.get("smoke") and first.get("max_questions") is None:
        raise InputError("these reports are of tiny runs that do not record their questions: "
                         "the ensemble cannot be evaluated on the same ones")
    # Every model is checked before anything is evaluated.
    models = {seed: recorded_models(report, seed) for _, report in loaded
              for seed in report["seeds"]}
    out = require_writable_dir(out, "--out folder")
    task = get_task("worldtree")
    data = None if first.get("data") == "sample" else first.get("data")
    index_dir = out / "runs" / ".index" / "worldtree"
    computed_test: list[str] = []
    for split_name in first.get("splits") or []:
        split = split_data(task, data, split_name, first.get("max_questions"), out / "data")
        runs.setdefault(split_name, {})["ensemble"], computed = evaluate_ensemble(
            task, split, seeds, models, out / "runs" / split_name, index_dir, progress,
            split_name.capitalize())
        computed_test += [f"ensemble {p}" for p in computed if split_name == "test"]
    return log_test_evaluations(out, first.get("data"), computed_test)


def not_ignored_by_git(path: str | Path) -> bool:
    """Whether ``path`` lies in a git checkout that does not ignore it (models of hundreds
    of MB each do not belong in the history); False outside a checkout or without git.

    >>> import tempfile
    >>> not_ignored_by_git(tempfile.mkdtemp())
    False
    """
    import subprocess

    p = Path(path).resolve()
    where = next(q for q in (p, *p.parents) if q.is_dir())
    try:
        proc = subprocess.run(["git", "-C", str(where), "check-ignore", "-q", str(p)],
                              capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 1  # 0: ignored; 128: not in a checkout


def _cpu_seconds() -> float:
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def reproduce_worldtree(data: str | Path | None = None, seeds: Sequence[int] = (0, 1, 2),
                        models_dir: str | Path = "models/reproduce",
                        out: str | Path = "runs/reproduce",
                        evaluate: Sequence[str] = ("dev", "test"), ensemble: bool = False,
                        parallel: bool = True, reference: bool = True, device: str = "cpu",
                        smoke: bool = False, max_questions: int | None = None,
                        max_steps: int | None = None, max_length: int | None = None,
                        progress: Callable[[str], None] | None = None) -> dict:
    """Train the WorldTree headline's models for ``seeds``, evaluate, write the table.

    ``data``: the WorldTree distribution (None: the embedded sample, a smoke test of
    the command, not the headline). Models go to ``models_dir/worldtree`` (reused when
    their manifests match, see :mod:`mathir.reproduction.worldtree_training`); runs,
    ``worldtree.md`` and ``worldtree.json`` to ``out``. ``evaluate``: the splits to evaluate on (Dev is the
    split choices are made on; Test is for reporting, and every Test run computed is
    logged in ``out/test_evaluations.jsonl``). ``ensemble``: also the seed ensemble
    (:func:`mathir.pipelines.worldtree_ltr.ltr_reranked` with every seed's models).
    ``parallel``: train in subprocesses, the bi-encoder and the first cross-encoder
    stage side by side (else one after the other, here). ``smoke`` (or ``max_questions``,
    ``max_steps``, ``max_length``): a tiny configuration whose models go to
    ``models_dir/worldtree-smoke``. ``progress`` gets one line per stage (default:
    stderr). Returns the report (what ``worldtree.json`` holds).

    >>> reproduce_worldtree(seeds=[])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: no seed to train
    """
    from mathir.models import require_extra
    from mathir.tasks import get_task

    require_extra("neural", "mathir reproduce worldtree")
    seeds = list(dict.fromkeys(int(s) for s in seeds))
    if not seeds:
        raise InputError("no seed to train")
    evaluate = [s.lower() for s in evaluate]
    for s in evaluate:
        if s not in ("dev", "test"):
            raise InputError(f"cannot evaluate on {s!r}: dev or test (models train on Train)")
    if smoke:
        max_questions = max_questions or SMOKE["max_questions"]
        max_steps = max_steps or SMOKE["max_steps"]
        max_length = max_length or SMOKE["max_length"]
    tiny = any(v is not None for v in (max_questions, max_steps, max_length))
    recipes = [dataclasses.replace(r, max_steps=max_steps if max_steps is not None else r.max_steps,
                                   max_length=max_length or r.max_length)
               for r in WORLDTREE_RECIPES]
    progress = Progress(progress)
    out = require_writable_dir(out, "--out folder")
    root = Path(models_dir) / ("worldtree-smoke" if tiny else "worldtree")
    require_writable_dir(root, "--models folder")
    if not_ignored_by_git(root):
        import warnings

        warnings.warn(f"{root} is not ignored by git: add its folder to .gitignore "
                      "(`models/` is there)", stacklevel=2)
    task = get_task("worldtree")
    started, cpu0 = time.perf_counter(), _cpu_seconds()
    if data is None:
        progress("no --data: the embedded sample (a test of the command, not the headline)")
    models = train_all(task, data, seeds, recipes, root, max_questions=max_questions,
                       device=device, parallel=parallel, progress=progress)
    trained = time.perf_counter()
    runs: dict[str, dict] = {}
    reference_maps: dict[str, dict] = {}
    computed_test: list[str] = []
    index_dir = out / "runs" / ".index" / "worldtree"
    for split_name in evaluate:
        split = split_data(task, data, split_name, max_questions, out / "data")
        runs_dir, name = out / "runs" / split_name, split_name.capitalize()
        by_run: dict[str, dict] = {}
        for seed in seeds:
            options = {"bi_encoder": str(models[seed]["bi"]),
                       "cross_encoder": str(models[seed]["ce2"])}
            by_run[f"seed{seed}"], computed = evaluate_pipelines(
                task, split, WORLDTREE_PIPELINES, options, runs_dir / f"seed{seed}", index_dir,
                progress, f"{name} seed {seed}")
            computed_test += [f"seed {seed} {p}" for p in computed if split_name == "test"]
        if ensemble and len(seeds) > 1:
            by_run["ensemble"], computed = evaluate_ensemble(
                task, split, seeds, models, runs_dir, index_dir, progress, name)
            computed_test += [f"ensemble {p}" for p in computed if split_name == "test"]
        if reference:
            by_run["reference"], computed = evaluate_pipelines(
                task, split, WORLDTREE_REFERENCE, {}, runs_dir / "reference", index_dir,
                progress, f"{name} reference")
            computed_test += [p for p in computed if split_name == "test"]
            for name, values in by_run["reference"].items():
                reference_maps.setdefault(name, {})[split_name] = values
        runs[split_name] = by_run
    test_evaluations = log_test_evaluations(out, str(data) if data else "sample",
                                            computed_test)
    summary = summarise(runs, seeds)
    report = {
        "task": "worldtree", "data": str(data) if data else "sample", "seeds": seeds,
        "splits": evaluate, "ensemble": bool(ensemble and len(seeds) > 1),
        "smoke": tiny, "max_questions": max_questions,
        "recipes": [r.describe() for r in recipes],
        "models": {str(s): {name: {"path": str(p), "manifest": read_manifest(p)}
                            for name, p in models[s].items()} for s in seeds},
        "summary": summary, "runs": runs, "reference": reference_maps,
        "headline": headline(summary),
        "test_evaluations": test_evaluations,
        "seconds": {"training": round(trained - started, 1),
                    "evaluation": round(time.perf_counter() - trained, 1),
                    "total": round(time.perf_counter() - started, 1)},
        "cpu_seconds": round(_cpu_seconds() - cpu0, 1),
    }
    write_report(report, out)
    progress(f"done: {out / 'worldtree.md'}, {out / 'worldtree.json'}")
    return report


def reproduce_or_combine(data: str | Path | None = None, seeds: int = 3,
                         seed: Sequence[int] | None = None,
                         combine: Sequence[str | Path] | None = None,
                         models_dir: str | Path = "models/reproduce",
                         out: str | Path = "runs/reproduce", test: bool = True,
                         ensemble: bool = False, as_json: bool = False, quiet: bool = False,
                         parallel: bool = True, smoke: bool = False,
                         max_questions: int | None = None, max_steps: int | None = None,
                         echo: Callable[..., None] | None = None) -> dict:
    """What ``mathir reproduce worldtree`` does: with ``combine`` (the reports of single
    seeds), :func:`combine_reports`; else :func:`reproduce_worldtree` of the seeds ``seed``
    (default: 0 .. ``seeds`` - 1), on Dev and, with ``test``, on Test. Says the table in
    Markdown (``as_json``: the report as one JSON object) through ``echo`` (``echo(text)``
    the result, ``echo(text, True)`` the files written), progress lines unless ``quiet``.

    >>> reproduce_or_combine(seeds=0)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: --seeds must be at least 1
    """
    from mathir.reproduction.worldtree_report import markdown_tables

    echo = echo or (lambda text, err=False: None)
    progress = (lambda line: None) if quiet else None
    if combine:
        report = combine_reports(combine, out, ensemble=ensemble, progress=progress)
    else:
        for name, value in (("seeds", seeds), ("max-questions", max_questions),
                            ("max-steps", max_steps)):  # before any work
            if value is not None and value < 1:
                raise InputError(f"--{name} must be at least 1")
        report = reproduce_worldtree(
            data, seeds=seed or list(range(seeds)), models_dir=models_dir, out=out,
            evaluate=("dev", "test") if test else ("dev",), ensemble=ensemble,
            parallel=parallel, smoke=smoke, max_questions=max_questions, max_steps=max_steps,
            progress=progress)
    echo(json.dumps(report) if as_json else markdown_tables(report))
    if not (combine or as_json):
        for what, path in report["files"].items():
            echo(f"{what}: {path}", True)
    return report
