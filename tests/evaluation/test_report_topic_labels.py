"""The per-topic chart names its topics (before: no tick labels at all)."""

import pandas as pd

from mathir.evaluation import report


def _figure_of(monkeypatch, per_topic, measure, baseline):
    figures = []
    monkeypatch.setattr(report, "_png", lambda fig: figures.append(fig) or b"")
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
