"""The per-topic chart names its topics (before: no tick labels at all)."""

import pandas as pd
import pytest

from mathir.report import report


def _figure_of(monkeypatch, per_topic, measure, baseline):
    figures = []
    monkeypatch.setattr(report, "png_bytes", lambda fig: figures.append(fig) or b"")
    report.per_topic_chart(per_topic, measure, baseline)
    return figures[0]


def test_each_bar_is_labelled_with_its_topic_in_sorted_order(monkeypatch):
    base = pd.DataFrame({"qid": ["A.1", "A.2", "A.3"], "m": [0.5, 0.5, 0.5]})
    new = pd.DataFrame({"qid": ["A.1", "A.2", "A.3"], "m": [0.2, 0.9, 0.5]})
    fig = _figure_of(monkeypatch, {"base": base, "new": new}, "m", "base")
    ax = fig.axes[0]
    # bars from largest gain to largest loss: A.2 (+0.4), A.3 (0), A.1 (-0.3)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["A.2", "A.3", "A.1"]


def test_many_topics_label_every_kth(monkeypatch):
    qids = [f"T{i}" for i in range(200)]
    base = pd.DataFrame({"qid": qids, "m": [0.0] * 200})
    new = pd.DataFrame({"qid": qids, "m": [i / 200 for i in range(200)]})
    fig = _figure_of(monkeypatch, {"base": base, "new": new}, "m", "base")
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert len(labels) == 67 and labels[:2] == ["T199", "T196"]  # every 3rd of 200


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.mark.parametrize("runs", [3, 6])
@pytest.mark.parametrize("topics", [4, 50])
def test_no_title_is_drawn_over_the_chart_above(monkeypatch, runs, topics):
    """One panel per run beside the baseline, each titled: a title stays clear of the
    panel above it (its bars, tick labels and axis label), however many runs."""
    qids = [f"2022.A.{i}-long-topic-id" for i in range(topics)]
    per_topic = {f"run{r}": pd.DataFrame({"qid": qids, "m": [(i * (r + 1)) % 7 / 7
                                                          for i in range(topics)]})
                 for r in range(runs + 1)}
    fig = _figure_of(monkeypatch, per_topic, "m", "run0")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes = fig.axes
    assert len(axes) == runs
    for above, ax in zip(axes, axes[1:], strict=False):
        title = ax.title.get_window_extent(renderer)
        below_above = [t.get_window_extent(renderer) for t in above.get_xticklabels()
                       if t.get_text()] + [above.xaxis.label.get_window_extent(renderer)]
        assert not any(_overlaps(title, b) for b in below_above if b.width and b.height)
        assert title.y0 < above.get_window_extent(renderer).y0  # below the panel above
        assert title.y0 >= ax.get_window_extent(renderer).y1 - 1  # above its own panel
    for ax in axes:  # every panel keeps room for its bars
        assert ax.get_window_extent(renderer).height > 80
