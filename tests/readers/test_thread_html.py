import pytest

from mathir.errors import InputError
from mathir.readers import thread_html
from mathir.readers.formula_tsv import read_formula_index
from mathir.readers.thread_html import iter_thread_files, iter_thread_posts, read_thread_file
from tests.conftest import real_path

THREAD = """<!DOCTYPE html><html><head><title>T</title></head><body>
<div class="row" id="question-title"><h1> Sum of <span class="math-container" id="11" visual_id="90"><math alttext="1/n^2"><mi>n</mi></math></span> </h1></div>
<div id="question" question_id="100"><p>Why is <span class="math-container" id="12" visual_id="91"><math alttext="a&lt;b"><mi>a</mi></math></span>?</p></div>
<div id="tags"><span> series </span><span> sequences </span></div>
<div id="answer" answer_id="101"><p>Use <span class="math-container" id="13" visual_id="90"><math alttext="1/n^2"></math></span> &amp; compare.</p></div>
</body></html>"""


def test_thread_file_to_posts(tmp_path):
    p = tmp_path / "100_101.html"
    p.write_text(THREAD)
    t = read_thread_file(p)
    assert t.question.text() == "Sum of $1/n^2$ Why is $a<b$?"
    assert t.question.tags == ["series", "sequences"]
    assert (t.answer.post_id, t.answer.parent_id, t.answer.text()) == ("101", "100", "Use $1/n^2$ & compare.")
    assert [(f.formula_id, f.visual_id, f.type, f.formula) for f in t.formulas] == [
        ("11", "90", "title", "1/n^2"), ("12", "91", "question", "a<b"), ("13", "90", "answer", "1/n^2")]


def test_file_without_answer_block(tmp_path):
    p = tmp_path / "1_2.html"
    p.write_text("<html><body><div id='question'>x</div></body></html>")
    with pytest.raises(InputError, match="no question or answer block"):
        read_thread_file(p)


def test_empty_directory(tmp_path):
    with pytest.raises(InputError, match=r"no thread files \(\*\.html\)"):
        list(iter_thread_files(tmp_path))


@pytest.mark.realdata
@pytest.mark.slow
def test_real_pool_posts_and_formulas_match_derived_index(monkeypatch):
    d = real_path("arqmath", "collection_sample", "threads_all")
    # iter_thread_posts reads the files through iter_thread_files again: each file is
    # parsed once (by the first pass), the second pass gets the same ThreadFile back.
    parsed: dict = {}
    read = thread_html.read_thread_file

    def read_once(path):
        if path not in parsed:
            parsed[path] = read(path)
        return parsed[path]

    monkeypatch.setattr(thread_html, "read_thread_file", read_once)
    threads = list(iter_thread_files(d))
    assert len(threads) == len(parsed) == 3395
    posts = list(iter_thread_posts(d))
    assert sum(p.post_type == "answer" for p in posts) == 3395
    derived = read_formula_index(real_path("arqmath", "collection_sample", "derived",
                                           "formula_index_from_thread_html.tsv"))
    ours = {}  # a question shared by several files repeats its formulas
    for t in threads:
        for f in t.formulas:
            ours.setdefault(f.formula_id, set()).add(f)
    # the derived index was made from these 3,395 files: every one of its ids, no other
    assert len(ours) == len(derived) == 76970
    assert set(ours) == set(derived["formula_id"])
    # each id's row, as a tuple (a dict: 75,000 DataFrame.loc lookups took 30 s)
    rows = derived[["post_id", "type", "comment_id", "visual_id", "formula"]]
    by_id = dict(zip(derived["formula_id"], rows.itertuples(index=False, name=None),
                     strict=True))
    assert len(by_id) == len(derived)  # the ids are unique
    # A few ids occur twice in a file (e.g. in an answer and a comment); the derived index
    # kept one of them, so compare the ids that occur once.
    unique = [next(iter(fs)) for fs in ours.values() if len(fs) == 1]
    assert len(unique) == 75142
    agree = sum(by_id[f.formula_id] == (f.post_id, f.type, f.comment_id, f.visual_id, f.formula)
                for f in unique)
    assert agree == 74883  # 99.7%
