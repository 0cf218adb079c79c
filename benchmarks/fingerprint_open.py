"""Benchmark: what opening a collection costs to fingerprint it (issue 30, item 7).

Every ``AnswerIndex.build`` (also one that reuses the index) fingerprints its collection:
the SHA-256 of every byte, each file's digest cached by device, inode, size, mtime and
ctime, and a folder's listing of those keys cached with the fingerprint it gave
(:func:`mathir.storage.file_fingerprint`). This measures, on a synthetic Posts.V1.3.xml
of ``--posts`` posts (``benchmarks/index_mse.py``'s generator) and on a folder of
``--thread-files`` files (one post a file, cut from that Posts file):

- ``old``: the fingerprint before issue 30 (7): the first and last MiB of a file, the
  names, sizes and mtimes of a folder's files (its code is copied below);
- ``cold``: the fingerprint with an empty digest cache (reads every byte once);
- ``reopen``: the fingerprint again, the collection unchanged (the median of
  ``--repeats``; goal <= 2 s for a folder of 1M files): one ``stat`` per file and a
  comparison of the listing's digest;
- ``floor``: one ``stat`` per file and nothing else (``os.listdir`` + ``os.stat`` with
  ``dir_fd``), the least a reopen that notices any edit can cost.

    python benchmarks/fingerprint_open.py --posts 1000000 --thread-files 1000000 --json

The collection is generated first (kept with ``--workdir``) and is in the page cache
when measured: ``cold`` is a cold digest cache, not a cold disk (a disk reads the
Posts file at its own speed). Before the cold open the benchmark waits until the files
are 2 s old (``mathir.storage.RACY_NS``): files changed more recently are hashed but not
cached. Wall and CPU seconds (this process) are reported with ``calibration_ms``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import statistics
import sys
import time
from pathlib import Path

try:  # python benchmarks/fingerprint_open.py
    import machine
except ModuleNotFoundError:  # benchmarks.fingerprint_open, from the repository root
    from benchmarks import machine
from mathir import storage
from mathir.storage import walk_glob


def old_file_fingerprint(path: str | Path, sample_bytes: int = 1 << 20) -> dict:
    """``mathir.storage.file_fingerprint`` before issue 30 (7), as it was."""
    p = Path(path).resolve()
    if p.is_dir():
        files = [x for x in walk_glob(p, "*") if x.is_file()]
        h = hashlib.sha256()
        size = 0
        mtime = 0
        for f in files:
            st = f.stat()
            size += st.st_size
            mtime = max(mtime, st.st_mtime_ns)
            h.update(f"{f.relative_to(p)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        return {"path": str(p), "size": size, "mtime_ns": mtime, "sha256_ends": h.hexdigest()}
    st = p.stat()
    h = hashlib.sha256()
    with open(p, "rb") as f:
        h.update(f.read(sample_bytes))
        if st.st_size > 2 * sample_bytes:
            f.seek(-sample_bytes, os.SEEK_END)
        h.update(f.read(sample_bytes))
    return {"path": str(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "sha256_ends": h.hexdigest()}


def make_thread_folder(posts: Path, folder: Path, n_files: int) -> None:
    """``n_files`` files of one ``<row>`` line each, cut from ``posts`` (100 a folder
    level would be more realistic for ARQMath's flat folder; it is flat here too)."""
    folder.mkdir(parents=True)
    with open(posts, encoding="utf-8") as f:
        written = 0
        for line in f:
            if not line.startswith("  <row"):
                continue
            (folder / f"{written}_{written + 1}.html").write_text(line, encoding="utf-8")
            written += 1
            if written == n_files:
                break


def stat_floor(path: Path) -> int:
    """One ``stat`` per file under ``path`` and nothing else (links not followed); the
    number of entries.

    >>> stat_floor(Path(__file__))
    1
    """
    if not path.is_dir():
        os.stat(path)
        return 1
    count = 0
    folders = [str(path)]
    while folders:
        folder = folders.pop()
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for name in os.listdir(fd):
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                count += 1
                if stat.S_ISDIR(st.st_mode):
                    folders.append(os.path.join(folder, name))
        finally:
            os.close(fd)
    return count


def _timed(fn) -> tuple[float, float, object]:
    t0, c0 = time.perf_counter(), machine.cpu_seconds()
    out = fn()
    return time.perf_counter() - t0, machine.cpu_seconds() - c0, out


def _settle(paths: list[Path]) -> None:
    """Wait until every path's ctime is RACY_NS old, so that the cold open caches it."""
    newest = max(os.stat(p).st_ctime_ns for p in paths)
    wait = (newest + storage.RACY_NS - time.time_ns()) / 1e9 + 0.05
    if wait > 0:
        time.sleep(wait)


def measure(path: Path, repeats: int, newest: list[Path]) -> dict:
    """Old, cold and reopen figures of one collection."""
    old_s, old_cpu, _ = _timed(lambda: old_file_fingerprint(path))
    shutil.rmtree(storage.cache_dir(), ignore_errors=True)
    _settle(newest)
    cold_s, cold_cpu, cold = _timed(lambda: storage.file_fingerprint(path))
    reopen = [_timed(lambda: storage.file_fingerprint(path)) for _ in range(repeats)]
    assert all(r[2] == cold for r in reopen), "the fingerprint changed on reopening"
    floor = [_timed(lambda: stat_floor(path)) for _ in range(repeats)]
    cache_bytes = sum(f.stat().st_size for f in (storage.cache_dir() / "fingerprints").iterdir())
    return {
        "bytes": cold["size"],
        "files": cold.get("files", 1),
        "old_seconds": round(old_s, 3), "old_cpu_seconds": round(old_cpu, 3),
        "cold_seconds": round(cold_s, 3), "cold_cpu_seconds": round(cold_cpu, 3),
        "cold_mb_per_second": round(cold["size"] / 1e6 / cold_s, 1),
        "reopen_seconds": round(statistics.median(r[0] for r in reopen), 4),
        "reopen_cpu_seconds": round(statistics.median(r[1] for r in reopen), 4),
        "reopen_max_seconds": round(max(r[0] for r in reopen), 4),
        "floor_seconds": round(statistics.median(r[0] for r in floor), 4),
        "floor_cpu_seconds": round(statistics.median(r[1] for r in floor), 4),
        "cache_bytes": cache_bytes,
    }


def main(argv=None) -> int:
    ap = machine.parser(__doc__)
    ap.add_argument("--posts", type=int, default=100_000, help="posts of the Posts file")
    ap.add_argument("--thread-files", type=int, default=20_000,
                    help="files of the thread folder (0: none)")
    ap.add_argument("--repeats", type=int, default=5, help="reopens measured (median)")
    ap.add_argument("--workdir", help="keep the generated collection here")
    args = ap.parse_args(argv)
    if args.posts < 1 or args.thread_files < 0 or args.repeats < 1:
        ap.error("--posts and --repeats must be at least 1, --thread-files at least 0")
    if args.thread_files > args.posts:
        ap.error("--thread-files cannot exceed --posts (one post a file)")

    with machine.work_folder(args.workdir, prefix="mathir-bench-fp-") as work:
        os.environ[storage.CACHE_ENV] = str(work / "digest-cache")  # private, emptied per case
        posts = work / f"Posts.synthetic.{args.posts}.xml"
        threads = work / f"threads.{args.thread_files}"
        t0 = time.perf_counter()
        if not posts.exists():
            machine.benchmark("index_mse").generate_posts(posts, args.posts)
        if args.thread_files and not threads.exists():
            make_thread_folder(posts, threads, args.thread_files)
        gen_s = time.perf_counter() - t0

        report = {"posts": args.posts, "generate_seconds": round(gen_s, 1),
                  "posts_xml": measure(posts, args.repeats, [posts])}
        if args.thread_files:
            report["thread_folder"] = measure(threads, args.repeats, [threads])
    report["racy_ns"] = storage.RACY_NS
    report["load_average_1m"] = round(os.getloadavg()[0], 2)
    report["cpus"] = os.cpu_count()
    report["calibration_ms"] = machine.calibration_ms()
    machine.print_report(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
