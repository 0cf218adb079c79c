import pytest

from mathir.errors import InputError
from mathir.samples import worldtree_sample
from mathir.topics.worldtree import find_split_file, read_questions, split_options
from tests.conftest import real_path

HEADER = ("questionID\toriginalQuestionID\ttotalPossiblePoint\tAnswerKey\tisMultipleChoiceQuestion\t"
          "includesDiagram\texamName\tgrade\tyear\tAnswerKey\tQuestion\texplanation\tnotes\t"
          "explanation annotators\tflags\tsubject\tcategory\tfold")


def row(qid, question, key="B", expl="a1|CENTRAL"):
    return "\t".join([qid, "1", "1", key, "1", "0", "x", "4", "2020", key, question, expl, "", "",
                      "SUCCESS", "", "Dev", "Easy"])


@pytest.mark.parametrize("text,stem,options", [
    ("Which? (A) x (B) y", "Which?", {"A": "x", "B": "y"}),
    ("Pick (1) one (2) two (3) three", "Pick", {"1": "one", "2": "two", "3": "three"}),
    ("Mark (A) on the map. Which? (A) north (B) south", "Mark (A) on the map. Which?",
     {"A": "north", "B": "south"}),
    ("No options here", "No options here", {}),
])
def test_split_options(text, stem, options):
    assert split_options(text) == (stem, options)


def test_query_is_stem_and_correct_answer(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text(HEADER + "\n" + row("Q1", "What melts? (A) rock (B) ice (C) air") + "\n"
                 + row("Q2", "Empty? (A) a (B) b", expl="") + "\n")
    t = read_questions(p)
    assert t["query"].tolist() == ["What melts? ice", "Empty? b"]
    assert read_questions(p, explained_only=True)["qid"].tolist() == ["Q1"]
    full = read_questions(p, query_fields=("choices",))
    assert full["query"][0] == "What melts? (A) rock (B) ice (C) air"


@pytest.mark.parametrize("body,msg", [
    (row("Q1", "x (A) a (B) b") + "\textra", r"q.tsv:2: expected 18 columns, found 19"),
    (row("Q1", "x (A) a (B) b", key="D"), r"q.tsv:2: answer key 'D' names no option"),
    (row("Q1", "x (A) a (B) b") + "\n" + row("Q1", "y (A) a (B) b"), r"q.tsv:3: questionID 'Q1' appears twice"),
])
def test_bad_question_rows(tmp_path, body, msg):
    p = tmp_path / "q.tsv"
    p.write_text(HEADER + "\n" + body + "\n")
    with pytest.raises(InputError, match=msg):
        read_questions(p)


def test_missing_columns_and_empty_file(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("questionID\tQuestion\nQ1\tx\n")
    with pytest.raises(InputError, match=r"header lacks columns \['AnswerKey'\]"):
        read_questions(p)
    p.write_text("")
    with pytest.raises(InputError, match="empty"):
        read_questions(p)


def test_sample_splits():
    s = worldtree_sample()
    assert find_split_file(s.tables, "Dev") == s.questions("Dev")
    dev = read_questions(s.questions("Dev"))
    assert len(dev) == 7 and (dev["explanation"] == "").sum() == 1


@pytest.mark.realdata
def test_real_question_files():
    dev = read_questions(real_path("worldtree", "questions", "ARC-Elementary-QC+EXPL-Dev.tsv"))
    assert len(dev) == 264 and (dev["explanation"] != "").sum() == 226
    q = dev.set_index("qid").loc["Mercury_SC_405304"]
    assert q["answer"] == "melting" and q["answer_key"] == "D"
    assert q["question"].startswith("A student placed an ice cube") and "(A)" not in q["question"]
    test = read_questions(real_path("worldtree", "questions", "ARC-Elementary-QC+EXPL-Test.tsv"))
    assert len(test) == 1247 and (test["answer"] != "").all()
