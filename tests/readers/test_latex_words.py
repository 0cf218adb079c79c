from mathir.readers.latex_words import LATEX_SYMBOL_WORDS, latex_to_words, math_to_words


def test_every_symbol_becomes_its_word():
    for sym, word in LATEX_SYMBOL_WORDS.items():
        assert latex_to_words(f"a{sym}b") == f"a {word} b"


def test_double_backslash_before_backslash():
    assert latex_to_words(r"a \\ b \alpha") == "a double backslash b backslash alpha"


def test_baseline_sequential_replace_equivalence():
    # The baseline applies str.replace in dict order; our one-pass table must agree.
    latex = r"\frac{a+b}{c} \leq |x|^{2}, \\ f'(x)=\sqrt[3]{y}; 50\% ~ `@#!?&*"
    expected = latex
    for sym, word in LATEX_SYMBOL_WORDS.items():
        expected = expected.replace(sym, " " + word + " ")
    assert latex_to_words(latex) == " ".join(expected.split())


def test_math_to_words_only_touches_formulas():
    assert math_to_words("don't stop: $x-1$ and $$y$$") == "don't stop: x minus 1 and y"
