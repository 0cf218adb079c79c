"""PyTerrier datasets for mathir's tasks: ``pt.get_dataset("mathir:arqmath/task1/2022")``.

ir_datasets has no ARQMath, WorldTree or DRAW-1K, and none of them can be downloaded
automatically (they are published behind pages or licences), so these datasets read a
local folder: ``data=DIR`` (``pt.get_dataset(name, data=DIR)``) or the ``MATHIR_DATA``
environment variable. The files are found by the task registry
(:meth:`mathir.tasks.Task.data`), exactly as ``mathir experiment --data DIR`` finds them;
a folder that lacks some gets an :class:`~mathir.errors.InputError` naming them and where
they are published. ``.../sample`` datasets are the embedded samples and need no files.

Names (see :func:`dataset_names`)::

    arqmath/task1/{2020,2021,2022}   arqmath/task1/sample   answers (Posts.V1.3.xml / thread HTML)
    arqmath/task2/{2020,2021,2022}   arqmath/task2/sample   formulas (latex_representation_v3)
    arqmath/task3/2022               arqmath/task3/sample   answers; Task 3 qrels
    worldtree/{train,dev,test}       worldtree/sample[/train|dev|test]   tablestore facts
    word-problems/draw1k/{test,dev}  word-problems/alg514/fold-K  word-problems/dolphin/fold-K
    word-problems/sample             (K = 0..4)   training problems

The task registry's own names are accepted too (``arqmath-task1/2022``,
``word-problems/alg514-fold-0``, ``worldtree/Dev``).

>>> ds = dataset("arqmath/task1/sample")
>>> len(ds.get_topics()), ds.get_corpus_lang()
(10, 'en')
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Subclassing PyTerrier's Dataset / DatasetProvider needs pyterrier at class definition.
# This module is loaded only through the entry point (or on use), never by `import mathir`.
import pyterrier as pt

from mathir.errors import InputError
from mathir.tasks import DATA_ENV, Need, data_folder

if TYPE_CHECKING:
    import pandas as pd

    from mathir.tasks import Task, TaskData


@dataclass(frozen=True)
class _Spec:
    """One dataset name: which task, which year / split, where its files come from (all
    of it read from the task's declaration, :class:`mathir.tasks.Task`)."""

    task: str  # mathir task registry name
    split: str | None  # passed to Task.data as ``year``
    sample: bool
    source: str  # what the files are, as published
    info: str  # where they are published; info_url()
    needs: tuple[Need, ...] = ()
    family: str = ""  # "arqmath/task1", ...: names the family's sample in messages


def _specs_list() -> Iterator[tuple[str, _Spec]]:
    """Every dataset of every registered task (mathir's and the entry points'), from
    the tasks' declared splits: a new task needs no edit here."""
    from mathir.tasks import TASKS

    for task in TASKS.values():
        family = task.dataset or task.name
        source, info = ((task.published.what, task.published.url) if task.published
                        else (f"the files of {task.name}", ""))
        for split in task.splits:
            yield f"{family}/{split.name}", _Spec(task.name, split.label, split.sample, source,
                                                   info, split.needs, family)


def _specs() -> dict[str, _Spec]:
    # Not cached: a task registered later (an entry point, a test) has its datasets too.
    return dict(_specs_list())


def _aliases() -> dict[str, str]:
    """The task registry's spellings (``arqmath-task1/2022``, ``word-problems/test``)."""
    out: dict[str, str] = {}
    for name, spec in _specs().items():
        suffix = name.removeprefix(spec.family)  # "/2022", "/sample", "/draw1k/test"
        out.setdefault(spec.task + suffix, name)  # arqmath-task1/2022
        if not spec.sample and spec.split:  # worldtree/Dev, word-problems/alg514-fold-0
            out.setdefault(f"{spec.task}/{spec.split}", name)
    return {a: n for a, n in out.items() if a != n and a not in _specs()}


def dataset_names() -> list[str]:
    """Every dataset name of the ``mathir`` provider.

    >>> [n for n in dataset_names() if n.startswith("arqmath/task3")]
    ['arqmath/task3/2022', 'arqmath/task3/sample']
    """
    return list(_specs())


def canonical_name(name: str) -> str:
    """The dataset's name as listed by :func:`dataset_names`; KeyError when unknown.

    >>> canonical_name("arqmath-task1/2022"), canonical_name("word-problems/alg514-fold-0")
    ('arqmath/task1/2022', 'word-problems/alg514/fold-0')
    """
    name = name.removeprefix("mathir:")
    specs, aliases = _specs(), _aliases()
    if name in specs:
        return name
    if name in aliases:
        return aliases[name]
    close = difflib.get_close_matches(name, [*specs, *aliases], n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise KeyError(f"unknown mathir dataset {name!r}; {hint}known: {', '.join(specs)}")


def default_index_root() -> Path:
    """Where :meth:`MathirDataset.get_index` builds indexes by default: the one place of
    every path, :func:`mathir.storage.index_root` (``$MATHIR_INDEX_DIR``, else
    ``indexes`` under mathir's cache folder), so that ``mathir experiment`` reuses them."""
    from mathir.storage import index_root

    return index_root()


class MathirDataset(pt.datasets.Dataset):
    """A mathir task's data as a PyTerrier dataset (one year or split, or the sample).

    Configure with ``data=DIR`` (default ``$MATHIR_DATA``) and optionally
    ``collection=PATH`` (another collection than the one found under ``DIR``), as
    ``pt.get_dataset("mathir:...", data=DIR)`` does. Files are located on first use.
    """

    def __init__(self, name: str, spec: _Spec):
        self.name = name
        self._spec = spec
        self._root: Path | None = None
        self._collection: Path | None = None
        self._files: TaskData | None = None
        self._configure()

    def _configure(self, data: str | Path | None = None,
                   collection: str | Path | None = None, **unknown: Any) -> None:
        """Called by ``pt.get_dataset(name, **kwargs)`` with its keyword arguments
        (``data=``, ``collection=``; another keyword is an InputError naming them)."""
        if unknown:
            close = [m for k in unknown for m in
                     difflib.get_close_matches(k, ["data", "collection"], n=1)]
            hint = f"; did you mean {', '.join(f'{c}=' for c in close)}" if close else ""
            raise InputError(f"mathir:{self.name} takes the keywords data= and collection=, "
                             f"not {', '.join(f'{k}=' for k in sorted(unknown))}{hint}")
        if self._spec.sample and data is not None:
            raise InputError(f"mathir:{self.name} is the embedded sample and reads no data "
                             f"folder; drop data= or use a year / split, e.g. "
                             f"{self._other_names()}")
        root = data_folder(data, not self._spec.sample)
        self._root = Path(root).expanduser() if root else None
        self._collection = Path(collection).expanduser() if collection else None
        self._files = None

    def __repr__(self) -> str:
        where = "" if self._root is None else f", data={str(self._root)!r}"
        return f"{type(self).__name__}({self.name!r}{where})"

    # --- files ---------------------------------------------------------------------

    def task(self) -> Task:
        """The mathir task (:mod:`mathir.tasks`) of this dataset."""
        from mathir.tasks import get_task

        return get_task(self._spec.task)

    def files(self) -> TaskData:
        """The files of this dataset (collection, topics, qrels, extras), as located by
        the task registry; InputError naming the missing ones."""
        if self._files is None:
            self._files = self._locate()
        return self._files

    def _locate(self) -> TaskData:
        task = self.task()
        if self._spec.sample:
            return task.data(None, self._spec.split, self._collection)
        if self._root is None:
            raise InputError(f"mathir:{self.name} reads local files and no data folder is "
                             f"set: pass pt.get_dataset('mathir:{self.name}', data=DIR) or "
                             f"set {DATA_ENV}=DIR. It needs {self._describe(self._needs())}. "
                             + self._where())
        if not self._root.is_dir():
            raise InputError(f"data folder of mathir:{self.name} not found. It needs "
                             f"{self._describe(self._needs())}. " + self._where(),
                             path=self._root)
        try:
            data = task.data(self._root, self._spec.split, self._collection)
        except InputError as e:
            raise self._missing(e.message) from e
        paths = [data.collection, data.topics, data.qrels, *data.extras.values()]
        absent = [p for p in paths if p is not None and not p.exists()]
        if absent:
            raise self._missing(f"located but absent: {', '.join(map(str, absent))}")
        return data

    def _needs(self) -> list[Need]:
        """What it needs: every file but the optional ones (a candidate of the topics,
        such as WorldTree's masked questions, is named too)."""
        return [n for n in self._spec.needs if not (n.collection and self._collection)
                and (not n.optional or {"topics", "collection"} & set(n.roles))]

    def _missing_needs(self, root: Path) -> list[Need]:
        """The needs not found under ``root``: the required ones, and every candidate of
        the topics or the collection when none of them is there."""
        needs = [n for n in self._spec.needs if not (n.collection and self._collection)]
        missing = {n for n in needs if not n.optional and not n.found(root)}
        for role in ("topics", "collection"):
            candidates = [n for n in needs if role in n.roles]
            if not any(n.found(root) for n in candidates):
                missing.update(candidates)
        return [n for n in needs if n in missing]

    @staticmethod
    def _describe(needs: Iterable[Need]) -> str:
        return "; ".join(n.describe() for n in needs)

    def _other_names(self) -> str:
        family = self._spec.family
        return ", ".join(n for n, s in _specs().items() if s.family == family and not s.sample)

    def _where(self) -> str:
        sample = next((n for n, s in _specs().items()
                       if s.family == self._spec.family and s.sample), None)
        where = f" are published at {self._spec.info}" if self._spec.info else ""
        return (f"These files cannot be downloaded automatically: {self._spec.source}{where}."
                + (f" The embedded sample needs no files: mathir:{sample}." if sample else ""))

    def _missing(self, detail: str) -> InputError:
        assert self._root is not None
        missing = self._missing_needs(self._root)
        what = (f"missing {self._describe(missing)}" if missing
                else f"incomplete data ({detail})")
        return InputError(f"mathir:{self.name}: {what}. " + self._where(), path=self._root)

    # --- PyTerrier's Dataset API -----------------------------------------------------

    def get_topics(self, variant: str | None = None) -> pd.DataFrame:
        """The topics (``qid``, ``query`` and the task's columns). ``variant`` names a
        column to use as ``query`` (e.g. ``"title"`` for ARQMath Task 1)."""
        topics = self.task().topics(self.files())
        if variant is not None:
            if variant not in topics.columns or variant == "qid":
                raise ValueError(f"no topic variant {variant!r} in mathir:{self.name}; "
                                 f"available: {[c for c in topics.columns if c != 'qid']}")
            topics = topics.assign(query=topics[variant].astype(str))
        return topics

    def get_qrels(self, variant: str | None = None) -> pd.DataFrame:
        """The judgments, read by the task's own reader (``qid``, ``docno``, ``label``...;
        word problems: ``qid``, ``problem`` — the gold problem). ``variant``: a published
        variant the task declares (``mathir tasks`` lists them, e.g. ``"all"`` for ARQMath
        Task 1 2021) or ``"official"`` (the whole file the task evaluates with).

        Where the task judges only what the collection holds (ARQMath Task 1), these are
        the judgments of the documents this collection holds: what ``mathir experiment``
        evaluates with, so that ``pt.Experiment`` gives its figures (a perfect ranking of
        a judged pool scores 1.0); a warning says when the collection holds only part of
        the judged documents. Knowing which takes the index (built, or reused, by
        :meth:`get_index`).

        >>> ds = dataset("arqmath/task1/sample")
        >>> len(ds.get_qrels()) == len(ds.get_qrels("official"))
        True
        """
        qrels = self._judgments(variant)
        if variant == "official" or not self.task().qrels_in_collection:
            return qrels
        from mathir.evaluation.evaluated import qrels_in_collection

        held = qrels_in_collection(qrels, self.get_index().docnos())
        if held.empty:
            raise InputError(f"mathir:{self.name}: no judged document is in the collection",
                             path=self.files().collection)
        if len(held) < len(qrels):
            warnings.warn(f"mathir:{self.name}: the collection holds {len(held):,} of the "
                          f"{len(qrels):,} judged documents; get_qrels() judges those, as "
                          "mathir experiment does (get_qrels('official') is the whole file)",
                          stacklevel=2)
        return held

    def _judgments(self, variant: str | None = None) -> pd.DataFrame:
        """Every judgment of the qrels file (``variant``), as the task reads it."""
        return self.task().qrels(self._files_with(variant))

    def _files_with(self, variant: str | None) -> TaskData:
        """The files, judged by ``variant`` (None / "official": the task's own qrels)."""
        files = self.files()
        if variant not in (None, "official"):
            names = [v.name for v in self.task().qrels_variants]
            if variant not in names:
                raise ValueError(f"mathir:{self.name} has the qrels variants "
                                 f"{['official', *names]}, not {variant!r}")
            files = self.task().with_qrels(files, variant)
        if files.qrels is None:
            raise InputError(f"mathir:{self.name} has no judgments (its question file is "
                             "masked)", path=files.topics)
        return files

    def get_corpus_lang(self) -> str:
        return "en"

    def get_topics_lang(self) -> str:
        return "en"

    def info_url(self) -> str:
        return self._spec.info

    def get_index(self, variant: str | None = None, *, index_dir: str | Path | None = None,
                  quiet: bool = True) -> Any:
        """The task's mathir index of the collection, built or reused (Task 1 and 3: an
        ``AnswerIndex``, Task 2: a ``FormulaIndex``, WorldTree: a ``FactIndex``, word
        problems: a ``WordProblemIndex`` of the training problems) in ``index_dir``, by
        default a folder named after the collection under :func:`default_index_root`."""
        if variant is not None:
            raise ValueError(f"mathir:{self.name} has no index variants (got {variant!r})")
        return self.task().index(self.files(), index_dir, quiet=quiet,
                                 cache_root=default_index_root())

    def get_measures(self) -> list:
        """The task's measures as ir_measures objects, for ``pt.Experiment`` with this
        dataset's topics and qrels (ValueError when the task computes some itself: use
        :meth:`evaluate`).

        >>> dataset("arqmath/task1/sample").get_measures()[0]
        nDCG(judged_only=True)
        """
        task = self.task()
        own = [m.name for m in task.measures if m.ir_measure is None]
        if own or task.prepare is not None:
            raise ValueError(f"mathir:{self.name}: {task.name}'s measures are computed by "
                             f"its own evaluation{' (' + ', '.join(own) + ')' if own else ''}"
                             f": use ds.evaluate(results)")
        return list(task.ir_measures().values())

    def evaluate(self, results: pd.DataFrame | Mapping[str, pd.DataFrame], **options: Any
                 ) -> pd.DataFrame:
        """The task's table of ``results`` (one result frame, or frames by run name)
        against this dataset's qrels (:meth:`get_qrels`) and extra files: the figures of
        ``mathir experiment`` on the same data, for each frame is written as the task's run
        file and read back as the experiment reads it. ``options`` go to the task's
        evaluation.

        >>> import mathir
        >>> ds = dataset("arqmath/task1/sample")
        >>> res = mathir.bm25(ds.get_index()).transform(ds.get_topics())
        >>> list(ds.evaluate({"bm25": res}).columns)
        ["nDCG'", "MAP'", "P'@10", 'bpref']
        """
        return self.evaluated(results, **options).table

    def evaluated(self, results: pd.DataFrame | Mapping[str, pd.DataFrame], **options: Any):
        """The one evaluation of ``results`` (:class:`mathir.evaluation.evaluated.EvaluatedRuns`:
        the runs in the order they were scored, the judgments used, per-topic scores and
        the table), judged as :meth:`get_qrels` judges."""
        import tempfile

        import pandas as pd

        from mathir.evaluation.evaluated import evaluate

        task = self.task()
        given = {"run": results} if isinstance(results, pd.DataFrame) else dict(results)
        topics = self.get_topics()["qid"]
        runs = {}
        with tempfile.TemporaryDirectory(prefix="mathir-evaluate-") as tmp:
            for name, frame in given.items():  # as mathir experiment: its run file, read
                path = task.write_run(frame, Path(tmp) / "run.tsv", name=name,
                                      format=task.run_formats[0], topics=topics)
                runs[name] = task.read_run(path, topics=set(topics))
        docnos = self.get_index().docnos() if task.qrels_in_collection else None
        # every judgment of the file: the evaluation applies the judged-set rule
        return evaluate(task, runs, self._judgments(), docnos=docnos,
                        where=Path(self.files().collection).name,
                        **{**self.get_extras(), **self.files().options, **options})

    def get_extras(self) -> dict[str, Path]:
        """The task's extra files by option name (e.g. ``formula_index``, ``assignments``,
        ``tablestore``, ``lemmas``, ``train``), as its evaluation takes them."""
        return dict(self.files().extras)

    def get_corpus_iter(self, *, verbose: bool = True, **options: Any) -> Iterator[dict]:
        """The task's corpus (:attr:`mathir.tasks.Task.corpus`) as dicts with ``docno``:
        ARQMath Tasks 1 and 3 the answers (``with_title=``, ``math_words=``), Task 2 the
        formula instances, WorldTree the tablestore's facts, word problems the training
        problems a solver learns from.

        >>> sum(1 for _ in dataset("arqmath/task1/sample").get_corpus_iter(verbose=False))
        250
        >>> sum(1 for _ in dataset("word-problems/sample").get_corpus_iter(verbose=False))
        9
        """
        task = self.task()
        if task.corpus is None:
            raise NotImplementedError(f"{task.name} declares no corpus")
        docs = task.corpus(self.files(), **options)
        return self._progress(docs, verbose, total=len(docs) if isinstance(docs, Sized) else None)

    def __getattr__(self, name: str) -> Any:
        # The task's own methods (Task.dataset_methods), e.g. get_tablestore
        if name.startswith("_"):
            raise AttributeError(name)
        method = self.task().dataset_methods.get(name)
        if method is None:
            raise AttributeError(f"mathir:{self.name} has no attribute {name!r}")
        resolved = method.resolve() if hasattr(method, "resolve") else method

        def call():
            return resolved(self.files())

        call.__name__, call.__doc__ = name, resolved.__doc__
        return call

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self.task().dataset_methods})

    def _describe_component(self, component: str) -> bool | None:
        return True if component in ("topics", "qrels", "corpus") else None

    def _progress(self, docs: Iterable[dict], verbose: bool, total: int | None = None
                  ) -> Iterator[dict]:
        return iter(pt.tqdm(docs, desc=f"mathir:{self.name}", unit=" docs", total=total,
                            disable=not verbose))


class MathirDatasets(pt.datasets.DatasetProvider):
    """The ``mathir`` dataset provider (entry point group ``pyterrier.dataset_provider``)."""

    def get_dataset(self, name: str) -> MathirDataset:
        try:
            canonical = canonical_name(name)
        except KeyError as e:  # PyTerrier rewrites a KeyError to its own bare message
            raise InputError(e.args[0]) from None
        return MathirDataset(canonical, _specs()[canonical])

    def list_dataset_names(self) -> Iterable[str]:
        return dataset_names()


def dataset(name: str, **configure: Any) -> MathirDataset:
    """The dataset ``name`` configured like ``pt.get_dataset("mathir:" + name, **configure)``,
    without going through PyTerrier's entry points (e.g. in a source checkout).

    >>> dataset("worldtree/sample").get_topics()["qid"].iloc[0]
    'WT_DEV_01'
    """
    ds = MathirDatasets().get_dataset(name)
    ds._configure(**configure)
    return ds
