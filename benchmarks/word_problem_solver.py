"""Benchmark: the template-retrieval solvers' accuracies on DRAW-1K's 200 test problems.

The published figures of docs/word_problems.md (the test suite checks the solvers on the
embedded sample only): the training problems of ``draw-train.txt`` are indexed, every
problem of ``draw-test.txt`` (or ``--split dev``) is solved by ``template-retrieval``
(hand-set weights) and ``trained-template-retrieval`` (weights learned on the training
problems), and :func:`mathir.evaluation.word_problems.compare` scores solution, equation
and derivation accuracy. ``published`` holds the docs' figures for the test split and
``matches`` says whether every accuracy equals them (to 1e-6).

    python benchmarks/word_problem_solver.py --json
    python benchmarks/word_problem_solver.py --split dev --json

``--json`` prints one JSON object on one line; ``wall_s`` and ``cpu_s`` (this process)
for the index, each solver and the whole run, and ``calibration_ms``.
"""

from __future__ import annotations

import json
import sys

try:  # python benchmarks/word_problem_solver.py
    import machine
except ModuleNotFoundError:  # benchmarks.word_problem_solver, from the repository root
    from benchmarks import machine

#: docs/word_problems.md, DRAW-1K test (solution / equation / derivation accuracy)
PUBLISHED = {"template-retrieval": [0.465, 0.395, 0.445],
             "trained-template-retrieval": [0.545, 0.435, 0.520]}
ACCURACIES = ["solution_acc", "equation_acc", "derivation_acc"]


def solve(draw, split: str = "test") -> dict:
    """Accuracies and seconds of both solvers on DRAW-1K's ``split`` (folder ``draw``:
    ``draw.json``, ``draw-train.txt``, ``draw-SPLIT.txt``)."""
    from mathir.evaluation.word_problems import compare
    from mathir.pipelines.word_problems import (
        WordProblemIndex,
        template_retrieval,
        trained_template_retrieval,
    )
    from mathir.qrels.word_problems import read_gold
    from mathir.topics.word_problems import read_problem_topics

    clock = machine.Clock()
    index = WordProblemIndex.build(draw / "draw.json", train=draw / "draw-train.txt")
    out: dict = {"split": split, "index": clock.seconds()}
    topics = read_problem_topics(draw / f"draw-{split}.txt")
    gold = read_gold(draw / f"draw-{split}.txt")
    runs, seconds = {}, {}
    for name, factory in (("template-retrieval", template_retrieval),
                          ("trained-template-retrieval", trained_template_retrieval)):
        step = machine.Clock()
        res = factory(index).transform(topics)
        runs[name] = res.assign(**{c: res[c].map(json.loads)
                                   for c in ("solution", "template", "alignment", "equations")})
        seconds[name] = step.seconds()
    table = compare(runs, gold)
    out["problems"] = len(topics)
    out["accuracy"] = {name: dict(zip(ACCURACIES, (round(float(v), 6)
                                                  for v in table.loc[name, ACCURACIES]),
                                      strict=True)) for name in runs}
    out["seconds"] = seconds
    if split == "test":
        out["published"] = PUBLISHED
        out["matches"] = all(abs(out["accuracy"][n][a] - v) < 1e-6 for n, values
                             in PUBLISHED.items() for a, v in zip(ACCURACIES, values,
                                                                  strict=True))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = machine.parser(__doc__, data="word_problems")
    ap.add_argument("--split", default="test", choices=("test", "dev"))
    args = ap.parse_args(argv)
    draw = args.data / "draw_release"
    if not (draw / "draw.json").is_file():
        print(f"error: no DRAW-1K release in {draw} (--data)", file=sys.stderr)
        return 2
    clock = machine.Clock()
    report = solve(draw, args.split)
    report.update(clock.seconds(), calibration_ms=machine.calibration_ms())
    machine.print_report(report, args.json)
    return 0 if report.get("matches", True) else 1


if __name__ == "__main__":
    sys.exit(main())
