"""ARQMath-3 Task 3 references: the relevant answers an answer is compared with (LO and
CS, :mod:`mathir.evaluation.open_answers`), their texts normalised as the organisers did,
and the same-team ablation.

References are the relevant (H+M) judged answers, from Task 3 runs and from the answers
of Task 1 runs of at most 1,200 characters; when scoring a run, references contributed
only by runs of the same team are dropped (a team is the part of the run name before
the first ``-``, unless a mapping says otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import pandas as pd

#: Task 1 answers longer than this (characters) are no references
MAX_REFERENCE_CHARS = 1200

# --- text normalisation ------------------------------------------------------------

# A formula: $...$ or $$...$$, the dollar not escaped by a backslash. We keep the
# character before the dollar; the organisers' regular expression swallowed it (and
# the last character of each formula), which we take to be unintended.
_DOLLAR_MATH = re.compile(r"(?<!\\)(\$\$?)(.+?)(?<!\\)\1", re.S)
_SPACES = re.compile(r"\s+")


def normalize_answer(text: str) -> str:
    """An answer (formulas between ``$``) as the organisers compare it.

    Formulas become `` [MATH] latex [/MATH] ``; whitespace collapses; adjacent formulas
    merge; as in their code, a trailing `` [/MATH]`` is dropped and a leading formula
    keeps its space.

    >>> normalize_answer("Let  $x$ $= 2$\\n and $y$.")
    'Let [MATH] x = 2 [/MATH] and [MATH] y [/MATH] .'
    >>> normalize_answer("$x^2$")
    ' [MATH] x^2'
    """
    text = _DOLLAR_MATH.sub(lambda m: f" [MATH] {m.group(2)} [/MATH] ", text)
    text = _SPACES.sub(" ", text.rstrip())
    if not text.startswith(" [MATH]"):
        text = text.lstrip()
    text = text.replace(" [/MATH] [MATH] ", " ")
    return re.sub(r" \[/MATH\]$", "", text)


# --- references and ablation ----------------------------------------------------------

REFERENCE_COLUMNS = ["qid", "text", "runs", "origin"]


def team_of(run_name: str) -> str:
    """The team of an ARQMath run name (``TEAM-taskN-...``): the part before the first ``-``.

    >>> team_of("TU_DBS-task3-shortest-auto-both-generate-P")
    'TU_DBS'
    """
    return run_name.split("-", 1)[0]


def _merge_references(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=REFERENCE_COLUMNS)
    allrefs = pd.concat(frames, ignore_index=True)
    out = (allrefs.groupby(["qid", "text"], sort=True)
           .agg(runs=("runs", lambda s: frozenset().union(*s)),
                origin=("origin", lambda s: "+".join(sorted(set(s)))))
           .reset_index())
    return out[REFERENCE_COLUMNS]


def task3_references(runs: Mapping[str, pd.DataFrame], assignments: pd.DataFrame,
                     qrels: pd.DataFrame) -> pd.DataFrame:
    """Relevant (2-3) answers of judged Task 3 runs: ``qid, text, runs, origin``.

    ``runs`` maps a run name (as in the assignment file) to its answers; the text is
    :func:`normalize_answer`'s; identical texts of several runs are one reference
    contributed by all of them.

    >>> run = pd.DataFrame({"qid": ["A.1"], "answer": ["It is $2$."]})
    >>> a = pd.DataFrame({"run": ["t-task3-x"], "qid": ["A.1"], "docno": ["d_1"]})
    >>> q = pd.DataFrame({"qid": ["A.1"], "docno": ["d_1"], "label": [2]})
    >>> task3_references({"t-task3-x": run}, a, q).text.tolist()
    ['It is [MATH] 2 [/MATH] .']
    """
    labels = {(q, d): int(v) for q, d, v in zip(qrels["qid"], qrels["docno"], qrels["label"],
                                                 strict=True)}
    ids = {(r, q): d for r, q, d in zip(assignments["run"], assignments["qid"],
                                        assignments["docno"], strict=True)}
    rows = []
    for name, run in runs.items():
        for qid, answer in zip(run["qid"], run["answer"], strict=True):
            docno = ids.get((name, qid))
            if docno is not None and labels.get((qid, docno)) in (2, 3):
                rows.append((qid, normalize_answer(answer), frozenset([name]), "task3"))
    return _merge_references([pd.DataFrame(rows, columns=REFERENCE_COLUMNS)])


def task1_references(answers: Mapping[str, str], qrels: pd.DataFrame,
                     runs: Mapping[str, pd.DataFrame] | None = None,
                     max_chars: int = MAX_REFERENCE_CHARS) -> pd.DataFrame:
    """Relevant (2-3) Task 1 answers of at most ``max_chars`` characters.

    ``answers`` maps an answer post id to its text with ``$LaTeX$`` formulas (as
    :func:`mathir.readers.html_text.html_to_text` gives it); its length is measured on
    that text. With ``runs`` (Task 1 runs by name) a reference must have been retrieved
    by one of them and records which; without, every relevant judged answer counts (each
    was in the pool, so some run retrieved it) and none is ever ablated.

    >>> q = pd.DataFrame({"qid": ["A.1", "A.1"], "docno": ["7", "8"], "label": [3, 1]})
    >>> task1_references({"7": "Yes: $x$.", "8": "No."}, q).text.tolist()
    ['Yes: [MATH] x [/MATH] .']
    """
    rel = qrels[qrels["label"].isin((2, 3))]
    contributors: dict[tuple[str, str], set[str]] = {}
    if runs is not None:
        wanted = set(zip(rel["qid"], rel["docno"], strict=True))
        for name, run in runs.items():
            for key in zip(run["qid"], run["docno"].astype(str), strict=True):
                if key in wanted:
                    contributors.setdefault(key, set()).add(name)
    rows = []
    for qid, docno in zip(rel["qid"], rel["docno"], strict=True):
        if runs is not None and (qid, docno) not in contributors:
            continue
        text = answers.get(docno)
        if text is None or len(text) > max_chars:
            continue
        rows.append((qid, normalize_answer(text), frozenset(contributors.get((qid, docno), ())),
                     "task1"))
    return _merge_references([pd.DataFrame(rows, columns=REFERENCE_COLUMNS)])


def combine_references(*references: pd.DataFrame) -> pd.DataFrame:
    """One reference per (topic, text), contributed by the union of runs."""
    return _merge_references(list(references))


def ablate(references: pd.DataFrame, excluded_runs: Iterable[str]) -> pd.DataFrame:
    """Drop references contributed *only* by ``excluded_runs`` (a team's runs).

    A reference with no recorded contributor is kept.

    >>> refs = pd.DataFrame({"qid": ["A.1"] * 3, "text": ["a", "b", "c"], "origin": "task3",
    ...                      "runs": [frozenset({"x-1"}), frozenset({"x-1", "y-1"}), frozenset()]})
    >>> ablate(refs, {"x-1", "x-2"}).text.tolist()
    ['b', 'c']
    """
    excluded = set(excluded_runs)
    keep = [not runs or not runs <= excluded for runs in references["runs"]]
    return references[keep].reset_index(drop=True)


def references_by_topic(references: pd.DataFrame) -> dict[str, list[str]]:
    """``{qid: sorted reference texts}``."""
    out: dict[str, list[str]] = {}
    for qid, text in zip(references["qid"], references["text"], strict=True):
        out.setdefault(qid, []).append(text)
    return {q: sorted(t) for q, t in out.items()}
