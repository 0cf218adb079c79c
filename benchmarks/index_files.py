"""Benchmark: what checking an index's data files costs (issue 49): the ``stat`` check at
every open, and reading every byte (``MATHIR_REDIGEST=1``, ``mathir verify``).

Builds the answer index, the answer texts and the formula index of a synthetic
Posts.V1.3.xml of ``--posts`` posts (``benchmarks/index_mse.py``'s generator: about 65%
of them answers, so 1,540,000 posts give 1M answers), then measures for each:

- ``build``: the build, with the records of its data files
  (:func:`mathir.storage.record_data_files`) that it now writes;
- ``record``: those records alone (a SHA-256 of every data file);
- ``stat_check_ms``: :func:`mathir.storage.data_file_problems` of the unchanged index,
  one ``stat`` per file (median of 21), and ``open_ms``: the class opening it by path
  (median of 11);
- ``verify``: :func:`mathir.storage.verify_index`, every byte read (median of 3);
- for the answer index, ``touched``: every data file touched (its mtime and ctime
  moved), the first open (reads every file: digests cached by stat key) and the next.

    python benchmarks/index_files.py --posts 1540000 --workdir /tmp/bench-files --json

The files are in the page cache when read. Wall and CPU seconds (this process).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

try:  # python benchmarks/index_files.py
    import machine
except ModuleNotFoundError:  # benchmarks.index_files, from the repository root (tests)
    from benchmarks import machine
from mathir import storage
from mathir.storage import data_file_problems, read_manifest, record_data_files, verify_index


def timed(f, repeats: int = 1) -> tuple[float, float, object]:
    """Median wall and CPU seconds of ``repeats`` calls of ``f``, and its last result."""
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        out = f()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), out


def measure(kind: str, path: Path, build) -> dict:
    """The figures of one kind of index (see the module doc)."""
    wall, cpu, index = timed(lambda: build(path))
    records = read_manifest(path)[storage.DATA_FILES]
    size = sum(r["size"] for r in records.values())
    rec_w, rec_c, _ = timed(lambda: record_data_files(path))
    stat_w, stat_c, problems = timed(lambda: data_file_problems(path, digests=False), 21)
    assert problems == [], problems
    open_w, _, _ = timed(lambda: type(index)(path), 11)
    ver_w, ver_c, verified = timed(lambda: verify_index(path), 3)
    assert verified.ok, verified.problems
    out = {"files": len(records), "bytes": size,
           "build": {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2)},
           "record": {"wall_s": round(rec_w, 3), "cpu_s": round(rec_c, 3)},
           "stat_check_ms": round(stat_w * 1e3, 3), "stat_check_cpu_ms": round(stat_c * 1e3, 3),
           "open_ms": round(open_w * 1e3, 3),
           "verify": {"wall_s": round(ver_w, 3), "cpu_s": round(ver_c, 3),
                      "mb_per_s": round(size / 1e6 / ver_w, 1)}}
    if kind == "answers":
        for rel in records:
            os.utime(path / rel)
        time.sleep(storage.RACY_NS / 1e9 + 0.5)  # older than RACY_NS: their digests cached
        first = timed(lambda: data_file_problems(path, digests=False))
        again = timed(lambda: data_file_problems(path, digests=False), 3)
        out["touched"] = {"first_open": {"wall_s": round(first[0], 3), "cpu_s": round(first[1], 3)},
                          "next_open_ms": round(again[0] * 1e3, 3)}
    return out


def main(argv=None) -> int:
    ap = machine.parser(__doc__)
    ap.add_argument("--posts", type=int, default=154_000, help="posts of the Posts file")
    ap.add_argument("--kinds", default="answers,texts,formulas",
                    help="comma-separated: answers, texts, formulas")
    ap.add_argument("--workdir", help="keep the generated collection and indexes here")
    args = ap.parse_args(argv)
    from mathir.indexing.answer_index import AnswerIndex
    from mathir.indexing.formula_index import FormulaIndex
    from mathir.indexing.text_store import AnswerTexts

    with machine.work_folder(args.workdir, prefix="mathir-bench-files-") as work:
        os.environ[storage.CACHE_ENV] = str(work / "digest-cache")
        posts = work / f"Posts.synthetic.{args.posts}.xml"
        if not posts.exists():
            machine.benchmark("index_mse").generate_posts(posts, args.posts)
        with open(posts, encoding="utf-8") as f:
            answers = sum('PostTypeId="2"' in line for line in f)
        builders = {"answers": lambda p: AnswerIndex.build(posts, p, quiet=True),
                    "texts": lambda p: AnswerTexts.build(posts, p, quiet=True),
                    "formulas": lambda p: FormulaIndex.build(posts, p, quiet=True)}
        report = {"posts": args.posts, "answers": answers,
                  "load_average_before": machine.load_average()}
        for kind in args.kinds.split(","):
            report[kind] = measure(kind, work / f"{kind}.{args.posts}", builders[kind])
    report["calibration_ms"] = machine.calibration_ms()
    machine.print_report(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
