"""Derivations (template + alignment) and their evaluation (Upadhyay & Chang 2017).

* :func:`template_equivalences` is TEMPLEQUIV: every 1-to-1 renaming of slots under
  which two templates give the same solutions for R random coefficient assignments.
* :func:`alignments_equivalent` is ALIGNEQUIV, with EquivTNum classes.
* :func:`derivation_correct` is Algorithm 1; :func:`solution_correct` and
  :func:`reference_derivation` give solution and equation accuracy.
* :func:`reconcile_templates` groups equivalent templates (Table 2 of the paper).

Written by hand: the paper's algorithm has no public implementation.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mathir.answer_checking.templates import Template, TemplateError
from mathir.readers.word_problems import TextNumber, WordProblem, textual_numbers

ROUNDS = 10


@lru_cache(maxsize=4096)
def _template(equations: tuple[str, ...]) -> Template:
    return Template(equations)


def template(equations: tuple[str, ...]) -> Template:
    """The compiled :class:`Template` of ``equations`` (cached).

    A template outside the template grammar raises :class:`TemplateError`.

    >>> template(("m + n = a",)).slots
    ('a',)
    """
    try:
        hash(equations)
    except TypeError:  # e.g. a list inside the tuple (from JSON): not a list of strings
        raise TemplateError("a template is a list of equation strings") from None
    return _template(equations)


def problem_template(problem: WordProblem) -> Template:
    """The template of ``problem``; a TemplateError names the problem.

    >>> p = WordProblem("7", "x", (), (), ("m = a.b",))
    >>> problem_template(p)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    TemplateError: problem 7: template equation 1 'm = a.b': character '.' at position 5 ...
    """
    try:
        return template(tuple(problem.template))
    except TemplateError as e:
        raise TemplateError(f"problem {problem.id}: {e.message}") from None


@dataclass(frozen=True)
class Derivation:
    """A template and the textual number aligned to each of its slots."""

    template: Template
    alignment: Mapping[str, TextNumber]

    def values(self) -> dict[str, float]:
        return {c: q.value for c, q in self.alignment.items()}

    def equations(self) -> tuple[str, ...]:
        return self.template.instantiate(self.values())

    def solve(self) -> np.ndarray:
        return self.template.solve(self.values())


def gold_derivation(problem: WordProblem) -> Derivation:
    """The annotated derivation of ``problem``."""
    return Derivation(problem_template(problem), dict(problem.alignment))


def _same_solutions(s1: np.ndarray, s2: np.ndarray, rel: float = 1e-6) -> np.ndarray:
    """Row-wise: equal multisets of values (unknowns may be renamed), NaN never equal."""
    a, b = np.sort(s1, axis=-1), np.sort(s2, axis=-1)
    close = np.abs(a - b) <= rel * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return close.all(axis=-1)


def template_equivalences(t1: Template, t2: Template, rounds: int = ROUNDS,
                          seed: int = 0) -> list[dict[str, str]]:
    """TEMPLEQUIV: the slot renamings ``t1 -> t2`` under which the templates agree.

    Each renaming must give the same solutions (as multisets: unknowns may be renamed
    too) for ``rounds`` random coefficient vectors. Empty when not equivalent.

    >>> t1 = Template(["m = a + b * n", "m = c - n"])
    >>> t2 = Template(["m + n = a", "m - c * n = b"])
    >>> template_equivalences(t1, t2)
    [{'a': 'b', 'b': 'c', 'c': 'a'}]
    """
    k = len(t1.slots)
    if k != len(t2.slots) or len(t1.unknowns) != len(t2.unknowns):
        return []
    rng = np.random.default_rng(seed)
    v = rng.uniform(1.0, 100.0, size=(rounds, k))
    s1 = t1.solve_batch(v)
    if np.isnan(s1).any():  # degenerate draw: try again with other values
        v = rng.uniform(1.0, 100.0, size=(rounds, k))
        s1 = t1.solve_batch(v)
    perms = list(itertools.permutations(range(k)))
    w = np.empty((len(perms), rounds, k))
    for p, perm in enumerate(perms):  # slot i of t1 -> slot perm[i] of t2
        w[p][:, list(perm)] = v
    s2 = t2.solve_batch(w.reshape(-1, k)).reshape(len(perms), rounds, -1)
    ok = _same_solutions(np.broadcast_to(s1, s2.shape), s2).all(axis=1)
    return [{t1.slots[i]: t2.slots[perm[i]] for i in range(k)}
            for p, perm in enumerate(perms) if ok[p]]


def _classes(equiv: Iterable[Iterable[TextNumber]]) -> dict[tuple[int, int], frozenset]:
    out: dict[tuple[int, int], frozenset] = {}
    for cls in equiv:
        positions = frozenset(q.position for q in cls)
        for pos in positions:
            out[pos] = out.get(pos, frozenset()) | positions
    return out


def alignments_equivalent(renamings: Sequence[Mapping[str, str]],
                          a1: Mapping[str, TextNumber], a2: Mapping[str, TextNumber],
                          equiv: Iterable[Iterable[TextNumber]] = ()) -> bool:
    """ALIGNEQUIV: under one renaming, every slot aligns to the same textual number
    (or one in its EquivTNum class).

    >>> q = [TextNumber(0, i, v) for i, v in enumerate([5, 15, 5])]
    >>> alignments_equivalent([{"a": "a"}], {"a": q[0]}, {"a": q[2]}, equiv=[[q[0], q[2]]])
    True
    >>> alignments_equivalent([{"a": "a"}], {"a": q[0]}, {"a": q[2]})
    False
    """
    classes = _classes(equiv)
    for gamma in renamings:
        if all(c in a1 and gamma[c] in a2 and (
                a2[gamma[c]].position == a1[c].position
                or a2[gamma[c]].position in classes.get(a1[c].position, ()))
               for c in gamma):
            return True
    return False


def derivation_correct(predicted: Derivation, gold: Derivation,
                       equiv: Iterable[Iterable[TextNumber]] = (),
                       rounds: int = ROUNDS) -> bool:
    """Algorithm 1: equivalent templates and equivalent alignments.

    >>> q = [TextNumber(0, i, v) for i, v in enumerate([9, 15, 12])]
    >>> gold = Derivation(Template(["a * m + b * m = b * c - a * c"]),
    ...                   {"a": q[0], "b": q[2], "c": q[1]})
    >>> pred = Derivation(Template(["a * (c - m) = b * (c + m)"]),
    ...                   {"a": q[2], "b": q[0], "c": q[1]})
    >>> derivation_correct(pred, gold)
    True
    """
    if len(predicted.template.slots) != len(gold.template.slots):
        return False
    renamings = template_equivalences(predicted.template, gold.template, rounds)
    return bool(renamings) and alignments_equivalent(renamings, predicted.alignment,
                                                     gold.alignment, equiv)


def solution_correct(predicted: Sequence[float], gold: Sequence[float],
                     rel: float = 1e-4) -> bool:
    """Every gold number appears in the predicted solution (order ignored).

    Non-finite numbers match nothing: a predicted one is dropped, and a gold one (a
    ``1e400`` read as a float is inf) fails, where ``|x - inf| <= rel * inf`` would
    let any number match it.

    >>> solution_correct([22.0, 12.0], [12, 22]), solution_correct([12.0], [12, 22])
    (True, False)
    """
    free = [float(x) for x in predicted if np.isfinite(x)]
    for g in gold:
        if not np.isfinite(g):
            return False
        hit = next((i for i, x in enumerate(free)
                    if abs(x - g) <= rel * max(1.0, abs(g), abs(x))), None)
        if hit is None:
            return False
        del free[hit]
    return True


def reference_derivation(problem: WordProblem) -> Derivation | None:
    """The approximate reference derivation of *equation accuracy*.

    Kushman et al.'s implementation takes the first derivation that matches the
    equations: here the gold template with each slot aligned to the first textual
    number (in text order) of the slot's value, ignoring EquivTNum. None when a value
    has no textual number.
    """
    numbers = textual_numbers(problem.text)
    alignment = {}
    for c, q in problem.alignment.items():
        hit = next((n for n in numbers if abs(n.value - q.value) <= 1e-4 * max(1, abs(q.value))),
                   None)
        alignment[c] = hit or q
    return Derivation(problem_template(problem), alignment)


def reconcile_templates(templates: Iterable[tuple[str, ...]], rounds: int = ROUNDS,
                        ) -> list[list[tuple[str, ...]]]:
    """Group templates into TEMPLEQUIV classes (first member = representative).

    >>> classes = reconcile_templates([("m = a + b * n", "m = c - n"),
    ...                                ("m + n = a", "m - c * n = b"), ("m = a * b",)])
    >>> [len(c) for c in classes]
    [2, 1]
    """
    classes: list[list[tuple[str, ...]]] = []
    by_shape: dict[tuple[int, int, int], list[int]] = {}
    for eqs in dict.fromkeys(tuple(t) for t in templates):
        t = template(eqs)
        shape = (len(t.slots), len(t.unknowns), len(t.equations))
        for ci in by_shape.get(shape, []):
            if template_equivalences(t, template(classes[ci][0]), rounds):
                classes[ci].append(eqs)
                break
        else:
            by_shape.setdefault(shape, []).append(len(classes))
            classes.append([eqs])
    return classes
