from pathlib import Path

import pandas as pd
import pytest

from mathir.errors import InputError
from mathir.runs.word_problems import read_run, write_run


def test_roundtrip_and_errors(tmp_path):
    res = pd.DataFrame({"qid": ["1"], "docno": ["7"], "score": [1.5], "solution": ["[2.0, 3.0]"],
                        "template": ['["m + n = a", "m - n = b"]'],
                        "alignment": ['{"a": [0, 1, 5.0], "b": [0, 3, 1.0]}'],
                        "equations": ['["m + n = 5", "m - n = 1"]']})
    p = write_run(res, tmp_path / "r.tsv", name="x", topics=["1", "2"])
    run = read_run(p, topics={"1", "2"})
    assert run["solution"].tolist() == [[2.0, 3.0], []]
    assert run["alignment"][0]["a"] == [0, 1, 5.0] and set(run["run"]) == {"x"}
    with pytest.raises(InputError, match="not among the topics"):
        read_run(p, topics={"1"})
    bad = tmp_path / "bad.tsv"
    bad.write_text(p.read_text().replace("[2.0, 3.0]", "[2.0,"))
    with pytest.raises(InputError, match=r"bad.tsv:2: malformed"):
        read_run(bad)
    with pytest.raises(InputError, match="one format"):
        write_run(res, tmp_path / "t.tsv", format="trec")


def test_deep_json_field_is_an_input_error(tmp_path):
    res = pd.DataFrame({"qid": ["1"], "docno": ["7"], "score": [1.5], "solution": ["[2.0]"],
                        "template": ["[" * 5_000 + "]" * 5_000], "alignment": ["{}"],
                        "equations": ['["m = 2"]']})
    p = write_run(res, tmp_path / "deep.tsv")
    with pytest.raises(InputError, match=r"deep.tsv:2: malformed template field "
                                         r"\(JSON nested deeper than 100 levels\)"):
        read_run(p)
    bad = tmp_path / "bad.tsv"
    bad.write_text(p.read_text().replace("1.500000", "high"))
    with pytest.raises(InputError, match=r"bad.tsv:2: malformed field \(score 'high'"):
        read_run(bad)


@pytest.mark.parametrize("template", ['["m - n"]', '["m = a.__class__"]', '"m = a"',
                                      '["m = (1).__class__.__new__"]'])
def test_a_malformed_or_hostile_template_names_the_file_and_line(tmp_path, template):
    # Before: Python code in a template ran (sympify) or raised a SyntaxError traceback.
    res = pd.DataFrame({"qid": ["1"], "docno": ["7"], "score": [1.0], "solution": ["[2.0]"],
                        "template": [template], "alignment": ['{"a": [0, 1, 2.0]}'],
                        "equations": ['["m = 2"]']})
    p = write_run(res, tmp_path / "t.tsv")
    with pytest.raises(InputError, match=r"t.tsv:2: malformed template field"):
        read_run(p)


def _run_with(tmp_path: Path, **fields: str) -> Path:
    row = {"qid": ["9102"], "docno": ["7"], "score": [1.0], "solution": ["[19.0, 11.0]"],
           "template": ['["m + n = a", "m - n = b"]'],
           "alignment": ['{"a": [0, 6, 30.0], "b": [0, 11, 8.0]}'],
           "equations": ['["m + n = 30", "m - n = 8"]']}
    row.update({k: [v] for k, v in fields.items()})
    return write_run(pd.DataFrame(row), tmp_path / "wrong.tsv", name="r")


WRONG_TYPES = [
    # before: read, then scored as if empty, or a traceback where a view used the field
    ("equations", '"m + n = 30"', "expected a JSON list of equation strings, found a string"),
    ("equations", "5", "expected a JSON list of equation strings, found a number"),
    ("equations", "null", "expected a JSON list of equation strings, found null"),
    ("equations", '{"a": 1}', "expected a JSON list of equation strings, found an object"),
    ("equations", '["m = 2", 3]', "equation 2 is a number, not a string"),
    ("solution", "19.0", "expected a JSON list of numbers, found a number"),
    ("solution", '"19"', "expected a JSON list of numbers, found a string"),
    ("solution", '[19.0, "11"]', "solution 2 is a string, not a number"),
    ("solution", "[true]", "solution 1 is a boolean, not a number"),
    ("template", "0", "expected a JSON list of equations, found a number"),
    ("template", "{}", "expected a JSON list of equations, found an object"),
    ("template", "null", "expected a JSON list of equations, found null"),
    ("alignment", "[]", "expected a JSON object slot -> [SentenceId, TokenId, Value], found a list"),
    ("alignment", "0", "expected a JSON object slot -> [SentenceId, TokenId, Value], found a number"),
    ("alignment", '{"a": 5}', "slot 'a': expected [SentenceId, TokenId, Value]"),
    ("alignment", '{"a": [0, 1]}', "slot 'a': expected [SentenceId, TokenId, Value]"),
    ("alignment", '{"a": [0, 1.5, 3.0]}', "slot 'a': expected [SentenceId, TokenId, Value]"),
    ("alignment", '{"a": [0, 1, "3"]}', "slot 'a': expected [SentenceId, TokenId, Value]"),
    ("alignment", '{"a": [-1, 1, 3.0]}', "slot 'a': expected [SentenceId, TokenId, Value]"),
]


@pytest.mark.parametrize("field,value,message", WRONG_TYPES)
def test_a_field_of_the_wrong_json_type_names_the_file_and_line(tmp_path, field, value, message):
    p = _run_with(tmp_path, **{field: value})
    with pytest.raises(InputError) as e:
        read_run(p)
    assert str(e.value).startswith(f"{p}:2: malformed {field} field ({message}")
    assert str(e.value).endswith(")") and "\n" not in str(e.value)


@pytest.mark.parametrize("score", ["1e99999", "nan", "inf", "1_0", "\u0663"])
def test_a_score_that_is_not_a_finite_number_names_the_line(tmp_path, score):
    p = _run_with(tmp_path)
    p.write_text(p.read_text().replace("1.000000", score), encoding="utf-8")
    with pytest.raises(InputError, match=r"wrong.tsv:2: (score is not finite|malformed field "
                                         r"\(score .* is not a number\))"):
        read_run(p)


def test_empty_fields_of_unsolved_problems_are_read(tmp_path):
    p = _run_with(tmp_path, solution="[]", template="[]", alignment="{}", equations="[]")
    run = read_run(p)
    assert run.loc[0, ["solution", "template", "alignment", "equations"]].tolist() == [
        [], [], {}, []]


@pytest.mark.parametrize("field,value,message", [WRONG_TYPES[0], WRONG_TYPES[5],
                                                 WRONG_TYPES[9], WRONG_TYPES[12]])
def test_the_cli_prints_one_error_line(tmp_path, capsys, field, value, message):
    from mathir.cli import main
    from mathir.samples import word_problems_sample

    p = _run_with(tmp_path, **{field: value})
    split = word_problems_sample().split("test")
    assert main(["evaluate", "word-problems", "--qrels", str(split), str(p)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {p}:2: malformed {field} field ({message}")


def test_a_json_integer_of_5000_digits_names_the_file_and_line(tmp_path):
    # json.loads raised ValueError (Python's int string-conversion limit): a traceback
    p = _run_with(tmp_path, solution="[" + "9" * 5000 + "]")
    with pytest.raises(InputError, match=r"wrong.tsv:2: malformed solution field \(not valid "
                                         r"JSON: an integer of more than 4,300 digits\)"):
        read_run(p)
