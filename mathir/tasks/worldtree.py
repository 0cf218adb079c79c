"""WorldTree explanation regeneration (TextGraphs 2019): rank every tablestore fact.

>>> from mathir.tasks import get_task
>>> get_task("worldtree").years
('Train', 'Dev', 'Test')
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from pathlib import Path

from mathir.errors import InputError
from mathir.samples import worldtree_sample
from mathir.storage import atomic_file
from mathir.tasks.declarations import (
    Need,
    Option,
    Published,
    Split,
    TaskData,
    no_options,
    published_files,
)
from mathir.tasks.parts import Engines, Files, Formats, Scoring, Views
from mathir.tasks.task import Task

WORLDTREE_MEASURES = {
    "MAP": "mean average precision; a gold fact missing from a ranking makes its AP 0",
    "MAP:CENTRAL": "MAP of the CENTRAL gold facts (other gold facts removed from the ranking)",
    "MAP:GROUNDING": "MAP of the GROUNDING gold facts (other gold facts removed)",
    "MAP:LEXGLUE": "MAP of the LEXGLUE gold facts (other gold facts removed)",
    "MAP:LEXOVERLAP": "MAP of gold facts sharing a word or lemma with question + answer",
    "MAP:NOLEXOVERLAP": "MAP of gold facts sharing none",
    **{f"P@{n}": f"gold facts in the top {n} / min({n}, gold facts)" for n in range(1, 6)},
}


def _tablestores(root: Path) -> list[Path]:
    return TABLESTORE.hits(root)


def _sample(split: str | None, collection: Path | None) -> TaskData:
    s = worldtree_sample()
    tables = collection or s.tables
    return TaskData("sample", tables, s.questions(split or "Dev"), s.questions(split or "Dev"),
                    {"tablestore": tables, "lemmas": s.lemmas})


def _with_lemmas(data: TaskData) -> TaskData:
    """The distribution's lemma list, found beside the tablestore (when it is there)."""
    from mathir.indexing.fact_index import find_lemma_file

    lemmas = find_lemma_file(data.collection)
    return data if lemmas is None else \
        dataclasses.replace(data, extras={**data.extras, "lemmas": lemmas})


def read_scored_questions(path: Path):
    """The questions of ``path`` that have a gold explanation (all of them when none
    has one, as in a masked test file): the topics that are scored."""
    from mathir.topics.worldtree import read_questions

    topics = read_questions(path)
    explained = topics[topics["explanation"] != ""]
    return explained.reset_index(drop=True) if len(explained) else topics


def _build_index(data: TaskData, index_dir: Path, quiet: bool = False):
    from mathir.indexing.fact_index import FactIndex

    return FactIndex.build(data.collection, index_dir, quiet=quiet)


def _gold(qrels, tablestore: str | Path | None, lemmas: str | Path | None):
    """Qrels with the ``overlap`` flag; the tablestore is found next to the questions."""
    from mathir.evaluation.explanation_scorer import lexical_overlap
    from mathir.indexing.fact_index import find_lemma_file, read_lemmas, read_tablestore
    from mathir.indexing.fact_index import tables_dir as worldtree_tables_dir
    from mathir.qrels.worldtree import missing_gold

    if tablestore is None and qrels.attrs.get("source"):
        # The official layout: questions/ beside annotation/<export>/tables/.
        found = _tablestores(Path(qrels.attrs["source"]).resolve().parent.parent)
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


def _per_topic(runs: Mapping, qrels, tablestore: str | Path | None = None,
               lemmas: str | Path | None = None, **options) -> dict:
    """The one evaluator: per gold question, every measure (the table is their mean over
    the gold questions a run answers, the official MAP rule; the tablestore is read once)."""
    from mathir.evaluation.explanation_scorer import per_question

    no_options(options)
    gold = _gold(qrels, tablestore, lemmas)
    return {name: per_question(run, gold).drop(columns=["length"]) for name, run in runs.items()}


def _report(runs: Mapping, qrels, out: Path, tablestore: str | Path | None = None,
            lemmas: str | Path | None = None, **options) -> dict[str, Path]:
    """MAP by gold explanation length: a TSV table and a PNG histogram in ``out``."""
    import pandas as pd

    from mathir.evaluation.explanation_scorer import map_by_length, per_question
    from mathir.report.charts import plot_map_by_length

    gold = _gold(qrels, tablestore, lemmas)
    per_run = {name: per_question(run, gold) for name, run in runs.items()}
    rows = [map_by_length(t).assign(run=name) for name, t in per_run.items()]
    table = pd.concat(rows, ignore_index=True)[["run", "length", "questions", "MAP"]]
    tsv = out / "map_by_length.tsv"
    with atomic_file(tsv) as f:
        table.to_csv(f, sep="\t", index=False, float_format="%.4f")
    png = plot_map_by_length(per_run, out / "map_by_length.png")
    return {"MAP by explanation length (table)": tsv, "MAP by explanation length (histogram)": png}


#: The published question splits and tablestore (the 2019 shared task's, as the
#: organisers' baseline repository held them), known by size and SHA-256: one found
#: under these names that differs is said in a warning (docs/robustness.md). The
#: tablestore is a folder: its 65 files, their total size and the digest
#: :func:`mathir.storage.file_fingerprint` gives (each file's name, size and SHA-256).
WORLDTREE_PUBLISHED = published_files(
    ("ARC-Elementary-QC+EXPL-Dev.tsv", 127_392,
     "f99695b9d7a1e61a5e0b99322096b1437096f48e48f9ae73ddfe25049862fd7c"),
    ("ARC-Elementary-QC+EXPL-Test.tsv", 452_333,
     "72a74ff27740233bf075ebc1079523727ab55c608a1d37385ed91726f92b5f10"),
    ("ARC-Elementary-QC+EXPL-Train.tsv", 622_626,
     "2d78635de8a0b4dee634cc176a0da2ab817c604acb94e1f28fec140b63d74fdb"),
    ("tables", 432_687,
     "8c26397a7b56abf2e8e1cc7c921a212404a418fc380a24dc0edbd7cdc828e01f", None, 65),
)

#: The tablestore: a ``tables/`` folder of TSVs.
TABLESTORE = Need("tables", "the tablestore: a tables/ folder of TSVs", "collection",
                  option="tablestore", contains="*.tsv",
                  published=WORLDTREE_PUBLISHED)


def _split(name: str) -> Split:
    """A split's files: the tablestore and its questions (a masked file when the split's
    gold explanations are withheld: topics without qrels)."""
    title = name.capitalize()
    return Split(name, title, (
        TABLESTORE,
        Need(f"ARC-Elementary*EXPL-{title}*.tsv", f"{title} question file", ("topics", "qrels"),
             optional=True, exclude="Masked", published=WORLDTREE_PUBLISHED),
        Need(f"ARC-Elementary*EXPL-{title}-Masked*.tsv", f"masked {title} question file",
             "topics", optional=True)))


WORLDTREE_OPTIONS = (
    Option("tablestore", "WorldTree: tablestore tables/ directory (default: found beside "
                         "the questions)"),
    Option("lemmas", "WorldTree: the lemma list (default: found beside the tablestore)"),
)

_LEXICAL = "mathir.pipelines.worldtree_lexical"
_LTR = "mathir.pipelines.worldtree_ltr"

def _tablestore(data: TaskData):
    """The tablestore (:class:`mathir.indexing.fact_index.Tablestore`)."""
    from mathir.indexing.fact_index import read_tablestore

    return read_tablestore(data.extras.get("tablestore", data.collection))


def _facts(data: TaskData) -> list[dict]:
    """The tablestore's facts as ``{"docno": lower-cased UID, "text", "table"}`` (each UID
    once)."""
    return _tablestore(data).facts[["docno", "text", "table"]].to_dict("records")


def _lemmas(data: TaskData) -> dict[str, str] | None:
    """The lemma list (word -> lemma) of the distribution; None when absent."""
    from mathir.indexing.fact_index import read_lemmas

    path = data.extras.get("lemmas")
    return None if path is None else read_lemmas(path)


WORLDTREE = Task(
    name="worldtree",
    description="WorldTree explanation regeneration (TextGraphs 2019): rank the tablestore facts",
    files=Files(splits=(*(_split(n) for n in ("train", "dev", "test")),
                        Split("sample", "Dev", sample=True),
                        *(Split(f"sample/{n}", n.capitalize(), sample=True)
                          for n in ("train", "dev", "test"))),
                default_year="Dev", year_name="WorldTree split", sample=_sample,
                complete=_with_lemmas, corpus=_facts,
                dataset_methods={"get_tablestore": _tablestore, "get_lemmas": _lemmas},
                published=Published("the WorldTree tablestore and questions (TextGraphs-2019 "
                                    "shared task data)", "http://cognitiveai.org/explanationbank/")),
    formats=Formats(read_topics=read_scored_questions, read_qrels="mathir.qrels.worldtree:read_qrels",
                    read_run="mathir.runs.worldtree:read_run",
                    write_run="mathir.runs.worldtree:write_run",
                    run_formats=("arqmath", "predict", "trec")),  # arqmath: its own, predict
    scoring=Scoring(measures=WORLDTREE_MEASURES, primary_measure="MAP", per_topic=_per_topic,
                    order="rank", options=WORLDTREE_OPTIONS),
    engines=Engines(build_index=_build_index, open_index="mathir.indexing.fact_index:FactIndex",
                    pipelines={"tfidf": f"{_LEXICAL}:tfidf", "bm25": f"{_LEXICAL}:bm25",
                               "multihop": f"{_LEXICAL}:multihop", "fusion": f"{_LEXICAL}:fusion",
                               "rrf": f"{_LEXICAL}:rrf", "neighbours": f"{_LEXICAL}:neighbours",
                               "python-baseline": f"{_LEXICAL}:python_baseline",
                               "ltr": f"{_LTR}:ltr", "ltr-minilm": f"{_LTR}:ltr_minilm",
                               "ltr-dense": f"{_LTR}:ltr_dense",
                               "ltr-crossencoder": f"{_LTR}:ltr_crossencoder",
                               "ltr-dense-crossencoder": f"{_LTR}:ltr_dense_crossencoder"},
                    default_pipelines=("tfidf", "bm25", "multihop", "fusion", "neighbours",
                                       "ltr")),
    views=Views(explorer="mathir.report.explorer_worldtree:worldtree", report=_report),
)

#: The tasks this module declares (registered by :mod:`mathir.tasks.registry`).
DECLARED = (WORLDTREE,)
