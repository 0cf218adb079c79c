"""The texts that calibrate an ``openvino-int8`` export (:mod:`mathir.neural.export`).

They are made from mathir's embedded ARQMath sample, so that every machine makes the same
export from the same weights. The sample's answers are read here from its Posts XML, as
the answer index reads them
(:meth:`mathir.indexing.answer_collection.AnswerCollection.iter_answers`, formulas kept
as ``$LaTeX$``), without importing the indexing stage, which sits above the encoders
(tests/neural/test_calibration.py checks that both read the same texts).
"""

from __future__ import annotations

import numpy as np

from mathir.models import BI_ENCODER, CROSS_ENCODER

#: how many texts calibrate an int8 OpenVINO export
CALIBRATION_TEXTS = 300


def calibration_texts(kind: str = BI_ENCODER, n: int = CALIBRATION_TEXTS) -> list:
    """The texts that calibrate an ``openvino-int8`` export, the same on every machine.

    The embedded ARQMath sample's answers (mathir's own text, with their questions'
    titles), alone and joined two to four at a time, so that their lengths reach the
    model's limit as real passages do, in a fixed random order; for a cross-encoder,
    ``(question title, answer)`` pairs, half of them from the same thread.

    >>> texts = calibration_texts(n=8)
    >>> len(texts), all(isinstance(t, str) for t in texts)
    (8, True)
    >>> [len(p) for p in calibration_texts(CROSS_ENCODER, n=3)]
    [2, 2, 2]
    """
    titled, bare = sample_answers()
    rng = np.random.default_rng(0)
    out: list = []
    for i in range(n):
        if kind == CROSS_ENCODER:
            j = int(rng.integers(len(bare)))
            k = j if i % 2 == 0 else int(rng.integers(len(bare)))
            title = titled[j][:max(0, len(titled[j]) - len(bare[j]))].strip()
            out.append((title or bare[j][:80], bare[k]))
        else:
            pick = rng.choice(len(titled), 1 + i % 4, replace=False)
            out.append(" ".join(titled[j] for j in pick))
    return out


def sample_answers() -> tuple[list[str], list[str]]:
    """The embedded ARQMath sample's answers in collection order, as plain text with
    formulas as ``$LaTeX$``: ``(with their question's title before them, alone)``.

    >>> titled, bare = sample_answers()
    >>> len(titled), len(bare), titled[0].endswith(bare[0])
    (250, 250, True)
    """
    from mathir.readers.html_text import html_to_text
    from mathir.readers.safe_xml import iter_elements
    from mathir.samples import arqmath_sample

    titles: dict[str, str] = {}
    titled: list[str] = []
    bare: list[str] = []
    for row in iter_elements(arqmath_sample().posts, "row"):
        kind = row.get("PostTypeId", "")
        if kind == "1":
            titles[row.get("Id")] = html_to_text(row.get("Title") or "")
        elif kind == "2":
            text = html_to_text(row.get("Body") or "")
            title = titles.get(row.get("ParentId") or "", "")
            titled.append(f"{title} {text}" if title else text)
            bare.append(text)
    return titled, bare


__all__ = ["CALIBRATION_TEXTS", "calibration_texts", "sample_answers"]
