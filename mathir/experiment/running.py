"""Running an experiment: build the index, run each pipeline into its run file with a
manifest, reuse runs whose declared identity is unchanged, and evaluate them once
(:mod:`mathir.evaluation.evaluated`).
"""

from __future__ import annotations

import contextlib
import time
import traceback
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mathir.errors import InputError
from mathir.evaluation.settings import Evaluation, resolve_evaluation
from mathir.experiment.identity import (
    remove_manifest,
    run_manifest,
    stale_reason,
)
from mathir.experiment.identity import write_manifest as write_run_manifest
from mathir.experiment.pipelines import (
    Pipeline,
    PipelineSource,
    available_pipelines,
    declared_pipeline,
    import_reference,
    resolve_pipelines,
    unknown_pipeline,
)
from mathir.experiment.quiet import quiet_libraries
from mathir.models import require_extra
from mathir.storage import atomic_file, exclusive_lock
from mathir.storage.paths import run_folder
from mathir.tasks import Ref, Task, TaskData, get_task

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` produced: run files, tables and extra files."""

    task: str
    data: TaskData
    runs: dict[str, Path]
    table: pd.DataFrame | None
    seconds: dict[str, float]
    files: dict[str, Path] = field(default_factory=dict)
    per_topic: dict[str, pd.DataFrame] | None = None
    significance: pd.DataFrame | None = None
    baseline: str | None = None
    reused: list[str] = field(default_factory=list)
    # PNG bytes of the figures among ``files``, as this experiment drew them.
    figures: dict[str, bytes] = field(default_factory=dict)
    #: pipeline -> why its run was (re)computed (the others are in ``reused``)
    recomputed: dict[str, str] = field(default_factory=dict)
    test: str = "t"
    correction: str = "holm"
    #: the one evaluation every view reads (:class:`mathir.evaluation.evaluated.EvaluatedRuns`)
    evaluation: Any = None
    #: the topics of the runs (read once; the explorer lists them)
    topics: Any = None
    #: the index of ``data``'s collection, when built (the explorer reads its documents'
    #: texts from it: :func:`mathir.experiment.reports.explorer_lookups`)
    index: Any = None
    #: whether the runs' manifests chose the collection that judged them (mathir evaluate
    #: and view of run files, by default)
    judged_by_manifests: bool = False

    @property
    def judged_note(self) -> str | None:
        """Which judgments scored the runs, in words (None where every judgment counts)."""
        return self.evaluation.judged_note if self.evaluation is not None else None


@dataclass(frozen=True)
class Execution:
    """How an experiment's pipelines run: the run files' format, progress bars, topic
    batches in ``workers`` local processes or on a Ray cluster (``ray_address``), and
    whether runs whose manifests match are reused.

    >>> Execution("arqmath").workers
    1
    """

    run_format: str
    quiet: bool = False
    workers: int = 1
    ray_address: str | None = None
    reuse: bool = True


# --- pipelines: declared, resolved, built once ---------------------------------------------


def build_pipeline(task_name: str, pipeline: str, index_dir: str, **kwargs):
    """Reopen a task's index and build a pipeline: a name of the task (or of an entry
    point), or a ``"module:factory"`` reference. Worker processes call this."""
    task = get_task(task_name)
    if task.open_index is None:
        raise InputError(f"{task_name} cannot reopen its index in worker processes")
    index = task.open_index(Path(index_dir))
    available = available_pipelines(task)
    if pipeline in available:
        factory = available[pipeline][0]
        if isinstance(factory, Ref):
            factory = import_reference(factory.target)
    else:
        factory = import_reference(pipeline)
    return factory(index, **kwargs)


def _describe(pipe) -> str | None:
    try:
        return repr(pipe)
    except Exception:  # noqa: BLE001 - a description only
        return None


def _run(task: Task, pipeline: Pipeline, index, topics: pd.DataFrame, out: Path,
         how: Execution) -> tuple[Path, str | None]:
    """Build ``pipeline`` once (here, or once in each worker) and write its run."""
    workers, ray_address = how.workers, how.ray_address
    parallel = (workers > 1 or ray_address) and task.open_index is not None \
        and getattr(index, "path", None) is not None
    reference = pipeline.reference if parallel else None
    if parallel and reference is None:
        warnings.warn(f"pipeline {pipeline.name!r} runs in this process: workers rebuild a "
                      "pipeline from an importable factory ('module:function'), not from a "
                      "lambda, a local function or a transformer object", stacklevel=3)
    if reference is not None:
        from mathir.pipelines.parallel import ParallelTopics, PipelineSpec

        kwargs = tuple(sorted(pipeline.kwargs.items()))
        spec = PipelineSpec(build_pipeline, (task.name, reference, str(index.path)), kwargs)
        pipe = ParallelTopics(spec, workers=max(workers, 1),
                              backend="ray" if ray_address else "processes",
                              ray_address=None if ray_address == "local" else ray_address)
        description = f"ParallelTopics({reference}, {dict(kwargs)})"
        try:
            results = pipe.transform(topics)
        finally:
            pipe.close()
    else:
        pipe = pipeline.build(index, verbose=not how.quiet)
        description = _describe(pipe)
        with _names_failures(pipeline, topics):
            results = pipe.transform(topics)
    path = task.write_run(results, out, name=out.stem, format=how.run_format,
                          topics=topics["qid"])
    return path, description


class PipelineError(InputError):
    """A user's pipeline raised: the message names the pipeline, the topics it was given
    and where in the user's code it failed (the original exception is its ``__cause__``)."""


@contextlib.contextmanager
def _names_failures(pipeline: Pipeline, topics: pd.DataFrame) -> Iterator[None]:
    """An exception raised by a pipeline that is not the task's own becomes a
    :class:`PipelineError` naming the pipeline and the topic batch (mathir's own pipelines
    keep their traceback: an error there is mathir's to fix)."""
    try:
        yield
    except (InputError, KeyboardInterrupt):
        raise
    except Exception as e:
        if pipeline.origin == "task":
            raise
        qids = [str(q) for q in topics["qid"]] if "qid" in topics.columns else []
        batch = (f"{len(qids)} topic{'s' if len(qids) != 1 else ''}"
                 + (f" ({qids[0]} .. {qids[-1]})" if len(qids) > 1 else
                    f" ({qids[0]})" if qids else ""))
        package = str(Path(__file__).resolve().parent)
        frames = [f for f in traceback.extract_tb(e.__traceback__)
                  if "site-packages" not in f.filename and not f.filename.startswith(package)
                  and not f.filename.startswith("<")]
        where = f" at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name}" \
            if frames else ""
        raise PipelineError(f"pipeline {pipeline.name!r} ({pipeline.origin}) failed on "
                            f"{batch}{where}: {type(e).__name__}: {e}") from e


def _manifest(task: Task, pipeline: Pipeline, data: TaskData, index, *, run_format: str,
              settings: Evaluation) -> dict:
    manifest = run_manifest(task.name, pipeline.identity(), data.topics, qrels=data.qrels,
                            index_dir=getattr(index, "path", None),
                            data={"collection": data.collection, **data.extras},
                            run_format=run_format, selection=data.topic_ids)
    manifest["evaluation"] = evaluation_record(data, index, settings)
    return manifest


def evaluation_record(data: TaskData, index, settings: Evaluation) -> dict:
    """How a run is scored, as its manifest records it (not part of its identity): the
    settings (:meth:`mathir.evaluation.settings.Evaluation.record`: the judged set, the
    qrels, the measures), and for the ``collection`` judged set (the judgments of the
    documents the collection holds) the collection and the index whose documents those
    are. ``mathir evaluate`` scores a run with a manifest by it."""
    from mathir.experiment.code_fingerprint import index_checksum

    record: dict[str, Any] = {**settings.record(), "label": data.label}
    if settings.judged == "collection":
        record["collection"] = str(Path(data.collection).resolve())
        path = getattr(index, "path", None)
        record["index"] = str(Path(path).resolve()) if path is not None else None
        # the index the documents were listed from, as it was: a later build in the same
        # folder (another collection) is not taken for it
        record["index_checksum"] = index_checksum(path)
    return record


def _record_evaluation(run_path: Path, record: dict) -> None:
    """Update the evaluation record of a reused run's manifest (its identity and the run
    file's checksum are kept)."""
    import json

    from mathir.experiment.identity import manifest_path

    p = manifest_path(run_path)
    try:
        stored = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if stored.get("evaluation") == record:
        return
    stored["evaluation"] = record
    with atomic_file(p) as f:
        json.dump(stored, f, indent=2, sort_keys=True)


def _run_with_manifest(task: Task, pipeline: Pipeline, index, topics: pd.DataFrame, out: Path,
                       *, manifest: dict, how: Execution) -> Path:
    """Write the run, then its manifest (with the run file's checksum): a stale
    manifest is removed first, so an interruption leaves a run that is never reused."""
    remove_manifest(out)
    _, description = _run(task, pipeline, index, topics, out, how)
    write_run_manifest(out, {**manifest, "description": description})
    return out


def write_pipeline_run(task: Task | str, pipeline: str | Pipeline, data: TaskData, out: str | Path,
                       *, index_dir: str | Path | None = None, quiet: bool = False,
                       run_format: str | None = None, options: Mapping[str, Any] | None = None
                       ) -> Path:
    """Index ``data`` (or reuse its index), run ``pipeline`` over its topics, and write
    the run file ``out`` with its manifest beside it (``out.manifest.json``, with the
    run file's SHA-256), so that a later experiment in the same folder reuses it only
    while it is unchanged. What ``mathir run`` does.

    >>> import tempfile
    >>> out = write_pipeline_run("arqmath-task1", "bm25", get_task("arqmath-task1").data(),
    ...                          tempfile.mkdtemp() + "/bm25.tsv", quiet=True)
    >>> out.with_name("bm25.manifest.json").exists()
    True
    """
    task = get_task(task) if isinstance(task, str) else task
    run_format = run_format or task.run_formats[0]
    task.check_run_format(run_format)
    chosen = pipeline if isinstance(pipeline, Pipeline) else \
        resolve_pipelines(task, [pipeline], options)[pipeline]
    out = Path(out)
    index = task.index(data, index_dir, quiet=quiet)
    topics = task.topics(data)
    settings = resolve_evaluation(task, collection=True)  # how an experiment would score it
    with exclusive_lock(out):
        return _run_with_manifest(task, chosen, index, topics, out,
                                  manifest=_manifest(task, chosen, data, index,
                                                     run_format=run_format, settings=settings),
                                  how=Execution(run_format, quiet=quiet))


def run_pipeline(task: Task, pipeline: str | Pipeline, index, topics: pd.DataFrame, out: Path,
                 *, quiet: bool = False, workers: int = 1, ray_address: str | None = None,
                 run_format: str | None = None, **kwargs) -> Path:
    """Run one pipeline over ``topics`` and write its run file to ``out`` (in
    ``run_format``, by default the task's own: the first of ``task.run_formats``).

    ``pipeline`` is a name (of the task's pipelines or of an entry point; ``kwargs`` go
    to its factory, e.g. ``cross_encoder=PATH``) or a :class:`Pipeline`. With
    ``workers`` > 1 (local processes) or a ``ray_address`` (a Ray cluster; "auto" joins a
    running one, "local" starts one), topics are processed in parallel batches, each
    worker building the pipeline from its factory and arguments once; the results are
    identical to a single-process run.
    """
    if not isinstance(pipeline, Pipeline):
        available = available_pipelines(task)
        if pipeline not in available:
            raise unknown_pipeline(pipeline, available)
        declared = declared_pipeline(pipeline, available[pipeline][0], available[pipeline][1], {},
                             available)
        pipeline = Pipeline(declared.name, declared.factory, {**declared.kwargs, **kwargs},
                            declared.transformer, declared.origin)
    run_format = task.check_run_format(run_format or task.run_formats[0])
    return _run(task, pipeline, index, topics, Path(out),
                Execution(run_format, quiet=quiet, workers=workers, ray_address=ray_address))[0]


# --- quiet: no progress bars, no library noise -----------------------------------------------

def run_experiment(task: Task | str, data: TaskData | None = None,
                   pipelines: Iterable[str | Mapping[str, PipelineSource]]
                   | Mapping[str, PipelineSource] | None = None,
                   out: str | Path = "runs", *, index_dir: str | Path | None = None,
                   quiet: bool = False, baseline: str | None = None, test: str = "t",
                   correction: str = "holm", workers: int = 1, ray_address: str | None = None,
                   reuse: bool = True, options: Mapping[str, Any] | None = None,
                   run_format: str | None = None, judged: str | None = None,
                   qrels: str | Path | None = None, measures: Any = None,
                   settings: Evaluation | None = None) -> ExperimentResult:
    """Index, run each pipeline, write run files with manifests, evaluate and compare.

    ``judged``: which judgments score the runs, ``"collection"`` (the default where the
    task declares ``qrels_in_collection``, ARQMath Task 1: the judgments of the documents
    the collection holds) or ``"file"`` (every judgment of the qrels file); recorded in
    each run's manifest (``mathir evaluate`` scores the run by it) and said by
    ``result.judged_note``. The evaluation is made once (``result.evaluation``); the
    table, per-topic scores, significance tests, report and explorer all read it.
    ``qrels``: a published variant of the judgments by name (``"all"``; ``mathir tasks``
    lists them; ``"official"``: the task's own) or a qrels file. ``measures``: ir_measures
    measures instead of the task's (a leading ``+``: beside them), e.g.
    ``"nDCG(judged_only=True)@10,R(rel=2)@1000"``. ``settings``: all of these resolved
    once (:func:`mathir.evaluation.settings.resolve_evaluation`; what the command line
    gives), instead of ``judged``, ``qrels`` and ``measures``.

    ``pipelines``: see :func:`resolve_pipelines` — the task's names, entry-point names,
    and your own, e.g. ``["bm25", {"mine": lambda index: mathir.bm25(index) >>
    pt.apply.doc_score(f)}]``. ``options`` go to every factory naming them (the CLI's
    ``--cross-encoder`` is ``{"cross_encoder": PATH}``).

    Runs go to ``out/<task>/<data label>/<pipeline>.tsv`` in ``run_format``, each with a
    ``<pipeline>.manifest.json`` (see :mod:`mathir.experiment.identity`); a run is reused
    only when its declared identity (pipeline factory, arguments and code, topics,
    index, data files, package versions, mathir's source) is unchanged, and
    ``result.recomputed`` says why each other run was computed. Each pipeline is built
    once, and only when its run is computed. When the task has per-topic scores, every
    pipeline is compared with ``baseline`` (default: the first) by a paired ``test`` with
    ``correction`` over the pipelines.

    >>> import tempfile
    >>> res = run_experiment("arqmath-task1", out=tempfile.mkdtemp(), quiet=True,
    ...                      index_dir=tempfile.mkdtemp() + "/idx")
    >>> list(res.table.index), res.baseline, res.recomputed["bm25"]
    (['tfidf', 'bm25'], 'tfidf', 'no run file yet')
    """
    from mathir.evaluation.significance import check_test

    task = get_task(task) if isinstance(task, str) else task
    check_test(test, correction)
    if ray_address:
        require_extra("cluster", "--ray (running on a Ray cluster)")
    how = Execution(task.check_run_format(run_format or task.run_formats[0]), quiet=quiet,
                    workers=check_workers(workers), ray_address=ray_address, reuse=reuse)
    chosen = resolve_pipelines(task, pipelines, options)
    names = list(chosen)
    if not names:
        raise InputError("no pipeline to run")
    if baseline is not None and baseline not in names:
        raise InputError(f"baseline {baseline!r} is not one of the pipelines run: {', '.join(names)}")
    if settings is None:  # before any work
        settings = resolve_evaluation(task, judged=judged, measures=measures, qrels=qrels,
                                      collection=True)
    elif judged is not None or measures is not None or qrels is not None:
        raise TypeError("run_experiment(): give settings, or judged, qrels and measures, "
                        "not both")
    if data is None:
        data = task.data(qrels=settings.qrels.spec)
    elif qrels is not None and not settings.qrels.official:
        data = task.with_qrels(data, settings.qrels.spec)
    with quiet_libraries(library_warnings=False) if quiet else contextlib.nullcontext():
        return _experiment(task, data, chosen, Path(out), index_dir=index_dir,
                           baseline=baseline, test=test, correction=correction, how=how,
                           settings=settings)


def check_workers(workers: int) -> int:
    """``workers`` when it is at least 1; InputError otherwise (before any work).

    >>> check_workers(0)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: --workers must be at least 1, not 0
    """
    from mathir.errors import CALLER

    if not isinstance(workers, int) or workers < 1:
        name = "--workers" if CALLER.get() == "cli" else "workers"
        raise InputError(f"{name} must be at least 1, not {workers}")
    return workers


def _experiment(task: Task, data: TaskData, chosen: dict[str, Pipeline], out: Path, *,
                index_dir, baseline: str | None, test: str, correction: str, how: Execution,
                settings: Evaluation) -> ExperimentResult:
    topics = task.topics(data)
    qrels = task.qrels(data)
    known = set(topics["qid"])
    t0 = time.perf_counter()
    index = task.index(data, index_dir, quiet=how.quiet)
    seconds = {"index": time.perf_counter() - t0}
    runs: dict[str, Path] = {}
    loaded: dict[str, pd.DataFrame] = {}
    reused: list[str] = []
    recomputed: dict[str, str] = {}
    folder = run_folder(out, task.name, data.label)  # each part one path component
    record = evaluation_record(data, index, settings)
    for n, pipeline in chosen.items():
        t0 = time.perf_counter()
        path = folder / f"{n}.tsv"
        manifest = _manifest(task, pipeline, data, index, run_format=how.run_format,
                             settings=settings)
        # Another experiment may write the same run file (same output folder and data
        # label, other data): the lock keeps reuse check, write, manifest and reading
        # back one step, so the scores are those of this experiment's own run.
        with exclusive_lock(path):
            why = stale_reason(path, manifest) if how.reuse else "reuse turned off"
            if why is None:
                reused.append(n)
                _record_evaluation(path, record)
            else:
                recomputed[n] = why
                _run_with_manifest(task, pipeline, index, topics, path, manifest=manifest,
                                   how=how)
            loaded[n] = task.read_run(path, topics=known)
        runs[n] = path
        seconds[n] = time.perf_counter() - t0
    result = ExperimentResult(task.name, data, runs, None, seconds, reused=reused,
                              recomputed=recomputed, test=test, correction=correction,
                              topics=topics, index=index)
    if qrels is None:
        return result
    evaluate_into(result, task, loaded, qrels, settings=settings, index=index,
                  baseline=baseline or next(iter(chosen)))
    if task.report is not None:
        with exclusive_lock(folder):  # keep the figures this experiment drew (see above)
            result.files = task.report(loaded, qrels, folder, **data.extras, **data.options)
            result.figures = {what: Path(f).read_bytes() for what, f in result.files.items()
                              if Path(f).suffix == ".png"}
    return result


def evaluate_into(result: ExperimentResult, task: Task, runs: dict, qrels, *,
                  settings: Evaluation, index=None, docnos: Any = None,
                  where: str | None = None, baseline: str) -> None:
    """The one evaluation of ``runs`` by ``settings``, and what the result derives from
    it. The collection's documents come from ``index`` (or are given as ``docnos``, named
    ``where``) when the settings judge on the collection."""
    from mathir.evaluation.evaluated import evaluate

    if settings.judged == "collection" and docnos is None and index is not None:
        docnos = index.docnos()
    where = where or (Path(result.data.collection).name if result.data.collection else None)
    options = {**result.data.extras, **result.data.options, **settings.options}
    ev = evaluate(task, runs, qrels, settings=settings, docnos=docnos, where=where, **options)
    result.evaluation = ev
    result.table = ev.table
    if ev.per_topic is not None:
        result.per_topic = ev.per_topic
        result.baseline = baseline
        result.significance = ev.significance(baseline, result.test, result.correction)


def check_experiment(task: Task, pipelines: Any, *, workers: int = 1, test: str = "t",
                     correction: str = "holm", run_format: str | None = None,
                     options: Mapping[str, Any] | None = None) -> None:
    """What :func:`run_experiment` refuses before any work besides its evaluation settings
    (:func:`mathir.evaluation.settings.resolve_evaluation`), checked on its own (the
    command line does it before it locates the data, so that a mistake is its only line).

    >>> check_experiment(get_task("arqmath-task1"), ["bm2"])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: unknown pipeline 'bm2'; did you mean 'bm25'? ...
    """
    from mathir.evaluation.significance import check_test

    check_workers(workers)
    check_test(test, correction)
    task.check_run_format(run_format or task.run_formats[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # said again when the experiment resolves them
        resolve_pipelines(task, pipelines, options)


def locate_data(task: Task, data: str | Path | None = None, year: str | None = None,
                collection: str | Path | None = None, qrels: str | Path | None = None
                ) -> tuple[TaskData, list[str]]:
    """The task's files, and the defaults taken, in words: ``data``, else ``$MATHIR_DATA``
    where a year, split or collection asks for real data (as ``pt.get_dataset`` reads
    it), else the embedded sample (said), with the default year or split (said).

    >>> files, notes = locate_data(get_task("arqmath-task1"))
    >>> files.label, notes[0].startswith("no --data: arqmath-task1 on its embedded sample")
    ('sample', True)
    """
    from mathir.tasks import data_folder

    folder = data_folder(data, bool(year or collection))
    found = task.data(folder, year, collection, qrels=qrels)
    notes = []
    if folder is None:
        notes.append(f"no --data: {task.name} on its embedded sample "
                     f"({len(task.topics(found))} topics; give --data DIR for the real files)")
    elif year is None and found.label not in ("sample", None) and (task.years or task.splits):
        what = "year" if task.years else "split"
        notes.append(f"no --{what}: {found.label}, the default (--{what} chooses)")
    return found, notes
