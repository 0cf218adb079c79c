"""A UTF-8 byte-order mark never changes what a reader returns (nor a score).

Editors such as Notepad and Excel start UTF-8 files with a byte-order mark (BOM). Read
as text it becomes part of the first field: topic ``A.1`` turned into ``\\ufeffA.1``,
which silently dropped the first topic of a run (nDCG' on the sample: 0.9336 -> 0.9117)
or added a phantom topic to qrels (0.8487). Every reader of every format is checked
here: the file with and without a BOM must give the same result.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from mathir.answer_checking.checking import read_answer_records
from mathir.cli import main
from mathir.indexing.fact_index import iter_table_facts, read_lemmas, read_tablestore
from mathir.indexing.slt import read_slt_tsv
from mathir.qrels.arqmath import read_task3_qrels
from mathir.qrels.trec import read_qrels
from mathir.qrels.word_problems import read_gold
from mathir.qrels.worldtree import read_qrels as read_worldtree_qrels
from mathir.readers.formula_tsv import read_formula_index
from mathir.readers.mse_posts import iter_posts
from mathir.readers.tabular import iter_lines
from mathir.readers.thread_html import read_thread_file
from mathir.readers.word_problems import iter_derivation_problems, read_split
from mathir.runs.arqmath_task2 import read_task2_run
from mathir.runs.arqmath_task3 import read_assignments, read_task3_run
from mathir.runs.trec import read_run
from mathir.runs.word_problems import read_run as read_word_problem_run
from mathir.runs.worldtree import read_run as read_worldtree_run
from mathir.samples import arqmath_sample, word_problems_sample, worldtree_sample
from mathir.topics.arqmath import (
    read_task1_topics,
    read_task2_topics,
    read_topic_formulas,
    read_topic_metadata,
)
from mathir.topics.worldtree import read_questions

BOM = b"\xef\xbb\xbf"
ARQ = arqmath_sample()
WT = worldtree_sample()
WP = word_problems_sample()

TASK1_RUN = "A.1\t1002\t1\t2.5\tr\nA.1\t1003\t2\t1.5\tr\nA.2\t1010\t1\t1.0\tr\n"
TREC_RUN = "A.1 Q0 1002 1 2.5 r\nA.2 Q0 1010 1 1.0 r\n"
TASK2_RUN = "B.1\t20009\t1003\t2\t0.5\tx\nB.1\t20011\t1004\t1\t0.9\tx\n"
METADATA = "Topic,Category,Difficulty,Dependency\nA.1,Proof,Low,Both\nA.2,Concept,High,Text\n"
SLT = ('id\ttopic_id\tthread_id\ttype\tformula\n'
       'q_1\tB.1\t1\ttitle\t"<math><mi>x</mi><mo>+</mo><mn>1</mn></math>"\n')
THREAD = ('<html><body><div id="question" question_id="1"><div id="question-title"><h1>T '
          '<span class="math-container" id="5"><math alttext="x^2"><mi>x</mi></math></span>'
          '</h1></div><p>q</p></div><div id="answer" answer_id="2"><p>a</p></div>'
          '</body></html>')
WORD_RUN = ('qid\tdocno\tscore\tsolution\ttemplate\talignment\tequations\trun\n'
            '9101\t7\t1.500000\t[2.0]\t["m = a"]\t{"a": [0, 1, 2.0]}\t["m = 2"]\tr\n')
ANSWERS = '{"response": "The answer is 4.", "gold": "4"}\n{"response": "x = 5", "gold": "6"}\n'
PREDICT = "WT_DEV_01\tab-01\nWT_DEV_01\tcd-02\nWT_DEV_02\tab-01\n"
WT_TREC = "WT_DEV_01 Q0 ab-01 1 2.0 r\nWT_DEV_01 Q0 cd-02 2 1.0 r\n"


def _plain(value):
    """A comparable form of what a reader returns (frames without their attrs)."""
    if isinstance(value, pd.DataFrame):
        return value.to_dict("split")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "__next__"):
        return [_plain(v) for v in value]
    if hasattr(value, "__slots__") and not isinstance(value, (str, bytes)):
        return {k: _plain(getattr(value, k)) for k in value.__slots__}
    return value


# name -> (file name, contents (a sample path or text), reader, sample files it needs beside)
CASES: dict[str, tuple[str, Path | str, Callable, tuple[Path, ...]]] = {
    "task1 run (ARQMath-2/3)": ("r.tsv", TASK1_RUN, read_run, ()),
    "task1 run (TREC)": ("r.tsv", TREC_RUN, read_run, ()),
    "task2 run": ("r.tsv", TASK2_RUN, read_task2_run, ()),
    "task3 run": ("run.tsv", sorted(ARQ.task3_runs.glob("*.tsv"))[0], read_task3_run, ()),
    "task3 assignments": ("teams.tsv", ARQ.task3_assignments, read_assignments, ()),
    "task1 qrels": ("q.tsv", ARQ.task1_qrels, read_qrels, ()),
    "task2 qrels (formula ids)": ("q.tsv", ARQ.task2_qrels_formula_id, read_qrels, ()),
    "task2 qrels (visual ids)": ("q.tsv", ARQ.task2_qrels_visual_id, read_qrels, ()),
    "task3 qrels": ("q.tsv", ARQ.task3_qrels, read_task3_qrels, ()),
    "task1 topics XML": ("t.xml", ARQ.task1_topics, read_task1_topics, ()),
    "task2 topics XML": ("t.xml", ARQ.task2_topics, read_task2_topics, ()),
    "topic formulas TSV": ("f.tsv", ARQ.topic_formulas, read_topic_formulas, ()),
    "topic metadata CSV": ("m.csv", METADATA, read_topic_metadata, ()),
    "formula index TSV": ("f.tsv", ARQ.formulas, read_formula_index, ()),
    "SLT TSV": ("slt.tsv", SLT, lambda p: [(i, repr(n)) for i, n in read_slt_tsv(p)], ()),
    "MSE posts XML": ("Posts.xml", ARQ.posts, iter_posts, ()),
    "thread HTML": ("1_2.html", THREAD, read_thread_file, ()),
    "worldtree table": ("KINDOF.tsv", WT.tables / "KINDOF.tsv", iter_table_facts, ()),
    "worldtree questions": ("q.tsv", WT.questions("Dev"), read_questions, ()),
    "worldtree gold (qrels)": ("q.tsv", WT.questions("Dev"), read_worldtree_qrels, ()),
    "worldtree lemmas": ("lemmatization-en.txt", WT.lemmas, read_lemmas, ()),
    "worldtree predictions": ("predict.txt", PREDICT, read_worldtree_run, ()),
    "worldtree predictions (spaces)": ("predict.txt", PREDICT.replace("\t", " "),
                                       read_worldtree_run, ()),  # the line-by-line reader
    "worldtree TREC run": ("r.txt", WT_TREC, read_worldtree_run, ()),
    "word-problem run": ("r.tsv", WORD_RUN, read_word_problem_run, ()),
    "word-problem split": ("draw-test.txt", WP.split("test"), read_split, ()),
    "word-problem gold (split file)": ("draw-test.txt", WP.split("test"), read_gold,
                                       (WP.problems,)),
    "word-problem JSON dataset": ("draw.json", WP.problems, iter_derivation_problems, ()),
    "mathir answers JSON lines": ("a.jsonl", ANSWERS, read_answer_records, ()),
}
XFAIL: dict[str, str] = {}  # readers that cannot take a BOM yet (none)


def _write(directory: Path, name: str, contents: Path | str, bom: bool,
           beside: tuple[Path, ...]) -> Path:
    directory.mkdir()
    data = contents.read_bytes() if isinstance(contents, Path) else contents.encode("utf-8")
    data = data.removeprefix(BOM)  # some samples (the lemma list) carry one already
    path = directory / name
    path.write_bytes(BOM + data if bom else data)
    for other in beside:
        shutil.copy(other, directory / other.name)
    return path


def _read(reader: Callable, path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _plain(reader(path))


@pytest.mark.parametrize("case", [pytest.param(name, marks=pytest.mark.xfail(
    reason=XFAIL[name], strict=True)) if name in XFAIL else name for name in CASES])
def test_a_bom_changes_nothing(tmp_path, case):
    name, contents, reader, beside = CASES[case]
    plain = _read(reader, _write(tmp_path / "plain", name, contents, False, beside))
    with_bom = _read(reader, _write(tmp_path / "bom", name, contents, True, beside))
    assert with_bom == plain
    assert "\ufeff" not in json.dumps(with_bom, default=str)


def test_a_bom_on_every_table_of_a_tablestore(tmp_path):
    for d, bom in (("plain", False), ("bom", True)):
        (tmp_path / d).mkdir()
        for table in WT.tables.glob("*.tsv"):
            data = table.read_bytes().removeprefix(BOM)
            (tmp_path / d / table.name).write_bytes(BOM + data if bom else data)
    plain, with_bom = read_tablestore(tmp_path / "plain"), read_tablestore(tmp_path / "bom")
    assert with_bom.facts.equals(plain.facts) and with_bom.skipped_tables == plain.skipped_tables
    assert len(plain.facts) > 50


def test_only_a_leading_bom_is_dropped(tmp_path):
    p = tmp_path / "r.tsv"
    p.write_bytes(BOM + b"\r\n" + BOM + b"A.1 x\n")  # a BOM on a later line is data
    assert list(iter_lines(p)) == [(2, "\ufeffA.1 x")]


@pytest.mark.parametrize("bom,encoding", [(b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"),
                                          (b"\xff\xfe\x00\x00", "UTF-32")])
def test_utf16_and_utf32_text_is_refused_by_name(tmp_path, bom, encoding):
    from mathir.errors import InputError

    p = tmp_path / "q.tsv"
    p.write_bytes(bom + "A.1 0 5 2\n".encode("utf-16-le"))
    with pytest.raises(InputError, match=f"q.tsv:1: the file is {encoding} text"):
        read_qrels(p)


def _ndcg(capsys, qrels: Path, run: Path) -> float:
    assert main(["evaluate", "arqmath-task1", "--qrels", str(qrels), "--format", "json",
                 str(run)]) == 0
    return json.loads(capsys.readouterr().out)["run"]["nDCG'"]


@pytest.mark.parametrize("which", ["run", "qrels"])
def test_cli_evaluate_gives_the_same_ndcg_with_a_bom(tmp_path, capsys, which):
    # A run that ranks each topic's judged answers worst label first: every topic counts,
    # and losing (or adding) a topic moves nDCG'.
    qrels = read_qrels(ARQ.task1_qrels).sort_values(["qid", "label", "docno"])
    lines = [f"{q}\t{d}\t{i + 1}\t{-float(i)}\trun"
             for q, group in qrels.groupby("qid") for i, d in enumerate(group["docno"])]
    files = {}
    for d, bom in (("plain", False), ("bom", True)):
        (tmp_path / d).mkdir()
        run = tmp_path / d / "run.tsv"
        run.write_bytes((BOM if bom and which == "run" else b"") + "\n".join(lines).encode())
        q = tmp_path / d / "qrels.tsv"
        q.write_bytes((BOM if bom and which == "qrels" else b"") + ARQ.task1_qrels.read_bytes())
        files[d] = (q, run)
    plain = _ndcg(capsys, *files["plain"])
    assert 0 < plain < 1
    assert _ndcg(capsys, *files["bom"]) == plain
