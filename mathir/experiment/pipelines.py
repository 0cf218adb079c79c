"""The pipelines of an experiment: declared, resolved, built once.

Pipelines come from four places, by name: the task's registry, packages that declare a
``mathir.pipelines`` entry point (:data:`PIPELINE_ENTRY_POINTS`), a Python file defining
``PIPELINES = {...}`` (:func:`load_pipelines_file`), and the caller, as a mapping from a
name to a ``pt.Transformer``, a factory ``(index, **kwargs) -> pt.Transformer`` or a
``"module:factory"`` reference (:func:`resolve_pipelines`). Nothing heavy is imported
here, so that ``mathir --help`` can list the entry-point pipelines cheaply.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import re
import sys
import traceback
import types
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mathir.errors import InputError
from mathir.experiment.code_fingerprint import qualified_name
from mathir.experiment.identity import pipeline_identity
from mathir.neural.backends import BACKENDS
from mathir.storage.paths import path_component
from mathir.tasks import Ref, Task, get_task

#: Entry-point group through which an installed package adds pipelines to a task. An
#: entry point named ``TASK.NAME`` (e.g. ``arqmath-task1.mybm25``) whose value is
#: ``"package.module:factory"`` adds pipeline NAME to TASK; the factory is called as
#: ``factory(index, **kwargs)`` and returns a ``pt.Transformer``.
PIPELINE_ENTRY_POINTS = "mathir.pipelines"
#: What :func:`load_pipelines_file` reads from a pipelines file.
PIPELINES_VARIABLE = "PIPELINES"
_FILE_MODULE_PREFIX = "mathir_pipelines_file_"


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
        """:func:`mathir.experiment.identity.pipeline_identity` of this pipeline."""
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


@dataclass(frozen=True)
class FactoryOption:
    """A keyword argument given to every pipeline factory naming it (:func:`accepts`), and
    the flag of ``mathir experiment`` and ``mathir run`` that sets it.

    >>> [(o.flag, o.keyword) for o in FACTORY_OPTIONS][-1]
    ('--dense-search', 'search')
    """

    flag: str
    keyword: str
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] | None = None


#: the factories' keyword arguments a caller sets for every pipeline at once
FACTORY_OPTIONS = (
    FactoryOption("--cross-encoder", "cross_encoder", "cross-encoder model (from `mathir "
                  "train-reranker`): the cross_encoder argument of every pipeline taking one "
                  "(bm25>>crossencoder, WorldTree ltr-crossencoder, ltr-dense-crossencoder)",
                  "DIR"),
    FactoryOption("--bi-encoder", "bi_encoder", "bi-encoder model (from `mathir train-reranker "
                  "--kind bi-encoder`): the bi_encoder argument of every pipeline taking one "
                  "(WorldTree ltr-dense, ltr-dense-crossencoder)", "DIR"),
    FactoryOption("--backend", "backend", "how the bi- and cross-encoders compute: torch "
                  "(default; PyTorch float32), onnx (ONNX Runtime float32), onnx-int8 (8-bit "
                  "weights), openvino (OpenVINO float32) or openvino-int8 (8-bit weights and "
                  "activations, calibrated on the embedded sample), exported locally and cached "
                  "on first use; the backend argument of every pipeline taking one "
                  "(bm25>>biencoder, dense, fusion, bm25>>crossencoder)",
                  choices=tuple(BACKENDS)),
    FactoryOption("--dense-search", "search", "how dense retrieval searches the passage "
                  "vectors: exhaustive (default; NumPy scan) or a FAISS hnsw / ivf index built "
                  "beside them, candidates rescored exactly; parameters after a colon, e.g. "
                  "ivf:nprobe=128,f16=1 (f16=1: rescore from float16 copies, half the memory) "
                  "(the search argument of dense, fusion)", "KIND[:NAME=N,...]"))


def factory_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The keyword arguments of :data:`FACTORY_OPTIONS` given in ``options``, those not given
    dropped and a dense search spec checked and in its canonical form: a wrong spec fails
    before any index is built, and the same search is the same argument of a run's identity.

    >>> factory_options({"cross_encoder": "models/ce", "bi_encoder": None, "search": "ivf"})
    {'cross_encoder': 'models/ce', 'search': 'ivf'}
    """
    found = {k: v for k, v in (options or {}).items() if v}
    if "search" in found:
        from mathir.indexing.ann_index import check_search

        found["search"] = check_search(found["search"])
    return found


@contextlib.contextmanager
def importable_last(folder: str | Path | None) -> Iterator[None]:
    """``folder`` at the end of ``sys.path`` while the block runs, removed after it (left
    as it is where it is on the path already): a module of the folder can be imported,
    but a ``numpy.py`` or ``pandas.py`` there never shadows the installed library, neither
    while the module imports nor later in the run.

    >>> with importable_last("/nowhere"):
    ...     sys.path[-1]
    '/nowhere'
    >>> "/nowhere" in sys.path
    False
    """
    entry = None if folder is None else os.fspath(folder)
    if entry is None or entry in sys.path:
        yield
        return
    sys.path.append(entry)
    try:
        yield
    finally:
        if entry in sys.path:
            del sys.path[len(sys.path) - 1 - sys.path[::-1].index(entry)]


def _current_folder() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # a folder removed under the process
        return None


def import_reference(target: str, what: str = "pipeline") -> Any:
    """The object named by ``"module:attribute"``; InputError when it cannot be imported.
    The module is an installed one, else one of the current folder (as uvicorn resolves
    ``module:app``), which is on the import path only while the module is imported
    (:func:`importable_last`), so that your ``numpy.py`` never replaces numpy.

    >>> import_reference("mathir.pipelines.lexical:bm25").__name__
    'bm25'
    """
    module, sep, attribute = target.partition(":")
    if not sep or not module or not attribute:
        raise InputError(f"{what}: expected 'module:attribute', not {target!r}")
    try:
        with importable_last(_current_folder()):
            value = importlib.import_module(module)
    except SyntaxError as e:
        raise InputError(f"syntax error: {e.msg}", path=e.filename, line=e.lineno) from None
    except ImportError as e:
        raise InputError(f"{what}: cannot import {module!r}: {e}") from None
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise InputError(f"{what}: module {module!r} has no attribute {attribute!r}"
                             + _shadowed_hint(module)) from None
    return value


def _shadowed_hint(module: str) -> str:
    """Where the current folder holds a module of that name that was not imported (an
    installed one of the same name comes first): say so."""
    top = module.partition(".")[0]
    folder = _current_folder()
    found = getattr(sys.modules.get(top), "__file__", None)
    if folder is None or found is None \
            or Path(found).resolve().is_relative_to(Path(folder).resolve()):
        return ""
    mine = [p for p in (Path(folder) / f"{top}.py", Path(folder) / top / "__init__.py")
            if p.is_file()]
    return (f" (the installed {top!r} at {found} is imported, not {mine[0].name} of the "
            "current folder: rename yours)") if mine else ""


def plugin_pipelines(task: str | None = None) -> dict[str, importlib.metadata.EntryPoint]:
    """The entry points of :data:`PIPELINE_ENTRY_POINTS` that add pipelines to ``task``, by
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
    for ep in importlib.metadata.entry_points(group=PIPELINE_ENTRY_POINTS):
        owner, sep, name = ep.name.partition(".")
        if not sep or not owner or not name or ":" not in ep.value:
            warnings.warn(f"entry point {ep.name} = {ep.value!r} ({_distribution(ep)}) of "
                          f"group {PIPELINE_ENTRY_POINTS!r} ignored: expected TASK.PIPELINE = "
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


def _check_name(name: Any) -> str:
    return path_component(name, "pipeline name", why="it names the run file and the run",
                          strict=False)


def declared_pipeline(name: str, source: Any, origin: str, options: Mapping[str, Any],
              available: Mapping[str, tuple[Any, str]]) -> Pipeline:
    """A :class:`Pipeline` from what a user or a registry declared."""
    import pyterrier as pt

    if isinstance(source, Pipeline):
        return Pipeline(name, source.factory, source.kwargs, source.transformer, source.origin)
    if isinstance(source, str):
        if ":" not in source:
            if source not in available:  # another name for a known pipeline
                raise unknown_pipeline(source, available)
            stage, origin = available[source]
            return declared_pipeline(name, stage, origin, options, available)
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


def unknown_pipeline(name: str, available: Mapping) -> InputError:
    import difflib

    close = difflib.get_close_matches(name, list(available), n=2, cutoff=0.6)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    return InputError(f"unknown pipeline {name!r}; {hint}available: {', '.join(available)}")


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
                raise unknown_pipeline(item, available)
            entries = [(item, *available[item])]
        else:
            raise InputError(f"pipelines: expected names and name -> pipeline mappings, not "
                             f"{type(item).__name__}")
        for name, source, origin in entries:
            if _check_name(name) in out:
                raise InputError(f"two pipelines are named {name!r}")
            out[name] = declared_pipeline(name, source, origin, options, available)
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
    # the file's folder on the import path while it loads, so that it can import the
    # modules beside it (last: a numpy.py there does not replace numpy)
    try:
        with importable_last(p.resolve().parent):
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


def split_reference(spec: str) -> tuple[str, str]:
    """``NAME=package.module:factory`` as ``(name, reference)``; InputError otherwise.

    >>> split_reference("mine=mypkg.pipes:make")
    ('mine', 'mypkg.pipes:make')
    """
    name, sep, target = spec.partition("=")
    if not sep or not name.strip() or ":" not in target:
        raise InputError(f"--pipeline {spec!r}: expected NAME=package.module:factory")
    return name.strip(), target.strip()


def own_pipelines(files: Iterable[str | Path] = (), references: Iterable[str] = ()
                  ) -> dict[str, PipelineSource]:
    """Your pipelines by name: those of pipelines files (:func:`load_pipelines_file`) and of
    ``NAME=module:factory`` references, whose module may lie in the current folder (it is
    importable while the reference is resolved: :func:`import_reference`). Two pipelines
    with one name are an error.

    >>> own_pipelines(references=["mine=mathir.pipelines.lexical:bm25"])
    {'mine': 'mathir.pipelines.lexical:bm25'}
    """
    found: dict[str, PipelineSource] = {}
    for file in files:
        for name, source in load_pipelines_file(file).items():
            if name in found:
                raise InputError(f"two pipelines are named {name!r}", path=file)
            found[name] = source
    refs = [split_reference(spec) for spec in references]
    for name, target in refs:
        if name in found:
            raise InputError(f"two pipelines are named {name!r}")
        found[name] = target
    return found


def select_pipelines(task: Task, names: str | None, own: Mapping[str, PipelineSource],
                     references: Iterable[str] = ()) -> list:
    """What ``mathir experiment`` runs: ``names`` (comma-separated names of the task, of
    entry points or of your own pipelines), or else the task's defaults and all of your
    own. A ``--pipeline`` left out of given names is an error.

    >>> from mathir.tasks import get_task
    >>> select_pipelines(get_task("arqmath-task1"), None, {})
    ['tfidf', 'bm25']
    """
    if not names:
        return [*task.default_pipelines, *({n: s} for n, s in own.items())]
    chosen = [p.strip() for p in names.split(",") if p.strip()]
    given = [split_reference(spec)[0] for spec in references]
    left_out = [n for n in given if n not in chosen]
    if left_out:
        raise InputError(f"--pipeline {left_out[0]} is not among --pipelines "
                         f"{names}: add it there, or leave --pipelines out")
    available = {**available_pipelines(task), **own}  # your own are names too
    for n in chosen:
        if n not in available:
            raise unknown_pipeline(n, available)
    return [{n: own[n]} if n in own else n for n in chosen]
