"""Experiments: build the index, run pipelines into run files with manifests, reuse
runs whose declared identity is unchanged, evaluate, test significance, write reports.

The task registry (:mod:`mathir.tasks`) says what a task is; this module runs one.
``experiment.py``, ``tasks/`` and ``cli.py`` are the only modules that wire the stages
(indexing, pipelines, runs, evaluation) together.

Pipelines come from four places, by name: the task's registry, packages that declare a
``mathir.pipelines`` entry point (:data:`ENTRY_POINT_GROUP`), a Python file defining
``PIPELINES = {...}`` (:func:`load_pipelines_file`), and the caller, as a mapping from a
name to a ``pt.Transformer``, a factory ``(index, **kwargs) -> pt.Transformer`` or a
``"module:factory"`` reference (:func:`resolve_pipelines`).

This module imports neither pandas nor PyTerrier at import time, so that ``mathir
--help`` can list the entry-point pipelines cheaply.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import logging
import os
import re
import sys
import time
import traceback
import types
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mathir.errors import InputError
from mathir.models import require_extra
from mathir.runs.provenance import (
    pipeline_identity,
    qualified_name,
    remove_manifest,
    run_manifest,
    stale_reason,
)
from mathir.runs.provenance import write_manifest as write_run_manifest
from mathir.storage import atomic_file, exclusive_lock
from mathir.tasks import Ref, Task, TaskData, get_task

if TYPE_CHECKING:
    import pandas as pd

#: Entry-point group through which an installed package adds pipelines to a task. An
#: entry point named ``TASK.NAME`` (e.g. ``arqmath-task1.mybm25``) whose value is
#: ``"package.module:factory"`` adds pipeline NAME to TASK; the factory is called as
#: ``factory(index, **kwargs)`` and returns a ``pt.Transformer``.
ENTRY_POINT_GROUP = "mathir.pipelines"
#: What :func:`load_pipelines_file` reads from a pipelines file.
PIPELINES_VARIABLE = "PIPELINES"
_FILE_MODULE_PREFIX = "mathir_pipelines_file_"


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

    @property
    def judged_note(self) -> str | None:
        """Which judgments scored the runs, in words (None where every judgment counts)."""
        return self.evaluation.judged_note if self.evaluation is not None else None


# --- pipelines: declared, resolved, built once ---------------------------------------------


@dataclass(frozen=True)
class Pipeline:
    """One pipeline of an experiment: a factory ``(index, **kwargs) -> pt.Transformer``
    with its keyword arguments, or a ready transformer (``factory`` None).

    Its identity (:meth:`identity`) is what a stored run must match to be reused.

    >>> p = Pipeline("bm25-k0.9", Ref("mathir.pipelines.lexical:bm25").resolve(), {"k1": 0.9})
    >>> p.reference, p.identity()["kwargs"]
    ('mathir.pipelines.lexical:bm25', {'k1': 0.9})
    """

    name: str
    factory: Callable[..., Any] | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    transformer: Any = None
    #: where it was declared: "task", "entry point NAME (DIST)", "python", a file ...
    origin: str = "python"

    def build(self, index, verbose: bool = False):
        """The transformer over ``index`` (``verbose`` goes to factories that take it)."""
        if self.transformer is not None:
            return self.transformer
        kwargs = dict(self.kwargs)
        if accepts(self.factory, "verbose") and "verbose" not in kwargs:
            kwargs["verbose"] = verbose
        built = self.factory(index, **kwargs)
        if not callable(getattr(built, "transform", None)):
            raise InputError(
                f"pipeline {self.name!r}: its factory {qualified_name(self.factory)} returned "
                f"{type(built).__name__}, not a PyTerrier transformer (an object with "
                "transform(topics) -> results)")
        return built

    def identity(self) -> dict:
        """:func:`mathir.runs.provenance.pipeline_identity` of this pipeline."""
        return pipeline_identity(self.name, self.factory, self.kwargs, self.transformer)

    @property
    def reference(self) -> str | None:
        """``module:function`` from which worker processes rebuild it; None for a lambda,
        a local function, a pipelines file's function or a transformer object."""
        f = self.factory
        if not isinstance(f, types.FunctionType) or "<" in f.__qualname__:
            return None
        module = sys.modules.get(f.__module__)
        if module is None or f.__module__ == "__main__" \
                or f.__module__.startswith(_FILE_MODULE_PREFIX):
            return None
        found: Any = module
        for part in f.__qualname__.split("."):
            found = getattr(found, part, None)
        if found is not f:
            return None
        try:
            hash(tuple(sorted(self.kwargs.items())))
        except TypeError:  # worker specs are hashable
            return None
        return f"{f.__module__}:{f.__qualname__}"


def accepts(factory: Any, parameter: str) -> bool:
    """Whether ``factory`` names keyword ``parameter``. ``**kwargs`` counts only where the
    factory says where they go, by ``__wrapped__`` (a function or a :class:`Ref`).

    >>> accepts(lambda index, verbose=False: None, "verbose"), accepts(print, "model")
    (True, False)
    """
    if isinstance(factory, Ref):
        factory = factory.resolve()
    try:
        parameters = inspect.signature(factory, follow_wrapped=False).parameters
    except (TypeError, ValueError):
        return False
    found = parameters.get(parameter)
    if found is not None:
        return found.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              inspect.Parameter.KEYWORD_ONLY)
    wrapped = getattr(factory, "__wrapped__", None)
    forwards = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    return forwards and wrapped is not None and wrapped is not factory \
        and accepts(wrapped, parameter)


def import_reference(target: str, what: str = "pipeline") -> Any:
    """The object named by ``"module:attribute"``; InputError when it cannot be imported.

    >>> import_reference("mathir.pipelines.lexical:bm25").__name__
    'bm25'
    """
    module, sep, attribute = target.partition(":")
    if not sep or not module or not attribute:
        raise InputError(f"{what}: expected 'module:attribute', not {target!r}")
    try:
        value = importlib.import_module(module)
    except SyntaxError as e:
        raise InputError(f"syntax error: {e.msg}", path=e.filename, line=e.lineno) from None
    except ImportError as e:
        raise InputError(f"{what}: cannot import {module!r}: {e}") from None
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise InputError(f"{what}: module {module!r} has no attribute {attribute!r}") from None
    return value


def plugin_pipelines(task: str | None = None) -> dict[str, importlib.metadata.EntryPoint]:
    """The entry points of :data:`ENTRY_POINT_GROUP` that add pipelines to ``task``, by
    pipeline name (nothing is imported); see :func:`plugin_pipelines_by_task`.

    >>> plugin_pipelines("arqmath-task1")
    {}
    """
    return plugin_pipelines_by_task().get(task, {})


def plugin_pipelines_by_task() -> dict[str, dict[str, importlib.metadata.EntryPoint]]:
    """Task -> pipeline name -> entry point, of every installed package. A name that is
    not ``TASK.NAME``, or whose value is not ``module:attribute``, is skipped with a
    warning; of two entry points with one name, the first is kept."""
    out: dict[str, dict[str, importlib.metadata.EntryPoint]] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        owner, sep, name = ep.name.partition(".")
        if not sep or not owner or not name or ":" not in ep.value:
            warnings.warn(f"entry point {ep.name} = {ep.value!r} ({_distribution(ep)}) of "
                          f"group {ENTRY_POINT_GROUP!r} ignored: expected TASK.PIPELINE = "
                          "'module:factory'", stacklevel=2)
            continue
        out.setdefault(owner, {}).setdefault(name, ep)
    return out


def _distribution(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "unknown package"


def available_pipelines(task: Task) -> dict[str, tuple[Any, str]]:
    """Pipeline name -> (factory or reference, origin): the task's own, then those of
    entry points (a name the task already has is ignored, with a warning)."""
    out: dict[str, tuple[Any, str]] = {n: (f, "task") for n, f in task.pipelines.items()}
    for name, ep in plugin_pipelines(task.name).items():
        where = f"entry point {ep.name} ({_distribution(ep)})"
        if name in out:
            warnings.warn(f"{where} ignored: {task.name} already has a pipeline {name!r}",
                          stacklevel=2)
            continue
        out[name] = (Ref(ep.value), where)
    return out


_BAD_NAME = re.compile(r"[\s/\\\x00]|^\.|^$")


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or _BAD_NAME.search(name):
        raise InputError(f"pipeline name {name!r}: it names the run file and the run, so it "
                         "must be one word, without '/' and not starting with '.'")
    return name


def _declared(name: str, source: Any, origin: str, options: Mapping[str, Any],
              available: Mapping[str, tuple[Any, str]]) -> Pipeline:
    """A :class:`Pipeline` from what a user or a registry declared."""
    import pyterrier as pt

    if isinstance(source, Pipeline):
        return Pipeline(name, source.factory, source.kwargs, source.transformer, source.origin)
    if isinstance(source, str):
        if ":" not in source:
            if source not in available:  # another name for a known pipeline
                raise _unknown(source, available)
            stage, origin = available[source]
            return _declared(name, stage, origin, options, available)
        source = import_reference(source, f"pipeline {name!r}")
    if isinstance(source, Ref):
        source = import_reference(source.target, f"pipeline {name!r}")
    if isinstance(source, pt.Transformer):
        return Pipeline(name, transformer=source, origin=origin)
    kwargs: dict[str, Any] = {}
    if isinstance(source, functools.partial) and not source.args:
        source, kwargs = source.func, dict(source.keywords)
    if not callable(source):
        raise InputError(f"pipeline {name!r}: expected a pt.Transformer, a factory "
                         f"(index) -> pt.Transformer or 'module:factory', not "
                         f"{type(source).__name__}")
    chosen = {k: v for k, v in options.items() if k not in kwargs and accepts(source, k)}
    return Pipeline(name, source, {**chosen, **kwargs}, origin=origin)


def _unknown(name: str, available: Mapping) -> InputError:
    return InputError(f"unknown pipeline {name!r}; available: {', '.join(available)}")


PipelineSource = Any  # str | pt.Transformer | Callable[..., pt.Transformer] | Pipeline


def resolve_pipelines(task: Task | str,
                      pipelines: Iterable[str | Mapping[str, PipelineSource]]
                      | Mapping[str, PipelineSource] | None = None,
                      options: Mapping[str, Any] | None = None) -> dict[str, Pipeline]:
    """The pipelines to run, by name, in order.

    ``pipelines`` is None (the task's defaults), a mapping ``name -> source``, or a list
    mixing names (of the task's pipelines or of entry points) and such mappings. A source
    is a ``pt.Transformer``, a factory ``(index, **kwargs) -> pt.Transformer`` (a
    ``functools.partial`` carries its keyword arguments), a ``"module:factory"``
    reference, or the name of another pipeline. ``options`` (e.g. ``{"cross_encoder":
    PATH}``) go to every factory that names them as a parameter.

    >>> ps = resolve_pipelines("arqmath-task1", ["bm25", {"mine": lambda index: None}])
    >>> [(p.name, p.origin) for p in ps.values()]
    [('bm25', 'task'), ('mine', 'python')]
    """
    task = get_task(task) if isinstance(task, str) else task
    options = dict(options or {})
    available = available_pipelines(task)
    if pipelines is None:
        items: list = list(task.default_pipelines)
    elif isinstance(pipelines, (str, Mapping)):
        items = [pipelines]
    else:
        items = list(pipelines)
    out: dict[str, Pipeline] = {}
    for item in items:
        if isinstance(item, Mapping):
            entries = [(n, s, "python") for n, s in item.items()]
        elif isinstance(item, str):
            if item not in available:
                raise _unknown(item, available)
            entries = [(item, *available[item])]
        else:
            raise InputError(f"pipelines: expected names and name -> pipeline mappings, not "
                             f"{type(item).__name__}")
        for name, source, origin in entries:
            if _check_name(name) in out:
                raise InputError(f"two pipelines are named {name!r}")
            out[name] = _declared(name, source, origin, options, available)
    unused = [k for k in options if not any(k in p.kwargs for p in out.values())]
    if unused:
        warnings.warn(f"{', '.join(unused)}: used by none of the pipelines run "
                      f"({', '.join(out)})", stacklevel=2)
    return out


def load_pipelines_file(path: str | Path) -> dict[str, PipelineSource]:
    """The ``PIPELINES`` mapping of a Python file (name -> transformer, factory or
    ``"module:factory"``). Loading it runs the user's own code, as importing does.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "mine.py"
    >>> _ = f.write_text("PIPELINES = {'mine': 'mathir.pipelines.lexical:bm25'}")
    >>> load_pipelines_file(f)
    {'mine': 'mathir.pipelines.lexical:bm25'}
    """
    p = Path(path)
    if not p.is_file():
        raise InputError("pipelines file not found", path=p)
    key = hashlib.sha1(str(p.resolve()).encode()).hexdigest()[:10]
    name = f"{_FILE_MODULE_PREFIX}{re.sub(r'[^0-9A-Za-z_]', '_', p.stem)}_{key}"
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise InputError("not a Python file", path=p)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pickling and dataclasses look their module up here
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        sys.modules.pop(name, None)
        where = p if not e.filename or Path(e.filename).resolve() == p.resolve() else e.filename
        raise InputError(f"syntax error: {e.msg}", path=where, line=e.lineno) from None
    except ImportError as e:
        sys.modules.pop(name, None)
        raise InputError(f"cannot import {e.name or ''}: {e}".replace(" : ", ": "),
                         path=p) from None
    except Exception as e:  # noqa: BLE001 - the file's own error, named by its line
        sys.modules.pop(name, None)
        lines = [f.lineno for f in traceback.extract_tb(e.__traceback__)
                 if f.filename and Path(f.filename).resolve() == p.resolve()]
        raise InputError(f"{type(e).__name__}: {e}", path=p,
                         line=lines[-1] if lines else None) from None
    found = getattr(module, PIPELINES_VARIABLE, None)
    if not isinstance(found, Mapping):
        raise InputError(f"defines no {PIPELINES_VARIABLE} = {{name: pipeline}} mapping", path=p)
    return dict(found)


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


def _run(task: Task, pipeline: Pipeline, index, topics: pd.DataFrame, out: Path, quiet: bool,
         workers: int, ray_address: str | None, run_format: str) -> tuple[Path, str | None]:
    """Build ``pipeline`` once (here, or once in each worker) and write its run."""
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
        pipe = pipeline.build(index, verbose=not quiet)
        description = _describe(pipe)
        results = pipe.transform(topics)
    path = task.write_run(results, out, name=out.stem, format=run_format, topics=topics["qid"])
    return path, description


def _manifest(task: Task, pipeline: Pipeline, data: TaskData, index, run_format: str,
              judged: str | None = None) -> dict:
    manifest = run_manifest(task.name, pipeline.identity(), data.topics, data.qrels,
                            index_dir=getattr(index, "path", None),
                            data={"collection": data.collection, **data.extras},
                            run_format=run_format)
    manifest["evaluation"] = evaluation_record(task, data, index, judged)
    return manifest


def evaluation_record(task: Task, data: TaskData, index, judged: str | None = None) -> dict:
    """How a run is scored, as its manifest records it (not part of its identity): the
    judged set (``collection``: the judgments of the documents the collection holds, for a
    task that declares ``qrels_in_collection``; ``file``: every judgment), the collection
    and the index whose documents those are. ``mathir evaluate`` scores a run with a
    manifest by it."""
    rule = judged or ("collection" if task.qrels_in_collection else "file")
    record: dict[str, Any] = {"judged": rule, "label": data.label}
    if rule == "collection":
        record["collection"] = str(Path(data.collection).resolve())
        path = getattr(index, "path", None)
        record["index"] = str(Path(path).resolve()) if path is not None else None
    return record


def _record_evaluation(run_path: Path, record: dict) -> None:
    """Update the evaluation record of a reused run's manifest (its identity and the run
    file's checksum are kept)."""
    import json

    from mathir.runs.provenance import manifest_path

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
                       manifest: dict, quiet: bool, workers: int, ray_address: str | None,
                       run_format: str) -> Path:
    """Write the run, then its manifest (with the run file's checksum): a stale
    manifest is removed first, so an interruption leaves a run that is never reused."""
    remove_manifest(out)
    _, description = _run(task, pipeline, index, topics, out, quiet, workers, ray_address,
                          run_format)
    write_run_manifest(out, {**manifest, "description": description})
    return out


def write_pipeline_run(task: Task | str, pipeline: str | Pipeline, data: TaskData, out: str | Path,
                       index_dir: str | Path | None = None, quiet: bool = False,
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
    topics = task.read_topics(data.topics)
    with exclusive_lock(out):
        return _run_with_manifest(task, chosen, index, topics, out,
                                  _manifest(task, chosen, data, index, run_format), quiet, 1,
                                  None, run_format)


def run_pipeline(task: Task, pipeline: str | Pipeline, index, topics: pd.DataFrame, out: Path,
                 quiet: bool = False, workers: int = 1, ray_address: str | None = None,
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
            raise _unknown(pipeline, available)
        declared = _declared(pipeline, available[pipeline][0], available[pipeline][1], {},
                             available)
        pipeline = Pipeline(declared.name, declared.factory, {**declared.kwargs, **kwargs},
                            declared.transformer, declared.origin)
    run_format = task.check_run_format(run_format or task.run_formats[0])
    return _run(task, pipeline, index, topics, Path(out), quiet, workers, ray_address,
                run_format)[0]


# --- quiet: no progress bars, no library noise -----------------------------------------------

#: Environment read by tqdm, huggingface_hub and transformers when they load.
QUIET_ENVIRONMENT = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                     "TRANSFORMERS_VERBOSITY": "error", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
                     "HF_HUB_VERBOSITY": "error"}
#: Packages whose warnings and log messages ``--quiet`` hides: deprecation notices and
#: advice about their own internals, not about the user's input. mathir's own warnings
#: (a gold fact missing from the tablestore, a stand-in model) stay.
NOISY_PACKAGES = ("pyterrier", "pyterrier_[a-z_]+", "transformers", "sentence_transformers",
                  "torch", "sklearn", "lightgbm", "huggingface_hub", "bert_score", "ir_measures",
                  "ir_datasets", "pandas", "numpy", "scipy", "ray", "tokenizers", "safetensors",
                  "accelerate", "joblib")
_NOISE = rf"({'|'.join(NOISY_PACKAGES)})(\.|$)"


def _progress_switches() -> list[tuple[str, Callable[[], bool], Callable[[], None],
                                       Callable[[], None]]]:
    """(module, are bars on?, turn off, turn on) of the loaded libraries with a switch."""
    out = []
    if "huggingface_hub" in sys.modules:
        from huggingface_hub import utils as hub

        out.append(("huggingface_hub", lambda: not hub.are_progress_bars_disabled(),
                    hub.disable_progress_bars, hub.enable_progress_bars))
    if "transformers" in sys.modules:
        from transformers.utils import logging as tlog

        out.append(("transformers", tlog.is_progress_bar_enabled, tlog.disable_progress_bar,
                    tlog.enable_progress_bar))
    return out


@contextlib.contextmanager
def quiet_libraries(library_warnings: bool = True) -> Iterator[None]:
    """Silence progress bars (tqdm, Hugging Face downloads and weight loading) and, with
    ``library_warnings``, the warnings and log messages of :data:`NOISY_PACKAGES`, for
    the duration of the block (restored after)."""
    saved_env = {k: os.environ.get(k) for k in QUIET_ENVIRONMENT}
    os.environ.update(QUIET_ENVIRONMENT)
    before = {name: on() for name, on, _, _ in _progress_switches()}
    for _, _on, off, _ in _progress_switches():
        off()
    loggers = {}
    if library_warnings:
        for name in ("transformers", "sentence_transformers", "huggingface_hub", "pyterrier",
                     "pyterrier_dr", "torch", "lightgbm", "ray", "bert_score"):
            logger = logging.getLogger(name)
            loggers[name] = logger.level
            logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            if library_warnings:
                warnings.filterwarnings("ignore", module=_NOISE)
            yield
    finally:
        for name, level in loggers.items():
            logging.getLogger(name).setLevel(level)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for name, _, _, on in _progress_switches():
            # loaded in the block with the bars off: on again, unless they were off before
            if before.get(name, saved_env["HF_HUB_DISABLE_PROGRESS_BARS"] is None):
                with warnings.catch_warnings():  # huggingface_hub may refuse: it read
                    warnings.simplefilter("ignore")  # the variable when it was loaded
                    on()


# --- the experiment -------------------------------------------------------------------------


def run_experiment(task: Task | str, data: TaskData | None = None,
                   pipelines: Iterable[str | Mapping[str, PipelineSource]]
                   | Mapping[str, PipelineSource] | None = None,
                   out: str | Path = "runs", index_dir: str | Path | None = None,
                   quiet: bool = False, baseline: str | None = None, test: str = "t",
                   correction: str = "holm", workers: int = 1, ray_address: str | None = None,
                   reuse: bool = True, options: Mapping[str, Any] | None = None,
                   run_format: str | None = None, judged: str | None = None
                   ) -> ExperimentResult:
    """Index, run each pipeline, write run files with manifests, evaluate and compare.

    ``judged``: which judgments score the runs, ``"collection"`` (the default where the
    task declares ``qrels_in_collection``, ARQMath Task 1: the judgments of the documents
    the collection holds) or ``"file"`` (every judgment of the qrels file); recorded in
    each run's manifest (``mathir evaluate`` scores the run by it) and said by
    ``result.judged_note``. The evaluation is made once (``result.evaluation``); the
    table, per-topic scores, significance tests, report and explorer all read it.

    ``pipelines``: see :func:`resolve_pipelines` — the task's names, entry-point names,
    and your own, e.g. ``["bm25", {"mine": lambda index: mathir.bm25(index) >>
    pt.apply.doc_score(f)}]``. ``options`` go to every factory naming them (the CLI's
    ``--cross-encoder`` is ``{"cross_encoder": PATH}``).

    Runs go to ``out/<task>/<data label>/<pipeline>.tsv`` in ``run_format``, each with a
    ``<pipeline>.manifest.json`` (see :mod:`mathir.runs.provenance`); a run is reused
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
    run_format = task.check_run_format(run_format or task.run_formats[0])
    chosen = resolve_pipelines(task, pipelines, options)
    names = list(chosen)
    if not names:
        raise InputError("no pipeline to run")
    if baseline is not None and baseline not in names:
        raise InputError(f"baseline {baseline!r} is not one of the pipelines run: {', '.join(names)}")
    if judged is not None:
        check_judged(task, judged)
    with quiet_libraries(library_warnings=False) if quiet else contextlib.nullcontext():
        return _experiment(task, data or task.data(), chosen, Path(out), index_dir, quiet,
                           baseline, test, correction, workers, ray_address, reuse, run_format,
                           judged)


def check_judged(task: Task, judged: str) -> str:
    """``judged`` when it is a judged-set rule that applies to ``task``; InputError
    otherwise (checked before any work).

    >>> check_judged(get_task("worldtree"), "collection")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: worldtree judges every document of its qrels file ...
    """
    from mathir.evaluation.evaluated import JUDGED_RULES

    if judged not in JUDGED_RULES:
        raise InputError(f"unknown judged set {judged!r}; expected one of "
                         f"{', '.join(JUDGED_RULES)}")
    if judged == "collection" and not task.qrels_in_collection:
        raise InputError(f"{task.name} judges every document of its qrels file: "
                         "--judged collection does not apply")
    return judged


def _experiment(task: Task, data: TaskData, chosen: dict[str, Pipeline], out: Path, index_dir,
                quiet: bool, baseline: str | None, test: str, correction: str, workers: int,
                ray_address: str | None, reuse: bool, run_format: str,
                judged: str | None = None) -> ExperimentResult:
    topics = task.read_topics(data.topics)
    qrels = task.read_qrels(data.qrels) if data.qrels else None
    known = set(topics["qid"])
    t0 = time.perf_counter()
    index = task.index(data, index_dir, quiet=quiet)
    seconds = {"index": time.perf_counter() - t0}
    runs: dict[str, Path] = {}
    loaded: dict[str, pd.DataFrame] = {}
    reused: list[str] = []
    recomputed: dict[str, str] = {}
    folder = out / task.name / data.label
    record = evaluation_record(task, data, index, judged)
    for n, pipeline in chosen.items():
        t0 = time.perf_counter()
        path = folder / f"{n}.tsv"
        manifest = _manifest(task, pipeline, data, index, run_format, judged)
        # Another experiment may write the same run file (same output folder and data
        # label, other data): the lock keeps reuse check, write, manifest and reading
        # back one step, so the scores are those of this experiment's own run.
        with exclusive_lock(path):
            why = stale_reason(path, manifest) if reuse else "reuse turned off"
            if why is None:
                reused.append(n)
                _record_evaluation(path, record)
            else:
                recomputed[n] = why
                _run_with_manifest(task, pipeline, index, topics, path, manifest, quiet,
                                   workers, ray_address, run_format)
            loaded[n] = task.read_run(path, topics=known)
        runs[n] = path
        seconds[n] = time.perf_counter() - t0
    result = ExperimentResult(task.name, data, runs, None, seconds, reused=reused,
                              recomputed=recomputed, test=test, correction=correction,
                              topics=topics)
    if qrels is None:
        return result
    _evaluate_into(result, task, loaded, qrels, record, index, baseline or next(iter(chosen)))
    if task.report is not None:
        with exclusive_lock(folder):  # keep the figures this experiment drew (see above)
            result.files = task.report(loaded, qrels, folder, **data.extras)
            result.figures = {what: Path(f).read_bytes() for what, f in result.files.items()
                              if Path(f).suffix == ".png"}
    return result


def _evaluate_into(result: ExperimentResult, task: Task, runs: dict, qrels, record: dict,
                   index, baseline: str) -> None:
    """The one evaluation of ``runs``, and what the result derives from it."""
    from mathir.evaluation.evaluated import evaluate

    rule = record["judged"]
    docnos = index.docnos() if rule == "collection" and index is not None else None
    where = Path(record.get("collection") or result.data.collection).name
    ev = evaluate(task, runs, qrels, docnos=docnos, judged=rule, where=where,
                  **result.data.extras)
    result.evaluation = ev
    result.table = ev.table
    if ev.per_topic is not None:
        result.per_topic = ev.per_topic
        result.baseline = baseline
        result.significance = ev.significance(baseline, result.test, result.correction)


def significance_note(result: ExperimentResult) -> str | None:
    """What a † in ``result``'s table means (None without significance tests).

    >>> r = ExperimentResult("t", None, {}, None, {}, baseline="bm25", significance=1)
    >>> significance_note(r)
    'significantly different from bm25 (paired t-test, holm correction, p < 0.05)'
    """
    if result.significance is None:
        return None
    return (f"significantly different from {result.baseline} (paired {result.test}-test, "
            f"{result.correction} correction, p < 0.05)")


def write_per_topic(result: ExperimentResult, path: str | Path) -> tuple[Path, Path]:
    """Write the per-topic scores and the significance tests as two CSV files.

    ``path`` gets one row per (topic, run): columns ``qid, run`` and one per measure;
    ``<stem>.significance.csv`` beside it one row per (run, measure): ``run, measure,
    baseline, test, correction, mean, delta, ci_low, ci_high, effect_size, p,
    p_corrected, significant, topics`` (``delta`` is the mean difference to the
    baseline, ``p_corrected`` the p-value after the correction over the runs).
    """
    import pandas as pd

    if result.per_topic is None:
        raise InputError(f"{result.task} has no per-topic scores (its measures are means only)")
    path = Path(path)
    frames = []
    for name, df in result.per_topic.items():
        measures = [c for c in df.columns if c != "qid"]
        frames.append(df.assign(run=name)[["qid", "run", *measures]])
    table = pd.concat(frames, ignore_index=True)
    with atomic_file(path) as f:
        table.to_csv(f, index=False, float_format="%.6g")
    sig_path = path.with_name(path.stem + ".significance.csv")
    sig = result.significance.reset_index().rename(columns={"system": "run"})
    sig.insert(2, "baseline", result.baseline)
    sig.insert(3, "test", result.test)
    sig.insert(4, "correction", result.correction)
    with atomic_file(sig_path) as f:
        sig.to_csv(f, index=False, float_format="%.6g")
    return path, sig_path


def experiment_explorer(result: ExperimentResult, depth: int = 20):
    """The run explorer of an experiment's runs: ``(Explorer, MathRenderer)`` (see
    :func:`mathir.evaluation.explorer_views.build_explorer`; the renderer's ``stats`` count
    the formulas latex2mathml could not convert). It reads the experiment's evaluation:
    each run listed in the order it was scored, with the judgments the score used.

    >>> import tempfile
    >>> res = run_experiment("word-problems", out=tempfile.mkdtemp(), quiet=True)
    >>> ex, _ = experiment_explorer(res)
    >>> len(ex.topics), ex.runs[:2]
    (5, ['nearest-template', 'template-retrieval'])
    """
    from mathir.evaluation.explorer_views import build_explorer

    if result.evaluation is None:
        raise InputError("no qrels, so nothing to explore for these runs")
    task = get_task(result.task)
    topics = result.topics if result.topics is not None else task.read_topics(result.data.topics)
    return build_explorer(result.evaluation, topics, result.data, baseline=result.baseline,
                          primary=task.primary_measure, depth=depth)


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
              depth: int = 20, judged: str | None = None) -> Path:
    """Evaluate run files (anyone's) and write the experiment report with its explorer.

    Runs are named by file stem; ``data`` says where the topics, qrels and collection
    are (default: the task's sample); ``out`` defaults to ``report.html`` beside the
    first run. Runs are judged as ``mathir experiment`` judges them (``judged``, see
    :func:`run_experiment`). The same file ``mathir experiment --format html`` writes.

    >>> import tempfile
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
    topics = task.read_topics(data.topics)
    runs = read_runs(task, paths, set(topics["qid"]))
    if baseline is not None and baseline not in runs:
        raise InputError(f"baseline {baseline!r} is not one of the runs: {', '.join(runs)}")
    if data.qrels is None:
        raise InputError("no qrels for these topics, so nothing to compare the runs on")
    qrels = task.read_qrels(data.qrels)
    result = ExperimentResult(task.name, data, dict(zip(runs, paths, strict=True)), None, {},
                              topics=topics)
    record = evaluation_record(task, data, None, judged)
    index = task.index(data, quiet=True) if record["judged"] == "collection" else None
    _evaluate_into(result, task, runs, qrels, record, index, baseline or next(iter(runs)))
    result.baseline = result.baseline or baseline or next(iter(runs))
    return write_experiment_report(result, out, depth=depth)


def write_experiment_report(result: ExperimentResult, path: str | Path | None = None,
                            explore: bool = True, depth: int = 20) -> Path:
    """Write the experiment's self-contained HTML report (default: beside its runs).

    The comparison table with significance marks, per-topic differences to the baseline
    on the task's primary measure, the task's own plots (ARQMath: scores by topic
    category, difficulty and dependency from the topic metadata; WorldTree: MAP by
    explanation length), the run files' locations and, with ``explore``, the run
    explorer (:mod:`mathir.evaluation.explorer`: every topic, the runs' top ``depth``
    results side by side, formulas rendered).
    """
    from mathir.evaluation.report import (
        breakdown_figures,
        html_report,
        per_topic_chart,
        write_report,
    )

    if result.table is None:
        raise InputError("no qrels, so nothing to report for these runs")
    task = get_task(result.task)
    folder = next(iter(result.runs.values())).parent
    path = Path(path) if path else folder / "report.html"
    primary = task.primary_measure
    figures = []
    if result.per_topic and result.baseline:
        figures.append((f"{primary} per topic against {result.baseline}",
                        per_topic_chart(result.per_topic, primary, result.baseline)))
        if result.data.metadata is not None and task.topic_groups is not None:
            figures += breakdown_figures(result.per_topic, primary,
                                         task.topic_groups(result.data.metadata))
    for what, file in result.files.items():
        if Path(file).suffix == ".png":
            png = result.figures.get(what) or Path(file).read_bytes()
            figures.append((what.replace("_", " "), png))
    notes = [f"Runs: {', '.join(str(p) for p in result.runs.values())}."]
    if result.significance is None:
        notes.append("No per-topic scores for this task: no significance tests.")
    if result.judged_note:
        notes.append(f"Judged set: {result.judged_note}.")
    if result.table.attrs.get("note"):
        notes.append(str(result.table.attrs["note"]))
    title = f"{task.description} — {result.data.label}"
    explorer = ""
    if explore:
        from mathir.evaluation.explorer import explorer_html

        explorer = explorer_html(experiment_explorer(result, depth)[0])
    page = html_report(title, result.table, result.baseline or str(result.table.index[0]),
                       result.significance, figures, notes, explorer=explorer)
    return write_report(path, page)


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
    known = set(task.read_topics(topics_path)["qid"]) if topics_path else None
    runs = read_runs(task, run_paths, known)
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

    from mathir.runs.provenance import manifest_path

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


__all__ = ["ENTRY_POINT_GROUP", "ExperimentResult", "Pipeline", "accepts", "available_pipelines",
           "build_pipeline", "check_judged", "collection_docnos", "evaluate_run_files",
           "evaluate_runs", "evaluation_record", "read_runs", "experiment_explorer", "import_reference", "load_pipelines_file",
           "plugin_pipelines", "plugin_pipelines_by_task", "quiet_libraries", "resolve_pipelines",
           "run_experiment", "run_pipeline", "significance_note", "view_runs",
           "write_experiment_report", "write_pipeline_run",
           "write_per_topic"]
