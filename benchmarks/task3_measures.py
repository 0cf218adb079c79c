"""Benchmark: Task 3 automatic measures (LO, CS) for 100 answers x 10 references each.

Generates synthetic answers and references of a few hundred characters with
``$LaTeX$`` formulas (at most 1,200 characters, as Task 3 allows) and times
:func:`mathir.evaluation.open_answers.lexical_overlap` (token-set F1) and
:func:`~mathir.evaluation.open_answers.contextual_similarity` (BERTScore) on this CPU,
with the packaged all-MiniLM-L6-v2 (layer 6) unless ``--model``/``--layer`` say otherwise.
Model loading is timed separately; wall and CPU seconds of the whole run (``wall_s``,
``cpu_s``) and ``calibration_ms`` close the report.

    python benchmarks/task3_measures.py --json
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

try:  # python benchmarks/task3_measures.py
    import machine
except ModuleNotFoundError:  # benchmarks.task3_measures, from the repository root
    from benchmarks import machine
from mathir.evaluation.open_answers import (
    AnswerModel,
    contextual_similarity,
    lexical_overlap,
    normalize_answer,
)

FORMULAS = [r"x^{2}+y^{2}=1", r"\int_0^1 f(x)\,dx", r"\sum_{n=1}^\infty \frac{1}{n^2}",
            r"\|A\|_2\leq\|A\|_F", r"\binom{n}{k}", r"a<b", r"\frac{\partial f}{\partial x}",
            r"\lim_{x\to 0}\frac{\sin x}{x}=1", r"e^{i\pi}+1=0", r"3^{100}\equiv 4\pmod 7"]
WORDS = ("the of and a to is we that by for this so then with as since proof integral "
         "series converges diverges matrix eigenvalue norm derivative function limit prime "
         "modulo induction base case step hence therefore sum product root equation "
         "solution probability complement term bound inequality theorem lemma").split()


def make_text(rng: np.random.Generator, chars: int) -> str:
    parts: list[str] = []
    n = 0
    while n < chars:
        piece = (f"${FORMULAS[rng.integers(len(FORMULAS))]}$" if rng.random() < 0.15
                 else str(WORDS[rng.integers(len(WORDS))]))
        if rng.random() < 0.08:
            piece += "."
        parts.append(piece)
        n += len(piece) + 1
    return " ".join(parts)[:1200]


def main(argv=None) -> int:
    ap = machine.parser(__doc__)
    ap.add_argument("--answers", type=int, default=100)
    ap.add_argument("--references", type=int, default=10, help="references per answer")
    ap.add_argument("--chars", type=int, default=600, help="characters per text")
    ap.add_argument("--model", help="model path or cached name (default: packaged MiniLM)")
    ap.add_argument("--layer", type=int, help="BERTScore layer (default 6)")
    args = ap.parse_args(argv)
    clock = machine.Clock()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    rng = np.random.default_rng(0)
    answers = {f"T.{i}": normalize_answer(make_text(rng, args.chars))
               for i in range(args.answers)}
    refs = {q: [normalize_answer(make_text(rng, args.chars)) for _ in range(args.references)]
            for q in answers}
    model = (AnswerModel(args.model, args.layer or 10) if args.model
             else AnswerModel.offline_default())
    if args.layer is not None:
        model.layer = args.layer

    t0 = time.perf_counter()
    model.tokenize("warm up")
    model.scorer()
    load_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    lo = lexical_overlap(answers, refs, model)
    lo_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    cs = contextual_similarity(answers, refs, model)
    cs_s = time.perf_counter() - t0

    import torch

    result = {
        "benchmark": "task3_measures",
        "answers": args.answers,
        "references_per_answer": args.references,
        "chars_per_text": args.chars,
        "model": model.label,
        "layer": model.layer,
        "official_model": model.is_official,
        "torch_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "model_load_s": round(load_s, 3),
        "lo_s": round(lo_s, 3),
        "cs_s": round(cs_s, 3),
        "lo_cs_total_s": round(lo_s + cs_s, 3),
        "cs_pairs_per_s": round(args.answers * args.references / cs_s, 1),
        "mean_lo": round(float(lo.mean()), 4),
        "mean_cs": round(float(cs.mean()), 4),
        **clock.seconds(3),
        "calibration_ms": machine.calibration_ms(),
    }
    machine.print_report(result, args.json, machine.key_values)
    return 0


if __name__ == "__main__":
    sys.exit(main())
