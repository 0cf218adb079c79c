import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from mathir.errors import InputError
from mathir.evaluation.word_problems import compare, judge
from mathir.qrels.word_problems import read_gold
from mathir.samples import word_problems_sample


def _run(rows):
    return pd.DataFrame(rows, columns=["qid", "solution", "template", "alignment"])


def test_three_accuracies_tell_errors_apart():
    gold = read_gold(word_problems_sample().split("test"))
    g = {q: p for q, p in zip(gold["qid"], gold["problem"], strict=True)}
    p = g["9102"]   # "The sum of two numbers is 30 and their difference is 8 ."
    exact = {c: [q.sentence, q.token, q.value] for c, q in p.alignment.items()}
    run = _run([
        ("9102", [19.0, 11.0], list(p.template), exact),                       # all right
        # the right answer claimed with a wrong derivation (sum/difference of 27 and "twice")
        ("9103", [19.0, 8.0], ["m + n = a", "m - n = b"], {"a": [1, 3, 27.0],
                                                           "b": [0, 7, 2.0]}),
    ])
    t = judge(run, gold).set_index("qid")
    assert t.loc["9102"].tolist() == [1, 1, 1]
    assert t.loc["9101"].tolist() == [0, 0, 0]      # unanswered counts 0
    assert t.loc["9103"].tolist() == [1, 0, 0]
    table = compare({"r": run}, gold)
    assert list(table.columns) == ["solution_acc", "equation_acc", "derivation_acc"]
    assert table.loc["r", "solution_acc"] == t["solution_acc"].mean()


def _gold_and_9102():
    gold = read_gold(word_problems_sample().split("test"))
    p = dict(zip(gold["qid"], gold["problem"], strict=True))["9102"]
    return gold, {c: [q.sentence, q.token, q.value] for c, q in p.alignment.items()}


@pytest.mark.parametrize("template, alignment, solution, message", [
    # a template outside the grammar: a broken run file, not a wrong answer
    (["m + n = a", "m - n = b.__class__"], None, [19.0, 11.0], "template equation 2"),
    (["m + n = a", "m - n"], None, [19.0, 11.0], "template equation 2 'm - n': expected '='"),
    ("m + n = a", None, [19.0, 11.0], "expected a JSON list of equations"),
    ([["m + n = a"]], None, [19.0, 11.0], "list of equation strings"),
    (["m + n = a", "m - n = b"], {"a": [0, 1]}, [19.0, 11.0], "alignment: expected"),
    (["m + n = a", "m - n = b"], [[0, 1, 30.0]], [19.0, 11.0], "alignment: expected a JSON"),
    (["m + n = a", "m - n = b"], None, ["19"], "solution: expected a JSON list of numbers"),
    (["m + n = a", "m - n = b"], None, 19.0, "solution: expected a JSON list of numbers"),
])
def test_malformed_run_rows_are_input_errors(template, alignment, solution, message):
    gold, exact = _gold_and_9102()
    run = _run([("9102", solution, template, exact if alignment is None else alignment)])
    run.attrs["path"] = "runs/r.tsv"
    with pytest.raises(InputError, match=rf"^runs/r.tsv: run 'r', problem 9102: .*{message}"):
        compare({"r": run}, gold)


def test_malformed_gold_template_names_the_problem(tmp_path):
    s = word_problems_sample()
    for f in Path(s.problems).parent.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    data = json.loads((tmp_path / "draw.json").read_text())
    (rec,) = [r for r in data if str(r["iIndex"]) == "9102"]
    rec["Template"] = ["m + n = a", "m - n = 'b'"]
    (tmp_path / "draw.json").write_text(json.dumps(data))
    gold = read_gold(tmp_path / "draw-test.txt")
    _, exact = _gold_and_9102()
    run = _run([("9102", [19.0, 11.0], ["m + n = a", "m - n = b"], exact)])
    with pytest.raises(InputError, match=r"^problem 9102: template equation 2 .*not allowed"):
        judge(run, gold)
