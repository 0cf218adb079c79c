"""The task registry: one small declaration per task (read it to see everything).

A :class:`Task` names where its topics, qrels and collection are found, how runs are
read and written, which measures evaluate it, and its default pipelines. ``tasks.py``
and ``cli.py`` are the only modules that wire the stages together.

>>> {'arqmath-task1', 'arqmath-task3'} <= set(TASKS)
True
>>> TASKS["arqmath-task1"].default_pipelines
('tfidf', 'bm25')
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import ir_measures
import pandas as pd
import pyterrier as pt

from mathir.errors import InputError
from mathir.evaluation.formula_search import evaluate_task2, prepare_task2
from mathir.evaluation.open_answers import evaluate_task3
from mathir.evaluation.prime import ARQMATH_MEASURES, compare, per_query
from mathir.evaluation.significance import significance_table
from mathir.evaluation.word_problems import compare as word_problems_compare
from mathir.evaluation.word_problems import read_gold as read_word_problem_gold
from mathir.evaluation.worldtree import compare as worldtree_compare
from mathir.evaluation.worldtree import lexical_overlap, map_by_length, plot_map_by_length
from mathir.evaluation.worldtree import per_question as worldtree_per_question
from mathir.indexing.answer_index import AnswerCollection, AnswerIndex
from mathir.indexing.formula_index import FormulaIndex
from mathir.indexing.worldtree import FactIndex, find_lemma_file, read_lemmas, read_tablestore
from mathir.indexing.worldtree import tables_dir as worldtree_tables_dir
from mathir.pipelines import formula as formula_pipelines
from mathir.pipelines import lexical, neural, worldtree_ltr
from mathir.pipelines import worldtree as worldtree_pipelines
from mathir.pipelines.extractive import extractive, index_collection_texts
from mathir.pipelines.word_problems import (
    WordProblemIndex,
    nearest_template,
    problems_file,
    read_problem_topics,
    template_retrieval,
    trained_template_retrieval,
)
from mathir.qrels.arqmath import read_qrels
from mathir.qrels.worldtree import missing_gold
from mathir.qrels.worldtree import read_qrels as read_worldtree_qrels
from mathir.runs.arqmath import read_run, write_run
from mathir.runs.arqmath_task2 import read_task2_run, write_task2_run
from mathir.runs.arqmath_task3 import read_task3_run, write_task3_run
from mathir.runs.provenance import reusable, run_manifest
from mathir.runs.provenance import write_manifest as write_run_manifest
from mathir.runs.word_problems import read_run as read_word_problem_run
from mathir.runs.word_problems import write_run as write_word_problem_run
from mathir.runs.worldtree import read_run as read_worldtree_run
from mathir.runs.worldtree import write_run as write_worldtree_run
from mathir.samples import arqmath_sample, word_problems_sample, worldtree_sample
from mathir.storage import atomic_file
from mathir.topics.arqmath import read_task1_topics, read_task2_topics
from mathir.topics.worldtree import read_questions


@dataclass(frozen=True)
class TaskData:
    """The files of one evaluation: collection, topics, qrels (None when unjudged).

    ``extras`` holds what a task's evaluation needs besides (e.g. a formula index TSV
    for visual ids, a Task 3 assignment file), by option name.
    """

    label: str  # "sample", or the year / split
    collection: Path
    topics: Path
    qrels: Path | None
    extras: Mapping[str, Path] = field(default_factory=dict)
    # Per-topic information for report breakdowns (ARQMath: category, difficulty, ...).
    metadata: Path | None = None


@dataclass(frozen=True)
class Task:
    """Declaration of a task; see :data:`TASKS`."""

    name: str
    description: str
    measures: Mapping[str, ir_measures.Measure]
    primary_measure: str
    pipelines: Mapping[str, Callable[..., pt.Transformer]]
    default_pipelines: tuple[str, ...]
    locate: Callable[[Path | None, str | None, Path | None], TaskData]
    read_topics: Callable[[Path], pd.DataFrame]
    read_qrels: Callable[[Path], pd.DataFrame]
    read_run: Callable[..., pd.DataFrame]
    write_run: Callable[..., Path]
    build_index: Callable[..., object]
    # (runs by name, qrels, **options such as formula_index=PATH) -> run x measure table
    evaluate: Callable[..., pd.DataFrame]
    years: tuple[str, ...] = field(default_factory=tuple)
    # Judge only what the collection holds, so a perfect ranking of a sub-collection
    # (e.g. the judged pool of thread HTML files) scores 1.0.
    qrels_in_collection: bool = False
    # (runs by name, qrels, output folder, **extras) -> {what: path} of extra files that
    # `run_experiment` writes beside the runs (e.g. WorldTree's MAP-by-length histogram).
    report: Callable[..., dict[str, Path]] | None = None
    # (runs by name, qrels, **extras) -> {run: frame of qid + one column per measure}:
    # per-topic scores for significance tests and per-topic plots.
    per_topic: Callable[..., dict[str, pd.DataFrame]] | None = None
    # index directory -> index object, so that worker processes can reopen the index.
    open_index: Callable[[Path], object] | None = None

    def data(self, data: str | Path | None = None, year: str | None = None,
             collection: str | Path | None = None) -> TaskData:
        """Locate the files: the embedded sample when ``data`` is None."""
        return self.locate(Path(data) if data else None, year,
                           Path(collection) if collection else None)

    def pipeline(self, name: str, index, **kwargs) -> pt.Transformer:
        """The task's pipeline ``name`` over ``index``."""
        if name not in self.pipelines:
            raise InputError(f"unknown pipeline {name!r} for {self.name}; "
                             f"available: {', '.join(self.pipelines)}")
        return self.pipelines[name](index, **kwargs)

    def index(self, data: TaskData, index_dir: str | Path | None = None,
              quiet: bool = False, cache_root: str | Path = "indexes"):
        """Build (or reuse) the index of ``data``'s collection."""
        if index_dir is None:
            key = hashlib.sha1(str(data.collection.resolve()).encode()).hexdigest()[:10]
            index_dir = Path(cache_root) / f"{self.name}-{data.collection.name}-{key}"
        return self.build_index(data.collection, index_dir, quiet=quiet)


# --- ARQMath Task 1 ---------------------------------------------------------------

ARQMATH_YEARS = ("2020", "2021", "2022")


def _find(root: Path, pattern: str, what: str) -> Path:
    hits = sorted(root.rglob(pattern))
    if not hits:
        raise InputError(f"no {what} matching {pattern!r} under the data directory", path=root)
    return hits[0]


def _locate_arqmath_task1(root: Path | None, year: str | None,
                          collection: Path | None) -> TaskData:
    if root is None:
        s = arqmath_sample()
        return TaskData("sample", collection or s.posts, s.task1_topics, s.task1_qrels)
    if not root.is_dir():
        raise InputError("data directory not found", path=root)
    year = year or ARQMATH_YEARS[-1]
    if year not in ARQMATH_YEARS:
        raise InputError(f"unknown ARQMath year {year!r}; expected one of {list(ARQMATH_YEARS)}")
    topics = _find(root, f"Topics_Task1_{year}*.xml", "Task 1 topics")
    qrels = _find(root, f"qrel_task1_{year}_official.tsv", "Task 1 qrels")
    if collection is None:
        posts = sorted(root.rglob("Posts.V1.3.xml"))
        if posts:
            collection = posts[0]
        else:
            dirs = sorted(p for p in root.rglob("thread_html*") if p.is_dir())
            if not dirs:
                raise InputError("no collection (Posts.V1.3.xml or a thread_html* directory) "
                                 "under the data directory; pass --collection", path=root)
            collection = dirs[0]
    meta = sorted(root.rglob(f"Task1_ARQMath{ARQMATH_YEARS.index(year) + 1}_Topic_Information.csv"))
    return TaskData(year, collection, topics, qrels, metadata=meta[0] if meta else None)


def _build_answer_index(collection: Path, index_dir: Path, quiet: bool = False) -> AnswerIndex:
    return AnswerIndex.build(AnswerCollection.at(collection), index_dir, quiet=quiet)


def _per_topic_prime(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                     **options) -> dict[str, pd.DataFrame]:
    return {name: per_query(run, qrels, ARQMATH_MEASURES) for name, run in runs.items()}


def _evaluate_prime(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                    **options) -> pd.DataFrame:
    if options:
        raise InputError(f"options not used by this task: {', '.join(sorted(options))}")
    return compare(runs, qrels, ARQMATH_MEASURES)


def _answer_formulas(index: AnswerIndex) -> pt.Transformer:
    """The formula retriever of the Task 1 `fusion` pipeline (answers by their formulas)."""
    return formula_pipelines.FormulaAwareAnswers(formula_pipelines.answer_formula_index(index),
                                                 set(index.docnos()))


ARQMATH_TASK1 = Task(
    name="arqmath-task1",
    description="ARQMath Task 1: answer retrieval for Math StackExchange questions",
    measures=ARQMATH_MEASURES,
    primary_measure="nDCG'",
    pipelines={"tfidf": lexical.tfidf, "bm25": lexical.bm25,
               "formula-aware": formula_pipelines.formula_aware,
               "formula-aware-rrf": formula_pipelines.formula_aware_rrf,
               # neural (the `neural` extra, loaded on use): bi-encoder, dense, fusion
               "bm25>>biencoder": neural.bm25_biencoder, "dense": neural.dense,
               "fusion": lambda index, **kw: neural.fusion(index, formula=_answer_formulas, **kw),
               "bm25>>crossencoder": neural.bm25_crossencoder},
    default_pipelines=("tfidf", "bm25"),
    locate=_locate_arqmath_task1,
    read_topics=read_task1_topics,
    read_qrels=read_qrels,
    read_run=read_run,
    write_run=write_run,
    build_index=_build_answer_index,
    evaluate=_evaluate_prime,
    years=ARQMATH_YEARS,
    qrels_in_collection=True,
    per_topic=_per_topic_prime,
    open_index=AnswerIndex,
)


# --- ARQMath Task 2 (formula search) -----------------------------------------------


def _locate_arqmath_task2(root: Path | None, year: str | None,
                          collection: Path | None) -> TaskData:
    if root is None:
        s = arqmath_sample()
        formulas = collection or s.formulas
        index_tsv = formulas if formulas.suffix == ".tsv" else s.formulas
        return TaskData("sample", formulas, s.task2_topics, s.task2_qrels_visual_id,
                        {"formula_index": index_tsv})
    if not root.is_dir():
        raise InputError("data directory not found", path=root)
    year = year or ARQMATH_YEARS[-1]
    if year not in ARQMATH_YEARS:
        raise InputError(f"unknown ARQMath year {year!r}; expected one of {list(ARQMATH_YEARS)}")
    topics = _find(root, f"Topics_Task2_{year}*.xml", "Task 2 topics")
    # v3 visual ids (those of latex_representation_v3) when a year has two numberings.
    qrels = (sorted(root.rglob(f"qrel_task2_{year}_visual_id_v3_official.tsv"))
             or [_find(root, f"qrel_task2_{year}_visual_id*official.tsv", "Task 2 qrels")])[0]
    if collection is None:
        tsvs = (sorted(root.rglob("latex_representation_v3*.tsv"))
                or sorted(root.rglob("formula_index_from_thread_html.tsv")))
        if not tsvs:
            raise InputError("no formula index TSV (latex_representation_v3*.tsv or "
                             "formula_index_from_thread_html.tsv) under the data directory; "
                             "pass --collection", path=root)
        collection = tsvs[0]
    extras = {"formula_index": collection} if collection.suffix == ".tsv" else {}
    return TaskData(year, collection, topics, qrels, extras)


def _build_formula_index(collection: Path, index_dir: Path, quiet: bool = False) -> FormulaIndex:
    return FormulaIndex.build(collection, index_dir, quiet=quiet)


def _evaluate_task2(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                    formula_index: str | Path | None = None, qrels_key: str = "visual_id",
                    **options) -> pd.DataFrame:
    if options:
        raise InputError(f"options not used by this task: {', '.join(sorted(options))}")
    return evaluate_task2(runs, qrels, formula_index, qrels_key=qrels_key)


def _per_topic_task2(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                     formula_index: str | Path | None = None, qrels_key: str = "visual_id",
                     **options) -> dict[str, pd.DataFrame]:
    deduped, vqrels = prepare_task2(runs, qrels, formula_index, qrels_key=qrels_key)
    return _per_topic_prime(deduped, vqrels)


ARQMATH_TASK2 = Task(
    name="arqmath-task2",
    description="ARQMath Task 2: formula search, judged on visually distinct formulae",
    measures=ARQMATH_MEASURES,
    primary_measure="nDCG'",
    pipelines={"formula-words": formula_pipelines.formula_words,
               "formula-tuples": formula_pipelines.formula_tuples},
    default_pipelines=("formula-words", "formula-tuples"),
    locate=_locate_arqmath_task2,
    read_topics=read_task2_topics,
    read_qrels=read_qrels,
    read_run=read_task2_run,
    write_run=write_task2_run,
    build_index=_build_formula_index,
    evaluate=_evaluate_task2,
    years=ARQMATH_YEARS,
    per_topic=_per_topic_task2,
    open_index=FormulaIndex,
)


# --- ARQMath Task 3 (open-domain answers) ---------------------------------------------

TASK3_MEASURES = {
    "AR": "average relevance of the judged answer (0-3; codes 5, 6 count 0)",
    "P@1": "fraction of answers with relevance >= 2 (H+M)",
    "LO": "lexical overlap: best token-set F1 with a relevant reference, same team ablated",
    "CS": "contextual similarity: best BERTScore F1 with a relevant reference, same team ablated",
}


def _locate_arqmath_task3(root: Path | None, year: str | None,
                          collection: Path | None) -> TaskData:
    if root is None:
        s = arqmath_sample()
        posts = collection or s.posts
        return TaskData("sample", posts, s.task1_topics, s.task3_qrels,
                        {"assignments": s.task3_assignments, "task3_pool": s.task3_runs,
                         "task1_qrels": s.task1_qrels, "collection": posts})
    if (year or "2022") != "2022":
        raise InputError(f"Task 3 ran in ARQMath-3 only (2022), not {year!r}")
    t1 = _locate_arqmath_task1(root, "2022", collection)
    qrels = _find(root, "qrel_task3_2022*.tsv", "Task 3 qrels")
    extras = {"task1_qrels": t1.qrels, "collection": t1.collection}
    assignments = sorted(root.rglob("teams_document_id.tsv"))
    if assignments:
        extras["assignments"] = assignments[0]
    return TaskData("2022", t1.collection, t1.topics, qrels, extras)


def _extractive_pipeline(name: str, retrieval: Callable[..., pt.Transformer]
                         ) -> Callable[..., pt.Transformer]:
    def build(index: AnswerIndex, max_chars: int = 1200, **kwargs) -> pt.Transformer:
        return extractive(retrieval(index, **kwargs), index_collection_texts(index), max_chars)

    build.__doc__ = f"Extractive Task 3 answers: the top answer of Task 1's {name!r}."
    return build


ARQMATH_TASK3 = Task(
    name="arqmath-task3",
    description="ARQMath-3 Task 3: open-domain answers (one answer of <= 1,200 characters)",
    measures=TASK3_MEASURES,
    primary_measure="AR",
    # every Task 1 pipeline, made extractive (its top answer, cut to 1,200 characters)
    pipelines={n: _extractive_pipeline(n, f) for n, f in ARQMATH_TASK1.pipelines.items()},
    default_pipelines=("tfidf", "bm25"),
    locate=_locate_arqmath_task3,
    read_topics=read_task1_topics,
    read_qrels=read_qrels,
    read_run=read_task3_run,
    write_run=write_task3_run,
    build_index=_build_answer_index,
    evaluate=evaluate_task3,
    years=("2022",),
    open_index=AnswerIndex,
)

# --- WorldTree explanation regeneration (TextGraphs 2019) -------------------------

WORLDTREE_SPLITS = ("Train", "Dev", "Test")
WORLDTREE_MEASURES = {
    "MAP": "mean average precision; a gold fact missing from a ranking makes its AP 0",
    "MAP:CENTRAL": "MAP of the CENTRAL gold facts (other gold facts removed from the ranking)",
    "MAP:GROUNDING": "MAP of the GROUNDING gold facts (other gold facts removed)",
    "MAP:LEXGLUE": "MAP of the LEXGLUE gold facts (other gold facts removed)",
    "MAP:LEXOVERLAP": "MAP of gold facts sharing a word or lemma with question + answer",
    "MAP:NOLEXOVERLAP": "MAP of gold facts sharing none",
    **{f"P@{n}": f"gold facts in the top {n} / min({n}, gold facts)" for n in range(1, 6)},
}


def _worldtree_split(split: str | None) -> str:
    name = (split or "Dev").capitalize()
    if name not in WORLDTREE_SPLITS:
        raise InputError(f"unknown WorldTree split {split!r}; expected one of "
                         f"{list(WORLDTREE_SPLITS)}")
    return name


def _locate_worldtree(root: Path | None, split: str | None, collection: Path | None) -> TaskData:
    name = _worldtree_split(split)
    if root is None:
        s = worldtree_sample()
        tables = collection or s.tables
        return TaskData("sample", tables, s.questions(name), s.questions(name),
                        {"tablestore": tables, "lemmas": s.lemmas})
    if not root.is_dir():
        raise InputError("data directory not found", path=root)
    if collection is None:
        found = sorted(p for p in root.rglob("tables") if p.is_dir() and any(p.glob("*.tsv")))
        if not found:
            raise InputError("no tablestore (a tables/ directory of TSVs) under the data "
                             "directory; pass --collection", path=root)
        collection = found[0]
    questions = [p for p in sorted(root.rglob(f"ARC-Elementary*EXPL-{name}*.tsv"))
                 if "Masked" not in p.name]
    masked = sorted(root.rglob(f"ARC-Elementary*EXPL-{name}-Masked*.tsv"))
    if not questions and not masked:
        raise InputError(f"no {name} question file (ARC-Elementary*EXPL-{name}.tsv) under the "
                         "data directory", path=root)
    topics = questions[0] if questions else masked[0]
    extras = {"tablestore": collection}
    lemmas = find_lemma_file(collection)
    if lemmas is not None:
        extras["lemmas"] = lemmas
    return TaskData(name.lower(), collection, topics, questions[0] if questions else None, extras)


def _read_worldtree_topics(path: Path) -> pd.DataFrame:
    # Only questions with a gold explanation are scored; a file without any (a masked
    # test file) gives all its questions.
    topics = read_questions(path)
    explained = topics[topics["explanation"] != ""]
    return explained.reset_index(drop=True) if len(explained) else topics


def _worldtree_gold(qrels: pd.DataFrame, tablestore: str | Path | None,
                    lemmas: str | Path | None) -> pd.DataFrame:
    """Qrels with the ``overlap`` flag; the tablestore is found next to the questions."""
    if tablestore is None and qrels.attrs.get("source"):
        # The official layout: questions/ beside annotation/<export>/tables/.
        base = Path(qrels.attrs["source"]).resolve().parent.parent
        found = sorted(p for p in base.rglob("tables") if p.is_dir() and any(p.glob("*.tsv")))
        tablestore = found[0] if found else None
    if tablestore is None:
        raise InputError("the lexical-overlap measures need the tablestore: pass --tablestore DIR")
    tables = worldtree_tables_dir(tablestore)
    if lemmas is None:
        lemmas = find_lemma_file(tables)
    texts = read_tablestore(tables, warn=False).texts()
    gold = qrels.copy()
    gold["overlap"] = lexical_overlap(gold, texts, read_lemmas(lemmas) if lemmas else None)
    missing = missing_gold(gold, texts)
    if len(missing):
        warnings.warn(f"{len(missing)} gold fact(s) of {missing['qid'].nunique()} question(s) "
                      f"are not in the tablestore (AP 0): {', '.join(sorted(set(missing['docno'])))}",
                      stacklevel=2)
    return gold


def _evaluate_worldtree(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                        tablestore: str | Path | None = None, lemmas: str | Path | None = None,
                        **options) -> pd.DataFrame:
    if options:
        raise InputError(f"options not used by this task: {', '.join(sorted(options))}")
    return worldtree_compare(runs, _worldtree_gold(qrels, tablestore, lemmas))


def _per_topic_worldtree(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                         tablestore: str | Path | None = None, lemmas: str | Path | None = None,
                         **options) -> dict[str, pd.DataFrame]:
    gold = _worldtree_gold(qrels, tablestore, lemmas)
    return {name: worldtree_per_question(run, gold).drop(columns=["length"])
            for name, run in runs.items()}


def _report_worldtree(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, out: Path,
                      tablestore: str | Path | None = None, lemmas: str | Path | None = None,
                      **options) -> dict[str, Path]:
    """MAP by gold explanation length: a TSV table and a PNG histogram in ``out``."""
    gold = _worldtree_gold(qrels, tablestore, lemmas)
    per_run = {name: worldtree_per_question(run, gold) for name, run in runs.items()}
    rows = [map_by_length(t).assign(run=name) for name, t in per_run.items()]
    table = pd.concat(rows, ignore_index=True)[["run", "length", "questions", "MAP"]]
    tsv = out / "map_by_length.tsv"
    with atomic_file(tsv) as f:
        table.to_csv(f, sep="\t", index=False, float_format="%.4f")
    png = plot_map_by_length(per_run, out / "map_by_length.png")
    return {"MAP by explanation length (table)": tsv, "MAP by explanation length (histogram)": png}


WORLDTREE = Task(
    name="worldtree",
    description="WorldTree explanation regeneration (TextGraphs 2019): rank the tablestore facts",
    measures=WORLDTREE_MEASURES,
    primary_measure="MAP",
    pipelines={"tfidf": worldtree_pipelines.tfidf, "bm25": worldtree_pipelines.bm25,
               "multihop": worldtree_pipelines.multihop, "fusion": worldtree_pipelines.fusion,
               "rrf": worldtree_pipelines.rrf, "neighbours": worldtree_pipelines.neighbours,
               "python-baseline": worldtree_pipelines.python_baseline,
               "ltr": worldtree_ltr.ltr, "ltr-minilm": worldtree_ltr.ltr_minilm,
               "ltr-dense": worldtree_ltr.ltr_dense,
               "ltr-crossencoder": worldtree_ltr.ltr_crossencoder,
               "ltr-dense-crossencoder": worldtree_ltr.ltr_dense_crossencoder},
    default_pipelines=("tfidf", "bm25", "multihop", "fusion", "neighbours", "ltr"),
    locate=_locate_worldtree,
    read_topics=_read_worldtree_topics,
    read_qrels=read_worldtree_qrels,
    read_run=read_worldtree_run,
    write_run=write_worldtree_run,
    build_index=FactIndex.build,
    evaluate=_evaluate_worldtree,
    years=WORLDTREE_SPLITS,
    report=_report_worldtree,
    per_topic=_per_topic_worldtree,
    open_index=FactIndex,
)

# --- Word problems: answers and derivations -------------------------------------------

WORD_PROBLEM_SPLITS = ("test", "dev") + tuple(f"alg514-fold-{k}" for k in range(5)) \
    + tuple(f"dolphin-fold-{k}" for k in range(5))


def _locate_word_problems(root: Path | None, split: str | None,
                          collection: Path | None) -> TaskData:
    split = split or "test"
    if split not in WORD_PROBLEM_SPLITS:
        raise InputError(f"unknown word-problem split {split!r}; expected one of "
                         f"{list(WORD_PROBLEM_SPLITS)}")
    if root is None:
        if split != "test":
            raise InputError("the embedded word-problem sample has only the test split")
        s = word_problems_sample()
        return TaskData("sample", collection or s.problems, s.split("test"), s.split("test"),
                        {"train": s.split("train")})
    if not root.is_dir():
        raise InputError("data directory not found", path=root)
    extras: dict[str, Path] = {}
    if split in ("test", "dev"):  # DRAW-1K: train on its train split
        topics = _find(root, f"draw-{split}.txt", "DRAW-1K split file")
        extras["train"] = topics.parent / "draw-train.txt"
        label = f"draw-{split}"
    else:  # 5-fold cross-validation: train on every problem outside the fold
        name, k = split.rsplit("-fold-", 1)
        pattern = f"kushman-fold-{k}.txt" if name == "alg514" else f"dolphin-t2-fold-new-{k}.txt"
        topics = _find(root, pattern, "fold file")
        label = split
    return TaskData(label, collection or problems_file(topics), topics, topics, extras)


@dataclass(frozen=True)
class WordProblemTask(Task):
    """Word problems are solved, not ranked: the "index" is the training set, the
    problems of ``extras['train']`` or else every problem outside the evaluated split."""

    def index(self, data: TaskData, index_dir: str | Path | None = None, quiet: bool = False,
              cache_root: str | Path = "indexes") -> WordProblemIndex:
        return WordProblemIndex.build(data.collection, train=data.extras.get("train"),
                                      exclude=data.topics)


def _evaluate_word_problems(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                            train: str | Path | None = None, **options) -> pd.DataFrame:
    if options:
        raise InputError(f"options not used by this task: {', '.join(sorted(options))}")
    return word_problems_compare(runs, qrels)


WORD_PROBLEMS = WordProblemTask(
    name="word-problems",
    description="Algebra word problems (DRAW-1K, Alg-514, Dolphin-L): template-retrieval "
                "solver, solution / equation / derivation accuracy",
    measures={"solution_acc": None, "equation_acc": None, "derivation_acc": None},
    primary_measure="solution_acc",
    pipelines={"nearest-template": nearest_template, "template-retrieval": template_retrieval,
               "trained-template-retrieval": trained_template_retrieval},
    default_pipelines=("nearest-template", "template-retrieval", "trained-template-retrieval"),
    locate=_locate_word_problems,
    read_topics=read_problem_topics,
    read_qrels=read_word_problem_gold,
    read_run=read_word_problem_run,
    write_run=write_word_problem_run,
    build_index=WordProblemIndex.build,
    evaluate=_evaluate_word_problems,
    years=WORD_PROBLEM_SPLITS,
)

TASKS: dict[str, Task] = {t.name: t for t in (ARQMATH_TASK1, ARQMATH_TASK2, ARQMATH_TASK3, WORLDTREE, WORD_PROBLEMS,)}


def get_task(name: str) -> Task:
    """The task called ``name``; InputError listing the known ones otherwise."""
    try:
        return TASKS[name]
    except KeyError:
        raise InputError(f"unknown task {name!r}; available: {', '.join(TASKS)}") from None


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


def build_pipeline(task_name: str, pipeline: str, index_dir: str, **kwargs) -> pt.Transformer:
    """Reopen a task's index and build one of its pipelines (used by worker processes)."""
    task = get_task(task_name)
    if task.open_index is None:
        raise InputError(f"{task_name} cannot reopen its index in worker processes")
    return task.pipeline(pipeline, task.open_index(Path(index_dir)), **kwargs)


def run_pipeline(task: Task, name: str, index, topics: pd.DataFrame, out: Path,
                 quiet: bool = False, workers: int = 1, ray_address: str | None = None,
                 **kwargs) -> Path:
    """Run one named pipeline over ``topics`` and write its run file to ``out``.

    With ``workers`` > 1 (local processes) or a ``ray_address`` (a Ray cluster; "auto"
    joins a running one, "local" starts one), topics are processed in parallel batches;
    the results are identical to a single-process run.
    """
    parallel = (workers > 1 or ray_address) and task.open_index is not None \
        and getattr(index, "path", None) is not None
    if parallel:
        from mathir.pipelines.parallel import ParallelTopics, PipelineSpec

        spec = PipelineSpec(build_pipeline, (task.name, name, str(index.path)),
                            tuple(sorted(kwargs.items())))
        pipe = ParallelTopics(spec, workers=max(workers, 1),
                              backend="ray" if ray_address else "processes",
                              ray_address=None if ray_address == "local" else ray_address)
    else:
        pipe = task.pipeline(name, index, verbose=not quiet, **kwargs)
    results = pipe.transform(topics)
    return task.write_run(results, out, name=out.stem, topics=topics["qid"])


def run_experiment(task: Task | str, data: TaskData | None = None,
                   pipelines: list[str] | None = None, out: str | Path = "runs",
                   index_dir: str | Path | None = None, quiet: bool = False,
                   baseline: str | None = None, test: str = "t", correction: str = "holm",
                   workers: int = 1, ray_address: str | None = None,
                   reuse: bool = True) -> ExperimentResult:
    """Index, run each pipeline, write run files with manifests, evaluate and compare.

    Runs go to ``out/<task>/<data label>/<pipeline>.tsv``, each with a
    ``<pipeline>.manifest.json`` (see :mod:`mathir.runs.provenance`); a run whose
    manifest still matches (same pipeline, topics, qrels, index and versions) is reused.
    When the task has per-topic scores, every pipeline is compared with ``baseline``
    (default: the first) by a paired ``test`` with ``correction`` over the pipelines.

    >>> import tempfile
    >>> res = run_experiment("arqmath-task1", out=tempfile.mkdtemp(), quiet=True,
    ...                      index_dir=tempfile.mkdtemp() + "/idx")
    >>> list(res.table.index), res.baseline
    (['tfidf', 'bm25'], 'tfidf')
    """
    task = get_task(task) if isinstance(task, str) else task
    data = data or task.data()
    names = list(pipelines or task.default_pipelines)
    for n in names:
        if n not in task.pipelines:
            raise InputError(f"unknown pipeline {n!r} for {task.name}; "
                             f"available: {', '.join(task.pipelines)}")
    if baseline is not None and baseline not in names:
        raise InputError(f"baseline {baseline!r} is not one of the pipelines run: {', '.join(names)}")
    out = Path(out)
    topics = task.read_topics(data.topics)
    qrels = task.read_qrels(data.qrels) if data.qrels else None
    t0 = time.perf_counter()
    index = task.index(data, index_dir, quiet=quiet, cache_root=out / ".index")
    seconds = {"index": time.perf_counter() - t0}
    runs: dict[str, Path] = {}
    reused: list[str] = []
    folder = out / task.name / data.label
    for n in names:
        t0 = time.perf_counter()
        path = folder / f"{n}.tsv"
        manifest = run_manifest(task.name, task.pipeline(n, index), data.topics, data.qrels,
                                index_dir=getattr(index, "path", None))
        if reuse and reusable(path, manifest):
            reused.append(n)
        else:
            run_pipeline(task, n, index, topics, path, quiet=quiet, workers=workers,
                         ray_address=ray_address)
            write_run_manifest(path, manifest)
        runs[n] = path
        seconds[n] = time.perf_counter() - t0
    result = ExperimentResult(task.name, data, runs, None, seconds, reused=reused)
    if qrels is None:
        return result
    if task.qrels_in_collection:
        qrels = qrels[qrels["docno"].isin(set(index.docnos()))]
        if qrels.empty:
            raise InputError("no judged document of these qrels is in the collection",
                             path=data.qrels)
    known = set(topics["qid"])
    loaded = {n: task.read_run(p, topics=known) for n, p in runs.items()}
    result.table = task.evaluate(loaded, qrels, **data.extras)
    if task.report is not None:
        result.files = task.report(loaded, qrels, folder, **data.extras)
    if task.per_topic is not None:
        result.per_topic = task.per_topic(loaded, qrels, **data.extras)
        result.baseline = baseline or names[0]
        measures = [m for m in result.table.columns
                    if all(m in df.columns for df in result.per_topic.values())]
        result.significance = significance_table(result.per_topic, measures, result.baseline,
                                                 test=test, correction=correction)
    return result


def write_experiment_report(result: ExperimentResult, path: str | Path | None = None) -> Path:
    """Write the experiment's self-contained HTML report (default: beside its runs).

    The comparison table with significance marks, per-topic differences to the baseline
    on the task's primary measure, the task's own plots (ARQMath: scores by topic
    category, difficulty and dependency from the topic metadata; WorldTree: MAP by
    explanation length) and the run files' locations.
    """
    from mathir.evaluation.report import (
        breakdown_chart,
        html_report,
        per_topic_chart,
        write_report,
    )
    from mathir.topics.arqmath import read_topic_metadata

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
        if result.data.metadata is not None:
            meta = read_topic_metadata(result.data.metadata).set_index("qid")
            for column in ("category", "difficulty", "dependency"):
                if column in meta.columns:
                    figures.append((f"{primary} by topic {column}",
                                    breakdown_chart(result.per_topic, primary, meta[column],
                                                    f"{primary} by topic {column}")))
    for what, file in result.files.items():
        if Path(file).suffix == ".png":
            figures.append((what.replace("_", " "), Path(file).read_bytes()))
    notes = [f"Runs: {', '.join(str(p) for p in result.runs.values())}."]
    if result.significance is None:
        notes.append("No per-topic scores for this task: no significance tests.")
    if result.table.attrs.get("note"):
        notes.append(str(result.table.attrs["note"]))
    title = f"{task.description} — {result.data.label}"
    page = html_report(title, result.table, result.baseline or str(result.table.index[0]),
                       result.significance, figures, notes)
    return write_report(path, page)


def evaluate_runs(task: Task | str, qrels_path: str | Path, run_paths: list[str | Path],
                  topics_path: str | Path | None = None, **options) -> pd.DataFrame:
    """Evaluate run files against a qrels file; rows are named by file stem.

    With ``topics_path``, a run line for a topic outside those topics is an error.
    ``options`` go to the task's evaluation (e.g. ``formula_index=PATH``).
    """
    task = get_task(task) if isinstance(task, str) else task
    if not run_paths and not options:
        raise InputError(f"no run files to evaluate (RUN ...) for {task.name}")
    qrels = task.read_qrels(qrels_path)
    known = set(task.read_topics(topics_path)["qid"]) if topics_path else None
    runs = {}
    for p in run_paths:
        name = Path(p).stem
        if name in runs:
            raise InputError(f"two runs are named {name!r} (file stem); rename one", path=p)
        runs[name] = task.read_run(p, topics=known)
    return task.evaluate(runs, qrels, **options)
