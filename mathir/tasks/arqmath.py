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
from mathir.evaluation.measures import PRIME_MEASURES, Measure
from mathir.samples import arqmath_sample
from mathir.tasks.declarations import (
    Need,
    Option,
    Published,
    QrelsVariant,
    Split,
    Stage,
    TaskData,
    no_options,
    published_files,
)
from mathir.tasks.locate import find_need, no_collection
from mathir.tasks.parts import Engines, Files, Formats, Scoring, Views
from mathir.tasks.task import Task

ARQMATH_YEARS = ("2020", "2021", "2022")
ARQMATH_FILES = Published("the ARQMath collection, topics and qrels",
                          "https://www.cs.rit.edu/~dprl/ARQMath/")
#: The published topics, qrels and Task 3 assignments, known by their size and SHA-256
#: (and that of their text with LF line endings, for those written with CRLF): the same
#: bytes in the copies of pya0, pt-arqmath, ARQMath-eval and MathAMR. A file found under
#: one of these names that differs is said in a warning (docs/robustness.md).
ARQMATH_PUBLISHED = published_files(
    ("Topics_Task1_2020_V2.0.xml", 177_850,
     "7e88764849bec5901c4d90253b48df189232b01f581d905db41a0c1592ebaf5e",
     "c1dd06582d027acace7caedf2f2f86a3061b8e514952e4a5522bfef1718d7e90"),
    ("Topics_Task1_2021_V1.1.xml", 163_438,
     "2c7fec17c0a7f90a08f1cd85b2100a3b3371fad6030527a8766afa824fd3d063",
     "791da71c9ab74b7274406c764fbb5e2be3df07705a93b9f6cc6ccfce468e016c"),
    ("Topics_Task1_2022_V0.1.xml", 185_970,
     "fe6e0e2e3af41d1b84de05fb708066a2f1f12470e23d1587ae353cfe30fa8c54"),
    ("Topics_Task2_2020_V1.1.xml", 168_450,
     "fc87d3373c412f48c7a9ba15514d11a742b968454c166e13add932a6ecdb61a5"),
    ("Topics_Task2_2021_V1.1.xml", 172_752,
     "12b013b35a310736bfa2b5b54ca5aed927c16cc36b54621a866753cc3a82dc03"),
    ("Topics_Task2_2022_V0.1.xml", 195_747,
     "c26d35a2505343ed899dd3bfd0dd059d42453e190938e313b698ecdceb20e4ee"),
    ("qrel_task1_2020_official.tsv", 684_110,
     "6b8c248e6a70a79bdec79f349b1e51b710338bd146c1cb0d4c9dc6e315ec8948",
     "7c6f8ee8f9b32c8da36f33ae3a528f83d81f4ffbc986832132f389624bbfc32f"),
    ("qrel_task1_2021_additional.tsv", 157_740,
     "7cb37104cde32fdbabb65e5c06c9c49492ff84f74a00288ea7adfae0df5386b1",
     "4fe04d070009bc5121494335dec22f8e86092ea94eef815939802d6f917485af"),
    ("qrel_task1_2021_all.tsv", 747_667,
     "289f4ae6fb0f9a65fb8101da1a3c45b6c74180a0ccffb73eb5635db854193f38",
     "545c7c703f2e4086b1fd50e9332a80f903b616009b259a27ed63104a051479c6"),
    ("qrel_task1_2021_official.tsv", 589_927,
     "672def41ac25052bd74dbf5e50b3a1666808036b60f39c58408ee49f1c1e0ca5",
     "453993062bd833a8339ce6a80f8fd552778325fd7f4d0a136ccdcd3055481db7"),
    ("qrel_task1_2022_official.tsv", 647_622,
     "16b09495fc7b4f4140edff5590edff04d078ec80684c2d136be7dd454f6e6606",
     "182d0bac77f2395e387461418c3a9ad3e893f46b6f0d2f7e52f66160c53de596"),
    ("qrel_task2_2020_formula_id_all.tsv", 336_722,
     "da178b1b35d81941cf47816105e4f0c1f57d91844dfaa4c08d6570e273598b65"),
    ("qrel_task2_2020_formula_id_official.tsv", 210_887,
     "9fa7a1841144f7954ab9197b0929af9566619776fe07b20cec3a919418cb6d78"),
    ("qrel_task2_2020_visual_id_v3_official.tsv", 107_133,
     "90338b7aafbac06da4be2616d908d7e4165b022ac7a19ef650e57f9b2afde52b",
     "e7758cbd442dfadaf34d19a0b792f7a7ec5a8754daba22aa2b3ceec37ebd1ee4"),
    ("qrel_task2_2021_formula_id_all.tsv", 232_409,
     "6246a1c3d295127c6edba75e92c9526fc79bcf6bbdda35fdfbd0356e9a48ea62"),
    ("qrel_task2_2021_visual_id_all.tsv", 175_527,
     "4c637b1ea45afedd072d5782e6c4391c788f29cfca6c91d46f98979b90563451"),
    ("qrel_task2_2021_visual_id_official.tsv", 152_675,
     "f0d7f7868bc9f1def85779f4292b8ce608ecf9af76feaae5f80fd243308a036f",
     "860372475c16a25df6ed7d15ec5d9878d285e5d8a62776ec8a6091f1b96be88a"),
    ("qrel_task2_2021_visual_id_v3_official.tsv", 152_814,
     "fb57cec8b66b01da638f42b387b8d16a5b9ac06a988faf16ce9c9c8a611220b4",
     "b7faf5f6ed3b5bd2b7198c6977b8d767a1b1a8d65c771cfeb3f3d0ef946feb11"),
    ("qrel_task2_2022_formula_id_official.tsv", 299_179,
     "01373ca70f8f51e0890324dc235570ff54fe2788335ae2a0d07279622f2c276d"),
    ("qrel_task2_2022_visual_id_official.tsv", 203_654,
     "5890dc80a1e68eba19b825d8e6c07fae4c199384f8c67869e7e6e9ca51fe5c36"),
    ("qrel_task3_2022_official_complete.tsv", 13_383,
     "a91dd00e3589297c0f6b894b7b320e012a0a5b2e3b8cb6b26ecad60de4e2b7e2",
     "ddb5ed378e9c96988eb44cc152da23a7c59de82e4a2ae4fc6184198bdc55f27b"),
    ("teams_document_id.tsv", 80_665,
     "3e1c6769ad5b7c5e0e1bc60f25e038e865c6a3d61f67ff966542fcb4a2b46bdc",
     "63ca41ed34a191597ef416f5703bc184e706e7d175873383a517200e1c66a21d"),
)


def arqmath_files(task: int, needs: Callable[[str], tuple[Need, ...]], sample: Stage, *,
                  years: tuple[str, ...] = ARQMATH_YEARS, **more) -> Files:
    """The files of ARQMath Task ``task``, as every ARQMath task has them: a split per
    year (its files: ``needs(year)``, each checked against the published files of its
    name, :data:`ARQMATH_PUBLISHED`), then the embedded ``sample``; published together
    (:data:`ARQMATH_FILES`), its datasets ``mathir:arqmath/task<task>/<year>``; ``more``:
    the task's other :class:`Files` fields (its corpus, its datasets' methods)."""
    def published(year: str) -> tuple[Need, ...]:
        return tuple(dataclasses.replace(n, published=ARQMATH_PUBLISHED) for n in needs(year))

    return Files(splits=(*(Split(y, needs=published(y)) for y in years),
                         Split("sample", sample=True)),
                 sample=sample, year_name="ARQMath year", published=ARQMATH_FILES,
                 dataset=f"arqmath/task{task}", **more)


def qrels_variants(task: int, *variants: tuple) -> tuple[QrelsVariant, ...]:
    """Task ``task``'s published qrels besides the official ones, from ``(name, file,
    what[, options])`` rows: each is ``qrel_task<task>_<year>_<file>.tsv``."""
    return tuple(QrelsVariant(name, f"qrel_task{task}_{{year}}_{file}.tsv", what, *options,
                              published=ARQMATH_PUBLISHED)
                 for name, file, what, *options in variants)


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


ARQMATH_TASK1 = Task(
    name="arqmath-task1",
    description="ARQMath Task 1: answer retrieval for Math StackExchange questions",
    files=arqmath_files(1, task1_needs, _task1_sample, corpus=answer_corpus,
                        dataset_methods={"get_topic_metadata": topic_metadata}),
    formats=Formats(read_topics="mathir.topics.arqmath:read_task1_topics",
                    read_qrels="mathir.qrels.arqmath:read_qrels",
                    read_run="mathir.runs.trec:read_run", write_run="mathir.runs.trec:write_run",
                    run_formats=("arqmath", "trec")),
    scoring=Scoring(measures=PRIME_MEASURES, primary_measure="nDCG'", qrels_in_collection=True,
                    qrels_variants=qrels_variants(
                        1, ("all", "all", "every judgment of the year, official and "
                                          "additional (2021)"),
                        ("additional", "additional",
                         "the judgments beyond the official ones (2021)"))),
    engines=Engines(build_index=_build_answer_index,
                    open_index="mathir.indexing.answer_index:AnswerIndex",
                    pipelines={"tfidf": "mathir.pipelines.lexical:tfidf",
                               "bm25": "mathir.pipelines.lexical:bm25",
                               "formula-aware": "mathir.pipelines.formula:formula_aware",
                               "formula-aware-rrf": "mathir.pipelines.formula:formula_aware_rrf",
                               # neural (the `neural` extra, loaded on use)
                               "bm25>>biencoder": "mathir.pipelines.neural:bm25_biencoder",
                               "dense": "mathir.pipelines.neural:dense",
                               "fusion": fusion,
                               "bm25>>crossencoder": "mathir.pipelines.neural:bm25_crossencoder"},
                    default_pipelines=("tfidf", "bm25")),
    views=Views(explorer="mathir.report.explorer_arqmath:arqmath_answers",
                topic_groups=_topic_groups),
)


def own_run_files(task: int, **formats) -> Formats:
    """Task 1's formats with Task ``task``'s own run files (read and written by
    ``mathir.runs.arqmath_task<task>``, in ARQMath's format only) and ``formats``."""
    module = f"mathir.runs.arqmath_task{task}"
    return dataclasses.replace(ARQMATH_TASK1.formats, read_run=f"{module}:read_task{task}_run",
                               write_run=f"{module}:write_task{task}_run",
                               run_formats=("arqmath",), **formats)


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


ARQMATH_TASK2 = Task(
    name="arqmath-task2",
    description="ARQMath Task 2: formula search, judged on visually distinct formulae",
    files=arqmath_files(2, task2_needs, _task2_sample, complete=_task2_visual_ids,
                        corpus=formula_corpus,
                        dataset_methods={"get_formula_index": formula_index}),
    formats=own_run_files(2, read_topics="mathir.topics.arqmath:read_task2_topics"),
    scoring=Scoring(measures=PRIME_MEASURES, primary_measure="nDCG'", prepare=_prepare_task2,
                    options=TASK2_OPTIONS, qrels_variants=qrels_variants(
                        2, ("formula_id", "formula_id_official",
                            "the official judgments by formula id (made visual-id qrels, "
                            "the maximum relevance per visual id)", {"qrels_key": "formula_id"}),
                        ("formula_id_all", "formula_id_all",
                         "every judgment by formula id (2020, 2021)",
                         {"qrels_key": "formula_id"}),
                        ("visual_id_all", "visual_id_all", "every judgment by visual id (2021)"))),
    engines=Engines(build_index=_build_formula_index,
                    open_index="mathir.indexing.formula_index:FormulaIndex",
                    pipelines={"formula-words": "mathir.pipelines.formula:formula_words",
                               "formula-tuples": "mathir.pipelines.formula:formula_tuples"},
                    default_pipelines=("formula-words", "formula-tuples")),
    views=Views(explorer="mathir.report.explorer_arqmath:arqmath_formulas"),
)


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


def task3_needs(year: str) -> tuple[Need, ...]:
    """Task 3's files in ``year``: its qrels and assignments, Task 1's topics, collection
    and qrels (the references)."""
    topics, task1_qrels, collection, _ = task1_needs(year)
    return (topics, Need(f"qrel_task3_{year}*.tsv", "Task 3 qrels", "qrels"),
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
    from mathir.qrels.trec import read_qrels
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
    from mathir.qrels.trec import read_qrels

    return read_qrels(data.extras["task1_qrels"])


ARQMATH_TASK3 = Task(
    name="arqmath-task3",
    description="ARQMath-3 Task 3: open-domain answers (one answer of <= 1,200 characters)",
    files=arqmath_files(3, task3_needs, _task3_sample, years=("2022",), corpus=answer_corpus,
                        dataset_methods={**ARQMATH_TASK1.dataset_methods,
                                         "get_assignments": assignments,
                                         "get_task1_qrels": task1_qrels}),
    formats=own_run_files(3, read_qrels="mathir.qrels.arqmath:read_task3_qrels"),
    scoring=Scoring(measures=TASK3_MEASURES, primary_measure="AR", per_topic=_task3_scores,
                    order="given", options=TASK3_OPTIONS),
    # the index of Task 1, and every Task 1 pipeline made extractive (its top answer,
    # cut to 1,200 characters)
    engines=dataclasses.replace(ARQMATH_TASK1.engines, pipelines={
        n: _extractive_pipeline(n, f) for n, f in ARQMATH_TASK1.pipelines.items()}),
    views=Views(explorer="mathir.report.explorer_arqmath:open_answers"),
)

#: The tasks this module declares (registered by :mod:`mathir.tasks.registry`).
DECLARED = (ARQMATH_TASK1, ARQMATH_TASK2, ARQMATH_TASK3)
