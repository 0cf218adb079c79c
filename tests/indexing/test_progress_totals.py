"""Indexing bars show a total (hence an ETA) when the collection's size is known."""

from mathir.indexing import answer_index, formula_build, formula_index
from mathir.samples import arqmath_sample


class _Bar:
    totals: list = []

    def __init__(self, *args, total=None, **kwargs):
        _Bar.totals.append((kwargs.get("desc"), total))

    def update(self, n=1):
        pass

    def close(self):
        pass


def test_answer_and_formula_bars_have_totals(tmp_path, monkeypatch):
    _Bar.totals = []
    monkeypatch.setattr(answer_index, "tqdm", _Bar)
    monkeypatch.setattr(formula_build, "tqdm", _Bar)
    s = arqmath_sample()
    answer_index.AnswerIndex.build(s.posts, tmp_path / "answers")
    formula_index.FormulaIndex.build(s.formulas, tmp_path / "formulas")
    lines = s.formulas.read_bytes().count(b"\n")
    assert ("indexing answers", 250) in _Bar.totals
    assert ("indexing formulas", lines - 1) in _Bar.totals  # less the header


def test_a_thread_directory_counts_its_answer_files(tmp_path):
    for name in ("1_2.html", "1_3.html", "notes.txt"):
        (tmp_path / name).write_text("x")
    assert answer_index.AnswerCollection.at(tmp_path).count_answers() == 2
