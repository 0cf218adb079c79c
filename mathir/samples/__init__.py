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

    @property
    def task3_qrels(self) -> Path:
        """Task 3 qrels (``A.k 0 d_N rel``) of the judged sample Task 3 runs."""
        return self.root / "task3" / "qrel_task3_sample.tsv"

    @property
    def task3_assignments(self) -> Path:
        """Task 3 assignment file (``run topic d_N``)."""
        return self.root / "task3" / "teams_document_id.tsv"

    @property
    def task3_runs(self) -> Path:
        """Directory of the judged sample Task 3 runs (``TEAM-task3-....tsv``)."""
        return self.root / "task3" / "runs"


def arqmath_sample() -> ArqmathSample:
    """The embedded ARQMath sample: 80 questions, 250 answers, 10 + 10 topics.

    >>> arqmath_sample().posts.name
    'Posts.V1.3.xml'
    """
    return ArqmathSample(SAMPLES / "arqmath")


@dataclass(frozen=True)
class WorldtreeSample:
    """Paths of the embedded WorldTree sample (see ``samples/worldtree/README.md``)."""

    root: Path

    @property
    def tables(self) -> Path:
        """The tablestore's table directory."""
        return self.root / "annotation" / "expl-tablestore-sample" / "tables"

    @property
    def lemmas(self) -> Path:
        """``lemmatization-en.txt`` (``lemma<TAB>word``)."""
        return self.root / "annotation" / "lemmatization-en.txt"

    def questions(self, split: str = "Dev") -> Path:
        """The question TSV of ``split`` (Train, Dev or Test)."""
        return self.root / "questions" / f"ARC-Elementary+EXPL-{split}.tsv"


def worldtree_sample() -> WorldtreeSample:
    """The embedded WorldTree sample: 11 tables of facts, Train/Dev/Test questions.

    >>> worldtree_sample().questions("Dev").name
    'ARC-Elementary+EXPL-Dev.tsv'
    """
    return WorldtreeSample(SAMPLES / "worldtree")


@dataclass(frozen=True)
class WordProblemsSample:
    """Paths of the embedded word-problem sample (``samples/word_problems/README.md``)."""

    root: Path

    @property
    def problems(self) -> Path:
        return self.root / "draw.json"

    def split(self, name: str) -> Path:
        return self.root / f"draw-{name}.txt"


def word_problems_sample() -> WordProblemsSample:
    """The embedded word problems: 14 problems with derivations, DRAW-1K format.

    >>> word_problems_sample().split("test").name
    'draw-test.txt'
    """
    return WordProblemsSample(SAMPLES / "word_problems")
