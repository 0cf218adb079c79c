"""Hostile and broken files: each is refused with a clear message, never a traceback."""

import gzip
import os
import subprocess
import sys

import pytest

from mathir.errors import InputError
from mathir.indexing.formula_tsv import read_formula_index
from mathir.indexing.mse_posts import iter_posts
from mathir.qrels.arqmath import read_qrels
from mathir.runs.arqmath import read_run
from mathir.topics.arqmath import read_task1_topics

# Run in a child process: ru_maxrss is a process's peak, and the peak of a pytest process
# that has run other tests (a model, an index) hides what one read costs.
PEAK_OF_A_READ = """
import resource, sys
from mathir.errors import InputError
from mathir.runs.arqmath import read_run

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
                       "MATHIR_MAX_LINE_BYTES or mathir.tabular.MAX_LINE_BYTES to read longer "
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
    from mathir.indexing.word_problems import iter_derivation_problems

    p = tmp_path / "draw.json"
    p.write_bytes('[\n {"sQuestion": "caf\xe9"}\n]'.encode("latin-1"))
    with pytest.raises(InputError, match=r"draw.json:2: not valid UTF-8 \(byte 0xe9\)"):
        list(iter_derivation_problems(p))
