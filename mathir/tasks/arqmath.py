"""ARQMath Tasks 1, 2 and 3: where their files are, and how they are run and judged.

>>> from mathir.tasks import get_task
>>> get_task("arqmath-task2").default_pipelines
('formula-words', 'formula-tuples')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path

from mathir.errors import InputError, require_files
from mathir.evaluation.measures import PRIME_MEASURES
from mathir.samples import arqmath_sample
from mathir.tasks import (
    Measure,
    Need,
    Option,
    Published,
    QrelsVariant,
    Split,
    Task,
    TaskData,
    no_options,
    register,
)
from mathir.tasks.locate import find_need, no_collection

ARQMATH_YEARS = ("2020", "2021", "2022")
ARQMATH_FILES = Published("the ARQMath collection, topics and qrels",
                          "https://www.cs.rit.edu/~dprl/ARQMath/")
# --- ARQMath Task 1 -----------------------------------------------------------------------


#: The Task 1 collection, most preferred first: the official posts; ``threads_all``, a
#: folder of every thread file (no cut); then any other ``thread_html*`` folder.
TASK1_COLLECTION = Need(("Posts.V1.3.xml", "threads_all", "thread_html*"),
                        "the collection: Math StackExchange posts or a folder of thread "
                        "HTML files (threads_all preferred; --collection / collection= "
                        "chooses)", "collection")


def task1_needs(year: str) -> tuple[Need, ...]:
    """The files of Task 1 in ``year``: topics, qrels, the collection, topic information."""
    edition = ARQMATH_YEARS.index(year) + 1
    return (Need(f"Topics_Task1_{year}*.xml", "Task 1 topics", "topics"),
            Need(f"qrel_task1_{year}_official.tsv", "Task 1 qrels", "qrels"),
            TASK1_COLLECTION,
            Need(f"Task1_ARQMath{edition}_Topic_Information.csv", "Task 1 topic information",
                 "metadata", optional=True))


def find_task1_collection(root: Path) -> Path:
    """The Task 1 collection under ``root``, as the task finds it (:data:`TASK1_COLLECTION`):
    when several candidates are there, a warning names them all, the one taken and
    ``--collection PATH`` (``collection=``) to take another."""
    found = find_need(TASK1_COLLECTION, root)
    if found is None:
        raise no_collection([TASK1_COLLECTION], root)
    return found


def _task1_sample(year: str | None, collection: Path | None) -> TaskData:
    s = arqmath_sample()
    return TaskData("sample", collection or s.posts, s.task1_topics, s.task1_qrels)


def _topic_groups(metadata: Path):
    """Task 1's topic information: category, difficulty and dependency by topic."""
    from mathir.topics.arqmath import read_topic_metadata

    meta = read_topic_metadata(metadata)
    return meta[["qid", *(c for c in ("category", "difficulty", "dependency")
                          if c in meta.columns)]]


def _build_answer_index(data: TaskData, index_dir: Path, quiet: bool = False, *,
                        shards: int = 1, ray_address: str | None = None,
                        scoring: str | None = None):
    from mathir.indexing.answer_collection import AnswerCollection
    from mathir.indexing.answer_index import AnswerIndex

    return AnswerIndex.build(AnswerCollection.at(data.collection), index_dir, quiet=quiet,
                             shards=shards, scoring=scoring, ray_address=ray_address)


def answer_formulas(index):
    """The formula retriever of the Task 1 `fusion` pipeline (answers by their formulas)."""
    from mathir.pipelines.formula import FormulaAwareAnswers, answer_formula_index

    return FormulaAwareAnswers(answer_formula_index(index), set(index.docnos()))


def fusion(index, backend: str = "torch", search: str = "exhaustive", **kwargs):
    """Task 1 ``fusion``: BM25, the bi-encoder and the answers' formulas, linearly fused.

    ``backend`` and ``search`` (``--backend``, ``--dense-search``) go to the dense stage.
    """
    from mathir.pipelines.neural import fusion as neural_fusion

    return neural_fusion(index, formula=answer_formulas, backend=backend, search=search,
                         **kwargs)


def answer_corpus(data: TaskData, with_title: bool = True, math_words: bool = False):
    """The answers of ``data``'s collection as ``{"docno", "text", "thread_id"}`` (formulas
    as ``$LaTeX$``, or as words with ``math_words``, as mathir's own index reads them;
    ``with_title`` prepends the question's title): a ``mathir:`` dataset's corpus."""
    from mathir.indexing.answer_collection import AnswerCollection

    return AnswerCollection.at(data.collection).iter_answers(with_title, math_words)


def topic_metadata(data: TaskData):
    """ARQMath's topic information (category, difficulty, dependency); None when absent."""
    from mathir.topics.arqmath import read_topic_metadata

    return None if data.metadata is None else read_topic_metadata(data.metadata)


ARQMATH_TASK1 = register(Task(
    name="arqmath-task1",
    description="ARQMath Task 1: answer retrieval for Math StackExchange questions",
    measures=PRIME_MEASURES,
    primary_measure="nDCG'",
    pipelines={"tfidf": "mathir.pipelines.lexical:tfidf",
               "bm25": "mathir.pipelines.lexical:bm25",
               "formula-aware": "mathir.pipelines.formula:formula_aware",
               "formula-aware-rrf": "mathir.pipelines.formula:formula_aware_rrf",
               # neural (the `neural` extra, loaded on use): bi-encoder, dense, fusion
               "bm25>>biencoder": "mathir.pipelines.neural:bm25_biencoder",
               "dense": "mathir.pipelines.neural:dense",
               "fusion": fusion,
               "bm25>>crossencoder": "mathir.pipelines.neural:bm25_crossencoder"},
    default_pipelines=("tfidf", "bm25"),
    sample=_task1_sample,
    read_topics="mathir.topics.arqmath:read_task1_topics",
    read_qrels="mathir.qrels.arqmath:read_qrels",
    read_run="mathir.runs.trec:read_run",
    write_run="mathir.runs.trec:write_run",
    build_index=_build_answer_index,
    years=ARQMATH_YEARS,
    run_formats=("arqmath", "trec"),
    qrels_in_collection=True,
    topic_groups=_topic_groups,
    explorer="mathir.evaluation.explorer_arqmath:arqmath_answers",
    qrels_variants=(
        QrelsVariant("all", "qrel_task1_{year}_all.tsv",
                     "every judgment of the year, official and additional (2021)"),
        QrelsVariant("additional", "qrel_task1_{year}_additional.tsv",
                     "the judgments beyond the official ones (2021)")),
    open_index="mathir.indexing.answer_index:AnswerIndex",
    published=ARQMATH_FILES,
    dataset="arqmath/task1",
    splits=(*(Split(y, y, task1_needs(y)) for y in ARQMATH_YEARS),
            Split("sample", None, sample=True)),
    year_name="ARQMath year",
    corpus=answer_corpus,
    dataset_methods={"get_topic_metadata": topic_metadata},
))


# --- ARQMath Task 2 (formula search) ------------------------------------------------------


def _task2_sample(year: str | None, collection: Path | None) -> TaskData:
    s = arqmath_sample()
    formulas = collection or s.formulas
    index_tsv = formulas if formulas.suffix == ".tsv" else s.formulas
    return TaskData("sample", formulas, s.task2_topics, s.task2_qrels_visual_id,
                    {"formula_index": index_tsv})


def _task2_visual_ids(data: TaskData) -> TaskData:
    """Visual ids come from the formula index TSV: a collection of another kind (thread
    files given with --collection) has none."""
    if data.collection.suffix == ".tsv":
        return data
    extras = {k: v for k, v in data.extras.items() if k != "formula_index"}
    return dataclasses.replace(data, extras=extras)


def task2_needs(year: str) -> tuple[Need, ...]:
    """The files of Task 2 in ``year``: topics, visual-id qrels, the formula index TSV."""
    return (Need(f"Topics_Task2_{year}*.xml", "Task 2 topics", "topics"),
            # v3 visual ids (those of latex_representation_v3) when a year has two numberings
            Need((f"qrel_task2_{year}_visual_id_v3_official.tsv",
                  f"qrel_task2_{year}_visual_id*official.tsv"), "Task 2 visual-id qrels",
                 "qrels"),
            Need(("latex_representation_v3*.tsv", "formula_index_from_thread_html.tsv"),
                 "the formula index TSV", "collection", option="formula_index"))


def _build_formula_index(data: TaskData, index_dir: Path, quiet: bool = False, *,
                         shards: int = 1, ray_address: str | None = None,
                         scoring: str | None = None):
    from mathir.indexing.formula_index import FormulaIndex

    return FormulaIndex.build(data.collection, index_dir, quiet=quiet, shards=shards,
                              ray_address=ray_address, scoring=scoring)


def _prepare_task2(runs: Mapping, qrels, formula_index: str | Path | None = None,
                   qrels_key: str | None = None, **options) -> tuple:
    """Task 2: formula runs made visual-id runs (one per visual id, as ARQMath judges)
    and the qrels visual-id qrels; the prime measures are then taken per topic."""
    from mathir.evaluation.formula_search import prepare_task2

    no_options(options)
    # every visual id is kept (not only the judged ones): the prime measures drop the
    # unjudged, and the explorer lists the run as it was scored
    return prepare_task2(runs, qrels, formula_index, qrels_key=qrels_key or "visual_id",
                         judged_only=False)


TASK2_OPTIONS = (
    Option("formula_index", "formula index TSV (Task 2: formula id -> visual id)"),
    Option("qrels_key", "Task 2: what the qrels' doc ids are (default visual_id; formula-id "
                        "qrels become visual-id qrels with the maximum relevance)",
           choices=("visual_id", "formula_id")),
)


def formula_corpus(data: TaskData):
    """Formula instances as ``{"docno": formula_id, "text": formula, "post_id",
    "thread_id", "type", "comment_id", "old_visual_id", "visual_id", "issue"}``; a formula
    id repeated in the source (a question copied into several thread files) once, as
    mathir's formula index keeps it."""
    from mathir.indexing.formula_source import iter_formula_source

    seen: set[str] = set()
    for rec in iter_formula_source(data.collection):
        if rec.formula_id not in seen:
            seen.add(rec.formula_id)
            doc = rec._asdict()
            doc["docno"], doc["text"] = doc.pop("formula_id"), doc.pop("formula")
            yield doc


def formula_index(data: TaskData) -> Path:
    """The formula index TSV that maps formula ids to visual ids (the official qrels'
    ``docno`` is a visual id: score formula runs with :func:`mathir.evaluate_task2`)."""
    path = data.extras.get("formula_index")
    if path is None:
        raise InputError("the collection is not a formula index TSV, so there are no visual "
                         "ids", path=data.collection)
    return path


ARQMATH_TASK2 = register(Task(
    name="arqmath-task2",
    description="ARQMath Task 2: formula search, judged on visually distinct formulae",
    measures=PRIME_MEASURES,
    primary_measure="nDCG'",
    pipelines={"formula-words": "mathir.pipelines.formula:formula_words",
               "formula-tuples": "mathir.pipelines.formula:formula_tuples"},
    default_pipelines=("formula-words", "formula-tuples"),
    sample=_task2_sample,
    complete=_task2_visual_ids,
    read_topics="mathir.topics.arqmath:read_task2_topics",
    read_qrels="mathir.qrels.arqmath:read_qrels",
    read_run="mathir.runs.arqmath_task2:read_task2_run",
    write_run="mathir.runs.arqmath_task2:write_task2_run",
    build_index=_build_formula_index,
    years=ARQMATH_YEARS,
    prepare=_prepare_task2,
    explorer="mathir.evaluation.explorer_arqmath:arqmath_formulas",
    qrels_variants=(
        QrelsVariant("formula_id", "qrel_task2_{year}_formula_id_official.tsv",
                     "the official judgments by formula id (made visual-id qrels, the "
                     "maximum relevance per visual id)", {"qrels_key": "formula_id"}),
        QrelsVariant("formula_id_all", "qrel_task2_{year}_formula_id_all.tsv",
                     "every judgment by formula id (2020, 2021)", {"qrels_key": "formula_id"}),
        QrelsVariant("visual_id_all", "qrel_task2_{year}_visual_id_all.tsv",
                     "every judgment by visual id (2021)")),
    open_index="mathir.indexing.formula_index:FormulaIndex",
    published=ARQMATH_FILES,
    dataset="arqmath/task2",
    splits=(*(Split(y, y, task2_needs(y)) for y in ARQMATH_YEARS),
            Split("sample", None, sample=True)),
    year_name="ARQMath year",
    corpus=formula_corpus,
    dataset_methods={"get_formula_index": formula_index},
    options=TASK2_OPTIONS,
))


# --- ARQMath Task 3 (open-domain answers) -------------------------------------------------

TASK3_MEASURES = (
    Measure("AR", "average relevance of the judged answer (0-3; codes 5, 6 count 0)"),
    Measure("P@1", "fraction of answers with relevance >= 2 (H+M)"),
    Measure("LO", "lexical overlap: best token-set F1 with a relevant reference, same team "
                  "ablated"),
    Measure("CS", "contextual similarity: best BERTScore F1 with a relevant reference, same "
                  "team ablated"),
)
TASK3_OPTIONS = (
    Option("assignments", "Task 3: run/topic -> judged answer id file"),
    Option("task3_pool", "Task 3: a folder of judged Task 3 runs (the references)"),
    Option("task1_qrels", "Task 3: the Task 1 qrels of the topics (references)"),
    Option("collection", "Task 3: the Task 1 collection (the references' texts)",
           metavar="PATH"),
    Option("task1_runs", "Task 3: a folder of Task 1 runs (who contributed each reference)"),
    Option("model", "Task 3 LO/CS: tokenizer and BERTScore model, a local path or cached "
                    "name (default: the packaged all-MiniLM-L6-v2)"),
    Option("layer", "Task 3 CS: BERTScore layer (default: 6; 10 for witiko/mathberta)",
           type=int),
    Option("tokenizer", "Task 3 LO: tokenizer (default: the model's)"),
)


def _task3_sample(year: str | None, collection: Path | None) -> TaskData:
    s = arqmath_sample()
    posts = collection or s.posts
    return TaskData("sample", posts, s.task1_topics, s.task3_qrels,
                    {"assignments": s.task3_assignments, "task3_pool": s.task3_runs,
                     "task1_qrels": s.task1_qrels, "collection": posts})


def _task3_needs() -> tuple[Need, ...]:
    """Task 3's files: its qrels and assignments, Task 1's topics, collection and qrels
    (the references)."""
    topics, task1_qrels, collection, _ = task1_needs("2022")
    return (topics, Need("qrel_task3_2022*.tsv", "Task 3 qrels", "qrels"),
            dataclasses.replace(collection, option="collection"),
            dataclasses.replace(task1_qrels, role="option", option="task1_qrels"),
            Need("teams_document_id.tsv", "Task 3 assignments (run, topic -> answer id)",
                 "option", option="assignments", optional=True))


def _read_run_dir(directory: str | Path, reader) -> dict:
    return {f.stem: reader(f) for f in require_files(directory, "*.tsv", "run files")}


def _task3_scores(runs: Mapping, qrels, *, assignments: str | Path | None = None,
                  task3_pool: str | Path | None = None, task1_qrels: str | Path | None = None,
                  collection: str | Path | None = None, task1_runs: str | Path | None = None,
                  model: str | None = None, layer: int | str | None = None,
                  tokenizer: str | None = None, automatic: bool = True) -> dict:
    """Task 3 per topic (:func:`mathir.evaluation.open_answers.open_answer_scores`) with
    its files: ``assignments`` (the ``run topic d_N`` file), ``task3_pool`` (a folder of
    judged Task 3 runs: references), ``task1_qrels`` and ``collection`` (Task 1
    references, and AR/P@1 of extractive runs through their sources), ``task1_runs`` (a
    folder of Task 1 runs: who contributed each Task 1 reference, for the ablation),
    ``model``/``layer``/``tokenizer`` (LO/CS: default the packaged all-MiniLM-L6-v2, layer
    6; ``witiko/mathberta`` defaults to layer 10)."""
    from mathir.evaluation.open_answers import (
        DEFAULT_LAYER,
        OFFICIAL_LAYER,
        OFFICIAL_MODEL,
        AnswerModel,
        default_model_path,
        open_answer_scores,
    )
    from mathir.indexing.answer_collection import answer_texts
    from mathir.qrels.arqmath import read_qrels
    from mathir.runs.arqmath_task3 import read_assignments, read_task3_run
    from mathir.runs.trec import read_run

    a = read_assignments(assignments) if assignments else None
    pool = _read_run_dir(task3_pool, read_task3_run) if task3_pool else None
    t1q = read_qrels(task1_qrels) if task1_qrels else None
    t1_answers = None
    if collection and t1q is not None:
        relevant = t1q.loc[t1q["label"].isin((2, 3)), "docno"]
        t1_answers = answer_texts(collection, relevant)
    t1_runs = _read_run_dir(task1_runs, read_run) if task1_runs else None
    answer_model = None
    if model or layer is not None or tokenizer:
        name = model or default_model_path()
        if layer is None:
            layer = OFFICIAL_LAYER if name == OFFICIAL_MODEL else DEFAULT_LAYER
        try:
            layer = int(layer)
        except ValueError:
            raise InputError(f"layer must be an integer, not {layer!r}") from None
        answer_model = AnswerModel(name, layer, tokenizer)
    return open_answer_scores(runs, qrels, a, pool=pool, task1_qrels=t1q,
                              task1_answers=t1_answers, task1_runs=t1_runs,
                              model=answer_model, automatic=automatic)


def _extractive_pipeline(name: str, retrieval: Callable) -> Callable:
    def build(index, max_chars: int = 1200, **kwargs):
        from mathir.pipelines.extractive import extractive, index_collection_texts

        return extractive(retrieval(index, **kwargs), index_collection_texts(index), max_chars)

    build.__doc__ = f"Extractive Task 3 answers: the top answer of Task 1's {name!r}."
    # **kwargs go to the Task 1 factory: experiments pass it the options it names
    # (e.g. cross_encoder=PATH; see mathir.experiment.accepts).
    build.__wrapped__ = retrieval
    return build


def assignments(data: TaskData):
    """Which synthetic answer id (``d_N``) each run's answer got (``run, qid, docno``), from
    ``teams_document_id.tsv``; None when the file is absent."""
    from mathir.runs.arqmath_task3 import read_assignments

    path = data.extras.get("assignments")
    return None if path is None else read_assignments(path)


def task1_qrels(data: TaskData):
    """The Task 1 qrels of the same topics (the relevant answers of the collection)."""
    from mathir.qrels.arqmath import read_qrels

    return read_qrels(data.extras["task1_qrels"])


ARQMATH_TASK3 = register(Task(
    name="arqmath-task3",
    description="ARQMath-3 Task 3: open-domain answers (one answer of <= 1,200 characters)",
    measures=TASK3_MEASURES,
    primary_measure="AR",
    # every Task 1 pipeline, made extractive (its top answer, cut to 1,200 characters)
    pipelines={n: _extractive_pipeline(n, f) for n, f in ARQMATH_TASK1.pipelines.items()},
    default_pipelines=("tfidf", "bm25"),
    sample=_task3_sample,
    read_topics="mathir.topics.arqmath:read_task1_topics",
    read_qrels="mathir.qrels.arqmath:read_task3_qrels",
    read_run="mathir.runs.arqmath_task3:read_task3_run",
    write_run="mathir.runs.arqmath_task3:write_task3_run",
    build_index=_build_answer_index,
    per_topic=_task3_scores,
    order="given",
    explorer="mathir.evaluation.explorer_arqmath:open_answers",
    years=("2022",),
    open_index="mathir.indexing.answer_index:AnswerIndex",
    published=ARQMATH_FILES,
    dataset="arqmath/task3",
    splits=(Split("2022", "2022", _task3_needs()), Split("sample", None, sample=True)),
    year_name="ARQMath year",
    corpus=answer_corpus,
    dataset_methods={"get_topic_metadata": topic_metadata, "get_assignments": assignments,
                     "get_task1_qrels": task1_qrels},
    options=TASK3_OPTIONS,
))
