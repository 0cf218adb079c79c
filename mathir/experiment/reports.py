"""What an experiment writes besides its runs: per-topic files, the significance note,
the HTML report and its run explorer, all read from the one evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mathir.errors import InputError
from mathir.experiment.running import ExperimentResult
from mathir.storage import atomic_file
from mathir.tasks import get_task

if TYPE_CHECKING:
    pass


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


def experiment_explorer(result: ExperimentResult, depth: int = 20):
    """The run explorer of an experiment's runs: ``(Explorer, MathRenderer)`` (see
    :func:`mathir.evaluation.explorer_views.build_explorer`; the renderer's ``stats`` count
    the formulas latex2mathml could not convert). It reads the experiment's evaluation:
    each run listed in the order it was scored, with the judgments the score used.

    >>> import tempfile
    >>> from mathir.experiment import run_experiment
    >>> res = run_experiment("word-problems", out=tempfile.mkdtemp(), quiet=True)
    >>> ex, _ = experiment_explorer(res)
    >>> len(ex.topics), ex.runs[:2]
    (5, ['nearest-template', 'template-retrieval'])
    """
    from mathir.evaluation.explorer_views import build_explorer

    if result.evaluation is None:
        raise InputError("no qrels, so nothing to explore for these runs")
    task = get_task(result.task)
    topics = result.topics if result.topics is not None else task.topics(result.data)
    return build_explorer(result.evaluation, topics, result.data, baseline=result.baseline,
                          primary=result.evaluation.primary, depth=depth)


def write_experiment_report(result: ExperimentResult, path: str | Path | None = None,
                            explore: bool = True, depth: int = 20) -> Path:
    """Write the experiment's self-contained HTML report (default: beside its runs).

    The comparison table with significance marks, per-topic differences to the baseline
    on the task's primary measure, the task's own plots (ARQMath: scores by topic
    category, difficulty and dependency from the topic metadata; WorldTree: MAP by
    explanation length), the run files' locations and, with ``explore``, the run
    explorer (:mod:`mathir.evaluation.explorer`: every topic, the runs' top ``depth``
    results side by side, formulas rendered).
    """
    from mathir.evaluation.report import (
        breakdown_figures,
        html_report,
        per_topic_chart,
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
    notes = [f"Runs: {', '.join(str(p) for p in result.runs.values())}."]
    if result.significance is None:
        notes.append("No per-topic scores for this task: no significance tests.")
    if result.judged_note:
        notes.append(f"Judged set: {result.judged_note}.")
    if result.table.attrs.get("note"):
        notes.append(str(result.table.attrs["note"]))
    title = f"{task.description} — {result.data.label}"
    explorer = ""
    if explore:
        from mathir.evaluation.explorer import explorer_html

        explorer = explorer_html(experiment_explorer(result, depth)[0])
    page = html_report(title, result.table, result.baseline or str(result.table.index[0]),
                       result.significance, figures, notes, explorer=explorer)
    return write_report(path, page)
