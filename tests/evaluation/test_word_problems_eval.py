import pandas as pd

from mathir.evaluation.word_problems import compare, judge, read_gold
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
