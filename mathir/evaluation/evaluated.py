"""The evaluated run: what was scored, made once, read by every view.

For a task, its qrels and runs, :func:`evaluate` makes one :class:`EvaluatedRuns`:

* each run **in the order its measures see it**: trec_eval's order (score descending, then
  docno descending, byte order; :func:`trec_order`) for tasks scored by ir_measures /
  trec_eval, the rank column for tasks whose evaluator reads ranks (WorldTree), as given
  otherwise (one answer per topic); after the task's own step (ARQMath Task 2: formulas to
  visual ids, the first instance of each kept), with ``rank`` the 1-based position;
* **the judged set the score used**: the whole qrels file, or (a task that declares
  ``qrels_in_collection``, ARQMath Task 1) the judgments of the documents the collection
  holds (:func:`qrels_in_collection`, the one place that rule is computed), said in words
  (:attr:`EvaluatedRuns.judged_note`);
* the per-topic scores and **the means summed as trec_eval sums them**: per-topic values
  added in topic order (byte order of the ids) and divided by their number
  (:func:`trec_mean`; a pairwise or compensated sum can flip the fourth decimal).

The table, the per-topic files, the significance tests, the report, the explorer, ``mathir
view``, ``mathir evaluate``, the datasets' ``evaluate()`` and the benchmarks read it; none
of them recomputes order, judged set or mean.

A run that shares no topic with the qrels is an error naming the overlap; one whose topics
are mostly not judged gets a warning (either is almost always a run of another year or
task).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mathir.errors import InputError, option
from mathir.evaluation.settings import JUDGED_RULES

if TYPE_CHECKING:
    import pandas as pd

#: A task's declaration (:class:`mathir.tasks.Task`; the task layer imports this module,
#: so the type is not imported here)
Task = Any

#: The orders a task's runs are scored in (``Task.order``).
ORDERS = ("trec_eval", "rank", "given")


def trec_order(run: pd.DataFrame) -> pd.DataFrame:
    """``run`` ordered as trec_eval orders it: per topic, score descending, then docno
    descending (byte order, as ``strcmp``); ``rank`` is the 1-based position.

    The rank column of the file plays no part (trec_eval ignores it).

    >>> import pandas as pd
    >>> run = pd.DataFrame({"qid": ["A.1"] * 3, "docno": ["a", "b", "c"],
    ...                     "rank": [1, 2, 3], "score": [1.0, 2.0, 2.0]})
    >>> trec_order(run)[["docno", "rank"]].values.tolist()
    [['c', 1], ['b', 2], ['a', 3]]
    """
    import numpy as np
    import pandas as pd

    if run.empty:
        return run.assign(rank=pd.Series(dtype="int64")).reset_index(drop=True)
    qid = run["qid"].astype(str).to_numpy()
    docno = run["docno"].astype(str).to_numpy()
    score = run["score"].to_numpy(dtype=float)
    # byte order of the UTF-8 ids equals the code point order Python compares by
    order = np.lexsort((_descending(docno), -score, qid))
    out = run.iloc[order].reset_index(drop=True)
    q = qid[order]
    starts = np.r_[True, q[1:] != q[:-1]]
    position = np.arange(len(out))
    first = np.maximum.accumulate(np.where(starts, position, 0))
    out["rank"] = (position - first + 1).astype("int64")
    return out


def _descending(values) -> Any:
    """Sort keys that order strings descending (their rank among the distinct values)."""
    import numpy as np

    uniq, inverse = np.unique(values, return_inverse=True)
    return len(uniq) - inverse


def rank_order(run: pd.DataFrame) -> pd.DataFrame:
    """``run`` ordered by its rank column (score descending without one), as WorldTree's
    evaluation reads a ranking; ``rank`` becomes the 1-based position.

    >>> import pandas as pd
    >>> rank_order(pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "rank": [2, 1]})).docno.tolist()
    ['b', 'a']
    """
    df = run.copy()
    key = "rank" if "rank" in df.columns else "score"
    df["_key"] = df[key].to_numpy(dtype=float) * (1 if key == "rank" else -1)
    df = df.sort_values(["qid", "_key"], kind="stable").drop(columns="_key")
    df["rank"] = df.groupby("qid", sort=False).cumcount() + 1
    return df.reset_index(drop=True)


def trec_mean(values: Iterable[float]) -> float:
    """The mean as trec_eval computes it: the values added one by one, in the order given
    (per-topic values in topic order), then divided by their number; NaN values are left
    out (a measure a topic cannot have); 0.0 when there is none, NaN when every value is.

    >>> trec_mean([0.1] * 10), sum([0.1] * 10) / 10
    (0.09999999999999999, 0.09999999999999999)
    """
    total, n, missing = 0.0, 0, 0
    for v in values:
        v = float(v)
        if v != v:
            missing += 1
            continue
        total += v  # in order, as trec_eval's accumulation (no pairwise or compensated sum)
        n += 1
    if not n:  # no topic: 0; only topics that cannot have the measure: NaN (not a score)
        return float("nan") if missing else 0.0
    return total / n


def qrels_in_collection(qrels: pd.DataFrame, docnos: Iterable[str]) -> pd.DataFrame:
    """The judgments of ``qrels`` whose document is among ``docnos`` (the collection's):
    the one place mathir restricts judgments to a collection.

    >>> import pandas as pd
    >>> q = pd.DataFrame({"qid": ["A.1", "A.1"], "docno": ["5", "6"], "label": [3, 2]})
    >>> qrels_in_collection(q, ["5"]).docno.tolist()
    ['5']
    """
    held = docnos if isinstance(docnos, set | frozenset) else set(docnos)
    out = qrels[qrels["docno"].astype(str).isin(held)].reset_index(drop=True)
    out.attrs.update(qrels.attrs)
    return out


def judged_note(rule: str, used: int, total: int, where: str | None = None) -> str:
    """The judged-set rule in words, as printed with every table.

    >>> judged_note("collection", 3, 10, "threads_all")
    "judged on the 3 of 10 judgments whose documents threads_all holds (judged='file': the whole qrels file)"
    """
    if rule == "file":
        return f"judged on the whole qrels file ({total:,} judgments)"
    where = where or "the collection"
    if used == total:
        return f"judged on all {total:,} judgments (every judged document is in {where})"
    return (f"judged on the {used:,} of {total:,} judgments whose documents {where} holds "
            f"({option('judged', 'file')}: the whole qrels file)")


@dataclass
class EvaluatedRuns:
    """Runs as scored: the one object every table, file and page reads.

    ``runs``: each run as its measures see it (ordered, ``rank`` the position; for ARQMath
    Task 2 one row per visual id with the counted instance in ``formula_id``); ``read``:
    the runs as read; ``qrels``: the judgments the score used; ``qrels_file``: every
    judgment of the file (for pages that show what was judged but not used);
    ``per_topic``: run -> frame of ``qid`` and one column per measure (None when the task
    has means only); ``table``: one row per run, one column per measure.
    """

    task: str
    runs: dict[str, pd.DataFrame]
    read: dict[str, pd.DataFrame]
    qrels: pd.DataFrame | None
    qrels_file: pd.DataFrame | None
    table: pd.DataFrame
    per_topic: dict[str, pd.DataFrame] | None
    judged: str = "file"
    judged_note: str | None = None
    #: the task's declaration (:class:`mathir.tasks.Task`): its primary measure, its
    #: explorer page
    declaration: Any = field(default=None, repr=False)
    options: dict[str, Any] = field(default_factory=dict)
    #: what the pages derive from it once (listings by topic, labels), by key
    cache: dict = field(default_factory=dict, repr=False)
    #: the settings it was scored with (:class:`mathir.evaluation.settings.Evaluation`)
    settings: Any = field(default=None, repr=False)

    @property
    def primary(self) -> str:
        """The measure pages lead with: the task's primary one when scored, else the first."""
        primary = getattr(self.declaration, "primary_measure", None)
        columns = list(self.table.columns)
        return primary if primary in columns else (columns[0] if columns else "")

    @property
    def names(self) -> list[str]:
        """The runs' names, in order (those scored, where no run was given: Task 3's
        judged runs of its assignment file)."""
        return list(self.read) or list(self.per_topic or {}) or list(self.table.index)

    def compared_measures(self) -> list[str]:
        """The measures of the table that every run has per-topic scores for (those the
        significance tests compare)."""
        if not self.per_topic:
            return []
        return [m for m in self.table.columns
                if all(m in df.columns for df in self.per_topic.values())]

    def significance(self, baseline: str | None = None, test: str = "t",
                     correction: str = "holm") -> pd.DataFrame | None:
        """:func:`mathir.evaluation.significance.significance_table` of the per-topic
        scores against ``baseline`` (default: the first run); None without per-topic scores."""
        if not self.per_topic:
            return None
        from mathir.evaluation.significance import significance_table

        return significance_table(self.per_topic, self.compared_measures(),
                                  baseline or self.names[0], test=test, correction=correction)

    def judgment(self, qid: str, docno: str) -> tuple[Any, bool] | None:
        """``(label, used)`` of a document's judgment for a topic: ``used`` is False for a
        judgment of the file the score did not use (its document is not in the
        collection); None when it is not judged."""
        return self._labels().get((str(qid), str(docno)))

    _label_cache: dict | None = field(default=None, repr=False)

    def _labels(self) -> dict:
        if self._label_cache is None:
            out: dict = {}
            for frame, used in ((self.qrels_file, False), (self.qrels, True)):
                if frame is None or not {"qid", "docno", "label"} <= set(frame.columns):
                    continue
                for q, d, v in zip(frame["qid"].astype(str), frame["docno"].astype(str),
                                   frame["label"], strict=True):
                    out[(q, d)] = (v, used)
            self._label_cache = out
        return self._label_cache


def check_judged(task: Task, judged: str) -> str:
    """``judged`` when it is a judged-set rule (:data:`JUDGED_RULES`) that applies to
    ``task``; InputError otherwise (:func:`mathir.evaluation.settings.resolve_judged`,
    the one place the rule is resolved).

    >>> from mathir.tasks import get_task
    >>> check_judged(get_task("worldtree"), "collection")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: worldtree judges every document of its qrels file ...
    """
    from mathir.evaluation.settings import resolve_judged

    return resolve_judged(task, judged, collection=True)


def check_overlap(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame) -> None:
    """InputError when a run shares no topic with the qrels; a warning when fewer than half
    of its topics are judged in them (a run of another year or task, mostly).

    >>> import pandas as pd
    >>> q = pd.DataFrame({"qid": ["A.301"], "docno": ["5"], "label": [3]})
    >>> check_overlap({"r": pd.DataFrame({"qid": ["A.1"], "docno": ["5"]})}, q)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: run 'r' shares no topic with the qrels ...
    """
    judged = set(qrels["qid"].astype(str).unique())
    for name, run in runs.items():
        if not len(run) or "qid" not in run.columns:
            continue
        topics = set(run["qid"].astype(str).unique())
        shared = topics & judged
        if not shared:
            raise InputError(
                f"run {name!r} shares no topic with the qrels: its {len(topics):,} topics "
                f"({_some(topics)}) are none of the qrels' {len(judged):,} ({_some(judged)}); "
                "is it a run of another year or task?")
        if 2 * len(shared) < len(topics):
            warnings.warn(f"run {name!r}: only {len(shared):,} of its {len(topics):,} topics are "
                          f"judged in the qrels ({len(judged):,} topics: {_some(judged)}); is "
                          "it a run of another year or task?", stacklevel=3)


def _some(ids: set[str], n: int = 3) -> str:
    first = sorted(ids)[:n]
    return ", ".join(first) + (", ..." if len(ids) > n else "")


def parse_measures(spec: str | Iterable[Any]) -> tuple[bool, dict[str, Any]]:
    """``(beside, {column: ir_measures measure})`` from ``--measures`` / ``measures=``:
    measures in ir_measures' syntax, comma-separated (commas inside brackets belong to
    the measure); a leading ``+`` keeps the task's own measures beside them. Each column
    is named as ir_measures writes the measure. Each measure is checked before any
    scoring (:func:`mathir.evaluation.measures.parse_measure_list`): one ir_measures
    cannot compute as ``calc_aggregate`` would, or two that would share a column, are
    InputErrors.

    >>> beside, ms = parse_measures("+nDCG(judged_only=True)@10, R(rel=2)@1000")
    >>> beside, list(ms)
    (True, ['nDCG(judged_only=True)@10', 'R(rel=2)@1000'])
    """
    from mathir.evaluation.measures import parse_measure_list

    return parse_measure_list(spec)


def evaluate(task: Task, runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, *,
             settings: Any = None, docnos: Iterable[str] | None = None,
             judged: str | None = None, where: str | None = None,
             measures: str | Iterable[Any] | None = None, **options: Any) -> EvaluatedRuns:
    """Evaluate ``runs`` (name -> frame as the task's reader returns it) once.

    ``settings``: the evaluation's settings, resolved once by the command
    (:class:`mathir.evaluation.settings.Evaluation`); without them, they are resolved here
    from ``judged`` and ``measures``: ``judged`` is ``"collection"`` (default for a task
    with ``qrels_in_collection`` when ``docnos``, the documents the collection holds, are
    given; ``where`` names the collection) or ``"file"`` (every judgment of the qrels);
    ``measures``: ir_measures measures to score instead of the task's (with a leading
    ``+``, beside them; :func:`parse_measures`), after the task's own steps (Task 2:
    visual ids). ``options`` go to the task's evaluation (e.g. ``formula_index=PATH``).

    >>> from mathir.samples import arqmath_sample
    >>> from mathir.qrels.trec import read_qrels
    >>> import pandas as pd
    >>> run = pd.DataFrame({"qid": ["A.1", "A.1"], "docno": ["1002", "1001"],
    ...                     "rank": [2, 1], "score": [1.0, 1.0]})
    >>> from mathir.tasks import get_task
    >>> ev = evaluate(get_task("arqmath-task1"), {"r": run}, read_qrels(arqmath_sample().task1_qrels))
    >>> ev.runs["r"].docno.tolist(), ev.judged
    (['1002', '1001'], 'file')
    """
    from mathir.evaluation.settings import Evaluation, resolve_judged, resolve_measures

    if settings is None:
        settings = Evaluation(task.name, resolve_judged(task, judged,
                                                        collection=docnos is not None),
                              measures=resolve_measures(measures))
    elif judged is not None or measures is not None:
        raise TypeError("evaluate(): give settings, or judged and measures, not both")
    rule = settings.judged
    read = dict(runs)
    if qrels is None:
        raise InputError(f"no qrels: nothing to evaluate the runs of {task.name} on")
    check_overlap(read, qrels)
    used = qrels
    note = None
    if task.qrels_in_collection:
        if rule == "collection":
            if docnos is None:
                raise InputError("judging on the collection's documents needs the collection "
                                 f"({option('collection')} or {option('data', 'DIR')}; or "
                                 f"{option('judged', 'file')}: the whole qrels file)")
            used = qrels_in_collection(qrels, docnos)
            if used.empty:
                raise InputError(f"no judged document of these qrels is in "
                                 f"{where or 'the collection'}", path=qrels.attrs.get("source"))
        note = judged_note(rule, len(used), len(qrels), where)
    extra = settings.measures
    if extra is not None and task.order == "given":
        raise InputError(f"{task.name}'s runs are not rankings (one answer per topic): "
                         "ir_measures measures do not apply; its measures are "
                         f"{', '.join(task.measure_names)}")
    ordered = {n: _order(task, r) for n, r in read.items()}
    listed, scored_qrels, per_topic, table = _score(task, ordered, used, options, extra)
    ev = EvaluatedRuns(task.name, listed, read, scored_qrels,
                       # every judgment of the file, in the form the score used (Task
                       # 2: visual ids) where nothing was left out
                       scored_qrels if used is qrels else qrels, table, per_topic,
                       judged=rule, judged_note=note, options=dict(options), declaration=task,
                       settings=settings)
    if note:
        ev.table.attrs["judged"] = note
    return ev


def _order(task: Task, run: pd.DataFrame) -> pd.DataFrame:
    order = getattr(task, "order", "trec_eval")
    if order == "given" or not {"qid", "docno"} <= set(run.columns):
        return run
    if order == "trec_eval" and "score" in run.columns:
        return trec_order(run)
    if order == "rank" or (order == "trec_eval" and "rank" in run.columns):
        return rank_order(run) if ("rank" in run.columns or "score" in run.columns) else run
    return run


def _score(task: Task, runs: dict, qrels, options: Mapping,
           extra: tuple[bool, dict] | None = None) -> tuple:
    """(runs as scored, qrels as scored, per-topic scores or None, table)."""
    import pandas as pd

    from mathir.evaluation.per_topic import per_topic_scores

    options = dict(options)
    beside, chosen = extra if extra is not None else (True, {})
    own = task.measure_names if beside else ()
    if task._by_ir_measures:
        if task.prepare is not None:
            runs, qrels = task.prepare(runs, qrels, **options)
            runs = {n: _order(task, r) for n, r in runs.items()}
        elif options:
            raise InputError(f"options not used by this task: {', '.join(sorted(options))}")
        wanted = {**(task.ir_measures() if beside else {}), **chosen}
        per_topic = {n: per_topic_scores(r, qrels, wanted) for n, r in runs.items()}
    else:
        per_topic = task.per_topic(runs, qrels, **options) if beside else None
        if chosen:
            if "label" not in qrels.columns:
                raise InputError(f"{task.name}'s judgments have no relevance labels: "
                                 "ir_measures measures do not apply")
            added = {n: per_topic_scores(r, qrels, chosen) for n, r in runs.items()}
            per_topic = added if per_topic is None else {
                n: per_topic[n].merge(added[n], on="qid", how="outer",
                                      suffixes=("", " (ir_measures)"))
                for n in runs}
    columns = [*own, *(m for m in chosen if m not in own)]
    present = {c for f in per_topic.values() for c in f.columns}
    undeclared = sorted(present - {"qid"} - set(columns) - {f"{m} (ir_measures)" for m in chosen})
    if undeclared and not chosen:  # the table and its declaration cannot drift apart
        task._columns(pd.DataFrame(columns=undeclared))
    declared = {m.name: m.aggregate for m in task.measures if m.aggregation}
    table = mean_table(per_topic, [c for c in columns if c in present], aggregation=declared)
    note = next((f.attrs["note"] for f in per_topic.values() if f.attrs.get("note")), None)
    if note:  # e.g. Task 3's LO and CS computed with a stand-in model
        table.attrs["note"] = note
    return runs, qrels, per_topic, (task._columns(table) if not chosen else table)


def mean_table(per_topic: Mapping[str, pd.DataFrame], measures: Iterable[str],
               aggregation: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per run, one column per measure: each the run's per-topic values in topic
    order (byte order of the ids) aggregated as its measure declares: :func:`trec_mean`,
    or :func:`~mathir.evaluation.measures.trec_sum` for the counts (as ``ir_measures.calc_aggregate`` and trec_eval).

    How a column aggregates: ``aggregation[column]``, else as the per-topic frame says
    (``attrs["aggregation"]``, set by :func:`mathir.evaluation.per_topic.per_topic_scores` from
    each measure's ir_measures aggregator), else as ir_measures aggregates the measure
    the column's name is (a column named ``NumQ`` sums), else the mean.

    >>> import pandas as pd
    >>> t = mean_table({"r": pd.DataFrame({"qid": ["2", "1"], "m": [0.5, 1.0]})}, ["m"])
    >>> float(t.loc["r", "m"])
    0.75
    >>> float(mean_table({"r": pd.DataFrame({"qid": ["1", "2"], "NumQ": [1.0, 1.0]})},
    ...                  ["NumQ"]).loc["r", "NumQ"])
    2.0
    """
    import pandas as pd

    from mathir.evaluation.measures import aggregation_by_name, trec_sum

    measures = list(measures)
    rows = {}
    for name, t in per_topic.items():
        present = [m for m in measures if m in t.columns]
        declared = {**t.attrs.get("aggregation", {}), **(aggregation or {})}
        if len(t):
            keys = [str(q).encode("utf-8", "surrogateescape") for q in t["qid"]]
            t = t.iloc[sorted(range(len(t)), key=keys.__getitem__)]
        rows[name] = {m: (trec_sum if (declared.get(m) or aggregation_by_name(m)) == "sum"
                          else trec_mean)(t[m].tolist()) for m in present}
    return pd.DataFrame.from_dict(rows, orient="index", columns=measures)


__all__ = ["JUDGED_RULES", "ORDERS", "EvaluatedRuns", "check_judged", "check_overlap", "evaluate",
           "judged_note", "mean_table", "parse_measures", "qrels_in_collection", "rank_order", "trec_mean",
           "trec_order"]
