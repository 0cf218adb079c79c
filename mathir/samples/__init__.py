"""Small collections written for mathir, in the official file formats.

They ship with the package so that ``mathir demo`` and the tests run with no other
files. The content is ours (not copied from Math StackExchange or any dataset).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent


@dataclass(frozen=True)
class ArqmathSample:
    """Paths of the embedded ARQMath sample (see ``samples/arqmath/README.md``)."""

    root: Path

    @property
    def posts(self) -> Path:
        return self.root / "Posts.V1.3.xml"

    @property
    def formulas(self) -> Path:
        return self.root / "latex_representation_v3.tsv"

    @property
    def task1_topics(self) -> Path:
        return self.root / "Topics_Task1_sample.xml"

    @property
    def task2_topics(self) -> Path:
        return self.root / "Topics_Task2_sample.xml"

    @property
    def topic_formulas(self) -> Path:
        return self.root / "topic_formulas_latex.tsv"

    @property
    def task1_qrels(self) -> Path:
        return self.root / "qrels_task1.tsv"

    @property
    def task2_qrels_formula_id(self) -> Path:
        return self.root / "qrels_task2_formula_id.tsv"

    @property
    def task2_qrels_visual_id(self) -> Path:
        return self.root / "qrels_task2_visual_id.tsv"


def arqmath_sample() -> ArqmathSample:
    """The embedded ARQMath sample: 80 questions, 250 answers, 10 + 10 topics.

    >>> arqmath_sample().posts.name
    'Posts.V1.3.xml'
    """
    return ArqmathSample(SAMPLES / "arqmath")
