"""Declared measures: every ir_measures measure string gives ``ir_measures.calc_aggregate``'s
figure (counts summed, not averaged) or is refused in one line before any scoring; a task's
measure whose name is another ir_measures measure is refused when declared."""

from __future__ import annotations

import json
import random
from pathlib import Path

import ir_measures
import pandas as pd
import pytest

from mathir.cli import main
from mathir.errors import InputError
from mathir.evaluation.evaluated import evaluate, mean_table, parse_measures
from mathir.evaluation.measures import Measure, aggregation_of, check_ir_measure
from mathir.qrels.trec import read_qrels
from mathir.samples import arqmath_sample
from mathir.tasks import Task, get_task

TASK1 = get_task("arqmath-task1")

#: 30 measures of ir_measures, the four counts among them, with every default provider
#: that is installed (pytrec_eval, judged, msmarco, gdeval, compat)
MEASURES = ["NumRet", "NumQ", "NumRel", "NumRelRet", "NumRet(rel=2)", "P@5", "P(rel=2)@10",
            "P(judged_only=True)@5", "AP", "AP(rel=2)", "AP@10", "nDCG", "nDCG@10",
            "nDCG(judged_only=True)@10", "nDCG(gains={0:0,1:1,2:3,3:7})@10", "R@100",
            "R(rel=2)@1000", "RR", "RR(rel=2)", "RR@10", "Rprec", "Bpref", "Bpref(rel=2)",
            "Success@5", "SetP", "SetR", "SetF", "infAP", "IPrec@0.5", "Judged@10",
            "ERR@10", "nDCG(dcg='exp-log2')@10", "Compat(p=0.8)"]


def _synthetic_run(path: Path) -> Path:
    """A run over the sample's topics with judged and unjudged answers, tied scores, a
    qrels topic it does not answer and a topic the qrels do not judge."""
    qrels = read_qrels(arqmath_sample().task1_qrels)
    rng = random.Random(48)
    topics = sorted(qrels.qid.unique())
    lines = []
    for qid in [*topics[1:], "A.999"]:  # the first qrels topic is not answered
        docs = qrels[qrels.qid == qid].docno.tolist() if qid in topics else []
        docs += [str(900000 + i) for i in range(rng.randint(3, 30))]  # not judged
        rng.shuffle(docs)
        for rank, docno in enumerate(docs, 1):
            score = float(rng.randint(1, 8))  # ties, broken by docno as trec_eval does
            lines.append(f"{qid}\t{docno}\t{rank}\t{score}\tmine\n")
    path.write_text("".join(lines))
    return path


@pytest.fixture(scope="module")
def run_file(tmp_path_factory) -> Path:
    return _synthetic_run(tmp_path_factory.mktemp("measures") / "mine.tsv")


def _calc_aggregate(run_file: Path, measures: list[str], together: bool = False
                    ) -> dict[str, float]:
    qrels = read_qrels(arqmath_sample().task1_qrels)
    q = pd.DataFrame({"query_id": qrels.qid.astype(str), "doc_id": qrels.docno.astype(str),
                      "relevance": qrels.label.astype(int)})
    run = TASK1.read_run(run_file)
    r = pd.DataFrame({"query_id": run.qid.astype(str), "doc_id": run.docno.astype(str),
                      "score": run.score.astype(float)})
    # gdeval (ERR, nDCG(dcg='exp-log2')) takes numeric topic ids only: number them
    ids = {t: str(i) for i, t in enumerate(sorted(set(q.query_id) | set(r.query_id)))}
    q, r = q.assign(query_id=q.query_id.map(ids)), r.assign(query_id=r.query_id.map(ids))
    parsed = [ir_measures.parse_measure(m) for m in measures]
    if together:  # as one set: ir_measures' own figures, which may be wrong (see below)
        return {str(m): float(v) for m, v in ir_measures.calc_aggregate(parsed, q, r).items()}
    # each measure on its own: given together, ir_measures' pytrec_eval provider may count
    # NumRet in its judged_only invocation, by the process's hash seed (86 for 210)
    return {str(m): float(ir_measures.calc_aggregate([m], q, r)[m]) for m in parsed}


def test_every_measure_equals_ir_measures_calc_aggregate(run_file, capsys):
    expected = _calc_aggregate(run_file, MEASURES)
    qrels = read_qrels(arqmath_sample().task1_qrels)
    lines = [line.split("\t")[0] for line in run_file.read_text().splitlines()]
    answered = [q for q in lines if q in set(qrels.qid)]
    # the counts are summed, not averaged: 9 topics answered, every answer of them retrieved
    assert expected["NumQ"] == 9 == len(set(answered)) and expected["NumRet"] == len(answered)
    ev = evaluate(TASK1, {"mine": TASK1.read_run(run_file)}, qrels, measures=MEASURES)
    spec = ",".join(MEASURES)
    capsys.readouterr()
    assert main(["evaluate", "arqmath-task1", "--qrels", str(arqmath_sample().task1_qrels),
                 "--judged", "file", "--measures", spec, "--format", "json",
                 str(run_file)]) == 0
    cli = json.loads(capsys.readouterr().out)["mine"]
    assert list(ev.table.columns) == list(expected) == list(cli)
    for name, value in expected.items():
        assert ev.table.loc["mine", name] == pytest.approx(value, rel=1e-12, abs=1e-12), name
        assert cli[name] == pytest.approx(value, rel=1e-12, abs=1e-12), name


def test_counts_are_summed_where_the_mean_was_taken_before():
    per_topic = {"r": pd.DataFrame({"qid": ["A.2", "A.1"], "NumRet": [3.0, 5.0],
                                    "P@5": [0.2, 0.4]})}
    per_topic["r"].attrs["aggregation"] = {"NumRet": "sum", "P@5": "mean"}
    table = mean_table(per_topic, ["NumRet", "P@5"])
    assert table.loc["r", "NumRet"] == 8.0  # before: 4.0, the mean
    assert table.loc["r", "P@5"] == pytest.approx(0.3)
    # a frame that lost its declaration (merged with a task's own): by the column's name
    merged = pd.DataFrame({"qid": ["1", "2"], "NumQ": [1.0, 1.0]})
    assert mean_table({"r": merged}, ["NumQ"]).loc["r", "NumQ"] == 2.0
    assert mean_table(per_topic, ["NumRet"], aggregation={"NumRet": "mean"}).loc[
        "r", "NumRet"] == 4.0


def test_a_measure_declares_how_it_aggregates():
    assert Measure("n", "answers retrieved", "NumRet").aggregate == "sum"
    assert Measure("p", "precision", "P@5").aggregate == "mean"
    assert Measure("own", "the task's own").aggregate == "mean"
    assert Measure("own", "the task's own", aggregation="sum").aggregate == "sum"
    assert aggregation_of(ir_measures.parse_measure("NumRelRet")) == "sum"
    with pytest.raises(ValueError, match="aggregation"):
        Measure("x", "y", aggregation="median")


# one of each class of measure string that used to trace back, abort the process or give a
# number under another measure's name; each is one line, exit status 2, before any scoring
BAD = {
    "P@0": "cutoff must be a whole number of at least 1",  # pytrec_eval aborted (exit 134)
    "R@0": "cutoff",
    "RR(foo=1)": "RR has no parameter foo",  # KeyError
    "SDCG@10": "needs its parameter max_rel",  # AssertionError
    "INST(T=1)": "T=1 is not a number with a decimal point",  # AssertionError
    "alpha_nDCG@10": "pyndeval",  # provider not installed
    "RBP(p=0.8)": "no ir_measures provider computes it",  # "Unsupported measures"
    "AP(rel=2,rel=3)": "gives rel twice",  # quietly AP(rel=3)
    "P(cutoff=5)@10": "gives cutoff twice",
    "nDCG(gains={'0':1})@10": "gains' keys are relevance labels",  # quietly plain nDCG
    "Bpref(rel=0)": "cannot be computed",  # TypeError on the real data
    "IPrec@2.0": "recall level must be between 0 and 1",  # quietly 0
    "Nope@5": "is not an ir_measures measure",
}


@pytest.mark.parametrize("measure", list(BAD))
def test_a_measure_mathir_cannot_compute_is_one_error_line(measure, run_file, capsys):
    capsys.readouterr()
    assert main(["evaluate", "arqmath-task1", "--qrels", str(arqmath_sample().task1_qrels),
                 "--measures", measure, "--format", "json", str(run_file)]) == 2
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and BAD[measure] in errors[0], captured.err
    assert "Traceback" not in captured.err and captured.out == ""


def test_gdeval_measures_are_scored_on_topic_ids_that_are_not_numbers(run_file):
    """gdeval takes numeric topic ids only (ARQMath's are A.1, ...): before, a
    CalledProcessError; now the topics are numbered for it and mapped back."""
    qrels = read_qrels(arqmath_sample().task1_qrels)
    ev = evaluate(TASK1, {"mine": TASK1.read_run(run_file)}, qrels, measures="ERR@10")
    per_topic = ev.per_topic["mine"]
    assert per_topic.qid.tolist() == sorted(qrels.qid.unique())
    assert per_topic["ERR@10"].iloc[0] == 0.0 and per_topic["ERR@10"].iloc[1:].gt(0).any()


def test_two_measures_under_one_name_are_refused():
    first = ir_measures.define_byquery(lambda q, r: 1.0, name="Mine")
    second = ir_measures.define_byquery(lambda q, r: 0.0, name="Mine")
    with pytest.raises(InputError, match="would both be the column 'Mine'"):
        parse_measures([first, second])
    # the same measure written twice is one column
    assert list(parse_measures("P@5,P(rel=1)@5,nDCG(gains={0:1,1:1})@10,"
                               "nDCG(gains={0:1})@10")[1]) == ["P@5", "nDCG(gains={0:1})@10"]


def test_check_ir_measure_passes_what_ir_measures_computes():
    for m in MEASURES:
        assert check_ir_measure(ir_measures.parse_measure(m)) is not None


def test_a_task_measure_named_as_another_ir_measures_measure_is_refused():
    task1 = get_task("arqmath-task1")
    kw = {f: getattr(task1, f) for f in ("pipelines", "default_pipelines", "read_topics",
                                        "read_qrels", "read_run", "write_run", "build_index")}
    with pytest.raises(ValueError, match="is ir_measures' P@5, not the P\\(rel=3\\)@5"):
        Task(name="t", description="t", primary_measure="P@5",
             measures=(Measure("P@5", "precision at 5, grade >= 3", "P(rel=3)@5"),), **kw)
    with pytest.raises(ValueError, match="ir_measures' AP"):
        Task(name="t", description="t", primary_measure="MAP",
             measures=(Measure("MAP", "MAP, relevance >= 2", "AP(rel=2)"),), **kw)
    for ok in (Measure("P(rel=3)@5", "p", "P(rel=3)@5"), Measure("P@5~", "p", "P(rel=3)@5"),
               Measure("P(rel=1)@5", "p", "P@5"), Measure("bpref", "p", "Bpref(rel=2)")):
        Task(name="t", description="t", primary_measure=ok.name, measures=(ok,), **kw)
    # a measure the task computes itself (ARQMath Task 3's P@1, relevance >= 2) is its own
    Task(name="t", description="t", primary_measure="P@1", per_topic=lambda *a: None,
         measures=(Measure("P@1", "the task's own"),), **kw)


def test_a_users_own_measure_sees_the_topics_as_they_are_named(run_file):
    seen = set()

    def topic_of(qrels, run):
        seen.update(qrels["query_id"])
        return 1.0

    mine = ir_measures.define_byquery(topic_of, name="Seen")
    qrels = read_qrels(arqmath_sample().task1_qrels)
    evaluate(TASK1, {"mine": TASK1.read_run(run_file)}, qrels, measures=[mine, "ERR@10"])
    assert seen and seen <= set(qrels.qid)  # not gdeval's numbers


#: measures that ask trec_eval for different settings (relevance level, gains,
#: judged_only) beside measures that name none (the counts, nDCG without gains)
MIXED = ["NumRet", "NumQ", "nDCG", "nDCG@10", "nDCG(gains={0:0,1:1,2:3,3:7})@10",
         "P(rel=2)@10", "AP(rel=2)", "P(judged_only=True)@5", "nDCG(judged_only=True)@10"]


@pytest.mark.slow
def test_measures_of_other_settings_beside_each_other_keep_their_own_figures(run_file):
    """ir_measures' pytrec_eval provider runs trec_eval once per setting its measures ask
    for and puts those that name none (NumRet, NumQ, nDCG without gains) in whichever
    invocation its set of measures yields first, by the process's hash seed: NumRet
    counted only judged documents beside ``P(judged_only=True)@5`` (86 for 210; seed 0),
    and nDCG@10 took ``nDCG(gains=...)@10``'s gains (seeds 14 and 29), in mathir's table
    too. Each seed in its own process; the reference is each measure alone."""
    import os
    import subprocess
    import sys

    code = (
        "import json, sys, io, contextlib\n"
        "from mathir.cli import main\n"
        "import tests.evaluation.test_measures as t\n"
        f"run_file = {str(run_file)!r}\n"
        "together = t._calc_aggregate(run_file, t.MIXED, together=True)\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    status = main(['evaluate', 'arqmath-task1', '--qrels', "
        f"{str(arqmath_sample().task1_qrels)!r}, '--judged', 'file', '--format', 'json', "
        "'--measures', ','.join(t.MIXED), run_file])\n"
        "print(json.dumps({'status': status, 'together': together,\n"
        "                  'mathir': json.loads(out.getvalue())['mine']}))\n")
    alone = _calc_aggregate(run_file, MIXED)
    trapped = set()
    for seed in (0, 14, 29):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parents[2], timeout=300,
                              env={**os.environ, "PYTHONHASHSEED": str(seed)})
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout.splitlines()[-1])
        assert got["status"] == 0
        for name, value in alone.items():
            assert got["mathir"][name] == pytest.approx(value, rel=1e-12, abs=1e-12), (seed, name)
            if abs(got["together"][name] - value) > 1e-12:
                trapped.add(name)
    # the seeds do set the trap: ir_measures' own figures, asked together, differ
    assert {"NumRet", "nDCG@10"} <= trapped, trapped
