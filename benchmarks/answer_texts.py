"""Benchmark: the on-disk answer texts (``AnswerTexts``, SQLite) at ARQMath's scale.

Generates a synthetic ``Posts.V1.3.xml`` holding exactly N answers (the generator of
``benchmarks/index_mse.py``: 60 Zipf words and one formula per post, 1-3 answers per
question), builds the store with ``AnswerTexts.build`` and reports the build time
(wall and CPU; the part spent parsing the XML apart from the part spent storing), the
size on disk, and, in a fresh process, resident memory (VmRSS) before opening, after
opening and after looking up ``--batches`` random batches of ``--batch-size`` docnos,
with the median batch lookup time. ``--compare-jsonl`` also writes the same answers as
the old layout (``texts.jsonl``, format 1) and measures, in another fresh process, what
loading it the old way (``pd.read_json`` then a docno -> text dict) costs.

    python benchmarks/answer_texts.py --answers 1400000 --compare-jsonl --json

Memory figures come from ``/proc/self/status`` (VmRSS now, VmHWM the peak), so Linux only.
Wall and CPU seconds (this process and its children) are reported with ``calibration_ms``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

try:  # python benchmarks/answer_texts.py
    import machine
except ModuleNotFoundError:  # benchmarks.answer_texts, from the repository root
    from benchmarks import machine


def proc_status_mb(field: str = "VmRSS") -> float:
    """A memory figure of this process from ``/proc/self/status``, in MiB."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def generate_answers(path: Path, n_answers: int, seed: int = 0) -> int:
    """Write a Posts file with exactly ``n_answers`` answers; returns its number of posts.

    ``generate_posts`` writes one row per line and about 65% answers: a few more posts
    than needed are generated, then the file is cut after the ``n_answers``-th answer.
    """
    generate_posts = machine.benchmark("index_mse").generate_posts

    n_posts = int(n_answers / 0.6) + 100
    while True:
        generate_posts(path, n_posts, seed=seed)
        answers = posts = 0
        with open(path, "r+b") as f:
            while line := f.readline():
                if line.startswith(b"  <row "):
                    posts += 1
                    answers += b'PostTypeId="2"' in line
                    if answers == n_answers:
                        f.truncate(f.tell())
                        f.write(b"</posts>\n")
                        return posts
        n_posts *= 2  # too few answers (not expected): generate more


def build(posts: Path, out: Path) -> dict:
    """``AnswerTexts.build`` timed; the time spent reading the XML is told apart."""
    from mathir.indexing import dense_index

    parse = {"wall": 0.0, "cpu": 0.0}
    real = dense_index.iter_answer_texts

    def timed(collection):
        it = real(collection)
        while True:
            w, c = time.perf_counter(), time.process_time()
            try:
                doc = next(it)
            except StopIteration:
                return
            finally:
                parse["wall"] += time.perf_counter() - w
                parse["cpu"] += time.process_time() - c
            yield doc

    dense_index.iter_answer_texts = timed
    try:
        w, c = time.perf_counter(), time.process_time()
        texts = dense_index.AnswerTexts.build(posts, out, overwrite=True, quiet=True)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
    finally:
        dense_index.iter_answer_texts = real
    return {"answers": len(texts), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "xml_parse_wall_s": round(parse["wall"], 1), "xml_parse_cpu_s": round(parse["cpu"], 1),
            "store_wall_s": round(wall - parse["wall"], 1),
            "store_cpu_s": round(cpu - parse["cpu"], 1),
            "disk_bytes": sum(f.stat().st_size for f in out.rglob("*") if f.is_file()),
            "process_peak_rss_mb": round(proc_status_mb("VmHWM"))}  # generation included


def measure_store(store: Path, batches_file: Path) -> dict:
    """In a fresh process: memory and lookup time of the SQLite store."""
    from mathir.indexing.dense_index import AnswerTexts

    batches = json.loads(batches_file.read_text())
    before = proc_status_mb()
    c0 = time.process_time()
    t0 = time.perf_counter()
    texts = AnswerTexts(store)
    first = texts[batches[0][0]]  # the connection opens on first use
    open_ms = (time.perf_counter() - t0) * 1000
    opened = proc_status_mb()
    times = []
    chars = len(first)
    for batch in batches:
        t0 = time.perf_counter()
        frame = texts.lookup(batch)
        times.append(time.perf_counter() - t0)
        chars += int(frame["text"].str.len().sum())
    looked = proc_status_mb()
    lookup_cpu = time.process_time() - c0
    t0 = time.perf_counter()
    n = sum(len(f) for f in texts.iter_frames(10_000))
    stream_s = time.perf_counter() - t0
    return {"rss_mb": {"before_open": round(before, 1), "after_open": round(opened, 1),
                       "after_lookups": round(looked, 1),
                       "after_streaming_all": round(proc_status_mb(), 1),
                       "peak": round(proc_status_mb("VmHWM"), 1)},
            "open_and_first_lookup_ms": round(open_ms, 2),
            "lookup": {"batches": len(batches), "batch_size": len(batches[0]),
                       "median_batch_ms": round(1000 * statistics.median(times), 2),
                       "max_batch_ms": round(1000 * max(times), 2),
                       "cpu_s": round(lookup_cpu, 2), "text_chars": chars},
            "stream_all": {"answers": n, "wall_s": round(stream_s, 1)}}


def measure_jsonl(jsonl: Path, batches_file: Path) -> dict:
    """In a fresh process: what the old layout (mathir before texts.sqlite) held in memory.

    The same steps as the old ``AnswerTexts``: ``pd.read_json(lines=True)`` kept as its
    frame, then a docno -> "title text" dict beside it.
    """
    import pandas as pd

    batches = json.loads(batches_file.read_text())
    before = proc_status_mb()
    c0, t0 = time.process_time(), time.perf_counter()
    frame = pd.read_json(jsonl, lines=True, dtype={"docno": str})
    texts = {d: f"{t} {x}" if t else x
             for d, t, x in zip(frame["docno"], frame["title"], frame["text"], strict=True)}
    load_s, load_cpu = time.perf_counter() - t0, time.process_time() - c0
    loaded = proc_status_mb()
    times = []
    for batch in batches:
        t0 = time.perf_counter()
        _ = [texts[d] for d in batch]
        times.append(time.perf_counter() - t0)
    return {"rss_mb": {"before_load": round(before, 1), "after_load": round(loaded, 1),
                       "peak": round(proc_status_mb("VmHWM"), 1)},
            "load_wall_s": round(load_s, 1), "load_cpu_s": round(load_cpu, 1),
            "disk_bytes": jsonl.stat().st_size,
            "median_batch_ms": round(1000 * statistics.median(times), 3)}


def in_fresh_process(flag: str, path: Path, batches_file: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, flag, str(path), str(batches_file)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main(argv=None) -> int:
    ap = machine.parser(__doc__)
    ap.add_argument("--answers", type=int, default=100_000)
    ap.add_argument("--batches", type=int, default=100)
    ap.add_argument("--batch-size", type=int, default=1000)
    ap.add_argument("--compare-jsonl", action="store_true",
                    help="also measure the old texts.jsonl layout loaded into memory")
    ap.add_argument("--workdir", help="keep the generated collection and store here")
    ap.add_argument("--measure", nargs=2, metavar=("STORE", "BATCHES"), help=argparse.SUPPRESS)
    ap.add_argument("--measure-jsonl", nargs=2, metavar=("FILE", "BATCHES"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.measure or args.measure_jsonl:  # the fresh process of a measurement
        what = measure_store if args.measure else measure_jsonl
        machine.print_report(what(*map(Path, args.measure or args.measure_jsonl)), True)
        return 0

    started_wall, started_cpu = time.perf_counter(), machine.cpu_seconds()
    with machine.work_folder(args.workdir) as work:
        posts = work / f"Posts.synthetic.{args.answers}-answers.xml"
        w, c = time.perf_counter(), time.process_time()
        n_posts = generate_answers(posts, args.answers)
        generated = {"posts": n_posts, "xml_bytes": posts.stat().st_size,
                     "wall_s": round(time.perf_counter() - w, 1),
                     "cpu_s": round(time.process_time() - c, 1)}
        store = work / "answers-texts"
        built = build(posts, store)

        from mathir.indexing.dense_index import AnswerTexts

        texts = AnswerTexts(store)
        docnos = list(texts)
        rng = random.Random(1)
        batches = [rng.sample(docnos, min(args.batch_size, len(docnos)))
                   for _ in range(args.batches)]
        batches_file = work / "batches.json"
        batches_file.write_text(json.dumps(batches))
        del docnos
        result = {"answers": args.answers, "generate": generated, "build": built,
                  "store": in_fresh_process("--measure", store, batches_file)}
        if args.compare_jsonl:
            jsonl = work / "texts.jsonl"
            with open(jsonl, "w", encoding="utf-8") as f:
                for chunk in texts.iter_frames(10_000):
                    for doc in chunk.to_dict("records"):
                        f.write(json.dumps(doc, ensure_ascii=False) + "\n")
            result["old_jsonl_dict"] = in_fresh_process("--measure-jsonl", jsonl, batches_file)
        result["total_wall_s"] = round(time.perf_counter() - started_wall, 1)
        result["total_cpu_s"] = round(machine.cpu_seconds() - started_cpu, 1)
    result["calibration_ms"] = machine.calibration_ms()
    machine.print_report(result, args.json, machine.key_values)
    return 0


if __name__ == "__main__":
    sys.exit(main())
