import pytest

from mathir.errors import InputError
from mathir.readers.mse_posts import iter_posts, parse_tags
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


# --- entity declarations in any encoding (the check reads the prolog as the parser will)

def _posts(p):
    return [(x.post_id, x.body) for x in iter_posts(p)]


def _task1_topics(p):
    from mathir.topics.arqmath import read_task1_topics

    return read_task1_topics(p).to_dict("list")


def _task2_topics(p):
    from mathir.topics.arqmath import read_task2_topics

    return read_task2_topics(p).to_dict("list")


XML_READERS = {
    "posts": (_posts, "posts", '<row Id="1" PostTypeId="1" Body="{ref}" />'),
    "task1 topics": (_task1_topics, "Topics",
                     '<Topic number="A.1"><Title>t {ref}</Title><Question>q</Question></Topic>'),
    "task2 topics": (_task2_topics, "Topics",
                     '<Topic number="B.1"><Formula_Id>q_1</Formula_Id><Latex>x {ref}</Latex>'
                     '<Title>t</Title><Question>q</Question></Topic>'),
}
# name -> (codec, byte-order mark, XML declaration's encoding)
ENCODINGS = {
    "utf-8": ("utf-8", b"", "UTF-8"),
    "utf-8 BOM": ("utf-8", b"\xef\xbb\xbf", "UTF-8"),
    "utf-16-le BOM": ("utf-16-le", b"\xff\xfe", "UTF-16"),
    "utf-16-be BOM": ("utf-16-be", b"\xfe\xff", "UTF-16"),
    "utf-16-le": ("utf-16-le", b"", "UTF-16"),
    "utf-16-be": ("utf-16-be", b"", "UTF-16"),
    "utf-32-le BOM": ("utf-32-le", b"\xff\xfe\x00\x00", "UTF-32"),
    "utf-32-be BOM": ("utf-32-be", b"\x00\x00\xfe\xff", "UTF-32"),
    "utf-32-le": ("utf-32-le", b"", "UTF-32"),
}


def _payloads(secret):
    laughs = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    return {
        "xxe": (f'<!ENTITY xxe SYSTEM "file://{secret}">', "&xxe;"),
        "parameter-entity xxe": (f'<!ENTITY % p SYSTEM "file://{secret}"> %p;', "x"),
        "billion laughs": (f'<!ENTITY l0 "ha">{laughs}', "&l9;"),
    }


def _xml(root, element, ref, subset, encoding, comment=""):
    return (f'<?xml version="1.0" encoding="{encoding}"?>\n{comment}'
            f"<!DOCTYPE {root} [{subset}]>\n<{root}>{element.format(ref=ref)}</{root}>\n")


@pytest.mark.parametrize("payload", ["xxe", "parameter-entity xxe", "billion laughs"])
@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("reader", list(XML_READERS))
def test_entity_declarations_are_refused_in_every_encoding(tmp_path, reader, encoding, payload):
    secret = tmp_path / "canary.txt"
    secret.write_text("CANARY-SECRET")
    read, root, element = XML_READERS[reader]
    codec, bom, declared = ENCODINGS[encoding]
    subset, ref = _payloads(secret)[payload]
    p = tmp_path / "evil.xml"
    p.write_bytes(bom + _xml(root, element, ref, subset, declared).encode(codec))
    expected = "not supported" if declared == "UTF-32" else "entity declarations are not allowed"
    with pytest.raises(InputError, match=expected) as e:
        read(p)
    assert "CANARY" not in str(e.value)


@pytest.mark.parametrize("reader", list(XML_READERS))
def test_entity_declarations_after_a_long_comment_are_refused(tmp_path, reader):
    secret = tmp_path / "canary.txt"
    secret.write_text("CANARY-SECRET")
    read, root, element = XML_READERS[reader]
    subset, ref = _payloads(secret)["xxe"]
    p = tmp_path / "evil.xml"
    # a byte check of the first 64 KiB used to miss the DOCTYPE
    p.write_text(_xml(root, element, ref, subset, "UTF-8", f"<!--{'x' * 70000}-->\n"))
    with pytest.raises(InputError, match=r"evil.xml:3: XML entity declarations are not allowed"):
        read(p)


@pytest.mark.parametrize("declared,codec", [("UTF-7", "utf-7"), ("IBM037", "cp037"),
                                            ("UTF-16", "utf-8")])
def test_encodings_that_hide_markup_from_a_byte_check_are_refused(tmp_path, declared, codec):
    secret = tmp_path / "canary.txt"
    secret.write_text("CANARY-SECRET")
    p = tmp_path / "evil.xml"
    decl = f'<?xml version="1.0" encoding="{declared}"?>'
    body = (f'<!DOCTYPE posts [<!ENTITY xxe SYSTEM "file://{secret}">]>'
            '<posts><row Id="1" PostTypeId="1" Body="&xxe;" /></posts>')
    p.write_bytes(decl.encode(codec) + body.encode(codec))
    with pytest.raises(InputError, match="not supported"):
        list(iter_posts(p))


@pytest.mark.parametrize("encoding", ["utf-8 BOM", "utf-16-le BOM", "utf-16-be BOM", "utf-16-le"])
def test_harmless_files_in_other_encodings_still_parse(tmp_path, encoding):
    codec, bom, declared = ENCODINGS[encoding]
    plain = tmp_path / "plain.xml"
    plain.write_text(ROWS)
    p = tmp_path / "other.xml"
    text = ROWS.replace('encoding="utf-8"', f'encoding="{declared}"')
    text = text.replace("<posts>", '<!-- c --><?pi x?><!DOCTYPE posts SYSTEM "p[1].dtd">\n<posts>')
    p.write_bytes(bom + text.encode(codec))
    assert _posts(p) == _posts(plain) and len(_posts(p)) == 2


def test_a_late_xml_declaration_and_a_prolog_over_1_mib_are_refused(tmp_path):
    p = tmp_path / "late.xml"
    p.write_text('\n<?xml version="1.0" encoding="UTF-7"?><posts></posts>')
    with pytest.raises(InputError, match=r"late.xml:2: XML declaration not at the start"):
        list(iter_posts(p))
    p = tmp_path / "long.xml"
    p.write_text(f"<!--{'x' * (1 << 20)}-->\n<!DOCTYPE posts>\n<posts></posts>")
    with pytest.raises(InputError, match=r"long.xml:1: the XML prolog is longer than 1 MiB"):
        list(iter_posts(p))
