"""Hostile and broken files: each is refused with a clear message, never a traceback."""

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
    assert message == f"{p}:1: expected 5-6 columns, found 2"  # the line is not quoted
    # Read line by line, stopping at line 1: that line is held at most three times at once
    # (its bytes, its text, the fields split from it: 300 MB). Reading the whole file, or
    # copying the line once more, goes over.
    assert int(grown) < 3.5 * size, f"peak grew {int(grown) / 2**20:.0f} MiB"


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
