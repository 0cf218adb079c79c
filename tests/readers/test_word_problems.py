import json

import pytest

from mathir.errors import InputError
from mathir.readers.word_problems import (
    iter_derivation_problems,
    iter_dolphin1878,
    read_split,
    sentences,
    textual_numbers,
    token_value,
)
from mathir.samples import word_problems_sample
from tests.conftest import real_path


@pytest.mark.parametrize("token,value", [
    ("12", 12.0), ("1,250", 1250.0), ("2.10", 2.1), ("$8", 8.0), ("20%", 20.0),
    ("177-inch", 177.0), ("twice", 2), ("thirty-three", 33), ("one-third", 1 / 3),
    ("three-legged", 3), ("nickels", 0.05), ("1/5", 0.2), ("odd", 2), ("apples", None),
    ("a", None), (".", None),
])
def test_token_value(token, value):
    assert token_value(token) == (pytest.approx(value) if value is not None else None)


def test_sentences_and_numbers():
    text = "Two numbers sum to 5 . One is twice the other ? Find them"
    assert [len(s) for s in sentences(text)] == [6, 6, 2]
    assert [(n.position, n.value) for n in textual_numbers(text)] == [
        ((0, 0), 2), ((0, 4), 5.0), ((1, 0), 1), ((1, 2), 2)]


def test_sample_problems():
    s = word_problems_sample()
    problems = list(iter_derivation_problems(s.problems))
    assert len(problems) == 14
    p = {p.id: p for p in problems}["9105"]
    assert len(p.equiv) == 2 and p.solutions == (30.0, 10.0)
    tokens = p.tokens()
    for slot, q in p.alignment.items():
        assert token_value(tokens[q.sentence][q.token]) == pytest.approx(q.value), slot
    assert read_split(s.split("test")) == ["9101", "9102", "9103", "9104", "9105"]


def test_duplicate_ids_yield_once_and_bad_alignment_is_an_error(tmp_path):
    rec = {"sQuestion": "Sum is 5 .", "lEquations": ["x=5"], "lSolutions": [5.0], "iIndex": 1,
           "Template": ["m = a"], "Alignment": [{"coeff": "a", "SentenceId": 0, "TokenId": 2,
                                                 "Value": 5.0}], "Equiv": []}
    f = tmp_path / "draw.json"
    f.write_text(json.dumps([rec, rec]))
    assert len(list(iter_derivation_problems(f))) == 1
    rec["Alignment"][0]["TokenId"] = 9
    f.write_text(json.dumps([rec]))
    with pytest.raises(InputError, match="outside the text"):
        list(iter_derivation_problems(f))
    f.write_text("[{")
    with pytest.raises(InputError, match="not valid JSON"):
        list(iter_derivation_problems(f))
    f.write_text('[\n{"iIndex": 1,\n "Template": ' + "[" * 100_000 + "]" * 100_000 + "}]")
    with pytest.raises(InputError, match=r"draw.json:3: JSON nested deeper than 100 levels"):
        list(iter_derivation_problems(f))
    with pytest.raises(InputError, match=r"draw.json:3: JSON nested deeper than 100 levels"):
        list(iter_dolphin1878(f))


def test_dolphin1878_reader(tmp_path):
    f = tmp_path / "d.json"
    f.write_text(json.dumps([{"id": "x.1", "index": 3, "text": "t", "equations":
                              ["unkn: x,y", "equ: x=y+11", "equ: 3*x=4*y+4"], "ans": "{40;29}",
                              "ans_simple": [40, 29]}]))
    (p,) = iter_dolphin1878(f)
    assert p.unknowns == ("x", "y") and p.equations == ("x=y+11", "3*x=4*y+4")
    assert p.sources == ()


@pytest.mark.realdata
@pytest.mark.parametrize("name,count", [("draw.json", 999), ("kushman.json", 514),
                                        ("dolphin_t2_final.json", 831)])
def test_release_alignments_resolve(name, count):
    problems = list(iter_derivation_problems(real_path("word_problems", "draw_release", name)))
    assert len(problems) == count
    found = total = 0
    for p in problems:
        numbers = {n.position: n.value for n in textual_numbers(p.text)}
        for q in p.alignment.values():
            total += 1
            found += q.position in numbers and abs(numbers[q.position] - q.value) < 1e-3 * max(
                1, abs(q.value))
    assert found / total > 0.98   # our number reader finds the annotated textual numbers


@pytest.mark.realdata
def test_dolphin1878_real():
    d = real_path("word_problems", "mwptoolkit", "dolphin1878")
    problems = list(iter_dolphin1878(d / "number_word_std.dev.json")) + list(
        iter_dolphin1878(d / "number_word_std.test.json"))
    assert len(problems) == 1878
    assert sum(p.ans == "ans_no_result" for p in problems) == 20
