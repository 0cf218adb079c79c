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
