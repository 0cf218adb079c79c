"""Anyone's run files: read by file stem, evaluated as their experiment evaluated them
(``mathir evaluate``) and viewed (``mathir view``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mathir.errors import InputError
from mathir.evaluation.evaluated import check_judged
from mathir.experiment.pipelines import accepts
from mathir.experiment.reports import write_experiment_report
from mathir.experiment.running import (
    ExperimentResult,
    evaluate_into,
    evaluation_record,
)
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


def view_runs(task: Task | str, run_paths: Iterable[str | Path], data: TaskData | None = None,
              out: str | Path | None = None, baseline: str | None = None,
              depth: int = 20, judged: str | None = None, measures: Any = None) -> Path:
    """Evaluate run files (anyone's) and write the experiment report with its explorer.

    Runs are named by file stem; ``data`` says where the topics, qrels and collection
    are (default: the task's sample); ``out`` defaults to ``report.html`` beside the
    first run. Runs are judged as ``mathir experiment`` judges them (``judged``, see
    :func:`run_experiment`). The same file ``mathir experiment --format html`` writes.

    >>> import tempfile
    >>> from mathir.experiment import run_experiment
    >>> res = run_experiment("arqmath-task1", out=tempfile.mkdtemp(), quiet=True)
    >>> view_runs("arqmath-task1", res.runs.values(), out=tempfile.mkdtemp() + "/v.html").name
    'v.html'
    """
    task = get_task(task) if isinstance(task, str) else task
    if judged is not None:
        check_judged(task, judged)
    data = data or task.data()
    paths = [Path(p) for p in run_paths]
    if not paths:
        raise InputError(f"no run files to view (RUN ...) for {task.name}")
    topics = task.topics(data)
    runs = {n: data.select(r) for n, r in
            read_runs(task, paths, set(task.read_topics(data.topics)["qid"])).items()}
    if baseline is not None and baseline not in runs:
        raise InputError(f"baseline {baseline!r} is not one of the runs: {', '.join(runs)}")
    if data.qrels is None:
        raise InputError("no qrels for these topics, so nothing to compare the runs on")
    qrels = task.qrels(data)
    result = ExperimentResult(task.name, data, dict(zip(runs, paths, strict=True)), None, {},
                              topics=topics)
    record = evaluation_record(task, data, None, judged)
    index = task.index(data, quiet=True) if record["judged"] == "collection" else None
    evaluate_into(result, task, runs, qrels, record, index, baseline or next(iter(runs)),
                   measures)
    result.baseline = result.baseline or baseline or next(iter(runs))
    return write_experiment_report(result, out, depth=depth)


def evaluate_runs(task: Task | str, qrels_path: str | Path, run_paths: list[str | Path],
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


def evaluate_run_files(task: Task | str, qrels_path: str | Path, run_paths: list[str | Path],
                       topics_path: str | Path | None = None, qrels_duplicates: str = "error",
                       judged: str | None = None, **options):
    """:func:`evaluate_runs`, returning the whole evaluation
    (:class:`mathir.evaluation.evaluated.EvaluatedRuns`)."""
    from mathir.evaluation.evaluated import evaluate

    task = get_task(task) if isinstance(task, str) else task
    if judged is not None:
        check_judged(task, judged)
    if not run_paths and not options:
        raise InputError(f"no run files to evaluate (RUN ...) for {task.name}")
    if qrels_duplicates == "error":
        qrels = task.read_qrels(qrels_path)
    elif accepts(task.read_qrels.resolve() if isinstance(task.read_qrels, Ref)
                 else task.read_qrels, "duplicates"):
        qrels = task.read_qrels(qrels_path, duplicates=qrels_duplicates)
    else:
        raise InputError(f"{task.name}: its qrels reader has no choice of duplicates")
    topics = task.read_topics(topics_path) if topics_path else None
    runs = read_runs(task, run_paths, set(topics["qid"]) if topics is not None else None)
    if task.topic_filter is not None:  # a derived task: its topics only
        if callable(task.topic_filter):
            if topics is None:
                raise InputError(f"{task.name} selects its topics by a predicate over the "
                                 "topic file: give it with --topics")
            given = Path(topics_path)
            keep = set(task.topic_ids(TaskData("run", given, given, None)))
        else:
            keep = set(task.topic_filter)
        qrels = qrels[qrels["qid"].astype(str).isin(keep)].reset_index(drop=True)
        runs = {n: r[r["qid"].astype(str).isin(keep)].reset_index(drop=True)
                for n, r in runs.items()}
    docnos, where = None, None
    rule = judged or "file"
    if task.qrels_in_collection and judged != "file":
        recorded = _recorded_collection(task, run_paths, judged)
        if recorded is not None:
            rule = "collection"
            where, docnos = recorded
    return evaluate(task, runs, qrels, docnos=docnos, judged=rule, where=where, **options)


def _recorded_collection(task: Task, run_paths: list[str | Path], judged: str | None
                         ) -> tuple[str, list[str]] | None:
    """(collection name, its documents) from the runs' manifests when they record the
    ``collection`` judged set (one collection for all); None when none records one."""
    import json

    from mathir.experiment.identity import manifest_path

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
        if judged == "collection":
            raise InputError("--judged collection: no run has a manifest that names its "
                             "collection (written by mathir experiment or mathir run)")
        return None
    collections = {r.get("collection") for r in judged_by_collection}
    if len(collections) > 1 or len(judged_by_collection) < len(records):
        raise InputError("the runs were judged on different sets (their manifests name "
                         f"{len(collections)} collection(s), and {records.count(None)} run(s) "
                         "have none): evaluate them apart, or all with --judged file")
    record = judged_by_collection[0]
    collection = Path(str(record.get("collection")))
    index_dir = record.get("index")
    index = None
    if index_dir and Path(index_dir).is_dir() and task.open_index is not None:
        try:
            index = task.open_index(index_dir)
        except Exception:  # an index of another version: rebuilt below from the collection
            index = None
    if index is None:
        if not collection.exists():
            raise InputError("the collection that judged this run (its manifest's "
                             "evaluation record) is gone; score it on the whole file with "
                             "--judged file", path=collection)
        from mathir.tasks import TaskData

        index = task.index(TaskData(str(record.get("label") or "run"), collection,
                                    collection, None), quiet=True)
    return collection.name, list(index.docnos())
