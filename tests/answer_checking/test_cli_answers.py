import json

from mathir.cli import main


def test_answers_json(tmp_path, capsys):
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in [
        {"response": "The answer is: 43.", "gold": "43"},
        {"response": "so $\\boxed{\\frac{1}{2}}$", "gold": "0.5", "check": "latex"},
        {"response": "#### 7", "gold": "{9; 14}", "check": "dolphin"},
        {"response": "The answer is 200 and 400 and 5", "gold": "400, 200", "policy": "model_include_gt"},
    ]) + "\n")
    assert main(["answers", "--input", str(f), "--format", "json"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["correct"] for r in out] == [True, True, False, True]
    assert out[0]["extracted"] == "43." and out[0]["gold"] == "43"


def test_answers_table(tmp_path, capsys):
    f = tmp_path / "in.jsonl"
    f.write_text('{"response": "#### 3", "gold": "3"}\n{"response": "#### 4", "gold": "3"}\n')
    assert main(["answers", "--input", str(f), "--format", "table"]) == 0
    assert "accuracy\t0.5000" in capsys.readouterr().out


def test_answers_errors(tmp_path, capsys):
    f = tmp_path / "bad.jsonl"
    f.write_text('{"response": "1", "gold": "1"}\n{"response": "1", "gold": "1", "check": "x"}\n')
    assert main(["answers", "--input", str(f)]) == 2
    assert f"{f}:2: unknown check" in capsys.readouterr().err
    f.write_text("not json\n")
    assert main(["answers", "--input", str(f)]) == 2
    assert f"{f}:1: not valid JSON" in capsys.readouterr().err


def test_answers_too_long_is_skipped_with_a_reason(tmp_path, capsys):
    MAX_CHARS = 1_000_000  # mathir.answer_checking.checking.MAX_CHARS
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"response": "#### 5 " + "x" * MAX_CHARS, "gold": "5"})
                 + "\n" + json.dumps({"response": "#### 5", "gold": "5 " + "x" * MAX_CHARS})
                 + "\n" + json.dumps({"response": "#### 5", "gold": "5"}) + "\n")
    assert main(["answers", "--input", str(f)]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["correct"] for r in out] == [False, False, True]
    assert out[0]["skipped"] == "response longer than 1,000,000 characters"
    assert out[1]["skipped"] == "gold answer longer than 1,000,000 characters"
    assert "skipped" not in out[2]


def test_answers_deep_json_and_odd_fields_are_one_line_errors(tmp_path, capsys):
    f = tmp_path / "deep.jsonl"
    f.write_text('{"response": "1", "gold": "1"}\n{"response": ' + "[" * 100_000 + "\n")
    assert main(["answers", "--input", str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}:2: JSON nested deeper than 100 levels" in err and "Traceback" not in err
    f.write_text('{"response": "1", "gold": "1", "check": ["latex"]}\n')
    assert main(["answers", "--input", str(f)]) == 2
    assert f"{f}:1: field 'check' is not a string" in capsys.readouterr().err


def test_answers_timeout_inf_means_no_limit_and_bad_values_are_one_line_errors(tmp_path, capsys):
    """Issue 30 (10): ``--timeout inf`` (or 1e308) made select() raise OverflowError."""
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"response": "\\boxed{\\sqrt{169}}", "gold": "13",
                             "check": "latex"}) + "\n")
    for value in ("inf", "1e308", "1e10"):
        assert main(["answers", "--input", str(f), "--timeout", value]) == 0, value
        captured = capsys.readouterr()
        assert json.loads(captured.out)["correct"] is True and "Traceback" not in captured.err
    for value in ("0", "-1", "nan", "-inf"):
        assert main(["answers", "--input", str(f), f"--timeout={value}"]) == 2, value
        err = capsys.readouterr().err
        assert err.startswith("error: the timeout must be a number of seconds above 0")
        assert len(err.splitlines()) == 1, err


def test_library_validates_the_timeout():
    import math

    import pytest

    from mathir.answer_checking.checking import check_answer, check_records
    from mathir.answer_checking.latex import SymbolicChecker, symbolic_timeout
    from mathir.errors import InputError

    assert symbolic_timeout(float("inf")) == math.inf == symbolic_timeout(1e308)
    for bad in (0, -1.5, float("nan"), "soon", True):
        with pytest.raises(InputError, match="timeout must be"):
            symbolic_timeout(bad)
    with pytest.raises(InputError):
        SymbolicChecker(timeout=0)
    with pytest.raises(InputError):
        check_answer("1", "1", timeout=-1)
    with pytest.raises(InputError):
        next(check_records([{"response": "1", "gold": "1"}], timeout=float("nan")))
    with SymbolicChecker(timeout=float("inf")) as checker:
        assert checker.equivalent("\\sqrt{4}", "2") is True
        assert checker.equivalent("\\sqrt{4}", "2", timeout=1e308) is True
