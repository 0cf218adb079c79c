from mathir.readers.html_text import extract_formulas, html_to_text, strip_dollars


def test_formulas_kept_as_latex_and_html_removed():
    body = ('<p>Prove <span class="math-container" id="12">$a &lt; b$</span> if '
            '<span class="math-container" id="13">$$\\sum_{i} x_i &gt; 0$$</span>.</p>'
            '<ol><li>one</li><li>two &amp; three</li></ol>')
    assert html_to_text(body) == "Prove $a < b$ if $\\sum_{i} x_i > 0$. one two & three"
    assert extract_formulas(body) == [("12", "a < b"), ("13", "\\sum_{i} x_i > 0")]


def test_latex_with_angle_brackets_is_not_taken_for_tags():
    body = '<span class="math-container" id="1">$a&lt;b$</span> x <span class="math-container" id="2">$c&gt;d$</span>'
    assert html_to_text(body) == "$a<b$ x $c>d$"
    assert html_to_text(body, math_words=True) == "a less than b x c greater than d"


def test_spans_without_dollars_and_without_ids():
    assert extract_formulas('<span class="math-container">\\sqrt{2}</span>') == [("", "\\sqrt{2}")]
    assert html_to_text('<span class="math-container" id="3">\\sqrt{2}</span>') == "$\\sqrt{2}$"


def test_strip_dollars():
    assert strip_dollars(" $$ x $$ ") == "x"
    assert strip_dollars("$x$") == "x"
    assert strip_dollars("x") == "x"
