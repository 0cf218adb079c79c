"""Fuzzing the readers of Task 2/3 runs, WorldTree, word problems, answers and formulas.

Arbitrary bytes: nothing but InputError escapes. Valid inputs round-trip where the
format can be written.
"""

import json
import tempfile
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mathir.answer_checking.checking import check_answer, read_answer_records
from mathir.errors import InputError
from mathir.indexing.fact_index import iter_table_facts, read_lemmas
from mathir.indexing.formula_tuples import FormulaTokenizer, latex_word_tokens, tuple_tokens
from mathir.indexing.slt import SLTError, slt_from_latex, slt_from_mathml
from mathir.qrels.worldtree import read_qrels as read_worldtree_qrels
from mathir.readers.word_problems import iter_derivation_problems, iter_dolphin1878, read_split
from mathir.runs.arqmath_task2 import read_task2_run, write_task2_run
from mathir.runs.arqmath_task3 import read_assignments, read_task3_run
from mathir.runs.word_problems import read_run as read_word_problem_run
from mathir.runs.worldtree import read_run as read_worldtree_run
from mathir.runs.worldtree import write_run as write_worldtree_run
from mathir.topics.worldtree import read_questions

ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=10)
junk = st.binary(max_size=400) | st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass"))


def tmpfile(data: bytes, name="f.tsv") -> Path:
    p = Path(tempfile.mkdtemp()) / name
    p.write_bytes(data)
    return p


def only_input_errors(fn, path):
    """Run a reader on ``path``: it succeeds, or raises an InputError naming the file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(path)
            if hasattr(out, "__next__"):
                list(out)
        except InputError as e:
            assert e.path is not None and Path(e.path).name == path.name, str(e)


READERS = [read_task2_run, read_task3_run, read_assignments, read_worldtree_run,
           read_word_problem_run, read_worldtree_qrels, read_questions, iter_table_facts,
           read_lemmas, read_split]


@pytest.mark.parametrize("reader", READERS, ids=lambda f: f.__module__.split(".")[-1] + "." + f.__name__)
@given(data=junk)
def test_tsv_readers_fuzz(reader, data):
    only_input_errors(reader, tmpfile(data))


@given(junk)
def test_json_readers_fuzz(data):
    for reader in (iter_derivation_problems, iter_dolphin1878, read_answer_records):
        only_input_errors(reader, tmpfile(data, "f.json"))


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                           | st.text(max_size=20),
                           lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                           max_leaves=12)


@given(json_values)
def test_json_readers_on_wrong_shapes(value):
    data = json.dumps(value).encode()
    for reader in (iter_derivation_problems, iter_dolphin1878):
        only_input_errors(reader, tmpfile(data, "f.json"))
    only_input_errors(read_answer_records, tmpfile(data + b"\n" + data, "f.jsonl"))


# numbers as they are written and as they overflow (a 20-digit rank overflowed
# array('q'); 5,000 digits hit Python's int string-conversion limit; 0x1p99999 made
# float.fromhex raise OverflowError)
numberish = st.one_of(
    st.integers(-10**30, 10**30).map(str),
    st.integers(1, 6000).map(lambda n: "9" * n),
    st.sampled_from(["0x1p99999", "-0x1p99999", "1e99999", "inf", "nan", "1_000", "\u0663",
                     "2.0", "+7", ".5", "Q0", "q0"]),
)


any_field = st.one_of(ids, numberish)
# Task 2: topic formula post rank score tag; Task 3: topic rank score tag sources answer;
# WorldTree TREC: topic Q0 fact rank score tag (some fields moved or missing)
LAYOUTS = {read_task2_run: (ids, any_field, ids, numberish, numberish, ids),
           read_task3_run: (ids, numberish, numberish, ids, ids, any_field),
           read_worldtree_run: (ids, st.sampled_from(["Q0", "q0"]), ids, numberish, numberish,
                                ids)}


@pytest.mark.parametrize("reader", list(LAYOUTS), ids=lambda f: f.__module__.split(".")[-1])
@given(data=st.data(), sep=st.sampled_from(["\t", " "]))
def test_run_readers_on_numeric_fields(reader, data, sep):
    line = st.tuples(*LAYOUTS[reader]).map(list)
    lines = data.draw(st.lists(line, min_size=1, max_size=4))
    for fields in lines:  # now and then a field too few
        if data.draw(st.integers(0, 9)) == 0:
            fields.pop(data.draw(st.integers(0, len(fields) - 1)))
    only_input_errors(reader, tmpfile("".join(sep.join(f) + "\n" for f in lines).encode()))

word_problem_fields = st.one_of(json_values.map(json.dumps), numberish.map(json.dumps),
                                st.just('{"a": [0, 1, 2.0]}'), st.just('["m = a"]'))


@given(st.lists(word_problem_fields, min_size=4, max_size=4), st.one_of(numberish, ids))
def test_word_problem_runs_on_wrong_json_types(fields, score):
    # a run read without an error holds fields of the types the evaluation uses
    from mathir.runs.word_problems import COLUMNS

    row = "\t".join(["1", "7", score, *(f.replace("\t", " ") for f in fields), "r"])
    path = tmpfile(("\t".join(COLUMNS) + "\n" + row + "\n").encode())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            run = read_word_problem_run(path)
        except InputError as e:
            assert e.path == str(path) and e.line == 2, str(e)
            return
    r = run.iloc[0]
    assert isinstance(r["solution"], list) and isinstance(r["alignment"], dict)
    assert all(isinstance(x, list) for x in (r["template"], r["equations"]))
    assert all(isinstance(x, str) for x in r["template"] + r["equations"])


@given(st.text(max_size=60), st.text(max_size=30))
def test_answer_checking_never_raises(response, gold):
    for check in ("simple", "dolphin"):
        try:
            r = check_answer(response, gold, check=check)
        except InputError:
            continue
        assert isinstance(r.correct, bool)


@given(st.text(max_size=80))
def test_formula_parsing_falls_back_instead_of_raising(latex):
    tok = FormulaTokenizer()
    tokens = tok.tokens(latex)
    try:  # the tuples of the formula's tree, when it parses
        expected, fell_back = tuple_tokens(slt_from_latex(latex), 2, False, True, True), 0
    except (SLTError, RecursionError):
        expected, fell_back = latex_word_tokens(latex), 1  # else its LaTeX words, counted
    assert tokens == expected
    assert (tok.formulas, tok.fallbacks, sum(tok.errors.values())) == (1, fell_back, fell_back)
    try:
        slt_from_mathml(latex)
    except SLTError:
        pass


@pytest.mark.filterwarnings("ignore")
@given(st.lists(st.tuples(ids, ids, ids, st.floats(-1e6, 1e6, allow_nan=False)), min_size=1, max_size=20))
def test_task2_runs_round_trip(rows):
    res = pd.DataFrame(rows, columns=["qid", "docno", "post_id", "score"])
    back = read_task2_run(write_task2_run(res, Path(tempfile.mkdtemp()) / "r.tsv"))
    expected = res.drop_duplicates(["qid", "docno"])
    got = {(q, d): (p, s) for q, d, p, s in back[["qid", "docno", "post_id", "score"]].itertuples(index=False)}
    assert got == {(q, d): (p, s) for q, d, p, s in expected.itertuples(index=False)}


@given(st.lists(st.tuples(ids, ids), min_size=1, max_size=20, unique=True))
def test_worldtree_predictions_round_trip(rows):
    res = pd.DataFrame(rows, columns=["qid", "docno"]).assign(score=lambda d: -d.index.astype(float))
    back = read_worldtree_run(write_worldtree_run(res, Path(tempfile.mkdtemp()) / "p.tsv"))
    assert sorted(zip(back.qid, back.docno, strict=True)) == sorted(rows)
