"""Charts drawn with matplotlib on the Agg backend, texts drawn as given (no mathtext, no
LaTeX): the report's (:mod:`mathir.report.report`) and WorldTree's MAP by explanation
length (:func:`plot_map_by_length`).
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from mathir.evaluation.explanation_scorer import map_by_length
from mathir.storage import atomic_file


@contextmanager
def plain_text() -> Iterator[None]:
    """matplotlib draws each text as given while a figure is built and saved: ``$``
    starts no mathtext, and no LaTeX runs, whatever the user's matplotlibrc says."""
    import matplotlib

    with matplotlib.rc_context({"text.usetex": False, "text.parse_math": False}):
        yield


def png_bytes(fig) -> bytes:
    """A figure as PNG bytes; the figure is closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def pyplot():
    """matplotlib's pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_map_by_length(per_run: Mapping[str, pd.DataFrame], path: str | Path,
                       title: str = "MAP by gold explanation length") -> Path:
    """Write a PNG bar chart of MAP by explanation length (one bar group per run).

    ``per_run`` maps run names to :func:`mathir.evaluation.explanation_scorer.per_question`
    tables. The number of questions of each length is printed under the axis; run names
    are drawn as given (:func:`plain_text`).

    >>> import tempfile, pathlib
    >>> t = pd.DataFrame({"length": [2, 2, 5], "MAP": [0.5, 1.0, 0.2]})
    >>> png = plot_map_by_length({"bm25": t}, pathlib.Path(tempfile.mkdtemp()) / "h.png")
    >>> png.read_bytes()[:4]
    b'\x89PNG'
    """
    plt = pyplot()
    tables = {name: map_by_length(t) for name, t in per_run.items()}
    lengths = sorted({int(x) for t in tables.values() for x in t["length"]})
    counts = {}
    for t in tables.values():
        counts.update(dict(zip(t["length"], t["questions"], strict=True)))
    with plain_text():
        fig, ax = plt.subplots(figsize=(min(14.0, max(6.0, 2.0 + 0.5 * len(lengths))), 4.5))
        width = 0.8 / max(1, len(tables))
        x = np.arange(len(lengths))
        for i, (name, t) in enumerate(tables.items()):
            values = dict(zip(t["length"], t["MAP"], strict=True))
            ax.bar(x + i * width - 0.4 + width / 2, [values.get(n, 0.0) for n in lengths], width,
                   label=name)
        ax.set_xticks(x, [f"{n}\n({counts.get(n, 0)})" for n in lengths])
        ax.set_xlabel("gold explanation length in facts (questions)")
        ax.set_ylabel("MAP")
        ax.set_ylim(0, 1)
        ax.set_title(title)
        if len(tables) > 1:
            ax.legend(fontsize="small")
        fig.tight_layout()
        with atomic_file(path, "wb") as f:
            fig.savefig(f, format="png", dpi=120)
        plt.close(fig)
    return Path(path)
