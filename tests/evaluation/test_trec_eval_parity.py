"""Differential tests: mathir against NIST's trec_eval itself, built from its source.

Every run and qrels variant below is scored by trec_eval with the four commands the
ARQMath organisers use (``-J -m ndcg``, ``-J -l2 -m map``, ``-J -l2 -m P.10``,
``-l2 -m bpref``; with ``-q`` for per-topic figures and ``-c`` so that a topic the run
does not answer scores 0, the ARQMath convention) and by mathir. Each variant declares
what must happen:

* ``same``: both read it; every per-topic figure and every mean agree to 1e-4
  (trec_eval prints 4 decimals). mathir may warn where it read a field leniently;
* ``both refuse``: trec_eval exits with an error, and mathir raises one InputError;
* ``lenient``: trec_eval refuses the file (or cannot read it: gzip), mathir reads it as
  the file it stands for (``like``) and gives trec_eval's figures on that file, saying
  so in a warning where ``warns`` is set (docs/robustness.md lists each such rule);
* ``mathir refuses``: trec_eval reads it, mathir refuses it with one InputError; each
  is a rule listed in docs/robustness.md with its reason.

Where a variant names ``refusal``, mathir's one error line must match it. Last, a run
whose mean is a tie at the fourth decimal checks that mathir averages as trec_eval does
(the per-topic values summed in topic order as doubles, then divided), not as a
pairwise sum (numpy, pandas) would: the two print different figures there.

trec_eval is built from ``../shared/tools/trec_eval`` (needs a C compiler); the tests
skip, saying why, where either is missing.
"""

from __future__ import annotations

import gzip
import random
import re
import shutil
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from mathir.errors import InputError
from mathir.evaluation.prime import per_query
from mathir.experiment import evaluate_runs
from mathir.qrels.trec import read_qrels
from mathir.runs.trec import read_run
from tests.conftest import REAL_DATA, real_path

TOOLS = REAL_DATA.parent / "tools"

#: trec_eval's options and measure name -> mathir's measure name
COMMANDS = {("-J", "-m", "ndcg"): ("ndcg", "nDCG'"),
            ("-J", "-l2", "-m", "map"): ("map", "MAP'"),
            ("-J", "-l2", "-m", "P.10"): ("P_10", "P'@10"),
            ("-l2", "-m", "bpref"): ("bpref", "bpref")}


@pytest.fixture(scope="session")
def trec_eval(tmp_path_factory) -> Path:
    build = TOOLS / "build-trec-eval"
    if not build.exists():
        pytest.skip(f"trec_eval's source is not available: {build} (../shared/tools)")
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler to build trec_eval")
    out = subprocess.run([str(build), str(tmp_path_factory.mktemp("trec_eval"))],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip().splitlines()[-1])


def official(trec_eval: Path, qrels: Path, run: Path) -> dict[str, dict[str, float]] | None:
    """measure -> {qid or 'all' -> value} from trec_eval; None when it refuses a file."""
    figures: dict[str, dict[str, float]] = {}
    for options, (te_name, name) in COMMANDS.items():
        done = subprocess.run([str(trec_eval), "-q", "-c", *options, str(qrels), str(run)],
                              capture_output=True, text=True)
        if done.returncode != 0 or not done.stdout.strip():
            return None
        figures[name] = {}
        for line in done.stdout.splitlines():
            measure, qid, value = line.split()
            assert measure == te_name
            figures[name][qid] = float(value)
    return figures


def mathir_figures(qrels: Path, run: Path, task: str = "arqmath-task1"
                   ) -> dict[str, dict[str, float]]:
    """measure -> {qid or 'all' -> value}: per topic from the library, the mean from
    the path ``mathir evaluate`` takes."""
    table = per_query(read_run(run), read_qrels(qrels))
    means = evaluate_runs(task, qrels, [run]).iloc[0]
    return {name: {**dict(zip(table.qid, table[name], strict=True)), "all": float(means[name])}
            for _, name in COMMANDS.values()}


def assert_same(theirs: dict, ours: dict, what: str) -> None:
    for name, values in theirs.items():
        assert abs(values["all"] - ours[name]["all"]) <= 1e-4, (what, name, "all")
        for qid, value in values.items():
            if qid != "all":
                assert abs(value - ours[name][qid]) <= 1e-4, (what, name, qid)


# --- a base run and qrels, then variants of each -------------------------------------

def base_qrels() -> list[tuple[str, str, str, str]]:
    rng = random.Random(7)
    rows = []
    for t in range(1, 9):
        for d in range(40):
            if rng.random() < 0.5:
                rows.append((f"A.{t}", "0", str(1000 * t + d), str(rng.choice([0, 0, 1, 2, 3]))))
    return rows


def base_run() -> list[list[str]]:
    rng = random.Random(11)
    rows = []
    for t in range(1, 8):  # A.8 is judged but not answered
        docs = [str(1000 * t + d) for d in range(55)]  # judged and unjudged documents
        rng.shuffle(docs)
        for rank, d in enumerate(docs, 1):
            score = round(rng.uniform(-3, 12), 1)  # negative scores and ties
            rows.append([f"A.{t}", "Q0", d, str(rank), repr(score), "base"])
    rows.append(["A.99", "Q0", "5", "1", "1.0", "base"])  # a topic the qrels do not judge
    return rows


def text(rows, sep="\t", end="\n") -> str:
    return "".join(sep.join(r) + end for r in rows)


@dataclass
class Variant:
    name: str
    content: bytes
    expect: str = "same"  # same | both refuse | lenient | mathir refuses
    like: bytes | None = None  # lenient: the file trec_eval scores instead
    warns: str | None = None  # a warning mathir must give (part of its text)
    suffix: str = ".tsv"
    refusal: str | None = None  # both / mathir refuses: mathir's error (regex)


def run_variants() -> list[Variant]:
    rows = base_run()
    plain = text(rows).encode()
    five = [[q, d, r, s, n] for q, _, d, r, s, n in rows]
    top = rows[0]

    def edit(i: int, column: int, value: str) -> bytes:
        changed = [list(r) for r in rows]
        changed[i][column] = value
        return text(changed).encode()

    shuffled = list(rows)
    random.Random(3).shuffle(shuffled)
    ties = [[q, z, d, r, "1.0", n] for q, z, d, r, _, n in rows]
    long_topic = rows + [["A.1", "Q0", f"9{i:05d}", str(56 + i), "-50.0", "base"]
                         for i in range(1100)]
    return [
        Variant("tabs", plain),
        Variant("single spaces", text(rows, " ").encode()),
        Variant("runs of spaces and tabs", text(rows, " \t  ").encode()),
        Variant("leading and trailing blanks", "".join(
            "  " + "\t".join(r) + " \t\n" for r in rows).encode()),
        Variant("CRLF", text(rows, end="\r\n").encode()),
        Variant("no final newline", plain[:-1]),
        Variant("shuffled lines", text(shuffled).encode()),
        Variant("every score tied", text(ties).encode()),
        Variant("exponent and signed scores", text(
            [[q, z, d, r, f"{float(s):+.3e}", n] for q, z, d, r, s, n in rows]).encode()),
        Variant("scores like .5 and 7.", text(
            [[q, z, d, r, s[1:] if s.startswith("0.") else s[:-1] if s.endswith(".0") else s, n]
             for q, z, d, r, s, n in rows]).encode()),
        Variant("comment lines", b"# my run\n" + plain + b"#end\n"),
        Variant("indented comment", b"   # note\n" + plain),
        Variant("blank lines", b"\n" + plain.replace(b"\n", b"\n\n", 3) + b"\n \t\n"),
        Variant("columns beyond the sixth", text([r + ["extra", "x"] for r in rows]).encode()),
        Variant("second column not Q0", text([[q, "0", d, r, s, n] for q, _, d, r, s, n in rows]
                                             ).encode()),
        Variant("more than 1,000 rows for a topic", text(long_topic).encode(),
                warns="more than 1,000 rows"),
        Variant("Arabic-Indic digit score", edit(0, 4, "\u0663"), warns="read as 0.0"),
        Variant("underscore in a score", edit(0, 4, "1_000"), warns="read as 1.0"),
        Variant("trailing text after a score", edit(0, 4, "9.5abc"), warns="read as 9.5"),
        Variant("hexadecimal score", edit(0, 4, "0x1.8p3"), warns="read as 12.0"),
        Variant("word as score", edit(0, 4, "high"), warns="read as 0.0"),
        Variant("rank that is not an integer", edit(0, 3, "1.0"), warns="rank '1.0'"),
        Variant("non-breaking space inside a docno", edit(0, 2, top[2] + "\u00a0" + "1")),
        Variant("topics missing from the run", text([r for r in rows if r[0] != "A.3"]).encode()),
        Variant("huge and tiny scores", edit(0, 4, "1e300").replace(
            b"\t" + rows[1][4].encode() + b"\tbase", b"\t-1e-300\tbase", 1)),
        Variant("gzip", gzip.compress(plain), "lenient", like=plain, suffix=".gz"),
        Variant("ARQMath 5-column format", text(five).encode(), "lenient", like=plain),
        Variant("UTF-8 byte-order mark", b"\xef\xbb\xbf" + plain, "lenient", like=plain,
                warns="byte-order mark"),
        Variant("repeated document", plain + text([rows[5]]).encode(), "lenient", like=plain,
                warns="repeats line 6"),
        Variant("TREC line without its run tag", text([r[:5] for r in rows]).encode(),
                "both refuse"),
        Variant("one line without its run tag", plain + b"A.1\tQ0\t77\t9\t1.0\n", "both refuse"),
        # 5 fields without Q0: it was read as 'topic post_id rank score run' and scored
        # 0.0000 (ranks read as 0 with a warning, or the iteration 0 taken for a post id)
        Variant("5 columns, lowercase q0 second", text(
            [[q, "q0", d, r, s] for q, _, d, r, s, _ in rows]).encode(), "both refuse",
            refusal=":1: 5 columns with q0 second: a TREC line without its run tag"),
        Variant("5 columns, iteration 0 second", text(
            [[q, "0", d, r, s] for q, _, d, r, s, _ in rows]).encode(), "both refuse",
            refusal=":1: 5 columns with post id 0 and a number as run tag"),
        Variant("5 columns, document ids that are not integers", text(
            [[q, "0", "d" + d, r, s] for q, _, d, r, s, _ in rows]).encode(), "both refuse",
            refusal=r":1: rank 'd\d+' is not an integer in ASCII digits: a TREC line without"),
        Variant("6 columns, lowercase q0 second", text(
            [[q, "q0", d, r, s, n] for q, _, d, r, s, n in rows]).encode()),
        # C's atol saturates at LONG_MAX (glibc strtol); trec_eval never reads the rank
        Variant("20-digit rank", edit(0, 3, "9" * 20), warns="beyond a 64-bit integer"),
        Variant("negative 20-digit rank", edit(3, 3, "-" + "9" * 20),
                warns="beyond a 64-bit integer"),
        Variant("5,000-digit rank", edit(0, 3, "9" * 5000), warns="(5,000 characters)"),
        Variant("5,000-digit rank, 5 columns", text(
            [[q, d, "9" * 5000 if i == 0 else r, s, n] for i, (q, _, d, r, s, n) in enumerate(rows)]
            ).encode(), "lenient", like=plain, warns="beyond a 64-bit integer"),
        Variant("four columns", text([r[:4] for r in rows]).encode(), "both refuse"),
        Variant("empty file", b"", "both refuse"),
        Variant("infinite score", edit(0, 4, "inf"), "mathir refuses"),
        # trec_eval's atof reads +inf (strtod overflows to HUGE_VAL); float.fromhex raised
        # OverflowError (a traceback) before. Refused as not finite, as inf is
        Variant("hexadecimal score beyond a double", edit(0, 4, "0x1p99999"), "mathir refuses",
                refusal=":1: score is not finite: '0x1p99999'"),
        Variant("decimal score beyond a double", edit(0, 4, "-1e99999"), "mathir refuses",
                refusal=":1: score is not finite: '-1e99999'"),
        Variant("NaN score", edit(0, 4, "nan"), "mathir refuses"),
        Variant("a docno that is not UTF-8",
                plain.replace(top[2].encode(), top[2].encode() + b"\xe9", 1), "mathir refuses"),
    ]


def qrels_variants() -> list[Variant]:
    rows = base_qrels()
    plain = text(rows).encode()
    shuffled = list(rows)
    random.Random(5).shuffle(shuffled)

    def edit(i: int, column: int, value: str) -> bytes:
        changed = [list(r) for r in rows]
        changed[i][column] = value
        return text(changed).encode()

    graded = next(i for i, r in enumerate(rows) if r[3] == "3")
    return [
        Variant("tabs", plain),
        Variant("single spaces", text(rows, " ").encode()),
        Variant("runs of spaces and tabs", text(rows, "  \t ").encode()),
        Variant("CRLF", text(rows, end="\r\n").encode()),
        Variant("no final newline", plain[:-1]),
        Variant("shuffled lines", text(shuffled).encode()),
        Variant("labels written as floats", text([[q, i, d, f"{int(r)}.0"] for q, i, d, r in rows]
                                                 ).encode()),
        Variant("comment line", b"# judged in 2020\n" + plain),
        Variant("iteration column Q0", text([[q, "Q0", d, r] for q, _, d, r in rows]).encode()),
        Variant("label 0_3", edit(graded, 3, "0_3"), warns="read as 0"),
        Variant("Arabic-Indic digit label", edit(graded, 3, "\u0663"), warns="read as 0"),
        Variant("label 2.5", edit(graded, 3, "2.5"), warns="read as 2"),
        Variant("non-breaking space inside a docno", edit(graded, 2, rows[graded][2] + "\u00a01")),
        Variant("topics the run does not answer", plain + b"A.50\t0\t1\t3\n"),
        Variant("blank line", plain.replace(b"\n", b"\n\n", 1), "lenient", like=plain,
                warns="blank line"),
        Variant("gzip", gzip.compress(plain), "lenient", like=plain, suffix=".gz"),
        Variant("UTF-8 byte-order mark", b"\xef\xbb\xbf" + plain, "lenient", like=plain,
                warns="byte-order mark"),
        Variant("same judgment twice", plain + text([rows[0]]).encode(), "both refuse"),
        Variant("conflicting judgments", plain + text([rows[graded][:3] + ("0",)]).encode(),
                "both refuse"),
        Variant("five columns", text([r + ("x",) for r in rows]).encode(), "both refuse"),
        Variant("three columns", text([r[:3] for r in rows]).encode(), "both refuse"),
        Variant("empty file", b"", "both refuse"),
        # C's atol saturates at LONG_MAX: trec_eval cannot score it ("Can't calculate
        # measure", or a crash for labels near 2**31); no task has such a label
        Variant("20-digit label", edit(graded, 3, "9" * 20), "both refuse",
                refusal=r"relevance '9{20}' is not one of \[0, 1, 2, 3\]"),
        Variant("5,000-digit label", edit(graded, 3, "9" * 5000), "both refuse",
                refusal=r"relevance '9+…' \(5,000 characters\) is not one of"),
        Variant("5,000-digit label that is 3", edit(graded, 3, "0" * 4999 + "3")),
        Variant("5,000-digit iteration", text(
            [[q, "9" * 5000 if k == 0 else i, d, r] for k, (q, i, d, r) in enumerate(rows)]
            ).encode()),
        Variant("Task 3 label 5 in Task 1 qrels", edit(graded, 3, "5"), "mathir refuses"),
        Variant("negative label", edit(graded, 3, "-1"), "mathir refuses"),
    ]


def check(trec_eval: Path, tmp_path: Path, variant: Variant, *, qrels: bytes | None = None,
          run: bytes | None = None) -> None:
    """Score one variant (of the run, or of the qrels) both ways and compare."""
    is_run = run is None
    qrels_file, run_file = tmp_path / "qrels.txt", tmp_path / "run.txt"
    target = run_file if is_run else qrels_file
    target = target.with_suffix(variant.suffix)
    target.write_bytes(variant.content)
    other = qrels_file if is_run else run_file
    other.write_bytes(qrels if is_run else run)
    qrels_path, run_path = (other, target) if is_run else (target, other)
    theirs = official(trec_eval, qrels_path, run_path)
    if variant.expect in ("both refuse", "mathir refuses"):
        assert (theirs is None) == (variant.expect == "both refuse"), variant.name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(InputError) as e:
                mathir_figures(qrels_path, run_path)
        assert "\n" not in str(e.value)
        if variant.refusal:
            assert re.search(variant.refusal, str(e.value)), (variant.name, str(e.value))
        return
    if variant.expect == "lenient":
        # trec_eval refuses each (a byte-order mark it reads as part of a topic id)
        assert (theirs is None) != ("mark" in variant.name), variant.name
        stand_in = tmp_path / "stand_in.txt"
        stand_in.write_bytes(variant.like)
        theirs = official(trec_eval, *((qrels_path, stand_in) if is_run else (stand_in, run_path)))
    assert theirs is not None, f"trec_eval refused {variant.name!r}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = mathir_figures(qrels_path, run_path)
    if variant.warns:
        assert any(variant.warns in str(w.message) for w in caught), \
            (variant.name, [str(w.message) for w in caught])
    assert_same(theirs, ours, variant.name)


RUNS = run_variants()
QRELS = qrels_variants()


def test_the_audit_has_its_variants():
    assert len(RUNS) >= 46 and len(QRELS) >= 28


@pytest.mark.parametrize("variant", RUNS, ids=[v.name for v in RUNS])
def test_run_variant(trec_eval, tmp_path, variant):
    check(trec_eval, tmp_path, variant, qrels=text(base_qrels()).encode())


@pytest.mark.parametrize("variant", QRELS, ids=[v.name for v in QRELS])
def test_qrels_variant(trec_eval, tmp_path, variant):
    check(trec_eval, tmp_path, variant, run=text(base_run()).encode())


def test_lenient_bom_differs_from_trec_eval_only_by_the_first_line(trec_eval, tmp_path):
    # trec_eval reads the mark as part of the first topic id, so the first row counts for
    # a topic nobody judged: mathir drops the mark (with a warning) and counts the row
    run = tmp_path / "run.txt"
    run.write_bytes(b"\xef\xbb\xbf" + text(base_run()).encode())
    plain = tmp_path / "plain.txt"
    plain.write_bytes(text(base_run()).encode())
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(text(base_qrels()).encode())
    with_mark = official(trec_eval, qrels, run)  # trec_eval reads it, differently
    without = official(trec_eval, qrels, plain)
    assert with_mark is not None and without is not None
    with pytest.warns(UserWarning, match="byte-order mark"):
        ours = mathir_figures(qrels, run)
    assert_same(without, ours, "mark dropped")  # mathir scores the file without the mark
    # trec_eval's only difference: its first topic lost the row the mark was glued to
    first = base_run()[0][0]
    changed = {qid for name in without for qid, value in without[name].items()
               if qid != "all" and abs(value - with_mark[name].get(qid, 0.0)) > 1e-9}
    assert changed <= {first}


# --- a mean that is a tie at the fourth decimal ---------------------------------------

#: 16 topics T01..T16, each the judged labels of its ranking, best first, and ``+k``
#: relevant answers it misses. Their MAP' values (0.5852..., 0.0, ...) summed in topic
#: order, as trec_eval sums them, make 0.32625000000000004 a topic (printed 0.3263); a
#: pairwise sum (numpy's and pandas' ``mean``) makes 0.32625 (printed 0.3262). Found by
#: searching random rankings.
TIE_TOPICS = ["130003122+1", "0010000+1", "1312310+1", "023000+2", "32303+3", "0030+2",
              "2003+1", "03001000+1", "311010+3", "301330+2", "1303+1", "0302+1", "12102+1",
              "2012003+2", "131123030+3", "300+1"]


def tie_files(folder: Path) -> tuple[Path, Path]:
    """The qrels and TREC run of :data:`TIE_TOPICS` (documents ``Tnn-rank``)."""
    run, qrels = [], []
    for t, spec in enumerate(TIE_TOPICS, 1):
        labels, missed = spec.split("+")
        qid = f"T{t:02d}"
        for rank, label in enumerate(labels, 1):
            run.append(f"{qid} Q0 {qid}-{rank} {rank} {20 - rank} tie\n")
            qrels.append(f"{qid} 0 {qid}-{rank} {label}\n")
        qrels += [f"{qid} 0 {qid}-missed-{k} 2\n" for k in range(int(missed))]
    (folder / "qrels.txt").write_text("".join(qrels))
    (folder / "run.txt").write_text("".join(run))
    return folder / "qrels.txt", folder / "run.txt"


def test_a_mean_at_a_tie_prints_as_trec_eval_prints_it(trec_eval, tmp_path):
    qrels, run = tie_files(tmp_path)
    theirs = official(trec_eval, qrels, run)
    assert theirs is not None
    ours = mathir_figures(qrels, run)
    # the case is what it claims: a pairwise mean of the same per-topic values (which
    # agree with trec_eval's) prints another fourth decimal
    map_prime = "MAP'"
    per_topic = [ours[map_prime][f"T{t:02d}"] for t in range(1, 17)]
    assert f"{theirs[map_prime]['all']:.4f}" == "0.3263"
    assert f"{float(np.mean(per_topic)):.4f}" == "0.3262"
    assert_same(theirs, ours, "tie")
    for name, values in theirs.items():
        assert f"{ours[name]['all']:.4f}" == f"{values['all']:.4f}", (name, ours[name]["all"])


# --- the real ARQMath runs and qrels --------------------------------------------------

@pytest.mark.realdata
@pytest.mark.parametrize("qrels_name", ["qrel_task1_2020_official.tsv"])
@pytest.mark.slow
def test_real_arqmath1_runs(trec_eval, tmp_path, qrels_name):
    qrels = real_path("arqmath", "qrels", "task1", qrels_name)
    folder = real_path("arqmath", "runs", "arqmath1")
    runs = sorted(p for p in folder.iterdir() if "task2" not in p.name)
    assert len(runs) == 10
    for run in runs:
        for_trec_eval = run
        fields = run.read_text(encoding="utf-8").split("\n", 1)[0].split()
        if len(fields) == 5:  # the ARQMath-2/3 format: trec_eval needs the Q0 column
            for_trec_eval = tmp_path / run.name
            lines = [line.split() for line in run.read_text(encoding="utf-8").splitlines()]
            for_trec_eval.write_text("".join(f"{f[0]}\tQ0\t{f[1]}\t{f[2]}\t{f[3]}\t{f[4]}\n"
                                             for f in lines if f))
        theirs = official(trec_eval, qrels, for_trec_eval)
        assert theirs is not None, run.name
        assert_same(theirs, mathir_figures(qrels, run), run.name)


@pytest.mark.realdata
@pytest.mark.parametrize("year", ["2021", "2022"])
def test_real_qrels_of_later_years(trec_eval, tmp_path, year):
    # no participant runs of these years are in the data: a run that ranks every
    # judged answer in a fixed pseudo-random order, plus unjudged ones
    qrels = real_path("arqmath", "qrels", "task1", f"qrel_task1_{year}_official.tsv")
    rows = read_qrels(qrels)
    rng = random.Random(int(year))
    lines = []
    for qid, group in rows.groupby("qid"):
        docs = list(group.docno) + [f"unjudged-{i}" for i in range(30)]
        rng.shuffle(docs)
        lines += [f"{qid} Q0 {d} {r} {rng.uniform(0, 5):.3f} pseudo\n"
                  for r, d in enumerate(docs[:1200], 1)]
    run = tmp_path / "pseudo.txt"
    run.write_text("".join(lines))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # topics with more than 1,000 rows
        ours = mathir_figures(qrels, run)
    assert_same(official(trec_eval, qrels, run), ours, year)
