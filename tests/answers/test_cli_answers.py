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
