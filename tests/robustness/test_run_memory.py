"""Reading a big run holds its rows compactly: peak memory of a subprocess.

A 419 MB run with 10 million rows for one topic used to take 4.9 GB (every row as a
Python tuple, then a frame, then sorted copies). ARQMath runs now keep every row, as
trec_eval does (no cut at 1,000), in columns: about 215 bytes a row for Task 1. Each
reader now runs in its own process (so that pytest's memory does not count): it reads a
small run first (imports, caches), then the big one, and reports how much its peak
resident size grew (``ru_maxrss``). Before the fix the growth was about 15x the file
for ARQMath runs and 9-12x for WorldTree runs; the bounds below are a fraction of it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROWS = 400_000
MB = 1024 * 1024

SCRIPT = """
import json, resource, sys, warnings
warnings.simplefilter("ignore")
kind, small, big = sys.argv[1:]
if kind == "task1":
    from mathir.runs.trec import read_run as read
elif kind == "task2":
    from mathir.runs.arqmath_task2 import read_task2_run as read
else:
    from mathir.runs.worldtree import read_run as read
read(small)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
run = read(big)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"grown_bytes": grown * 1024, "rows": len(run)}))
"""


def _task1(i: int) -> str:
    return f"A.1\t{1_000_000 + i}\t{i + 1}\t{(i * 7919) % 100_003 / 1000}\tbig\n"


def _task2(i: int) -> str:
    return f"B.1\t{2_000_000 + i}\t{1_000_000 + i // 3}\t{i + 1}\t{(i * 7919) % 100_003}\tbig\n"


def _predict(i: int) -> str:  # 40 questions x 10,000 facts, as a full prediction file
    return f"Mercury_{i // 10_000:07d}\t{(i % 10_000) * 7919 % 65_536:04x}-9c2e-{i % 10_000:05d}\n"


def _trec(i: int) -> str:
    fact = f"{(i % 10_000) * 7919 % 65_536:04x}-9c2e-{i % 10_000:05d}"
    return f"Mercury_{i // 10_000:07d} Q0 {fact} {i % 10_000 + 1} {-(i % 10_000)}.5 bm25\n"


# kind, line maker, rows kept, bound on the growth (bytes): ARQMath readers keep every row
# (trec_eval cuts nothing), in columns: about 215 bytes a row measured for Task 1;
# WorldTree readers keep every row (five 8-byte cells, ids shared) and may use about
# twice that while reading.
CASES = {
    "task1": ("task1", _task1, ROWS, 300 * ROWS + 12 * MB),
    "task2": ("task2", _task2, ROWS, 400 * ROWS + 12 * MB),
    "worldtree predictions": ("worldtree", _predict, ROWS, 100 * ROWS + 12 * MB),
    "worldtree TREC": ("worldtree", _trec, ROWS, 100 * ROWS + 12 * MB),
}


@pytest.mark.parametrize("case", list(CASES))
def test_reading_a_big_run_holds_what_is_kept(tmp_path, case):
    kind, line, kept, bound = CASES[case]
    small, big = tmp_path / "small.tsv", tmp_path / "big.tsv"
    small.write_text("".join(line(i) for i in range(2000)))
    with open(big, "w") as f:
        f.writelines(line(i) for i in range(ROWS))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, kind, str(small), str(big)],
                          capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["rows"] == kept
    file_size = big.stat().st_size
    assert result["grown_bytes"] < bound, (
        f"reading a {file_size / MB:.0f} MB run grew memory by "
        f"{result['grown_bytes'] / MB:.0f} MB (bound {bound / MB:.0f} MB)")
