import pytest

from mathir.errors import InputError
from mathir.indexing.mse_posts import iter_posts, parse_tags
from tests.conftest import real_path

ROWS = """<?xml version="1.0" encoding="utf-8"?>
<posts>
  <row Id="1" PostTypeId="1" Score="3" Title="Why is &lt;span class=&quot;math-container&quot; id=&quot;5&quot;&gt;$x^2 \\geq 0$&lt;/span&gt;?" Body="&lt;p&gt;Because &lt;span class=&quot;math-container&quot; id=&quot;6&quot;&gt;$x\\cdot x$&lt;/span&gt;.&lt;/p&gt;" Tags="&lt;algebra&gt;&lt;inequality&gt;" />
  <row Id="2" PostTypeId="2" ParentId="1" Score="1" Body="&lt;p&gt;Squares &amp;amp; signs.&lt;/p&gt;" />
  <row Id="3" PostTypeId="5" Body="tag wiki" />
</posts>
"""


def test_questions_answers_formulas(tmp_path):
    p = tmp_path / "Posts.V1.3.xml"
    p.write_text(ROWS)
    q, a = list(iter_posts(p))
    assert (q.post_type, q.tags, q.score) == ("question", ["algebra", "inequality"], 3)
    assert q.text() == "Why is $x^2 \\geq 0$? Because $x\\cdot x$."
    assert [(f.formula_id, f.latex) for f in q.formulas()] == [("5", "x^2 \\geq 0"), ("6", "x\\cdot x")]
    assert (a.post_type, a.parent_id, a.thread_id, a.text()) == ("answer", "1", "1", "Squares & signs.")
    assert [p.post_id for p in iter_posts(p, ("answer",))] == ["2"]


def test_malformed_row_names_the_line(tmp_path):
    p = tmp_path / "bad.xml"
    p.write_text('<posts>\n<row Id="1" PostTypeId="1" Body="x" />\n<row Id="2" Body="unclosed />\n</posts>\n')
    with pytest.raises(InputError, match=r"bad.xml:\d+: malformed XML"):
        list(iter_posts(p))


def test_answer_without_parent_is_an_error(tmp_path):
    p = tmp_path / "p.xml"
    p.write_text('<posts>\n  <row Id="9" PostTypeId="2" Body="x" />\n</posts>')
    with pytest.raises(InputError, match=r"p.xml:2: answer 9 has no ParentId"):
        list(iter_posts(p))


def test_xxe_payload_is_refused_without_reading_the_file(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    p = tmp_path / "xxe.xml"
    p.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE posts [<!ENTITY xxe SYSTEM "file://{secret}">]>\n'
                 '<posts><row Id="1" PostTypeId="1" Body="&xxe;" /></posts>')
    with pytest.raises(InputError, match="entity declarations are not allowed") as e:
        list(iter_posts(p))
    assert "TOP-SECRET" not in str(e.value)


def test_billion_laughs_is_refused(tmp_path):
    ents = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    p = tmp_path / "bomb.xml"
    p.write_text(f'<?xml version="1.0"?><!DOCTYPE posts [<!ENTITY l0 "ha">{ents}]>'
                 '<posts><row Id="1" PostTypeId="1" Body="&l9;" /></posts>')
    with pytest.raises(InputError, match="entity"):
        list(iter_posts(p))


def test_missing_file():
    with pytest.raises(InputError, match="not found"):
        list(iter_posts("/no/such/Posts.xml"))


def test_parse_tags():
    assert parse_tags("<a><b-c>") == ["a", "b-c"]
    assert parse_tags("a, b") == ["a", "b"]


def test_sample_collection(sample):
    posts = list(iter_posts(sample.posts))
    assert sum(p.post_type == "question" for p in posts) == 80
    assert sum(p.post_type == "answer" for p in posts) == 250
    assert sum(len(p.formulas()) for p in posts) > 300


@pytest.mark.realdata
def test_real_posts_smoke():
    posts = list(iter_posts(real_path("arqmath", "collection_sample", "Posts_sample_indexTest.xml")))
    assert len(posts) == 7
    assert posts[0].title.startswith("What Does it Really Mean")
    assert any(p.post_type == "answer" and p.parent_id == "3" for p in posts)
