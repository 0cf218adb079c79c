"""Hostile answers: every check finishes whatever the text, and the SymPy worker dies
with its parent.

Each hostile check runs in a fresh interpreter with a generous limit (LIMIT seconds):
with linear-time extraction and checking each takes about a second even on a loaded
machine, while the quadratic code before took from minutes to days on them. The limit
is there only so that a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 60

HOSTILE = {
    # The reference number patterns backtrack over a long digit run at every digit.
    "100,000 digits": ("d = '9' * 100_000; r = check_answer('The answer is ' + d, d)",
                       "r.correct", True),
    # Each \boxed{ scanned to the end of the text: 200,000 x 1.4 MB.
    "200,000 boxes": ("r = extract_answer('\\\\boxed{' * 200_000 + '\\\\boxed{7}')", "r", "7"),
    # Unwrapping nested commands re-searched and rebuilt the text once per command.
    "nested LaTeX": ("r = check_answer('\\\\boxed{' * 100_000 + '1' + '}' * 100_000, '1', "
                     "check='latex')", "r.correct", True),
    "nested text": ("r = normalize_latex('\\\\text{' * 100_000 + 'X' + '}' * 100_000)", "r", "x"),
    # "1,234,234,...,234,": the comma-group branch rescanned the chain at every group.
    "comma chain": ("r = extract_answer('1' + ',234' * 250_000 + ',')", "r", "234"),
    # Every solution compared with every other: 100,000 x 100,000.
    "100,000 alternatives": ("a = [str(i) for i in range(100_000)]; "
                             "r = check_answer('The answer is: ' + ' or '.join(a), "
                             "' or '.join(reversed(a)), check='dolphin')", "r.correct", True),
    # \s+or\s+ tried at every space of a long run of spaces.
    "spaces": ("r = dolphin_check('1' + ' ' * 400_000 + 'x', '1')", "r", False),
    # Thousands of non-integers on both sides: refused, not compared for minutes.
    "many decimals": ("a = [f'{i}.5' for i in range(50_000)]; "
                      "r = check_answer('The answer is ' + ' '.join(a), ' '.join(reversed(a)))",
                      "(r.correct, r.skipped.split(' (')[0])",
                      [False, "more than 1,000,000 number comparisons"]),
    # Past the float range numbers compare exactly: no 10**exponent is built, and a
    # 10,000-digit non-integer is compared in linear time.
    "huge exponents": ("r = [check_answer('The answer is ' + a, b).correct for a, b in ["
                       "('1.5e-999999999999999999', '1.5001e-999999999999999999'), "
                       "('1.5e999999999999999999', '1.5e-999999999999999999'), "
                       "('1e999999999', '1.0e999999999'), "
                       "('1e' + '9' * 100_000, '1e' + '9' * 100_000)]]",
                       "r", [True, False, True, False]),
    "10,000-digit decimals": ("d = '9' * 10_000; r = [check_answer('The answer is ' + d + '.5', "
                              "g).correct for g in (d + '.4', '5' + d[1:] + '.5')]",
                              "r", [True, False]),
    # Each of 1,000 gold numbers against 1,000 huge decimals just past the tolerance's
    # edge, which only exact arithmetic tells apart: a million exact comparisons, refused
    # at the cap like any other million.
    "decimals at the tolerance's edge": (
        "x = '1' + '0' * 400 + '.5'; "
        "near = [str(999 * 10**397 - i) + '.4995' for i in range(1, 1001)]; "
        "r = check_answer('The answer is ' + ' '.join(near + [x] * 1000), ' '.join([x] * 1000), "
        "policy='model_include_gt')",
        "(r.correct, r.skipped.split(' (')[0])",
        [False, "more than 1,000,000 number comparisons"]),
    "50 MB response": ("r = check_answer('1' * 50_000_000, '1')", "(r.correct, r.skipped)",
                       [False, "response longer than 1,000,000 characters"]),
}
IMPORTS = ("import json; from mathir.answer_checking.checking import check_answer; "
           "from mathir.answer_checking.extraction import extract_answer; "
           "from mathir.answer_checking.latex import normalize_latex; "
           "from mathir.answer_checking.dolphin import dolphin_check; ")


def _python(code: str, what: str) -> str:
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=LIMIT, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what}: not done in {LIMIT} s")
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_check_finishes(case):
    setup, result, expected = HOSTILE[case]
    out = _python(IMPORTS + setup + f"; print(json.dumps({result}))", case)
    assert json.loads(out) == expected


def test_deep_json_is_one_error_line(tmp_path):
    f = tmp_path / "deep.jsonl"
    f.write_text('{"response": "1", "gold": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    done = subprocess.run([sys.executable, "-m", "mathir.cli", "answers", "--input", str(f)],
                          capture_output=True, text=True, timeout=LIMIT, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr == f"error: {f}:1: JSON nested deeper than 100 levels\n"


# --- the SymPy worker dies with its parent ----------------------------------------------

linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
# simplify expands two 5-term 40th powers: minutes of CPU, past the 600 s limit given
HARD = {"response": "The answer is: (x+y+z+w+1)^{40}", "gold": "(x+y+z+w)^{40}",
        "check": "latex", "policy": "conservative"}


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # fields from the state on


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] not in "ZX"  # a zombie is dead, only not reaped


def _cpu_seconds(pid: int) -> float:
    stat = _stat(pid) or [0] * 13
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _children(pid: int) -> list[int]:
    kids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            stat = _stat(int(p.name))
            if stat is not None and stat[1] == str(pid):
                kids.append(int(p.name))
    return kids


def _wait(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


@linux_only
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_worker_dies_with_mathir_answers(tmp_path, sig):
    f = tmp_path / "hard.jsonl"
    f.write_text(json.dumps(HARD) + "\n")
    cli = subprocess.Popen([sys.executable, "-m", "mathir.cli", "answers", "--input", str(f),
                            "--timeout", "600"], cwd=ROOT, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    workers: list[int] = []

    def started() -> bool:
        workers[:] = _children(cli.pid)
        return bool(workers)

    try:
        assert _wait(started, LIMIT), "mathir answers started no worker"
        # past its imports (half a second of CPU) and into the simplification
        assert _wait(lambda: _cpu_seconds(workers[0]) > 2, LIMIT), "the worker is not busy"
        cli.send_signal(sig)
        cli.wait(LIMIT)
        assert _wait(lambda: not _alive(workers[0]), 30), "the worker outlived mathir answers"
    finally:
        cli.kill()
        cli.wait()
        for pid in workers:  # a failed run must not leave the worker spinning
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
