import pytest

from mathir.errors import InputError
from mathir.topics.arqmath import read_task1_topics, read_task2_topics, read_topic_formulas
from tests.conftest import real_path

TOPIC = """<?xml version="1.0" ?>
<Topics>
   <Topic number="A.9">
      <Title>Norm of &lt;span class=&quot;math-container&quot; id=&quot;q_1&quot;&gt;$A^{-1}$&lt;/span&gt;</Title>
      <Question>&lt;p&gt;Is &lt;span class=&quot;math-container&quot; id=&quot;q_2&quot;&gt;$\\|A\\|_2 &lt; 1$&lt;/span&gt;?&lt;/p&gt;</Question>
      <Tags>linear-algebra,matrices</Tags>
   </Topic>
</Topics>"""


def test_task1_topic_text(tmp_path):
    p = tmp_path / "t.xml"
    p.write_text(TOPIC)
    t = read_task1_topics(p)
    assert t.loc[0, "qid"] == "A.9"
    assert t.loc[0, "query"] == "Norm of $A^{-1}$ Is $\\|A\\|_2 < 1$?"
    assert t.loc[0, "tags"] == "linear-algebra,matrices"


def test_duplicate_topic_and_missing_number(tmp_path):
    p = tmp_path / "d.xml"
    p.write_text("<Topics><Topic number='A.1'><Title>x</Title></Topic>\n<Topic number='A.1'><Title>y</Title></Topic></Topics>")
    with pytest.raises(InputError, match=r"d.xml:2: duplicate topic A.1"):
        read_task1_topics(p)
    p.write_text("<Topics><Topic><Title>x</Title></Topic></Topics>")
    with pytest.raises(InputError, match="without a number"):
        read_task1_topics(p)


def test_task2_requires_formula(tmp_path):
    p = tmp_path / "t2.xml"
    p.write_text(TOPIC)
    with pytest.raises(InputError, match="lacks Formula_Id"):
        read_task2_topics(p)


def test_sample_topics(sample):
    t1 = read_task1_topics(sample.task1_topics)
    t2 = read_task2_topics(sample.task2_topics)
    assert len(t1) == 10 and len(t2) == 10
    assert all("$" in q for q in t1["query"])
    f = read_topic_formulas(sample.topic_formulas)
    assert set(t2["formula_id"]) <= set(f["formula_id"])


@pytest.mark.realdata
@pytest.mark.parametrize("year,count,first", [("2020_V2.0", 98, "A.1"), ("2021_V1.1", 100, "A.201"),
                                              ("2022_V0.1", 100, "A.301")])
def test_real_task1_topics(year, count, first):
    t = read_task1_topics(real_path("arqmath", "topics", "task1", f"Topics_Task1_{year}.xml"))
    assert len(t) == count and t.qid.iloc[0] == first
    assert (t["query"].str.len() > 20).all()
    assert not t["query"].str.contains("<span").any()


@pytest.mark.realdata
@pytest.mark.parametrize("year,count", [("2020_V1.1", 85), ("2021_V1.1", 100), ("2022_V0.1", 100)])
def test_real_task2_topics(year, count):
    t = read_task2_topics(real_path("arqmath", "topics", "task2", f"Topics_Task2_{year}.xml"))
    assert len(t) == count
    if year.startswith("2022"):
        row = t.iloc[0]
        assert (row.qid, row.formula_id, row.latex) == ("B.301", "q_6", "\\|A\\|_2=\\sqrt{\\rho(A^TA)}")


@pytest.mark.realdata
@pytest.mark.parametrize("name,rows", [("2020_latex", 1008), ("2020_slt", 1007), ("2021_latex", 843),
                                       ("2022_latex", 1050), ("2022_opt", 1050)])
def test_real_topic_formula_files(name, rows):
    f = read_topic_formulas(real_path("arqmath", "topics", "formulas", f"topic_formulas_{name}.tsv"))
    assert len(f) == rows
    if "slt" in name or "opt" in name:
        assert "<math" in f.formula.iloc[0] and not f.formula.iloc[0].startswith('"')
