"""Speed of answer checking: simple numeric checks, symbolic (SymPy) checks, worst case.

Inputs are generated (no data files): responses ending with ``The answer is: N`` or a
last number, LaTeX pairs that need SymPy, and one pathological pair whose
simplification does not finish, which the per-check time limit must cut off. Then the
hostile inputs (``hostile``: wall and CPU seconds of each, and its verdict): a
10,000-digit answer, a 50 MB response, 200,000 ``\\boxed{``, JSON nested 100,000 deep,
nested LaTeX commands, and texts just under the length cap built to be slow (each took
seconds to forever before linear-time extraction; CPU seconds are comparable on a
shared machine, wall seconds are not). The whole run's wall and CPU seconds (``wall_s``,
``cpu_s``) and ``calibration_ms`` close the report.

    python benchmarks/answers.py --json
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

try:  # python benchmarks/answers.py
    import machine
except ModuleNotFoundError:  # benchmarks.answers, from the repository root
    from benchmarks import machine
from mathir.answer_checking import SymbolicChecker, check_answer, latex_check
from mathir.answer_checking.checking import MAX_CHARS, read_answer_records
from mathir.answer_checking.extraction import extract_answer
from mathir.errors import InputError


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


def _verdict(j) -> str:
    return f"skipped: {j.skipped}" if j.skipped else f"correct={j.correct}"


def _deep_json(n: int) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write('{"response": ' + "[" * n + "]" * n + ', "gold": "1"}\n')
    try:
        list(read_answer_records(f.name))
        return "read"
    except InputError as e:
        return f"InputError: {e.message}"
    finally:
        Path(f.name).unlink()


def hostile_cases() -> dict[str, Callable[[], str]]:
    """Name -> a check on hostile input returning its verdict (inputs built beforehand)."""
    digits = "9" * 10_000
    huge = "1" * (50 * 2**20)
    boxes = "\\boxed{" * 200_000
    nested = "\\boxed{" * 100_000 + "1" + "}" * 100_000
    cap = MAX_CHARS - 10
    chain = ("1" + ",234" * (cap // 4))[:cap - 1] + ","
    run = "1" * cap
    ors = " or ".join(map(str, range(cap // 10)))  # 100,000 solutions, 1 MB
    decimals = [f"{i}.5" for i in range(50_000)]  # reversed: each is found far down the list
    return {
        "digits_10k": lambda: _verdict(check_answer(f"The answer is {digits}", digits)),
        "response_50mb": lambda: _verdict(check_answer(huge, "1")),
        "boxed_200k": lambda: _verdict(check_answer(boxes, "1")),
        "boxed_200k_extract": lambda: repr(extract_answer(boxes))[:20],
        "json_depth_100k": lambda: _deep_json(100_000),
        "latex_nested_100k": lambda: _verdict(check_answer(nested, "1", check="latex")),
        "cap_digit_run": lambda: _verdict(check_answer(run, run)),
        "cap_comma_chain": lambda: _verdict(check_answer(chain, chain)),
        "cap_dolphin_or": lambda: _verdict(check_answer("The answer is: " + ors, ors, check="dolphin")),
        "decimals_50k": lambda: _verdict(check_answer("The answer is " + " ".join(decimals),
                                                      " ".join(reversed(decimals)))),
    }


def _text(result: dict) -> str:
    lines = []
    for k, v in result.items():
        if k == "hostile":
            for name, h in v.items():
                lines.append(f"  {name:22s} {h['wall_s']:7.3f} s wall {h['cpu_s']:7.3f} s CPU  "
                             f"{h['verdict']}")
        else:
            lines.append(f"{k:24s} {v}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = machine.parser(__doc__)
    ap.add_argument("--n", type=int, default=20000, help="simple checks (default 20000)")
    ap.add_argument("--symbolic", type=int, default=80, help="symbolic checks (default 80)")
    ap.add_argument("--timeout", type=float, default=2.0, help="per symbolic check (s)")
    args = ap.parse_args(argv)
    clock = machine.Clock()
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
    hostile = {}
    for name, run in hostile_cases().items():
        t0, c0 = time.perf_counter(), machine.cpu_seconds()
        verdict = run()
        hostile[name] = {"wall_s": round(time.perf_counter() - t0, 3),
                         "cpu_s": round(machine.cpu_seconds() - c0, 3), "verdict": verdict}
    result["hostile"] = hostile
    result["hostile_worst_cpu_s"] = max(h["cpu_s"] for h in hostile.values())
    result.update(clock.seconds(2))
    result["calibration_ms"] = machine.calibration_ms()
    machine.print_report(result, args.json, _text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
