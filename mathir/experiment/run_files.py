"""Anyone's run files: read by file stem, evaluated as their experiment evaluated them
(``mathir evaluate``) and viewed (``mathir view``).

Both score run files the same way (:func:`score_run_files`): with the same options and
defaults, ``mathir view`` and ``mathir evaluate`` print the same table. The collection a
run is judged on (the ``collection`` judged set, ARQMath Task 1) is, in this order: the one
given (``--data`` / ``--collection`` / ``--year``), the one the runs' manifests record
(written by ``mathir experiment`` and ``mathir run``), the data's own when its qrels are
used (the embedded sample); with none of them, runs are judged on the whole qrels file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mathir.errors import InputError
from mathir.evaluation.settings import Evaluation, resolve_evaluation
from mathir.experiment.pipelines import accepts
from mathir.experiment.reports import write_experiment_report
from mathir.experiment.running import ExperimentResult, evaluate_into
from mathir.tasks import Ref, Task, TaskData, get_task

if TYPE_CHECKING:
    import pandas as pd


def read_runs(task: Task, paths: Iterable[str | Path], topics: Iterable[str] | None = None
              ) -> dict[str, pd.DataFrame]:
    """Run files read by the task's reader, named by file stem (two runs with one stem
    are an error). ``topics``: a run line for another topic is an error."""
    known = set(topics) if topics is not None else None
    runs: dict[str, pd.DataFrame] = {}
    for p in paths:
        name = Path(p).stem
        if name in runs:
            raise InputError(f"two runs are named {name!r} (file stem); rename one", path=p)
        runs[name] = task.read_run(p, topics=known)
    return runs


def collection_docnos(task: Task, data: TaskData, index=None) -> list[str] | None:
    """The documents ``data``'s collection holds, as its index lists them (built, or
    reused, when not given); None for a task that judges every document of its qrels."""
    if not task.qrels_in_collection:
        return None
    if index is None:
        index = task.index(data, quiet=True)
    return index.docnos()


def scoring_settings(task: Task, run_paths: Iterable[str | Path], *, given: bool,
                     judged: str | None = None, measures: Any = None,
                     qrels: str | Path | None = None,
                     options: dict[str, Any] | None = None) -> Evaluation:
    """The settings of ``mathir evaluate`` and ``mathir view`` of run files, resolved once
    (:func:`mathir.evaluation.settings.resolve_evaluation`): a collection is known when
    ``given`` (``--data``, ``--collection``, ``--year``), when the runs' manifests record
    one, or when the data's own qrels are used (not a qrels file)."""
    known = given or recorded_collection(task, run_paths) is not None
    return resolve_evaluation(task, judged=judged, measures=measures, qrels=qrels,
                              options=options, collection=True if known else None)


def score_run_files(task: Task, run_paths: Iterable[str | Path], *, settings: Evaluation,
                    data: TaskData | None = None, given: bool = False,
                    topics_path: str | Path | None = None, qrels_duplicates: str = "error",
                    baseline: str | None = None, test: str = "t", correction: str = "holm",
                    quiet: bool = True) -> ExperimentResult:
    """Score run files (anyone's, named by file stem) by ``settings``: the one scoring of
    ``mathir evaluate`` and ``mathir view``, an :class:`ExperimentResult` whose
    ``evaluation`` every view reads (table, per-topic scores, significance, report).

    ``data``: the located files (topics, qrels, collection); None: the qrels file of
    ``settings`` alone (``given``: ``data`` was asked for, not the default sample).
    ``topics_path``: a run line for a topic outside those topics is an error.

    >>> import tempfile
    >>> from mathir.experiment import run_experiment
    >>> res = run_experiment("arqmath-task1", out=tempfile.mkdtemp(), quiet=True)
    >>> task = get_task("arqmath-task1")
    >>> s = scoring_settings(task, res.runs.values(), given=False)
    >>> scored = score_run_files(task, res.runs.values(), settings=s, data=task.data())
    >>> scored.table.round(4).equals(res.table.round(4))
    True
    """
    paths = [Path(p) for p in run_paths]
    choice = settings.qrels
    if data is None and choice.kind != "file":
        raise InputError(f"{choice.name} qrels of {task.name}: give the data folder "
                         "(--data DIR) or a qrels file (--qrels FILE)")
    if data is not None and choice.kind == "file":
        import dataclasses

        data = dataclasses.replace(data, qrels=Path(choice.name))
    qrels_path = data.qrels if data is not None else Path(choice.name)
    if qrels_path is None:
        raise InputError("no qrels for these topics, so nothing to compare the runs on")
    qrels = _read_qrels(task, qrels_path, qrels_duplicates)
    known = None
    if topics_path is not None:
        known = set(task.read_topics(topics_path)["qid"])
    elif data is not None:
        known = set(task.read_topics(data.topics)["qid"])
    runs = read_runs(task, paths, known)
    if data is not None:
        qrels = data.select(qrels)
        runs = {n: data.select(r) for n, r in runs.items()}
    elif task.topic_filter is not None:  # a derived task: its topics only
        keep = _selected_topics(task, topics_path)
        qrels = qrels[qrels["qid"].astype(str).isin(keep)].reset_index(drop=True)
        runs = {n: r[r["qid"].astype(str).isin(keep)].reset_index(drop=True)
                for n, r in runs.items()}
    if baseline is not None and baseline not in runs:
        raise InputError(f"baseline {baseline!r} is not one of the runs: {', '.join(runs)}")
    first = baseline or next(iter(runs), None)
    located = data if data is not None else \
        TaskData("run", None, Path(topics_path) if topics_path else None, Path(qrels_path))
    result = ExperimentResult(task.name, located, dict(zip(runs, paths, strict=True)), None, {},
                              topics=task.topics(data) if data is not None else None,
                              test=test, correction=correction)
    docnos, where = None, None
    if settings.judged == "collection":
        where, docnos, result.index, result.judged_by_manifests = _judging_collection(
            task, paths, data, given, quiet)
    evaluate_into(result, task, runs, qrels, settings=settings, docnos=docnos, where=where,
                  baseline=first)
    return result


def _read_qrels(task: Task, path: str | Path, duplicates: str):
    if duplicates == "error":
        return task.read_qrels(path)
    if accepts(task.read_qrels.resolve() if isinstance(task.read_qrels, Ref)
               else task.read_qrels, "duplicates"):
        return task.read_qrels(path, duplicates=duplicates)
    raise InputError(f"{task.name}: its qrels reader has no choice of duplicates")


def _selected_topics(task: Task, topics_path: str | Path | None) -> set[str]:
    """A derived task's topics, without its data: its ids, or its predicate over
    ``topics_path``."""
    if not callable(task.topic_filter):
        return set(task.topic_filter)
    if topics_path is None:
        raise InputError(f"{task.name} selects its topics by a predicate over the "
                         "topic file: give it with --topics")
    given = Path(topics_path)
    return set(task.topic_ids(TaskData("run", given, given, None)))


def _judging_collection(task: Task, paths: list[Path], data: TaskData | None, given: bool,
                        quiet: bool) -> tuple[str, list[str], Any, bool]:
    """(name, documents, index of ``data``'s collection or None, whether the runs'
    manifests chose it) of the collection the runs are judged on: the one given, else the
    one their manifests record, else the data's."""
    if data is not None and given:
        index = task.index(data, quiet=quiet)
        return Path(data.collection).name, list(index.docnos()), index, False
    record = recorded_collection(task, paths)
    if record is not None:
        return (*_recorded_documents(task, record, quiet), None, True)
    if data is not None and data.collection is not None:
        index = task.index(data, quiet=quiet)
        return Path(data.collection).name, list(index.docnos()), index, False
    raise InputError("judging on the collection's documents needs the collection: give "
                     "--data DIR or --collection PATH (or runs whose manifests name it), or "
                     "--judged file (the whole qrels file)")


def view_run_files(task: Task | str, run_paths: Iterable[str | Path],
                   data: TaskData | None = None, out: str | Path | None = None, *,
                   settings: Evaluation | None = None, given: bool = False,
                   baseline: str | None = None, depth: int = 20, test: str = "t",
                   correction: str = "holm", quiet: bool = True) -> ExperimentResult:
    """:func:`view_runs`, returning the scored runs (:class:`ExperimentResult`; the page
    written is ``result.files["report"]``)."""
    task = get_task(task) if isinstance(task, str) else task
    paths = [Path(p) for p in run_paths]
    if not paths:
        raise InputError(f"no run files to view (RUN ...) for {task.name}")
    data = data or task.data()
    settings = settings or scoring_settings(task, paths, given=given)
    result = score_run_files(task, paths, settings=settings, data=data, given=given,
                             baseline=baseline, test=test, correction=correction, quiet=quiet)
    result.baseline = result.baseline or baseline or next(iter(result.runs))
    result.files["report"] = write_experiment_report(result, out, depth=depth)
    return result


def view_runs(task: Task | str, run_paths: Iterable[str | Path], data: TaskData | None = None,
              out: str | Path | None = None, *, baseline: str | None = None,
              depth: int = 20, judged: str | None = None, measures: Any = None,
              qrels: str | Path | None = None) -> Path:
    """Evaluate run files (anyone's) and write the experiment report with its explorer.

    Runs are named by file stem; ``data`` says where the topics, qrels and collection
    are (default: the task's sample); ``out`` defaults to ``report.html`` beside the
    first run. Runs are judged as ``mathir evaluate`` judges them (``judged``,
    ``measures``, ``qrels``: see :func:`scoring_settings`). The same file ``mathir
    experiment --format html`` writes.

    >>> import tempfile
    >>> from mathir.experiment import run_experiment
    >>> res = run_experiment("arqmath-task1", out=tempfile.mkdtemp(), quiet=True)
    >>> view_runs("arqmath-task1", res.runs.values(), out=tempfile.mkdtemp() + "/v.html").name
    'v.html'
    """
    task = get_task(task) if isinstance(task, str) else task
    paths = [Path(p) for p in run_paths]
    settings = scoring_settings(task, paths, given=data is not None, judged=judged,
                                measures=measures, qrels=qrels)
    if data is not None and not settings.qrels.official:
        data = task.with_qrels(data, settings.qrels.spec)
    elif data is None:
        data = task.data(qrels=settings.qrels.spec)
    return view_run_files(task, paths, data, out, settings=settings, given=data is not None,
                          baseline=baseline, depth=depth).files["report"]


def evaluate_runs(task: Task | str, qrels_path: str | Path | None, run_paths: list[str | Path],
                  topics_path: str | Path | None = None, qrels_duplicates: str = "error",
                  judged: str | None = None, **options) -> pd.DataFrame:
    """Evaluate run files against a qrels file; rows are named by file stem.

    With ``topics_path``, a run line for a topic outside those topics is an error.
    A document judged twice for a topic is an error, as in trec_eval, unless
    ``qrels_duplicates="last"`` (the last judgment counts, as in ir_measures).
    ``options`` go to the task's evaluation (e.g. ``formula_index=PATH``).

    ``judged``: ``"file"`` scores every run on every judgment of the qrels file;
    ``"collection"`` on the judgments of the documents the collection of the runs'
    manifests holds. By default, runs whose manifests (written by ``mathir experiment``
    and ``mathir run``) record a judged set are scored by it, as their experiment scored
    them; other runs on the whole file. The table's ``attrs["judged"]`` says which.
    """
    return evaluate_run_files(task, qrels_path, run_paths, topics_path, qrels_duplicates,
                              judged, **options).table


def evaluate_run_files(task: Task | str, qrels_path: str | Path | None,
                       run_paths: list[str | Path], topics_path: str | Path | None = None,
                       qrels_duplicates: str = "error", judged: str | None = None, *,
                       data: TaskData | None = None, given: bool | None = None,
                       settings: Evaluation | None = None, **options):
    """:func:`evaluate_runs`, returning the whole evaluation
    (:class:`mathir.evaluation.evaluated.EvaluatedRuns`). ``data``: the located files to
    judge on (their qrels, topics and collection; ``given``: whether the user asked for
    them, by default when ``data`` is given); ``settings``: resolved once by the caller
    (else from ``judged``, ``qrels_path``, ``measures`` and ``options`` here)."""
    task = get_task(task) if isinstance(task, str) else task
    measures = options.pop("measures", None)
    if not run_paths and not options and (settings is None or not settings.options):
        raise InputError(f"no run files to evaluate (RUN ...) for {task.name}")
    given = data is not None if given is None else given
    if settings is None:
        settings = scoring_settings(task, run_paths, given=given, judged=judged,
                                    measures=measures, qrels=qrels_path, options=options)
        options = {}
    if data is None and settings.qrels.kind != "file":
        data = task.data(qrels=settings.qrels.spec)
    result = score_run_files(task, run_paths, settings=_with_options(settings, options),
                             data=data, given=given, topics_path=topics_path,
                             qrels_duplicates=qrels_duplicates)
    return result.evaluation


def _with_options(settings: Evaluation, options: dict[str, Any]) -> Evaluation:
    import dataclasses

    return dataclasses.replace(settings, options={**settings.options, **options}) \
        if options else settings


def recorded_collection(task: Task, run_paths: Iterable[str | Path]) -> dict | None:
    """The evaluation record of the runs' manifests when they record the ``collection``
    judged set (one collection for all); None when none records one."""
    import json

    from mathir.experiment.identity import manifest_path

    if not task.qrels_in_collection:
        return None
    records = []
    for p in run_paths:
        try:
            stored = json.loads(manifest_path(p).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = {}
        record = stored.get("evaluation") if isinstance(stored, dict) else None
        records.append(record if isinstance(record, dict) else None)
    judged_by_collection = [r for r in records if r and r.get("judged") == "collection"]
    if not judged_by_collection:
        return None
    collections = {r.get("collection") for r in judged_by_collection}
    if len(collections) > 1 or len(judged_by_collection) < len(records):
        raise InputError("the runs were judged on different sets (their manifests name "
                         f"{len(collections)} collection(s), and {records.count(None)} run(s) "
                         "have none): evaluate them apart, or all with --judged file")
    return judged_by_collection[0]


def _recorded_documents(task: Task, record: dict, quiet: bool) -> tuple[str, list[str]]:
    """(collection name, its documents) of a manifest's evaluation record."""
    from mathir.experiment.code_fingerprint import index_checksum

    collection = Path(str(record.get("collection")))
    index_dir = record.get("index")
    index = None
    # the recorded index only while it is the one the run was judged with (the folder may
    # hold another collection's index since: the documents come from the collection then)
    same = index_dir and Path(index_dir).is_dir() and \
        record.get("index_checksum") == index_checksum(index_dir)
    if same and task.open_index is not None:
        try:
            index = task.open_index(index_dir)
        except Exception:  # an index of another version: rebuilt below from the collection
            index = None
    if index is None:
        if not collection.exists():
            raise InputError("the collection that judged this run (its manifest's "
                             "evaluation record) is gone; score it on the whole file with "
                             "--judged file", path=collection)
        index = task.index(TaskData(str(record.get("label") or "run"), collection,
                                    collection, None), quiet=quiet)
    return collection.name, list(index.docnos())
