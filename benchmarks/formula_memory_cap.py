"""Benchmark: an opened formula index searched inside a memory limit that counts file pages.

A process's resident memory (RSS) counts the pages of the memory-mapped files it has
touched. On a kernel that keeps files in the page cache as large folios (here: Linux
6.18, ext4, 8 MB readahead), one fault maps a whole folio, so a few thousand random
reads map an entire 214 MB id array: RSS then says more about the kernel's mapping
granularity than about what the search needs. This benchmark measures what it needs
instead: it evicts the index's files from the page cache, puts a fresh process in a
memory cgroup of ``--limit-mb`` (cgroup v1 ``memory.limit_in_bytes`` or v2
``memory.max``: both charge the page cache that the process reads), and there opens
the index and runs the default ``formula-tuples`` over the Task 2 query formulas,
``--rounds`` times (the first round starts cold). If the limit were too small, the
kernel would kill the process (counted as ``oom_kills``) or thrash (query times).

    python benchmarks/formula_search.py --formulas 28000000 --work W --keep --json
    python benchmarks/formula_memory_cap.py --index W/index-28000000 --limit-mb 3072 --json

Needs a writable memory cgroup (root, or a delegated cgroup); it says so and exits 2
otherwise. Reported: per round the median, p95 and slowest query, the process's RSS,
anonymous and file-backed resident memory at the end, the cgroup's peak charge and how
often it reached the limit (reclaim), and OOM kills; the whole run's wall and CPU seconds
(the search process's included) and ``calibration_ms``.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

try:  # python benchmarks/formula_memory_cap.py
    import machine
except ModuleNotFoundError:  # benchmarks.formula_memory_cap, from the repository root
    from benchmarks import machine
formula_search = machine.benchmark("formula_search")


class CgroupUnavailable(RuntimeError):
    """No memory cgroup can be made here."""


def memory_cgroup_parent(proc_cgroup: str, root: Path = Path("/sys/fs/cgroup")
                         ) -> tuple[Path, int]:
    """The memory cgroup directory this process belongs to, and its version (1 or 2),
    from the text of ``/proc/self/cgroup``.

    >>> memory_cgroup_parent("4:memory:/a/b\\n0::/\\n", Path("/cg"))
    (PosixPath('/cg/memory/a/b'), 1)
    >>> memory_cgroup_parent("0::/user.slice\\n", Path("/cg"))
    (PosixPath('/cg/user.slice'), 2)
    """
    v2 = None
    for line in proc_cgroup.splitlines():
        hierarchy, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if "memory" in controllers.split(","):
            return root / "memory" / path.lstrip("/"), 1
        if hierarchy == "0" and controllers == "":
            v2 = path
    if v2 is not None:
        return root / v2.lstrip("/"), 2
    raise CgroupUnavailable("no memory cgroup in /proc/self/cgroup")


def make_cgroup(limit_bytes: int) -> tuple[Path, int]:
    """A new child memory cgroup of this process's one, limited to ``limit_bytes``."""
    parent, version = memory_cgroup_parent(Path("/proc/self/cgroup").read_text())
    limit_file = "memory.limit_in_bytes" if version == 1 else "memory.max"
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise CgroupUnavailable(f"memory cgroup {parent} is not writable (run as root, or in "
                                "a delegated cgroup)")
    if version == 2 and "memory" not in (parent / "cgroup.subtree_control").read_text():
        raise CgroupUnavailable(f"the memory controller is not enabled for {parent}'s children")
    group = parent / f"mathir-memory-cap-{os.getpid()}"
    try:
        group.mkdir()
        (group / limit_file).write_text(str(limit_bytes))
    except OSError as e:
        if group.is_dir():
            group.rmdir()
        raise CgroupUnavailable(f"cannot make a memory cgroup under {parent}: {e}") from None
    return group, version


def cgroup_figures(group: Path, version: int) -> dict:
    """Peak charge (MB), times the limit was reached, and OOM kills of the cgroup."""
    def read(name: str) -> str:
        p = group / name
        return p.read_text() if p.is_file() else ""

    def field(text: str, key: str) -> int:
        for line in text.splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
        return 0

    if version == 1:
        peak, hits = read("memory.max_usage_in_bytes"), read("memory.failcnt")
        oom = field(read("memory.oom_control"), "oom_kill")
    else:
        peak, events = read("memory.peak"), read("memory.events")
        hits, oom = field(events, "max"), field(events, "oom_kill")
    return {"cgroup_peak_mb": round(int(peak or 0) / 2**20) if peak.strip() else None,
            "limit_reached": int(hits or 0), "oom_kills": oom}


def evict(index: Path) -> int:
    """Drop the index's files from the page cache (where no one maps them); bytes."""
    total = 0
    for p in index.rglob("*"):
        if p.is_file():
            fd = os.open(p, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
            total += p.stat().st_size
    return total


def _capped_search(procs: str, index: str, queries: list[str], rounds: int, queue) -> None:
    # Join the cgroup before importing mathir or touching the index (only the bare
    # interpreter's few MB, allocated before this line, stay charged elsewhere).
    with open(procs, "w") as f:
        f.write(str(os.getpid()))
    import pandas as pd

    from mathir.indexing.formula_index import FormulaIndex
    from mathir.pipelines.formula import formula_tuples

    pipe = formula_tuples(FormulaIndex(index))
    out: dict = {"rounds": []}
    for _ in range(rounds):
        times = []
        for i, query in enumerate(queries):
            t0 = time.perf_counter()
            pipe.transform(pd.DataFrame({"qid": [str(i)], "query": [query]}))
            times.append(1000 * (time.perf_counter() - t0))
        ordered = sorted(times)
        out["rounds"].append({"median_ms": round(statistics.median(times), 2),
                              "p95_ms": round(ordered[-(-95 * len(times) // 100) - 1], 2),
                              "slowest_ms": round(ordered[-1], 1)})
    rss, anon = formula_search.rss_mb(), formula_search.anon_rss_mb()
    # (file_rss_mb: the mapped files' pages, and shared memory's, which Python has none of)
    out.update(rss_mb=round(rss), anon_rss_mb=round(anon), file_rss_mb=round(rss - anon))
    queue.put(out)


def main(argv: list[str] | None = None) -> int:
    ap = machine.parser(__doc__, data="arqmath")
    ap.add_argument("--index", type=Path, required=True, help="a FormulaIndex directory")
    ap.add_argument("--limit-mb", type=int, default=3072,
                    help="the cgroup's memory limit, page cache included (default 3072)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2,
                    help="passes over the queries; the first starts cold (default 2)")
    args = ap.parse_args(argv)
    if not (args.index / "manifest.json").is_file():
        print(f"error: not a formula index: {args.index}", file=sys.stderr)
        return 2
    if args.limit_mb < 64 or args.queries < 1 or args.rounds < 1:
        ap.error("--limit-mb must be at least 64, --queries and --rounds at least 1")
    clock = machine.Clock()
    queries = formula_search.task2_queries(args.data, args.queries)
    if queries is None:
        print(f"error: no Task 2 topics under {args.data / 'topics' / 'task2'}", file=sys.stderr)
        return 2
    try:
        group, version = make_cgroup(args.limit_mb * 2**20)
    except CgroupUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        evicted = evict(args.index)
        ctx = multiprocessing.get_context("spawn")
        queue = ctx.Queue()
        proc = ctx.Process(target=_capped_search, args=(
            str(group / "cgroup.procs"), str(args.index), queries, args.rounds, queue))
        proc.start()
        proc.join()
        result = queue.get() if proc.exitcode == 0 else {"exitcode": proc.exitcode}
        result.update(cgroup_figures(group, version))
    finally:
        try:
            group.rmdir()
        except OSError:
            pass
    report = {"index": str(args.index), "limit_mb": args.limit_mb, "cgroup_version": version,
              "evicted_mb": round(evicted / 2**20), "queries": len(queries), **result,
              "load_average_after": round(os.getloadavg()[0], 2), **clock.seconds(1),
              "calibration_ms": machine.calibration_ms()}
    machine.print_report(report, args.json)
    return 0 if "exitcode" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
