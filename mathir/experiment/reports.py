"""What an experiment writes besides its runs: per-topic files, the significance note,
the HTML report and its run explorer, all read from the one evaluation."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mathir.errors import InputError
from mathir.experiment.running import ExperimentResult
from mathir.storage import atomic_file
from mathir.tasks import Task, TaskData, get_task

if TYPE_CHECKING:
    from mathir.report.explorer_views import Lookups


def significance_note(result: ExperimentResult) -> str | None:
    """What a † in ``result``'s table means (None without significance tests).

    >>> r = ExperimentResult("t", None, {}, None, {}, baseline="bm25", significance=1)
    >>> significance_note(r)
    'significantly different from bm25 (paired t-test, holm correction, p < 0.05)'
    """
    if result.significance is None:
        return None
    return (f"significantly different from {result.baseline} (paired {result.test}-test, "
            f"{result.correction} correction, p < 0.05)")


def write_per_topic(result: ExperimentResult, path: str | Path) -> tuple[Path, Path]:
    """Write the per-topic scores and the significance tests as two CSV files.

    ``path`` gets one row per (topic, run): columns ``qid, run`` and one per measure;
    ``<stem>.significance.csv`` beside it one row per (run, measure): ``run, measure,
    baseline, test, correction, mean, delta, ci_low, ci_high, effect_size, p,
    p_corrected, significant, topics`` (``delta`` is the mean difference to the
    baseline, ``p_corrected`` the p-value after the correction over the runs).
    """
    import pandas as pd

    if result.per_topic is None:
        raise InputError(f"{result.task} has no per-topic scores (its measures are means only)")
    path = Path(path)
    frames = []
    for name, df in result.per_topic.items():
        measures = [c for c in df.columns if c != "qid"]
        frames.append(df.assign(run=name)[["qid", "run", *measures]])
    table = pd.concat(frames, ignore_index=True)
    with atomic_file(path) as f:
        table.to_csv(f, index=False, float_format="%.6g")
    sig_path = path.with_name(path.stem + ".significance.csv")
    sig = result.significance.reset_index().rename(columns={"system": "run"})
    sig.insert(2, "baseline", result.baseline)
    sig.insert(3, "test", result.test)
    sig.insert(4, "correction", result.correction)
    with atomic_file(sig_path) as f:
        sig.to_csv(f, index=False, float_format="%.6g")
    return path, sig_path


def explorer_lookups(task: Task, data: TaskData | None, index: Any = None, *,
                     quiet: bool = True) -> Lookups:
    """What the run explorer shows of the documents, read from the index, never by parsing
    the collection again (:class:`mathir.report.explorer_views.Lookups`): ARQMath
    answers from the answer index's SQLite text store (``<index>-texts``, built on first
    use; ``index``: the index of ``data``'s collection, built or reused when the page first
    asks for a text); Task 2 formulas from the formula index TSV; WorldTree facts from the
    tablestore.

    >>> task = get_task("arqmath-task1")
    >>> texts = explorer_lookups(task, task.data()).texts({"1002", "nope"})
    >>> sorted(texts), "$" in texts["1002"]
    (['1002'], True)
    """
    from mathir.report.explorer_views import Lookups

    found = {"index": index}

    def answer_texts(docnos: set[str]) -> dict[str, str]:
        wanted = {str(d) for d in docnos}
        if not wanted or data is None or data.collection is None:
            return {}
        if found["index"] is None:
            found["index"] = task.index(data, quiet=quiet)
        return document_texts(found["index"], wanted, data.collection, quiet=quiet)

    return Lookups(texts=answer_texts, formulas=formula_records, facts=tablestore_texts)


def document_texts(index: Any, docnos: Iterable[str], collection: str | Path | None = None, *,
                   quiet: bool = True) -> dict[str, str]:
    """``{docno: text}`` of the answers ``docnos`` that ``index`` holds: from its text
    store when it is an answer index (one SQLite query per 900 docnos), else by reading
    ``collection`` (one pass, :func:`mathir.indexing.answer_collection.answer_texts`).
    The text is the answer's, formulas as ``$LaTeX$``, without the question's title.
    """
    from mathir.indexing.answer_index import AnswerIndex

    if isinstance(index, AnswerIndex):
        from mathir.indexing.text_store import AnswerTexts

        store = AnswerTexts.for_index(index, quiet=quiet)
        return {d: text for d, (_, text) in store.fetch(docnos).items()}
    if collection is None:
        return {}
    from mathir.indexing.answer_collection import answer_texts

    return answer_texts(collection, docnos)


def formula_records(formula_index: str | Path, formula_ids: set[str], visual_ids: set[str]
                    ) -> tuple[dict[str, tuple[str, str, str]], dict[str, str]]:
    """One pass over a formula index TSV: formula id -> (visual id, LaTeX, post id) for
    ``formula_ids``; visual id -> LaTeX of its first instance for ``visual_ids``."""
    from mathir.readers.formula_tsv import iter_formula_index

    by_formula: dict[str, tuple[str, str, str]] = {}
    by_visual: dict[str, str] = {}
    for rec in iter_formula_index(formula_index):
        if rec.formula_id in formula_ids:
            by_formula[rec.formula_id] = (rec.visual_id, rec.formula, rec.post_id)
        if rec.visual_id in visual_ids and rec.visual_id not in by_visual:
            by_visual[rec.visual_id] = rec.formula
    return by_formula, by_visual


def tablestore_texts(tablestore: str | Path) -> dict[str, str]:
    """fact id -> fact text of a WorldTree tablestore (its tables folder, or a file in it)."""
    from mathir.indexing.fact_index import read_tablestore, tables_dir

    return read_tablestore(tables_dir(tablestore), warn=False).texts()


def experiment_explorer(result: ExperimentResult, depth: int = 20):
    """The run explorer of an experiment's runs: ``(Explorer, MathRenderer)`` (see
    :func:`mathir.report.explorer_views.build_explorer`; the renderer's ``stats`` count
    the formulas latex2mathml could not convert). It reads the experiment's evaluation:
    each run listed in the order it was scored, with the judgments the score used.

    >>> import tempfile
    >>> from mathir.experiment import run_experiment
    >>> res = run_experiment("word-problems", out=tempfile.mkdtemp(), quiet=True)
    >>> ex, _ = experiment_explorer(res)
    >>> len(ex.topics), ex.runs[:2]
    (5, ['nearest-template', 'template-retrieval'])
    """
    from mathir.report.explorer_views import build_explorer

    if result.evaluation is None:
        raise InputError("no qrels, so nothing to explore for these runs")
    task = get_task(result.task)
    topics = result.topics if result.topics is not None else task.topics(result.data)
    lookups = explorer_lookups(task, result.data, result.index)
    explorer = build_explorer(result.evaluation, topics, result.data, baseline=result.baseline,
                              primary=result.evaluation.primary, depth=depth, lookups=lookups)
    return explorer


def write_experiment_report(result: ExperimentResult, path: str | Path | None = None,
                            explore: bool = True, depth: int = 20) -> Path:
    """Write the experiment's self-contained HTML report (default: beside its runs).

    The comparison table with significance marks, per-topic differences to the baseline
    on the task's primary measure, the task's own plots (ARQMath: scores by topic
    category, difficulty and dependency from the topic metadata; WorldTree: MAP by
    explanation length), the run files' locations and, with ``explore``, the run
    explorer (:mod:`mathir.report.explorer`: every topic, the runs' top ``depth``
    results side by side, formulas rendered).
    """
    from mathir.report.report import (
        breakdown_figures,
        html_report,
        per_topic_chart,
        shown_path,
        write_report,
    )

    if result.table is None:
        raise InputError("no qrels, so nothing to report for these runs")
    task = get_task(result.task)
    folder = next(iter(result.runs.values())).parent
    path = Path(path) if path else folder / "report.html"
    primary = result.evaluation.primary if result.evaluation is not None else task.primary_measure
    figures = []
    if result.per_topic and result.baseline:
        figures.append((f"{primary} per topic against {result.baseline}",
                        per_topic_chart(result.per_topic, primary, result.baseline)))
        if result.data.metadata is not None and task.topic_groups is not None:
            figures += breakdown_figures(result.per_topic, primary,
                                         task.topic_groups(result.data.metadata))
    for what, file in result.files.items():
        if Path(file).suffix == ".png":
            png = result.figures.get(what) or Path(file).read_bytes()
            figures.append((what.replace("_", " "), png))
    notes = [f"Runs: {', '.join(shown_path(p, path.parent) for p in result.runs.values())}."]
    if result.significance is None:
        notes.append("No per-topic scores for this task: no significance tests.")
    if result.judged_note:
        notes.append(f"Judged set: {result.judged_note}.")
    if result.table.attrs.get("note"):
        notes.append(str(result.table.attrs["note"]))
    title = f"{task.description} — {result.data.label}"
    explorer = ""
    if explore:
        from mathir.report.explorer import explorer_html

        explorer = explorer_html(experiment_explorer(result, depth)[0])
    page = html_report(title, result.table, result.baseline or str(result.table.index[0]),
                       result.significance, figures, notes, explorer=explorer)
    return write_report(path, page)
