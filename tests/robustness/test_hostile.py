"""Hostile and broken files: each is refused with a clear message, never a traceback."""

import gzip
import os
import subprocess
import sys

import pytest

from mathir.errors import InputError
from mathir.qrels.trec import read_qrels
from mathir.readers.formula_tsv import read_formula_index
from mathir.readers.mse_posts import iter_posts
from mathir.runs.trec import read_run
from mathir.topics.arqmath import read_task1_topics

# Run in a child process: ru_maxrss is a process's peak, and the peak of a pytest process
# that has run other tests (a model, an index) hides what one read costs.
PEAK_OF_A_READ = """
import resource, sys
from mathir.errors import InputError
from mathir.runs.trec import read_run

before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    read_run(sys.argv[1])
except InputError as e:
    print(e)
else:
    print("no error")
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(grown * (1 if sys.platform == "darwin" else 1024))  # bytes (Linux counts KiB)
"""


def test_100mb_single_line_run_file(tmp_path):
    p = tmp_path / "huge.tsv"
    size = 100 * 1024 * 1024
    with open(p, "wb") as f:  # two 100 MB lines, the first already wrong
        f.write(b"A.1\t" + b"x" * size + b"\n")
        f.write(b"A.1\t" + b"y" * size)
    proc = subprocess.run([sys.executable, "-c", PEAK_OF_A_READ, str(p)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    message, grown = proc.stdout.splitlines()
    assert message == (f"{p}:1: line longer than 4,194,304 bytes (the limit; set "
                       "MATHIR_MAX_LINE_BYTES or mathir.readers.tabular.MAX_LINE_BYTES to read longer "
                       "lines)")  # the line is not quoted
    # Lines are read with a cap: the reader stops after 4 MiB of line 1 (it used to hold
    # the whole 100 MB line three times over: its bytes, its text, its fields).
    assert int(grown) < 32 * 2**20, f"peak grew {int(grown) / 2**20:.0f} MiB"


def test_a_gzip_bomb_line_stops_at_the_line_limit(tmp_path):
    # a 400 KB .gz holding one 400 MB line peaked at 1.1 GB before its error
    p = tmp_path / "bomb.tsv.gz"
    with gzip.open(p, "wb", compresslevel=9) as f:
        f.write(b"A.1\t")
        for _ in range(64):
            f.write(b"x" * 2**20)
    assert p.stat().st_size < 200_000
    proc = subprocess.run([sys.executable, "-c", PEAK_OF_A_READ, str(p)], capture_output=True,
                          text=True, timeout=120)
    message, grown = proc.stdout.splitlines()
    assert message.startswith(f"{p}:1: line longer than 4,194,304 bytes")
    assert int(grown) < 32 * 2**20, f"peak grew {int(grown) / 2**20:.0f} MiB"


def test_decompressed_size_is_capped(tmp_path):
    # many short lines: within the line limit, beyond the decompressed-size limit
    p = tmp_path / "many.tsv.gz"
    with gzip.open(p, "wb") as f:
        for i in range(20_000):
            f.write(f"A.1\t{i}\t{i + 1}\t1.0\tr\n".encode())
    env = {**os.environ, "MATHIR_MAX_DECOMPRESSED_BYTES": "100000"}
    proc = subprocess.run([sys.executable, "-c", PEAK_OF_A_READ, str(p)], capture_output=True,
                          text=True, timeout=120, env=env)
    message = proc.stdout.splitlines()[0]
    assert message.startswith(f"{p}:") and "decompresses to more than 100,000 bytes" in message


def test_100mb_xml_attribute_is_refused(tmp_path):
    p = tmp_path / "Posts.xml"
    with open(p, "wb") as f:
        f.write(b'<posts><row Id="1" PostTypeId="1" Body="')
        f.write(b"y" * (100 * 1024 * 1024))
        f.write(b'" /></posts>')
    with pytest.raises(InputError, match=r"Posts.xml:1: malformed XML"):
        list(iter_posts(p))


@pytest.mark.parametrize("reader", [read_run, read_qrels, read_formula_index])
def test_nul_bytes_in_tsv(tmp_path, reader):
    p = tmp_path / "nul.tsv"
    p.write_bytes(b"\n\nA.1 0 5\x00 1\n")
    with pytest.raises(InputError, match=r"nul.tsv:3: NUL byte"):
        reader(p)


@pytest.mark.parametrize("reader", [read_run, read_qrels])
def test_non_utf8_tsv_names_line_and_byte(tmp_path, reader):
    p = tmp_path / "latin1.tsv"
    p.write_bytes("\nA.1 0 caf\xe9 1 r\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin1.tsv:2: not valid UTF-8 \(byte 0xe9 at column 10\)"):
        reader(p)


def test_nul_and_non_utf8_xml(tmp_path):
    p = tmp_path / "t.xml"
    p.write_bytes(b"<Topics><Topic number='A.1'><Title>a\x00b</Title></Topic></Topics>")
    with pytest.raises(InputError, match=r"t.xml:1: malformed XML"):
        read_task1_topics(p)
    p.write_bytes("<Topics><Topic number='A.1'><Title>caf\xe9</Title></Topic></Topics>".encode("latin-1"))
    with pytest.raises(InputError, match=r"t.xml:1: malformed XML.*(UTF-8|encoding|Input is not proper)"):
        read_task1_topics(p)


def test_external_dtd_is_not_fetched(tmp_path):
    p = tmp_path / "dtd.xml"
    p.write_text('<?xml version="1.0"?><!DOCTYPE Topics SYSTEM "http://127.0.0.1:9/x.dtd">'
                 "<Topics><Topic number='A.1'><Title>t</Title></Topic></Topics>")
    assert read_task1_topics(p).qid.tolist() == ["A.1"]  # parsed without loading the DTD


def test_non_utf8_json_dataset_names_line_and_byte(tmp_path):
    from mathir.readers.word_problems import iter_derivation_problems

    p = tmp_path / "draw.json"
    p.write_bytes('[\n {"sQuestion": "caf\xe9"}\n]'.encode("latin-1"))
    with pytest.raises(InputError, match=r"draw.json:2: not valid UTF-8 \(byte 0xe9\)"):
        list(iter_derivation_problems(p))


def _non_utf8_cases():
    from mathir.readers.word_problems import read_split
    from mathir.runs.arqmath_task2 import read_task2_run
    from mathir.runs.arqmath_task3 import read_assignments, read_task3_run
    from mathir.runs.word_problems import COLUMNS
    from mathir.runs.word_problems import read_run as read_word_problem_run
    from mathir.runs.worldtree import read_run as read_worldtree_run
    from mathir.topics.arqmath import read_task2_topics, read_topic_formulas, read_topic_metadata
    from mathir.topics.worldtree import read_questions

    header = "\t".join(COLUMNS).encode()
    return [
        ("run tag, 5 columns", read_run, b"A.1 5 1 1.0 r\nA.1 6 2 1.0 r\xff\n", 2),
        ("topic id, 6 columns", read_run, b"A.1 Q0 5 1 1.0 r\nA.\xe91 Q0 6 2 1.0 r\n", 2),
        ("qrels docno", read_qrels, b"A.1 0 5 1\nA.1 0 6\xc3 1\n", 2),
        ("Task 2 formula id", read_task2_run, b"B.1 5 50 1 1.0 r\nB.1 6\xfe 60 2 1.0 r\n", 2),
        ("Task 3 run tag", read_task3_run, b"A.1\t1\t1.0\tr\xe9\t-\tyes\n", 1),
        ("Task 3 assignments", read_assignments, b"r A.1 d_1\nr\xe9 A.2 d_2\n", 2),
        ("WorldTree prediction", read_worldtree_run, b"Q1\ta\nQ1\tb\xe9\n", 2),
        ("WorldTree TREC run", read_worldtree_run, b"Q1 Q0 a 1 1.0 r\nQ\xe91 Q0 b 2 1.0 r\n", 2),
        ("word-problem run", read_word_problem_run,
         header + b"\n9\xe9\t7\t1.0\t[]\t[]\t{}\t[]\tr\n", 2),
        ("topic formulas", read_topic_formulas,
         b"id\ttopic_id\tthread_id\ttype\tformula\n1\tA.1\xe9\t2\tlatex\tx\n", 2),
        ("topic metadata", read_topic_metadata,
         b"Topic,Category,Difficulty,Dependency\nA.1\xe9,Proof,Low,Both\n", 2),
        ("WorldTree questions", read_questions,
         b"questionID\tAnswerKey\tQuestion\nQ\xe9\tA\tx (A) a (B) b\n", 2),
        ("word-problem split", read_split, b"9101\n91\xe902\n", 2),
        ("Task 1 topic id", read_task1_topics,
         b"<Topics>\n<Topic number='A.1\xe9'><Title>t</Title></Topic>\n</Topics>", 2),
        ("Task 2 formula id", read_task2_topics,
         b"<Topics>\n<Topic number='B.1'>\n<Formula_Id>q\xe9</Formula_Id><Latex>x</Latex>"
         b"</Topic></Topics>", 3),
    ]


@pytest.mark.parametrize("case", _non_utf8_cases(), ids=lambda c: c[0])
def test_a_non_utf8_id_in_any_run_qrels_or_topics_file_names_the_line(tmp_path, case):
    _, reader, data, line = case
    p = tmp_path / "f.txt"
    p.write_bytes(data)
    with pytest.raises(InputError) as e:
        reader(p)
    assert e.value.path == str(p) and e.value.line == line, str(e.value)
    assert "UTF-8" in str(e.value) or "encoding" in str(e.value)
    assert "\n" not in str(e.value)


def test_a_non_utf8_run_tag_is_one_cli_error_line(tmp_path):
    from mathir.samples import arqmath_sample

    run = tmp_path / "run.tsv"
    run.write_bytes(b"A.1\t1002\t1\t1.0\tr\xe9\n")
    proc = subprocess.run([sys.executable, "-m", "mathir.cli", "evaluate", "arqmath-task1",
                           "--qrels", str(arqmath_sample().task1_qrels), str(run)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {run}:1: not valid UTF-8 (byte 0xe9 at column 17)"


@pytest.mark.parametrize("field", ["score", "rank"])
def test_a_long_number_is_read_in_linear_time(tmp_path, field):
    # the score pattern took 49 s on 40,000 digits and an 'x' (quadratic backtracking);
    # the 4 MiB a line may hold would have taken days. No clock is read (a loaded machine
    # is slow, not wrong): quadratic, these 400,000 digits take over an hour, and a
    # watchdog stops the read after 10 minutes (linear: milliseconds).
    import signal

    def stuck(signum, frame):
        raise AssertionError("reading a 400,002-character number did not end: not linear")

    digits = "0" * 400_000 + "1x"
    p = tmp_path / "r.tsv"
    p.write_text(f"A.1 Q0 5 1 {digits} r\n" if field == "score" else f"A.1 Q0 5 {digits} 1.0 r\n")
    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(600)
    try:
        with pytest.warns(UserWarning, match=rf"r.tsv:1: {field} '0+…' \(400,002 characters\) "
                                             "is not a.* read as 1"):
            run = read_run(p)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert run[field].tolist() == [1]
