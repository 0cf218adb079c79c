"""Fuzzing the ARQMath readers: nothing but InputError escapes, valid inputs round-trip."""

import tempfile
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mathir.errors import InputError
from mathir.qrels.trec import read_qrels
from mathir.readers.formula_tsv import iter_formula_index
from mathir.readers.html_text import extract_formulas, html_to_text
from mathir.readers.latex_words import latex_to_words, math_to_words
from mathir.readers.mse_posts import iter_posts
from mathir.runs.trec import read_run, write_run
from mathir.topics.arqmath import read_task1_topics, read_task2_topics, read_topic_formulas

ids = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-",
              min_size=1, max_size=12)
junk = st.binary(max_size=400) | st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass"))
xml_text = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=80)


def tmpfile(data: bytes, suffix=".tsv") -> Path:
    d = Path(tempfile.mkdtemp())
    p = d / f"f{suffix}"
    p.write_bytes(data)
    return p


def only_input_errors(fn, data: bytes, suffix=".tsv"):
    """Run a reader on ``data``: it succeeds, or raises an InputError naming the file."""
    path = tmpfile(data, suffix)
    try:
        out = fn(path)
        if hasattr(out, "__next__"):
            list(out)
    except InputError as e:
        assert e.path is not None and Path(e.path).name == path.name, str(e)


@given(junk)
def test_run_reader_fuzz(data):
    only_input_errors(read_run, data)


@given(junk)
def test_qrels_reader_fuzz(data):
    only_input_errors(read_qrels, data)


@given(junk)
def test_formula_tsv_reader_fuzz(data):
    only_input_errors(iter_formula_index, b"id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n" + data)
    only_input_errors(iter_formula_index, data)


@given(junk)
def test_topic_formula_reader_fuzz(data):
    only_input_errors(read_topic_formulas, data)


@given(junk)
def test_xml_readers_fuzz(data):
    for fn in (iter_posts, read_task1_topics, read_task2_topics):
        only_input_errors(fn, data, ".xml")
        only_input_errors(fn, b"<posts><row Id='1' PostTypeId='1' Body='" + data + b"'/></posts>", ".xml")


# numbers as they are written, and as they overflow: huge integers (a rank of 20 digits
# overflowed array('q'), one of 5,000 hit Python's int string-conversion limit), huge
# exponents (float.fromhex raised OverflowError), signs, hexadecimal, words
numberish = st.one_of(
    st.integers(-10**30, 10**30).map(str),
    st.integers(1, 6000).map(lambda n: "9" * n),
    st.sampled_from(["0x1p99999", "-0x1p99999", "0x1.8p3", "1e99999", "-1e-99999", "inf",
                     "nan", "1_000", "\u0663", "2.0", "+7", ".5", "0x", "e5", "-", "Q0", "q0"]),
    st.from_regex(r"[+-]?(0[xX][0-9a-f]{0,30}\.?[0-9a-f]{0,5}([pP][+-]?[0-9]{1,7})?|"
                  r"[0-9]{0,40}\.?[0-9]{0,20}([eE][+-]?[0-9]{1,7})?)[a-z]{0,2}", fullmatch=True),
)
any_field = st.one_of(ids, numberish)
# (topic, [iteration,] document, rank, score[, tag]): 4 to 6 fields, numbers where they go
run_line = st.tuples(ids, st.one_of(st.just([]), any_field.map(lambda f: [f])), any_field,
                     numberish, numberish, st.one_of(st.just([]), ids.map(lambda f: [f]))
                     ).map(lambda t: [t[0], *t[1], t[2], t[3], t[4], *t[5]])
qrels_line = st.tuples(ids, any_field, any_field, numberish).map(list)


@pytest.mark.filterwarnings("ignore")
@given(st.lists(run_line, min_size=1, max_size=4), st.lists(qrels_line, min_size=1, max_size=4),
       st.sampled_from([" ", "\t"]))
def test_run_and_qrels_readers_on_numeric_fields(runs, qrels, sep):
    only_input_errors(read_run, "".join(sep.join(f) + "\n" for f in runs).encode())
    only_input_errors(read_qrels, "".join(sep.join(f) + "\n" for f in qrels).encode())


@given(st.text(max_size=300))
def test_text_functions_never_raise(text):
    html_to_text(text)
    html_to_text(text, math_words=True)
    extract_formulas(text)
    latex_to_words(text)
    math_to_words(text)


run_rows = st.lists(st.tuples(ids, ids, st.floats(allow_nan=False, allow_infinity=False, width=64)),
                    min_size=1, max_size=30)


@pytest.mark.filterwarnings("ignore:.*repeated")
@given(run_rows, st.sampled_from(["arqmath", "trec"]))
def test_runs_round_trip(rows, fmt):
    res = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    p = write_run(res, Path(tempfile.mkdtemp()) / "r.tsv", format=fmt)
    back = read_run(p)
    expected = res.drop_duplicates(["qid", "docno"])
    got = {(q, d): s for q, d, s in back[["qid", "docno", "score"]].itertuples(index=False)}
    assert got == {(q, d): s for q, d, s in expected.itertuples(index=False)}


@given(st.lists(st.tuples(ids, ids, st.integers(0, 3)), min_size=1, max_size=30))
def test_qrels_round_trip(rows):
    p = tmpfile("".join(f"{q} 0 {d} {r}\r\n" for q, d, r in rows).encode())
    pairs = [(qid, doc) for qid, doc, _ in rows]
    if len(set(pairs)) < len(pairs):  # a pair judged twice: refused, as trec_eval does
        with pytest.raises(InputError, match="judged twice"):
            read_qrels(p)
    q = read_qrels(p, duplicates="last")
    last = {(qid, doc): rel for qid, doc, rel in rows}
    assert dict(zip(zip(q.qid, q.docno, strict=True), q.label, strict=True)) == last


@given(st.lists(st.tuples(xml_text, xml_text), min_size=1, max_size=8))
def test_posts_round_trip(texts):
    rows = []
    for i, (title, body) in enumerate(texts):
        rows.append(f'<row Id="{2 * i + 1}" PostTypeId="1" Title={quoteattr(title)} Body={quoteattr(body)} />')
        rows.append(f'<row Id="{2 * i + 2}" PostTypeId="2" ParentId="{2 * i + 1}" Body={quoteattr(body)} />')
    p = tmpfile(("<posts>\n" + "\n".join(rows) + "\n</posts>").encode(), ".xml")
    posts = list(iter_posts(p))
    # XML normalises attribute whitespace (tabs/newlines become spaces) and \r\n.
    norm = [" ".join(b.replace("\r", " ").split(" ")) for _, b in texts]
    assert [p.body.replace("\t", " ").replace("\n", " ") for p in posts[1::2]] == [
        n.replace("\t", " ").replace("\n", " ") for n in norm]
