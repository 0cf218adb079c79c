"""Benchmark: bi-encoder encoding with its tokenising spread over worker processes.

On a GPU the MiniLM bi-encoder waits for the tokenizer (docs/neural.md: 14 of the
encoder's 25 s in the Python layer of transformers' tokenizer). This benchmark encodes
the same passages, in one process and one run, with

* ``st.encode``: sentence-transformers' own ``encode`` (transformers' tokenizer in the
  main process; the baseline);
* ``rust/w0``: :func:`mathir.neural.tokenizing.torch_encode` with no worker: the Rust
  ``tokenizers`` ``encode_batch`` straight into numpy, in the main process;
* ``rust/wN``: the same with N tokenising processes (``--workers``) feeding the model;
* ``tokenize_only``: the tokenisers alone (transformers' and the Rust one), passages/s;

and reports passages/s, the ratio to ``st.encode``, the main process's and the workers'
CPU seconds, and the cosine of every variant's vectors with the baseline's (min / mean).
It needs torch and sentence-transformers only (no PyTerrier): the device machine holds
those. Passages come from ``--texts FILE.json`` (a list of strings) or, by default, are
made from mathir's embedded ARQMath sample (our own answers): windows of its words whose
word counts follow ``--lengths FILE.json`` (a list of word counts, e.g. those of the real
passages) or 128 words.

    python benchmarks/encoding_workers.py --device cuda --model M --passages 50000 \
        --batch-size 256 --workers 1,2,4,8 --json

``--json`` prints one JSON object on one line, CPU seconds beside wall seconds and
``calibration_ms``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path

try:  # python benchmarks/encoding_workers.py
    import machine
except ModuleNotFoundError:  # benchmarks.encoding_workers, from the repository root
    from benchmarks import machine


def sample_words() -> list[str]:
    """The words of mathir's embedded ARQMath sample (Posts XML: bodies and titles)."""
    import html
    import re

    root = Path(__file__).resolve().parents[1] / "mathir" / "samples"
    text = " ".join(p.read_text(encoding="utf-8", errors="replace")
                    for p in sorted(root.rglob("*.xml")))
    text = html.unescape(re.sub(r"<[^>]+>", " ", html.unescape(text)))
    return text.split()


def make_passages(n: int, lengths: list[int] | None, seed: int = 0) -> list[str]:
    """``n`` passages of the sample's words, their word counts drawn from ``lengths``.

    >>> len(make_passages(3, [5])), len(make_passages(1, [5])[0].split())
    (3, 5)
    """
    import numpy as np

    words = sample_words()
    rng = np.random.default_rng(seed)
    counts = rng.choice(np.asarray(lengths or [128]), n)
    starts = rng.integers(0, max(1, len(words) - 200), n)
    return [" ".join(words[s:s + c]) for s, c in zip(starts, counts, strict=True)]


def _children_cpu() -> float:
    """CPU seconds of this process's live children (the tokenising workers)."""
    import multiprocessing

    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for child in multiprocessing.active_children():
        try:
            fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def run(args) -> dict:
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    from mathir.neural.tokenizing import st_tokenize, torch_encode

    result: dict = {"benchmark": "encoding_workers", "calibration_ms": machine.calibration_ms(),
                    "loadavg_start": machine.load_average(),
                    "cpu_count": os.cpu_count(), "device": args.device}
    if args.texts:
        passages = json.loads(Path(args.texts).read_text())[:args.passages]
        source = str(args.texts)
    else:
        lengths = json.loads(Path(args.lengths).read_text()) if args.lengths else None
        passages = make_passages(args.passages, lengths)
        source = ("mathir's embedded ARQMath sample, word counts from " +
                  (str(args.lengths) if args.lengths else "128 words each"))
    model_path = args.model or str(__import__("mathir.models", fromlist=["x"])
                                   .default_model_path())
    st = SentenceTransformer(str(model_path), device=args.device)
    st = st.float().eval()
    result["model"] = {"path": str(model_path), "dtype": "float32 (computed)",
                       "torch": torch.__version__,
                       "gpu": torch.cuda.get_device_name(0) if args.device.startswith("cuda")
                       else None}
    result["passages"] = {"count": len(passages), "source": source,
                          "mean_words": round(float(np.mean([len(p.split()) for p in passages])),
                                              1)}
    tok = st_tokenize(st)
    bs = args.batch_size
    # warm up both paths (CUDA kernels, allocator)
    st.encode(passages[:bs], batch_size=bs)
    torch_encode(st, tok, passages[:bs], bs, 0)

    def timed(fn):
        _sync(args.device)
        t0, c0, k0 = time.perf_counter(), machine.cpu_seconds(), _children_cpu()
        out = fn()
        _sync(args.device)
        return out, time.perf_counter() - t0, machine.cpu_seconds() - c0, _children_cpu() - k0

    variants: dict = {}
    base, wall, cpu, _ = timed(lambda: st.encode(passages, batch_size=bs,
                                                 convert_to_numpy=True))
    variants["st.encode"] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                             "passages_per_s": round(len(passages) / wall, 1)}
    base_wall = wall
    for w in [0, *args.workers]:
        if w:
            torch_encode(st, tok, passages[:bs * 2 * w], bs, w)  # start the pool
        vecs, wall, cpu, kids = timed(lambda w=w: torch_encode(st, tok, passages, bs, w))
        a, b = vecs.astype(np.float64), base.astype(np.float64)
        cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        variants[f"rust/w{w}"] = {"wall_s": round(wall, 2), "cpu_s_main": round(cpu, 2),
                                  "cpu_s_workers": round(kids, 2),
                                  "passages_per_s": round(len(passages) / wall, 1),
                                  "speedup_vs_st_encode": round(base_wall / wall, 2),
                                  "cosine_to_st_encode": {"min": round(float(cos.min()), 7),
                                                          "mean": round(float(cos.mean()), 7)}}
    result["variants"] = variants
    t0 = time.perf_counter()
    for i in range(0, len(passages), bs):
        st.tokenize(passages[i:i + bs])
    hf = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(0, len(passages), bs):
        tok(passages[i:i + bs])
    rust = time.perf_counter() - t0
    result["tokenize_only_passages_per_s"] = {"transformers (st.tokenize)":
                                              round(len(passages) / hf, 1),
                                              "rust encode_batch + numpy":
                                              round(len(passages) / rust, 1)}
    result["loadavg_end"] = machine.load_average()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = machine.parser(__doc__)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--model", default=None, help="the bi-encoder's folder (default: packaged)")
    ap.add_argument("--passages", type=int, default=2000)
    ap.add_argument("--texts", default=None, help="a JSON list of passages")
    ap.add_argument("--lengths", default=None, help="a JSON list of passage word counts")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=lambda s: [int(x) for x in s.split(",") if x],
                    default=[1, 2])
    args = ap.parse_args(argv)
    with contextlib.redirect_stdout(sys.stderr):
        result = run(args)
    machine.print_report(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
