"""The work of the ``mathir`` commands, one function each (the command line parses its
arguments and calls one of them): it takes the options as a user gives them (task names,
paths, comma-separated lists), checks them before any work, does the work and says what
it did through ``echo``.

``echo(text)`` is the result, a command's stdout; ``echo(text, True)`` a note, a file
written or a run reused, a command's stderr. By default nothing is said. Messages name
the command's options (``--out``), as :func:`~mathir.experiment.locate_data` does.
Nothing here imports pandas or PyTerrier at import time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mathir.errors import InputError
from mathir.experiment.pipelines import factory_options
from mathir.storage import require_output_file, require_writable_dir

if TYPE_CHECKING:
    from mathir.experiment.running import ExperimentResult
    from mathir.tasks import Task, TaskData

#: how a workflow speaks: ``echo(text)`` (stdout) or ``echo(text, True)`` (stderr)
Echo = Callable[..., None]


def _silent(text: str, err: bool = False) -> None:
    """The default ``echo``: says nothing."""


def _task(task: Task | str) -> Task:
    from mathir.tasks import get_task

    return get_task(task) if isinstance(task, str) else task


def _located(task: Task, data: str | Path | None, year: str | None,
             collection: str | Path | None, qrels: str | Path | None, echo: Echo) -> TaskData:
    """The task's files (:func:`~mathir.experiment.locate_data`), the defaults it took said
    first."""
    from mathir.experiment.running import locate_data

    found, notes = locate_data(task, data, year, collection, qrels=qrels)
    for note in notes:
        echo(f"note: {note}", True)
    return found


def _output_file(path: str | Path, what: str, echo: Echo) -> Path:
    """:func:`~mathir.storage.require_output_file`, saying so when it creates the file's
    folder."""
    missing = [p for p in Path(path).parents if not p.exists()]
    out = require_output_file(path, what)
    if missing:
        echo(f"note: created the folder {missing[-1]} for the {what}", True)
    return out


def demo(out: str | Path = "runs/demo", quiet: bool = False, echo: Echo = _silent
         ) -> dict[str, ExperimentResult]:
    """Every registered task's experiment on its embedded sample (``mathir demo``): each
    task's table and run files said when it is done; a task without a sample is skipped.

    >>> demo(__file__)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: .../workflows.py: --out folder is a file, not a folder
    """
    from mathir.experiment.running import run_experiment
    from mathir.report.tables import format_table
    from mathir.tasks import TASKS

    require_writable_dir(out, "--out folder")
    results = {}
    for name, task in TASKS.items():
        if not task.has_sample:  # e.g. a plug-in's task: it needs its data
            echo(f"== {name}: no embedded sample (mathir experiment {name} --data DIR) ==\n")
            continue
        res = results[name] = run_experiment(task, out=out, quiet=quiet)
        echo(f"== {name} ({task.description}) on the embedded sample ==")
        echo(format_table(res.table, "table"))
        for pipe, path in res.runs.items():
            echo(f"  {pipe}: {path}")
        echo("")
    return results


def experiment(task: Task | str, pipelines: str | None = None, own: Sequence[str] = (),
               pipelines_files: Sequence[str | Path] = (), *, data: str | Path | None = None,
               year: str | None = None, collection: str | Path | None = None,
               qrels: str | Path | None = None, out: str | Path = "runs",
               index_dir: str | Path | None = None, options: Mapping[str, Any] | None = None,
               format: str = "table", run_format: str | None = None,
               per_topic: str | Path | None = None, baseline: str | None = None,
               test: str = "t", correction: str = "holm", workers: int = 1,
               ray_address: str | None = None, reuse: bool = True, judged: str | None = None,
               measures: str | None = None, evaluation_options: Mapping[str, Any] | None = None,
               quiet: bool = False, echo: Echo = _silent) -> ExperimentResult:
    """``mathir experiment``: index, run the pipelines, compare them.

    ``pipelines``: comma-separated names (default: the task's defaults and all of your
    own); ``own``: ``NAME=module:factory`` references, ``pipelines_files``: files defining
    ``PIPELINES`` (:func:`~mathir.experiment.own_pipelines`). Everything that can be
    checked is checked before the data is located, so that a mistake is the only line.
    Says the table (``format``: a table format, or ``html``: the table and the report
    written beside the runs), the judged set, the per-topic files written (``per_topic``,
    a CSV file) and each run file, reused or recomputed. The evaluation's settings
    (``qrels``, ``judged``, ``measures``, ``evaluation_options``: the task's own, e.g.
    ``qrels_key``) are resolved once (:func:`~mathir.evaluation.settings.resolve_evaluation`).

    >>> import tempfile
    >>> said = []
    >>> res = experiment("arqmath-task1", "bm25", out=tempfile.mkdtemp(), quiet=True,
    ...                  echo=lambda text, err=False: said.append(text))
    >>> said[0].startswith("note: no --data: arqmath-task1 on its embedded sample"), list(res.runs)
    (True, ['bm25'])
    """
    from mathir.evaluation.settings import resolve_evaluation
    from mathir.experiment.pipelines import own_pipelines, select_pipelines
    from mathir.experiment.running import check_experiment, run_experiment

    task = _task(task)
    require_writable_dir(out, "--out folder")
    if per_topic:
        _output_file(per_topic, "--per-topic file", echo)
    selection = select_pipelines(task, pipelines, own_pipelines(pipelines_files, own), own)
    check_experiment(task, selection, workers=workers, test=test, correction=correction,
                     run_format=run_format, options=factory_options(options))
    settings = resolve_evaluation(task, judged=judged, measures=measures, qrels=qrels,
                                  options=evaluation_options, collection=True)
    found, official = _judged_data(task, data, year, collection, settings, echo)
    res = run_experiment(task, found, selection, out=out, index_dir=index_dir, quiet=quiet,
                         baseline=baseline, test=test, correction=correction, workers=workers,
                         ray_address=ray_address, reuse=reuse, options=factory_options(options),
                         run_format=run_format, settings=settings)
    _say_scores(res, format, per_topic, official, echo)
    _say_runs(res, format, echo)
    return res


def _judged_data(task: Task, data: str | Path | None, year: str | None,
                 collection: str | Path | None, settings: Any, echo: Echo
                 ) -> tuple[TaskData, Any]:
    """The task's files (:func:`_located`) judged by the settings' qrels, and the official
    qrels they replace (None when they are the official ones)."""
    found = _located(task, data, year, collection, None, echo)
    if settings.qrels.official:
        return found, None
    official = task.qrels(found) if found.qrels is not None else None
    return task.with_qrels(found, settings.qrels.spec), official


def _say_scores(res: ExperimentResult, format: str, per_topic: str | Path | None,
                official: Any, echo: Echo, judged_how: str = "") -> None:
    """The table (stdout); the qrels and judged set, the report and per-topic files
    (stderr): what ``experiment``, ``evaluate`` and ``view`` say of their scores."""
    from mathir.evaluation.settings import qrels_note
    from mathir.experiment.reports import (
        significance_note,
        write_experiment_report,
        write_per_topic,
    )
    from mathir.report.tables import format_table

    if res.table is None:
        echo("no qrels for these topics; runs written:", True)
        return
    echo(format_table(res.table, "table" if format == "html" else format,
                      significance=res.significance, footnote=significance_note(res)))
    ev = res.evaluation
    note = qrels_note(ev.settings.qrels, ev.qrels_file, official) \
        if ev is not None and ev.settings is not None else None
    if note:
        echo(f"note: {note}", True)
    if res.judged_note:  # said with every table (stderr: stdout stays the table)
        echo(f"judged set: {res.judged_note}{judged_how}", True)
    if format == "html":
        echo(str(write_experiment_report(res)))
    if per_topic:
        for path in write_per_topic(res, per_topic):
            echo(f"per-topic: {path}", True)


def _say_runs(res: ExperimentResult, format: str, echo: Echo) -> None:
    """Each run's line, reused or recomputed, and the task's extra files (stderr)."""
    if format != "json":
        for pipe, path in res.runs.items():
            how = ("reused: manifest matches" if pipe in res.reused else
                   f"recomputed: {res.recomputed[pipe]}; {res.seconds[pipe]:.1f}s")
            echo(f"{pipe}: {path} ({how})", True)
    for what, path in res.files.items():
        echo(f"{what}: {path}", True)


def index(task: Task | str, *, data: str | Path | None = None, year: str | None = None,
          collection: str | Path | None = None, index_dir: str | Path | None = None,
          shards: int | None = None, ray_address: str | None = None,
          scoring: str | None = None, quiet: bool = False, echo: Echo = _silent) -> Any:
    """``mathir index``: build (or reuse) the task's index, in ``shards`` slices (on a Ray
    cluster with ``ray_address``) and with ``scoring`` where the task offers them; says
    where it is and how many documents it holds.

    >>> import tempfile
    >>> index("arqmath-task1", index_dir=tempfile.mkdtemp() + "/i", quiet=True).num_docs > 0
    True
    """
    task = _task(task)
    if ray_address is not None and shards is None:
        raise InputError("--ray indexes shards: give --shards N too")
    if shards is not None and shards < 1:
        raise InputError(f"--shards must be at least 1, not {shards}")
    options = {k: v for k, v in (("shards", shards), ("ray_address", ray_address),
                                 ("scoring", scoring)) if v is not None}
    idx = task.index(_located(task, data, year, collection, None, echo), index_dir,
                     quiet=quiet, **options)
    echo(f"{idx.path}: {idx.num_docs} documents")
    return idx


def run(task: Task | str, pipeline: str, out: str | Path,
        pipelines_files: Sequence[str | Path] = (), *, data: str | Path | None = None,
        year: str | None = None, collection: str | Path | None = None,
        index_dir: str | Path | None = None, run_format: str | None = None,
        options: Mapping[str, Any] | None = None, quiet: bool = False, echo: Echo = _silent
        ) -> Path:
    """``mathir run``: one pipeline's run file (and its manifest). ``pipeline``: a name of
    the task, of an entry point or of ``pipelines_files``, or ``NAME=module:factory``.

    >>> import tempfile
    >>> run("arqmath-task1", "bm25", tempfile.mkdtemp() + "/bm25.tsv", quiet=True).name
    'bm25.tsv'
    """
    from mathir.experiment.pipelines import own_pipelines, resolve_pipelines
    from mathir.experiment.running import write_pipeline_run

    task = _task(task)
    run_format = task.check_run_format(run_format or task.run_formats[0])
    out = _output_file(out, "--out run file", echo)
    own = own_pipelines(pipelines_files, [pipeline] if "=" in pipeline else [])
    name = pipeline.partition("=")[0].strip()
    chosen = resolve_pipelines(task, [{name: own[name]} if name in own else name],
                               factory_options(options))[name]
    write_pipeline_run(task, chosen, _located(task, data, year, collection, None, echo), out,
                       index_dir=index_dir, quiet=quiet, run_format=run_format)
    echo(f"{out}: {task.read_run(out)['qid'].nunique()} topics (manifest: "
         f"{out.with_name(out.stem + '.manifest.json').name})")
    return out


def evaluate(task: Task | str, qrels: str | Path | None, runs: Sequence[str | Path],
             topics: str | Path | None = None, *, data: str | Path | None = None,
             year: str | None = None, collection: str | Path | None = None,
             qrels_duplicates: str = "error", judged: str | None = None,
             measures: str | None = None, format: str = "table",
             per_topic: str | Path | None = None, baseline: str | None = None,
             test: str = "t", correction: str = "holm",
             options: Mapping[str, Any] | None = None, quiet: bool = False,
             echo: Echo = _silent) -> Any:
    """``mathir evaluate``: score run files (:func:`~mathir.experiment.score_run_files`) and
    say the table in ``format``, the qrels and the judged set, and write ``per_topic``.
    ``qrels``: a variant's name, ``official`` (default: the task's own qrels of the data
    located as ``mathir view`` locates them) or a file; ``data``, ``year``,
    ``collection``: the data to judge on, as for ``mathir view``; ``options``: the task's
    evaluation options by name (None: not given); an option of another task is an error.
    With the same options, ``mathir view`` of the same files says the same table.

    >>> from mathir.tasks import get_task
    >>> evaluate("arqmath-task1", get_task("arqmath-task1").data().qrels, [],
    ...          options={"tablestore": "tables/"})  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: --tablestore: not an option of arqmath-task1 (its options: none)
    """
    from mathir.evaluation.significance import check_test
    from mathir.experiment.run_files import score_run_files, scoring_settings

    task = _task(task)
    if collection is not None and any(o.name == "collection" for o in task.options):
        # the task's evaluation takes the collection (Task 3: the references' texts)
        options, collection = {**(options or {}), "collection": collection}, None
    given = bool(data or year or collection)
    settings = scoring_settings(task, runs, given=given, judged=judged, measures=measures,
                                qrels=qrels, options=options)
    check_test(test, correction)
    if not runs and not settings.options:
        raise InputError(f"no run files to evaluate (RUN ...) for {task.name}")
    if per_topic:
        _output_file(per_topic, "--per-topic file", echo)
    found, official = None, None
    if given or settings.qrels.kind != "file":
        found, official = _judged_data(task, data, year, collection, settings, echo)
    res = score_run_files(task, runs, settings=settings, data=found, given=given,
                          topics_path=topics, qrels_duplicates=qrels_duplicates,
                          baseline=baseline, test=test, correction=correction, quiet=quiet)
    _say_scores(res, format, per_topic, official, echo, _judged_how(res, judged))
    return res.evaluation


def _judged_how(res: ExperimentResult, judged: str | None) -> str:
    """Where the judged set came from, when the runs' manifests chose it by default."""
    if judged is not None or not res.judged_by_manifests:
        return ""
    return " (as the runs' manifests record: as their experiment scored them)"


def view(task: Task | str, runs: Iterable[str | Path], *, data: str | Path | None = None,
         year: str | None = None, collection: str | Path | None = None,
         qrels: str | Path | None = None, out: str | Path | None = None,
         baseline: str | None = None, depth: int = 20, judged: str | None = None,
         measures: str | None = None, format: str = "table",
         per_topic: str | Path | None = None, test: str = "t", correction: str = "holm",
         options: Mapping[str, Any] | None = None, quiet: bool = False,
         echo: Echo = _silent) -> Path:
    """``mathir view``: the HTML report and run explorer of any run files
    (:func:`~mathir.experiment.view_run_files`); says the table as ``mathir evaluate``
    says it (the same options, the same defaults, the same figures) on stdout, and the
    page written on stderr (``report: PATH``).

    >>> view("arqmath-task1", [], depth=0)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: --depth must be at least 1, not 0
    """
    from mathir.evaluation.significance import check_test
    from mathir.experiment.run_files import scoring_settings, view_run_files

    task = _task(task)
    if depth < 1:
        raise InputError(f"--depth must be at least 1, not {depth}")
    runs = list(runs)
    if not runs:
        raise InputError(f"no run files to view (RUN ...) for {task.name}")
    given = bool(data or year or collection)
    settings = scoring_settings(task, runs, given=given, judged=judged, measures=measures,
                                qrels=qrels, options=options)
    check_test(test, correction)
    out = _output_file(out, "--out file", echo) if out else None
    if per_topic:
        _output_file(per_topic, "--per-topic file", echo)
    found, official = _judged_data(task, data, year, collection, settings, echo)
    echo(f"note: scoring {len(runs)} run file{'s' if len(runs) != 1 else ''}"
         + (" on the collection's judged documents (its index built or reused)"
            if settings.judged == "collection" else ""), True)
    res = view_run_files(task, runs, found, out, settings=settings, given=given,
                         baseline=baseline, depth=depth, quiet=quiet, test=test,
                         correction=correction)
    _say_scores(res, format, per_topic, official, echo, _judged_how(res, judged))
    page = res.files["report"]
    echo(f"report: {page}", True)  # stdout is the table alone (--format json parses)
    return page


def train_reranker(task: Task | str, out: str | Path, kind: str = "cross-encoder", *,
                   data: str | Path | None = None, year: str | None = None,
                   collection: str | Path | None = None, base: str | Path | None = None,
                   epochs: int = 1, batch_size: int = 16, max_pairs: int | None = None,
                   max_steps: int | None = None, negatives: int = 3, rel: int | None = None,
                   max_length: int = 256, first_stage: str = "bm25",
                   negative_depth: int | None = None, learning_rate: float = 2e-5,
                   warmup: float = 0.1, seed: int = 0, loss: str = "pointwise",
                   quiet: bool = False, echo: Echo = _silent) -> Path:
    """``mathir train-reranker``: fine-tune a cross-encoder (``kind="bi-encoder"``: a
    bi-encoder) on the task's qrels of ``year`` (a year or split; comma-separated: all of
    them), negatives drawn from ``first_stage``'s results; says the pairs and the model.

    >>> train_reranker("arqmath-task1", "m", "bi-encoder", loss="listwise")
    ... # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: --loss is a cross-encoder option: ...
    """
    from mathir.pipelines.reranker_training import (
        task_training_pairs,
        train_bi_encoder,
        train_cross_encoder,
    )

    if kind == "bi-encoder" and loss != "pointwise":
        raise InputError("--loss is a cross-encoder option: the bi-encoder learns from "
                         "in-batch negatives")
    task = _task(task)
    if Path(out).exists() and not Path(out).is_dir():
        raise InputError("--out (the model directory) is a file", path=out)
    require_writable_dir(Path(out).parent, "folder of --out")
    datasets = [task.data(data, label or None, collection) for label in (year or "").split(",")]
    pairs = task_training_pairs(task, datasets, rel=rel, negatives_per_positive=negatives,
                                first_stage=first_stage, max_pairs=max_pairs,
                                negative_depth=negative_depth, seed=seed, quiet=quiet)
    echo(f"{len(pairs)} pairs ({int(pairs['label'].sum())} positive) from "
         f"{pairs['qid'].nunique()} topics", True)
    options = {} if kind == "bi-encoder" else {"loss": loss}
    train = train_bi_encoder if kind == "bi-encoder" else train_cross_encoder
    model = train(pairs, out, base=base, epochs=epochs, batch_size=batch_size,
                  learning_rate=learning_rate, max_length=max_length, warmup=warmup,
                  max_steps=max_steps, seed=seed, quiet=quiet, **options)
    echo(f"{model}: {kind} trained on {len(pairs)} pairs")
    return model


def check_answers(path: str | Path, format: str = "json", timeout: float = 5.0,
                  echo: Echo = _silent) -> tuple[int, int]:
    """``mathir answers``: check the model answers of a JSON-lines file against their gold
    answers (:func:`~mathir.answer_checking.checking.check_records`); says each line back
    with ``extracted`` and ``correct`` added (``format="json"``) or the counts and
    accuracy (``"table"``). Returns (answers, correct ones).

    >>> check_answers("answers.jsonl", timeout=0)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: the timeout must be a number of seconds above 0, or inf ...
    """
    import json

    from mathir.answer_checking.checking import check_records, read_answer_records
    from mathir.answer_checking.latex import symbolic_timeout

    symbolic_timeout(timeout)  # before any work: one error line for 0, -1, nan
    n = correct = 0
    for rec in check_records(read_answer_records(path), path, timeout=timeout):
        n += 1
        correct += rec["correct"]
        if format == "json":
            echo(json.dumps(rec, ensure_ascii=False))
    if format == "table":
        echo(f"answers\t{n}\ncorrect\t{correct}\naccuracy\t{correct / n if n else 0.0:.4f}")
    else:
        echo(f"{correct}/{n} correct", True)
    return n, correct
