"""Speed of answer checking: simple numeric checks, symbolic (SymPy) checks, worst case.

Inputs are generated (no data files): responses ending with ``The answer is: N`` or a
last number, LaTeX pairs that need SymPy, and one pathological pair whose
simplification does not finish, which the per-check time limit must cut off.

    python benchmarks/answers.py --json
"""

from __future__ import annotations

import argparse
import json
import random
import time

from mathir.answers import SymbolicChecker, check_answer, latex_check


def simple_cases(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.randint(1, 500), rng.randint(1, 500)
        tail = f"The answer is: {a + b}." if i % 2 else f"So the total is {a + b} apples."
        gold = str(a + b if i % 3 else a + b + 1)
        out.append((f"She has {a} apples and buys {b} more, {a} + {b} = {a + b}. {tail}", gold))
    return out


SYMBOLIC = [("7x^2 - 63", "7(x - 3)(x + 3)"), ("2\\sqrt{3}", "\\sqrt{12}"),
            ("\\frac{x^2-1}{x-1}", "x+1"), ("\\sqrt{169}", "13"), ("\\frac{3}{7}", "0.428571"),
            ("(a+b)^2", "a^2+2ab+b^2"), ("\\sin^2 x + \\cos^2 x", "1"), ("x+1", "x+2")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="simple checks (default 20000)")
    ap.add_argument("--symbolic", type=int, default=80, help="symbolic checks (default 80)")
    ap.add_argument("--timeout", type=float, default=2.0, help="per symbolic check (s)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    cases = simple_cases(args.n)
    t0 = time.perf_counter()
    correct = sum(check_answer(r, g).correct for r, g in cases)
    simple_s = time.perf_counter() - t0

    with SymbolicChecker(timeout=args.timeout) as checker:
        checker.equivalent("1", "1")  # start the worker (not timed)
        pairs = [SYMBOLIC[i % len(SYMBOLIC)] for i in range(args.symbolic)]
        t0 = time.perf_counter()
        sym_ok = sum(latex_check(a, b, "conservative", checker=checker) for a, b in pairs)
        sym_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        worst = latex_check("(x+y+z+w+1)^{20}", "(x+y+z+w)^{20}", "conservative", checker=checker)
        worst_s = time.perf_counter() - t0
        timeouts = checker.timeouts

    result = {
        "simple_checks": args.n, "simple_correct": correct,
        "simple_checks_per_s": round(args.n / simple_s, 1),
        "symbolic_checks": args.symbolic, "symbolic_correct": sym_ok,
        "symbolic_checks_per_s": round(args.symbolic / sym_s, 2),
        "timeout_s": args.timeout, "worst_case_s": round(worst_s, 3),
        "worst_case_result": worst, "timeouts": timeouts,
        "worst_case_bounded": worst_s <= args.timeout + 0.5,
    }
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:24s} {v}")


if __name__ == "__main__":
    main()
