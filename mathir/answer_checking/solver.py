"""A template-retrieval solver for algebra word problems (the core; the PyTerrier
transformers are in :mod:`mathir.pipelines.word_problems`).

For a problem, the templates of retrieved training problems are candidates. Each
slot of a template was aligned, in its training problem, to a textual number with a
context (neighbouring words, position among the numbers, surface form). The
problem's own textual numbers are aligned to slots by how well their contexts match
(the best few per slot, one-to-one), each alignment is solved, and the derivation
scoring best on retrieval score, context match, solution sanity (integer,
non-negative, non-zero), number usage (which textual numbers are left unused, against
how often numbers written that way are used in the training problems) and agreement
with the other retrieved problems is the answer. The scoring weights are constants
chosen on the DRAW-1K dev split, or are learned with :meth:`TemplateSolver.fit`
(a logistic regression over :data:`FEATURES` on the training problems).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mathir.answer_checking.derivations import (
    Derivation,
    alignments_equivalent,
    problem_template,
    reconcile_templates,
    template,
    template_equivalences,
)
from mathir.answer_checking.templates import TemplateError
from mathir.readers.word_problems import TextNumber, WordProblem, sentences, textual_numbers

WINDOW = 3
#: Features of a candidate derivation (columns of :meth:`TemplateSolver.featurize`).
FEATURES = ("retrieval", "context_mean", "context_min", "support", "integer", "negative",
            "cents", "log_size", "unused", "same_count", "neighbour_rank", "order_agree",
            "value_match", "words", "left", "right", "surface", "rank_distance", "usage",
            "zero", "vote", "bias")
PER_SLOT = 4
_WORD = re.compile(r"[a-z]+")
_STOP = frozenset("the a an of and is are was to in for by if his her its their it on at as "
                  "be this that what how many much".split())


@dataclass(frozen=True)
class NumberContext:
    """What a textual number looks like in its problem."""

    number: TextNumber
    surface: str            # the token, lowercased ("twice", "12")
    words: frozenset        # content words within WINDOW tokens
    left: str               # the previous word
    right: str              # the next word
    rank: float             # position among the problem's numbers, 0..1


def _contexts(text: str, numbers: Sequence[TextNumber]) -> dict[tuple[int, int], NumberContext]:
    toks = sentences(text)
    flat = [(s, i, t.lower()) for s, sent in enumerate(toks) for i, t in enumerate(sent)]
    index = {(s, i): k for k, (s, i, _) in enumerate(flat)}
    order = sorted(numbers, key=lambda q: q.position)
    out = {}
    for r, q in enumerate(order):
        k = index[q.position]
        near = [w for _, _, w in flat[max(0, k - WINDOW):k] + flat[k + 1:k + 1 + WINDOW]]
        words = frozenset(w for w in near if _WORD.fullmatch(w) and w not in _STOP)
        left = next((w for _, _, w in reversed(flat[max(0, k - 2):k]) if _WORD.fullmatch(w)), "")
        right = next((w for _, _, w in flat[k + 1:k + 3] if _WORD.fullmatch(w)), "")
        surface = flat[k][2]
        out[q.position] = NumberContext(q, surface if not re.match(r"[\d$.]", surface) else "#",
                                        words, left, right, r / max(1, len(order) - 1))
    return out


_PARTS = np.array([2.0, 0.6, 0.6, 1.0, -0.8])  # weights of _match_parts in _match


def _match_parts(a: NumberContext, b: NumberContext) -> tuple[float, ...]:
    """Word overlap, same left word, same right word, same surface, rank distance."""
    inter = len(a.words & b.words)
    union = len(a.words | b.words) or 1
    return (inter / union, float(a.left == b.left and a.left != ""),
            float(a.right == b.right and a.right != ""), float(a.surface == b.surface),
            abs(a.rank - b.rank))


def _match(a: NumberContext, b: NumberContext) -> float:
    """Context similarity of two textual numbers."""
    return float(np.dot(_PARTS, _match_parts(a, b)))


@dataclass
class Candidate:
    """A scored derivation for a problem."""

    derivation: Derivation
    solution: np.ndarray
    score: float
    source: str


def _solution_key(solution: np.ndarray) -> tuple[float, ...]:
    """The solution as a sorted tuple, rounded so that equal solutions compare equal."""
    return tuple(sorted(np.round(solution, 4).tolist()))


def _votes(keys: Sequence[tuple[float, ...]], sources: Sequence[str],
           feats: np.ndarray) -> np.ndarray:
    """For each candidate, the share of retrieved problems (weighted by their retrieval
    score) whose best-matching alignment (highest context_mean) gives the same solution."""
    retrieval, context = FEATURES.index("retrieval"), FEATURES.index("context_mean")
    best: dict[str, int] = {}
    for k, pid in enumerate(sources):
        if pid not in best or feats[k, context] > feats[best[pid], context]:
            best[pid] = k
    votes: dict[tuple[float, ...], float] = {}
    for k in best.values():
        votes[keys[k]] = votes.get(keys[k], 0.0) + feats[k, retrieval]
    total = sum(feats[k, retrieval] for k in best.values()) or 1.0
    return np.array([votes.get(key, 0.0) / total for key in keys])


class TemplateSolver:
    """Solve problems with the templates of retrieved training problems.

    >>> from mathir.samples import word_problems_sample
    >>> from mathir.readers.word_problems import iter_derivation_problems
    >>> train = list(iter_derivation_problems(word_problems_sample().problems))
    >>> solver = TemplateSolver(train)
    >>> best = solver.solve("Tickets cost 7 dollars for adults and 3 dollars for children . "
    ...                     "30 tickets sold for 130 dollars . How many adult tickets ?",
    ...                     [(p.id, 1.0) for p in train[:1]])
    >>> sorted(best.solution.round(3).tolist())
    [10.0, 20.0]
    """

    def __init__(self, problems: Sequence[WordProblem], per_slot: int = PER_SLOT,
                 weights: dict[str, float] | None = None):
        self.problems = {p.id: p for p in problems if p.template and p.alignment}
        for p in self.problems.values():  # TemplateError (an InputError) naming the problem
            missing = set(problem_template(p).slots) - set(p.alignment)
            if missing:
                raise TemplateError(f"problem {p.id}: template slot(s) {sorted(missing)} "
                                    "have no alignment")
        self.per_slot = per_slot
        self.weights = {"retrieval": 1.0, "context": 1.0, "integer": 1.0, "negative": 2.0,
                        "unused": 0.6, "support": 4.0, **(weights or {})}
        #: learned weights over FEATURES (see :meth:`fit`); None: the hand weights above
        self.coef: np.ndarray | None = None
        self._train_ctx = {pid: _contexts(p.text, list(p.alignment.values()))
                           for pid, p in self.problems.items()}
        self._train_count = {pid: len(textual_numbers(p.text)) for pid, p in self.problems.items()}
        # How often a textual number of each surface form ("#" for digits, "two", "twice")
        # is aligned to a slot: digits nearly always are, "one" and "two" rarely.
        self._usage_own = {pid: self._usage_counts(p) for pid, p in self.problems.items()}
        self._usage: dict[str, np.ndarray] = {}
        for counts in self._usage_own.values():
            for form, c in counts.items():
                self._usage[form] = self._usage.get(form, np.zeros(2)) + c
        # Equivalent templates written differently share their support (TEMPLEQUIV).
        self._canonical = {eqs: cls[0] for cls in reconcile_templates(
            p.template for p in self.problems.values()) for eqs in cls}

    def __repr__(self) -> str:
        return f"TemplateSolver({len(self.problems)} training problems, per_slot={self.per_slot})"

    @staticmethod
    def _usage_counts(p: WordProblem) -> dict[str, np.ndarray]:
        """Per surface form, (textual numbers aligned to a slot, textual numbers)."""
        numbers = textual_numbers(p.text)
        used = {q.position for q in p.alignment.values()}
        out: dict[str, np.ndarray] = {}
        for position, ctx in _contexts(p.text, numbers).items():
            out[ctx.surface] = out.get(ctx.surface, np.zeros(2)) + (position in used, 1)
        return out

    def _usage_logp(self, forms: Sequence[str], exclude: str | None) -> np.ndarray:
        """Log-probabilities (numbers x [unused, used]) that a number of each surface form
        is used, Laplace-smoothed; a training problem's own counts are left out."""
        own = self._usage_own.get(exclude, {}) if exclude else {}
        out = np.zeros((len(forms), 2))
        for i, form in enumerate(forms):
            used, total = self._usage.get(form, np.zeros(2)) - own.get(form, np.zeros(2))
            p = (used + 1.0) / (total + 2.0)
            out[i] = np.log1p(-p), np.log(p)
        return out

    def _hand_weights(self) -> np.ndarray:
        w = self.weights
        named = {"retrieval": w["retrieval"], "context_mean": w["context"],
                 "support": w["support"], "integer": w["integer"], "negative": -w["negative"],
                 "unused": -w["unused"]}
        return np.array([named.get(f, 0.0) for f in FEATURES])

    def candidates(self, text: str, neighbours: Sequence[tuple[str, float]],
                   exclude: str | None = None) -> list[Candidate]:
        """Every candidate derivation, scored (``exclude``: a training id to skip)."""
        cands, feats = self.featurize(text, neighbours, exclude)
        if not cands:
            return []
        coef = self.coef if self.coef is not None else self._hand_weights()
        for c, score in zip(cands, feats @ coef, strict=True):
            c.score = float(score)
        return cands

    def featurize(self, text: str, neighbours: Sequence[tuple[str, float]],
                  exclude: str | None = None) -> tuple[list[Candidate], np.ndarray]:
        """Candidates and their feature rows (columns: :data:`FEATURES`)."""
        numbers = textual_numbers(text)
        if not numbers:
            return [], np.zeros((0, len(FEATURES)))
        neighbours = [(pid, r) for pid, r in neighbours if pid in self.problems and pid != exclude]
        ctx = _contexts(text, numbers)
        test_ctx = [ctx[q.position] for q in numbers]
        usage_logp = self._usage_logp([c.surface for c in test_ctx], exclude)
        top = max((r for _, r in neighbours), default=1.0) or 1.0
        support: dict[tuple[str, ...], float] = {}
        for pid, rscore in neighbours:
            key = self._canonical[self.problems[pid].template]
            support[key] = support.get(key, 0.0) + rscore
        total = sum(support.values()) or 1.0
        cands, blocks = [], []
        for rank, (pid, rscore) in enumerate(neighbours):
            p = self.problems[pid]
            t = template(p.template)
            slots = t.slots
            if len(slots) > len(numbers):
                continue
            tctx = self._train_ctx[pid]
            parts = np.array([[_match_parts(tctx[p.alignment[c].position], x)
                               for x in test_ctx] for c in slots])  # slots x numbers x 5
            sim = parts @ _PARTS
            choices = [np.argsort(-sim[i], kind="stable")[:self.per_slot]
                       for i in range(len(slots))]
            combos = [c for c in itertools.product(*choices) if len(set(c)) == len(c)]
            if not combos:
                continue
            idx = np.array(combos)
            values = np.array([q.value for q in numbers])[idx]
            sols = t.solve_batch(values)
            ok = ~np.isnan(sols).any(axis=1)
            if not ok.any():
                continue
            idx, sols = idx[ok], sols[ok]
            slot_sim = sim[np.arange(len(slots)), idx]
            slot_parts = parts[np.arange(len(slots)), idx].mean(axis=1)  # candidates x 5
            with np.errstate(invalid="ignore", over="ignore"):
                integer = np.isclose(sols, np.round(sols), atol=1e-6).all(axis=1)
                negative = (sols < -1e-9).any(axis=1)
                short = np.isclose(sols * 100, np.round(sols * 100), atol=1e-6).all(axis=1)
                size = np.log10(np.abs(sols).max(axis=1) + 1.0)
            n = len(idx)
            train_pos = [p.alignment[c].position for c in slots]
            pairs = [(i, j) for i in range(len(slots)) for j in range(i + 1, len(slots))]
            if pairs:  # do the numbers come in the same order as in the training problem?
                order = np.mean([(idx[:, i] < idx[:, j]) == (train_pos[i] < train_pos[j])
                                 for i, j in pairs], axis=0)
            else:
                order = np.ones(n)
            train_values = np.array([p.alignment[c].value for c in slots])
            value_match = np.isclose(values[ok], train_values).mean(axis=1)
            used = np.zeros((n, len(numbers)), dtype=int)
            used[np.arange(n)[:, None], idx] = 1
            # log-likelihood of which numbers are used and which are not
            usage = usage_logp[np.arange(len(numbers)), used].sum(axis=1)
            zero = (np.abs(sols) < 1e-9).any(axis=1)  # an unknown of 0 is rarely the answer
            block = np.column_stack([
                np.full(n, rscore / top), slot_sim.mean(axis=1), slot_sim.min(axis=1),
                np.full(n, support[self._canonical[p.template]] / total), integer, negative,
                short, size, np.full(n, (len(numbers) - len(slots)) / len(numbers)),
                np.full(n, float(self._train_count[pid] == len(numbers))),
                np.full(n, 1.0 / (1 + rank)), order, value_match, slot_parts, usage, zero,
                np.zeros(n), np.ones(n)])  # vote: filled in once every candidate is known
            blocks.append(block)
            for k in range(n):
                alignment = {c: numbers[idx[k][i]] for i, c in enumerate(slots)}
                cands.append(Candidate(Derivation(t, alignment), sols[k], 0.0, pid))
        feats = np.vstack(blocks) if blocks else np.zeros((0, len(FEATURES)))
        if cands:
            feats[:, FEATURES.index("vote")] = _votes(
                [_solution_key(c.solution) for c in cands], [c.source for c in cands], feats)
        return cands, feats

    def fit(self, neighbours_of: Mapping[str, Sequence[tuple[str, float]]],
            max_per_problem: int = 200, seed: int = 0,
            label: str = "derivation") -> TemplateSolver:
        """Learn the feature weights on the training problems themselves.

        ``neighbours_of`` gives, for each training id, its retrieved training problems
        (the problem itself is skipped: leave-one-out). A candidate is positive when its
        derivation is equivalent to the annotated one (``label="derivation"``, the
        paper's TD setting) or when its solution is correct (``label="solution"``); a
        logistic regression on differences of features (a correct minus an incorrect
        candidate of the same problem, ``max_per_problem`` pairs) gives the weights.
        """
        from sklearn.linear_model import LogisticRegression

        from mathir.answer_checking.derivations import solution_correct

        rng = np.random.default_rng(seed)
        xs, ys = [], []
        for pid, neighbours in neighbours_of.items():
            p = self.problems.get(pid)
            if p is None:
                continue
            cands, feats = self.featurize(p.text, neighbours, exclude=pid)
            if not cands:
                continue
            if label == "solution":
                y = np.array([solution_correct(c.solution, p.solutions) for c in cands])
            else:
                gold = Derivation(template(p.template), dict(p.alignment))
                renamings: dict[tuple[str, ...], list] = {}
                y = np.zeros(len(cands), dtype=bool)
                for k, c in enumerate(cands):
                    eqs = c.derivation.template.equations
                    if eqs not in renamings:
                        renamings[eqs] = template_equivalences(c.derivation.template,
                                                               gold.template)
                    y[k] = bool(renamings[eqs]) and alignments_equivalent(
                        renamings[eqs], c.derivation.alignment, gold.alignment, p.equiv)
            if not y.any():
                continue
            if y.all():
                continue
            # pairwise (RankNet-style) examples: a correct minus an incorrect candidate
            pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
            m = min(max_per_problem, len(pos) * len(neg))
            a, b = rng.choice(pos, m), rng.choice(neg, m)
            diff = feats[a] - feats[b]
            xs.append(np.vstack([diff, -diff]))
            ys.append(np.concatenate([np.ones(m, bool), np.zeros(m, bool)]))
        if not xs:
            return self
        model = LogisticRegression(C=1.0, max_iter=2000, fit_intercept=False)
        model.fit(np.vstack(xs), np.concatenate(ys))
        self.coef = model.coef_[0]
        return self

    def solve(self, text: str, neighbours: Sequence[tuple[str, float]]) -> Candidate | None:
        """The best derivation for ``text`` given ``(training id, retrieval score)``s."""
        cands = self.candidates(text, neighbours)
        return max(cands, key=lambda c: c.score) if cands else None
