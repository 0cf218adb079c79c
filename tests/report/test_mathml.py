"""MathML rendering (mathir.report.mathml): formulas cannot inject markup, lengths,
sizes and nesting are bounded, huge formulas are shown shortened as source."""

from __future__ import annotations

import re

import lxml.html
import pytest

from mathir.report.mathml import MathRenderer, latex_to_mathml

HUGE = "x+" * 100_000 + "1"  # a 200 KB formula


def test_formulas_cannot_inject_markup():
    for hostile in (r"\text{<script>alert(1)</script>}", r"\text{<img src=x onerror=alert(1)>}",
                    r"x</math><script>alert(1)</script>", r"\mathrm{<a href='http://x'>y</a>}"):
        # converted and reduced to MathML, or (not well-formed) shown as escaped source
        markup = MathRenderer().formula(hostile)
        assert markup.startswith(("<math>", '<code class="tex"'))
        doc = lxml.html.fragment_fromstring(f"<div>{markup}</div>")
        assert not doc.xpath("//script | //img | //a | //*[@onerror] | //*[@href]"), markup
    assert latex_to_mathml(r"\text{<script>alert(1)</script>}") == \
        "<math><mtext>&lt;script&gt;alert(1)&lt;/script&gt;</mtext></math>"


def test_unconvertible_formulas_stay_as_their_source_and_are_counted():
    r = MathRenderer()
    html = r.text(r"Take $\frac{1}{$ and $x^2$.", kind="topic")
    assert '<code class="tex"' in html and "$\\frac{1}{$" in html and "<math>" in html
    assert r.stats["topic"].formulas == 2 and r.stats["topic"].unconverted == ["\\frac{1}{"]


def test_snippets_are_cut_between_formulas_never_inside():
    r = MathRenderer()
    text = "word " * 30 + "$\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}$" + " tail" * 100
    html = r.text(text, limit=160)
    assert html.endswith("…") and html.count("<math") == html.count("</math>") == 1
    assert len(r.text(text * 3, limit=50)) < 400


def _lengths(markup: str) -> list[tuple[str, str]]:
    return re.findall(r'\b(width|height|depth|lspace|rspace|minsize|maxsize|mathsize|'
                      r'linethickness|columnspacing|rowspacing)="([^"]*)"', markup)


def _em(value: str) -> float:
    """A MathML length in em (as the bounds count it)."""
    units = {"em": 1, "ex": 0.5, "px": 1 / 16, "pt": 1 / 12, "pc": 1, "in": 6, "cm": 6 / 2.54,
             "mm": 0.6 / 2.54, "mu": 1 / 18, "": 1}
    m = re.fullmatch(r"([+-]?(?:\d+\.?\d*|\.\d+))(em|ex|px|pt|pc|in|cm|mm|mu|)", value.strip())
    assert m, value
    return float(m.group(1)) * units[m.group(2)]


@pytest.mark.parametrize("latex", [r"\rule{1000em}{1000em}", r"\hspace{1000em}x", r"\kern-1000em x",
                                   r"\mspace{100000mu}", r"\hspace{99in}", r"\hskip 1e9em",
                                   r"\rule[100em]{1em}{2em}", r"a\mkern-999mu b"])
def test_formula_lengths_are_bounded(latex):
    from mathir.report.mathml import MAX_LENGTH_EM, MAX_NEGATIVE_EM

    markup = latex_to_mathml(latex)
    assert markup is not None
    for name, value in _lengths(markup):
        for part in value.split():
            if part.endswith(("width", "height", "depth")) or part.endswith("mathspace"):
                continue  # relative to the content, or a named (small) space
            assert -MAX_NEGATIVE_EM <= _em(part) <= MAX_LENGTH_EM, (latex, name, value)


def test_nested_sizes_do_not_compound_past_the_bound():
    from mathir.report.mathml import MAX_MATH_SCALE

    markup = latex_to_mathml(r"\Huge{\Huge{\Huge{\Huge{x}}}} \huge y")
    scales, largest = [1.0], 1.0  # the font scale of each open element
    for close, size in re.findall(r'<(/?)m[a-z]+(?: mathsize="([^"]*)")?[^>]*>', markup):
        if close:
            scales.pop()
        else:
            scales.append(scales[-1] * (_em(size) if size else 1.0))
            largest = max(largest, scales[-1])
    assert 2.49 <= largest <= MAX_MATH_SCALE and "2.49em" in markup
    # ordinary sizes are kept as latex2mathml writes them
    assert latex_to_mathml(r"\big( \quad x \qquad \Bigg)") == (
        '<math><mo minsize="1.2em" maxsize="1.2em">(</mo><mspace width="1em"></mspace><mi>x</mi>'
        '<mspace width="2em"></mspace><mo minsize="2.470em" maxsize="2.470em">)</mo></math>')


def test_huge_formulas_are_shown_shortened_as_source():
    from mathir.report.mathml import MAX_FORMULA_CHARS

    r = MathRenderer()
    markup = r.formula(HUGE)
    assert len(markup) < 1000 and "200,001 characters" in markup
    (code,) = lxml.html.fragment_fromstring(f"<div>{markup}</div>").xpath("./code")
    assert "tex" in code.get("class").split() and code.text_content().startswith("$x+x+")
    assert latex_to_mathml(HUGE) is None
    assert r.stats["result"].shortened == 1 and r.stats["result"].formulas == 1
    # just below the bound, a formula is converted as usual
    assert r.formula("x+" * (MAX_FORMULA_CHARS // 2 - 1) + "1").startswith("<math>")
    # in a text too
    assert len(r.text(f"see ${HUGE}$ here", limit=400)) < 1000


def test_entities_are_unescaped_exactly_once():
    """The readers unescape the HTML of a post; the explorer shows the LaTeX as it is."""
    from mathir.readers.html_text import html_to_text

    post = '<p>a <span class="math-container">$\\text{&amp;lt;b&amp;gt;} &lt; 1$</span></p>'
    text = html_to_text(post)
    assert text == r"a $\text{&lt;b&gt;} < 1$"
    shown = lxml.html.fragment_fromstring(f"<div>{MathRenderer().text(text)}</div>")
    assert shown.text_content() == "a &lt;b&gt;<1"
    assert latex_to_mathml(r"\text{&lt;b&gt;}") == "<math><mtext>&amp;lt;b&amp;gt;</mtext></math>"
    assert latex_to_mathml(r"\text{&#x3C;}") == "<math><mtext>&amp;#x3C;</mtext></math>"
    # latex2mathml's own character references are decoded (once)
    assert latex_to_mathml(r"a < \alpha") == "<math><mi>a</mi><mo>&lt;</mo><mi>α</mi></math>"


def test_latexml_arrays_with_an_empty_position_argument():
    # LaTeXML writes \begin{array}[]{ll}: the column spec is not text
    for position in ("[]", "[t]", "[ c ]"):
        markup = latex_to_mathml(rf"\begin{{array}}{position}{{ll}} a & b \\ c & d \end{{array}}")
        assert markup == latex_to_mathml(r"\begin{array}{ll} a & b \\ c & d \end{array}")
        assert markup.count("<mtd") == 4 and "<mi>l</mi>" not in markup


def _nested_matrices(n: int) -> str:
    return r"\begin{matrix}" * n + "x" + r"\end{matrix}" * n


def _at_depth(frames: int, f):
    return _at_depth(frames - 1, f) if frames else f()


@pytest.mark.parametrize("n", [110, 300, 2000])
def test_deeply_nested_formulas_are_shown_as_source_never_a_traceback(n):
    r = MathRenderer()
    # called deep in a stack, as `mathir view` calls it (pandas, the views, the page)
    markup = _at_depth(400, lambda: r.formula(_nested_matrices(n)))
    assert markup.startswith('<code class="tex')


def test_nesting_is_bounded_below_the_size_bound():
    r = MathRenderer()
    markup = r.formula(r"\sqrt{" * 250 + "x" + "}" * 250)  # 1,751 characters, 250 roots deep
    assert markup.startswith('<code class="tex"') and "nested deeper than" in markup
    assert r.stats["result"].unconverted
    assert latex_to_mathml(r"\sqrt{" * 20 + "x" + "}" * 20).count("<msqrt>") == 20


def test_the_serialiser_is_iterative(monkeypatch):
    """Without the bounds, 110 nested matrices (about 330 MathML elements deep) are
    written out, deep in a stack, without a RecursionError."""
    from mathir.report import mathml

    monkeypatch.setattr(mathml, "MAX_FORMULA_CHARS", 10**6)
    monkeypatch.setattr(mathml, "MAX_MATHML_DEPTH", 10**6)
    mathml._convert.cache_clear()
    try:
        markup = _at_depth(300, lambda: mathml.latex_to_mathml(_nested_matrices(110)))
    finally:
        mathml._convert.cache_clear()
    assert markup.count("<mtable>") == 110


def test_rows_are_unwrapped_to_one_child_each():
    # an mrow that groups several elements stays a row where a script has one slot
    assert latex_to_mathml("x^{{ab}}") == \
        "<math><msup><mi>x</mi><mrow><mi>a</mi><mi>b</mi></mrow></msup></math>"
    assert latex_to_mathml(r"\frac{{a b}}{c}") == \
        "<math><mfrac><mrow><mi>a</mi><mi>b</mi></mrow><mi>c</mi></mfrac></math>"
