"""Symbol-pair tuples, PISA-safe tokens and the LaTeX fallback."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mathir.indexing.formula_tuples import (
    FormulaTokenizer,
    encode_token,
    symbol_pairs,
    tuple_tokens,
)
from mathir.indexing.slt import slt_from_latex


def test_pairs_of_x_squared_plus_one_window_2():
    pairs = {(t.first, t.second, t.path) for t in symbol_pairs(slt_from_latex("x^2+1"))}
    assert pairs == {
        ("V!x", "N!2", "a"), ("V!x", "+", "n"), ("V!x", "N!1", "nn"),
        ("+", "N!1", "n"), ("N!2", "0!", "n"), ("N!1", "0!", "n"),
    }


def test_window_and_locations():
    pairs = symbol_pairs(slt_from_latex(r"\frac{a+b}{c}"), window=1)
    assert ("O!divide", "V!a", "o", "-") in pairs
    assert ("V!a", "+", "n", "o") in pairs
    assert all(len(t.path) == 1 for t in pairs)


def test_tokens_distinguish_case_and_symbols():
    a, b = tuple_tokens(slt_from_latex("x^2")), tuple_tokens(slt_from_latex("X^2"))
    assert set(a) != set(b)
    assert tuple_tokens(slt_from_latex("x^2")) != tuple_tokens(slt_from_latex("x_2"))


def test_abstract_tuples_match_renamed_variables():
    shared = encode_token("V!|N!|a|*")
    assert shared in tuple_tokens(slt_from_latex("x^2"))
    assert shared in tuple_tokens(slt_from_latex("t^3"))
    assert shared not in tuple_tokens(slt_from_latex("x^2"), abstract=False)


@given(st.text(max_size=30))
def test_encoded_tokens_are_lowercase_alphanumeric_and_injective(text):
    tok = encode_token(text)
    assert re.fullmatch(r"[a-z0-9]*", tok)
    assert encode_token(text + "!") != tok


@given(st.text(max_size=12), st.text(max_size=12))
def test_encoding_is_injective(a, b):
    if a != b:
        assert encode_token(a) != encode_token(b)


def test_fallback_is_counted_and_gives_latex_words():
    tok = FormulaTokenizer()
    good = tok.tokens(r"\sqrt{x}")
    bad = tok.tokens(r"\frac{a}{")
    assert tok.formulas == 2 and tok.fallbacks == 1 and tok.fallback_rate == 0.5
    assert set(bad) >= {"backslash", "frac", "a"}
    assert not set(bad) & set(good)


def test_official_mathml_is_used_when_given():
    tok = FormulaTokenizer()
    from_mathml = tok.tokens("ignored", mathml="<math><msup><mi>x</mi><mn>2</mn></msup></math>")
    assert from_mathml == tok.tokens("x^2")


def _tokens_by_definition(root, window=2, location=False, abstract=True, symbols=True):
    """tuple_tokens' docstring, written plainly from symbol_pairs (its fast loop must give
    the same tokens, counts and order)."""
    from collections import Counter

    from mathir.indexing.formula_tuples import encode_token

    sep, out = encode_token("|"), Counter()
    for t in symbol_pairs(root, window):
        token = sep.join(encode_token(x) for x in (t.first, t.second, t.path))
        out[token + sep + encode_token(t.location) if location else token] += 1
        if abstract:
            a, b = (x[:2] if x[:2] in ("V!", "N!") else x for x in (t.first, t.second))
            if (a, b) != (t.first, t.second):
                out[sep.join(encode_token(x) for x in (a, b, t.path, "*"))] += 1
    if symbols:
        for _, node in root.walk():
            out[encode_token(node.label)] += 1
    return out


@pytest.mark.parametrize("options", [{}, {"location": True}, {"abstract": False},
                                     {"symbols": False}, {"window": 1},
                                     {"window": 3, "location": True}])
def test_tuple_tokens_are_their_definition_on_every_sample_formula(sample, options):
    from mathir.readers.formula_tsv import iter_formula_index

    latex = {r.formula for r in iter_formula_index(sample.formulas)}
    checked = 0
    for text in sorted(latex):
        try:
            root = slt_from_latex(text)
        except Exception:  # noqa: BLE001 - a formula that has no SLT has no tokens either
            continue
        got = tuple_tokens(root, **options)
        assert list(got.items()) == list(_tokens_by_definition(root, **options).items()), text
        checked += 1
    assert checked > 100
