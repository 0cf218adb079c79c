"""Benchmark: the dense answer index at ARQMath's size, measured on real answers and projected.

Takes the first N answers (thread files in name order) of the real ARQMath sample
``collection_sample/threads_all`` (3,395 threads, one answer each, no cut by size), reads
them with mathir's own readers (``AnswerTexts.build`` over a folder of links to those N
files), and builds a real :class:`~mathir.indexing.dense_index.DenseAnswerIndex` in a
temporary folder with ``DenseAnswerIndex.build``: answers cut by ``PassageSettings()``
(``pt.text.sliding``, 128 words, stride 64, title before every passage), encoded by the
packaged all-MiniLM-L6-v2, vectors written to a pyterrier-dr ``FlexIndex``. It reports

* passages per answer (mean, p50, p95, max) and word pieces per passage;
* the encoding rate (passages/s, answers/s; wall and CPU seconds, torch threads);
* the FlexIndex's bytes per passage on disk (``vecs.f4``: 4 bytes x 384 dimensions, and
  ``docnos.npids``);
* the scan rate of pyterrier-dr's ``np_retriever`` (what mathir's ``dense`` pipeline
  searches with) over a synthetic FlexIndex of ``--scan-passages`` random vectors;
* the projection for ``--target`` answers (default 1,400,000, ARQMath's answer count):
  hours of encoding on this machine, disk, the memory a search keeps resident, and the
  seconds of one exhaustive scan.

    python benchmarks/dense_encoding.py --json
    python benchmarks/dense_encoding.py --answers 500 --threads 1 --batch-size 32 --json

On a GPU (``--device cuda``) the sample is encoded in a fraction of a second, too little to
time: ``--repeat K`` then also encodes the sample's passages K times over (docnos made
unique) through the same ``doc_encoder >> FlexIndex`` indexer that
``DenseAnswerIndex.build`` uses, and the projection is made from that longer run (K = 970
gives 1.4M answers: the collection's size, measured rather than projected).
``--dtype float16`` encodes with half-precision weights; ``--save-vectors FILE.npy`` keeps
the sample's passage vectors and ``--compare-vectors FILE.npy`` reports their cosines with
vectors saved by another run (the CPU's float32 vectors, say). ``--texts DIR`` reads an
answer-texts store (``mathir.indexing.AnswerTexts``) instead of the thread files and ``--model
DIR`` another copy of the bi-encoder, for a machine that holds neither the data folder nor
the packaged model:

    python benchmarks/dense_encoding.py --texts T --save-vectors cpu_vectors.npy --json
    python benchmarks/dense_encoding.py --texts T --model M --device cuda --batch-size 256 \
        --repeat 20 --compare-vectors cpu_vectors.npy --scan-passages 0 --json

Memory of a search (pyterrier-dr 0.8.1, ``flex/core.py`` ``FlexIndex.payload``): the vectors
are opened with ``np.memmap(vecs.f4, mode="r")``, not loaded; ``np_retriever`` then reads
every vector for every batch of queries, so the whole file stays in the page cache when RAM
allows (else it is read from disk again per batch). ``docnos.npids`` is opened by npids'
``Lookup``, which slices an ``mmap`` (``mm[a:b]`` copies), so its bytes are in process
memory. Resident memory = vecs.f4 + docnos.npids.

The sample is every thread file of MathDowsers' selection (no cut by size; 2,295 of its
answers are judged in the Task 1 qrels), not a random draw from the collection: the
passages-per-answer figure, and every projection (linear in it), holds for answers like
these. ``--json`` prints one JSON
object on one line; CPU seconds sit beside wall seconds, and ``calibration_ms`` is the CPU
time of a fixed workload, for comparing machines.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

try:  # python benchmarks/dense_encoding.py
    import machine
except ModuleNotFoundError:  # benchmarks.dense_encoding, from the repository root
    from benchmarks import machine

if TYPE_CHECKING:
    import numpy as np

THREADS = Path("collection_sample") / "threads_all"
TARGET_ANSWERS = 1_400_000  # ARQMath collection: about 1.4M answers (2010-2018)
GB = 1e9


def distribution(values) -> dict:
    """Mean, p50, p95, min and max of ``values``.

    >>> distribution([1, 1, 2, 3, 13])
    {'mean': 4.0, 'p50': 2.0, 'p95': 11.0, 'min': 1, 'max': 13}
    """
    import numpy as np

    v = np.asarray(values)
    return {"mean": round(float(v.mean()), 3), "p50": float(np.percentile(v, 50)),
            "p95": round(float(np.percentile(v, 95)), 3), "min": int(v.min()),
            "max": int(v.max())}


def project(*, answers: int, passages: int, encode_wall_s: float, encode_cpu_s: float,
            vecs_bytes: int, docnos_bytes: int, other_bytes: int = 0,
            scan_passages: int = 0, scan_s: dict[str, float] | None = None,
            target: int = TARGET_ANSWERS) -> dict:
    """Scale what ``answers`` answers cost to ``target`` answers (linear in passages).

    Passages per answer, encoding seconds per passage and bytes per passage are taken
    from the measured run; a search keeps ``vecs.f4`` (memory-mapped) and
    ``docnos.npids`` (read in) resident; an exhaustive scan of ``scan_passages`` passages
    took ``scan_s[label]`` seconds (one value per query batch measured). GB are 10^9 bytes.

    >>> p = project(answers=1000, passages=3000, encode_wall_s=60.0, encode_cpu_s=110.0,
    ...             vecs_bytes=3000 * 1536, docnos_bytes=30_000, scan_passages=100_000,
    ...             scan_s={"batch_1": 0.5}, target=1_400_000)
    >>> p["passages"], p["encoding_hours"], p["encoding_cpu_hours"]
    (4200000, 23.333, 42.778)
    >>> p["vectors_gb"], p["disk_gb"], p["search_resident_gb"], p["scan_s"]
    (6.451, 6.493, 6.493, {'batch_1': 21.0})
    """
    if answers <= 0 or passages <= 0:
        raise ValueError("nothing was measured: answers and passages must be positive")
    total = target * passages / answers
    per_passage = {"wall": encode_wall_s / passages, "cpu": encode_cpu_s / passages,
                   "vecs": vecs_bytes / passages, "docnos": docnos_bytes / passages,
                   "other": other_bytes / passages}
    out = {"answers": target, "passages_per_answer": round(passages / answers, 3),
           "passages": round(total),
           "encoding_hours": round(total * per_passage["wall"] / 3600, 3),
           "encoding_cpu_hours": round(total * per_passage["cpu"] / 3600, 3),
           "vectors_gb": round(total * per_passage["vecs"] / GB, 3),
           "docnos_gb": round(total * per_passage["docnos"] / GB, 3),
           "disk_gb": round(total * sum(per_passage[k] for k in ("vecs", "docnos", "other"))
                            / GB, 3),
           "search_resident_gb": round(total * (per_passage["vecs"] + per_passage["docnos"])
                                       / GB, 3)}
    if scan_passages > 0 and scan_s:
        out["scan_s"] = {k: round(total * v / scan_passages, 2) for k, v in scan_s.items()}
    return out


def linked_subset(threads: Path, n: int, into: Path) -> Path:
    """A folder of symbolic links to the first ``n`` thread files (name order) of ``threads``."""
    from mathir.errors import InputError

    files = sorted(threads.glob("*.html"))
    if n > len(files):
        raise InputError(f"--answers {n} but the sample has {len(files)} thread files "
                         "(one answer each)", path=threads)
    into.mkdir(parents=True)
    for f in files[:n]:
        (into / f.name).symlink_to(f.resolve())
    return into


def cut_passages(texts):
    """The answers of ``texts`` and their passages, cut as DenseAnswerIndex.build cuts them."""
    from mathir.indexing.dense_index import PassageSettings

    frame = texts.frame()
    return frame, PassageSettings().transformer()(frame)


def _passage_stats(frame, passages, encoder) -> dict:
    """Passages per answer and word pieces per passage."""
    from collections import Counter

    from mathir.indexing.dense_index import PassageSettings

    per_answer = Counter(d.rsplit("%p", 1)[0] for d in passages["docno"])
    counts = [per_answer.get(d, 0) for d in frame["docno"]]
    model = encoder.st.model
    ids = model.tokenizer(passages["text"].tolist(), add_special_tokens=True,
                          verbose=False)["input_ids"]
    lengths = [len(x) for x in ids]
    limit = int(model.max_seq_length)
    return {"count": len(passages), "per_answer": distribution(counts),
            "word_pieces": distribution(lengths), "max_seq_length": limit,
            "truncated_share": round(sum(n > limit for n in lengths) / len(lengths), 4),
            "words_per_passage": PassageSettings().length, "stride": PassageSettings().stride}


def scan_rate(n: int, dim: int, tmp: Path, depth: int = 3000, queries: int = 10) -> dict:
    """Seconds of pyterrier-dr's np_retriever over ``n`` random vectors (warm page cache).

    ``depth`` 3000 is what mathir's ``dense`` asks for (3 passages per answer wanted).
    """
    import numpy as np
    import pandas as pd
    import pyterrier_dr

    rng = np.random.default_rng(0)
    flex = pyterrier_dr.FlexIndex(str(tmp / "scan.flex"), verbose=False)

    def records():
        for start in range(0, n, 10_000):
            block = rng.standard_normal((min(10_000, n - start), dim)).astype("f4")
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            for i, v in enumerate(block, start):
                yield {"docno": f"{i}%p0", "doc_vec": v}

    flex.indexer(mode="overwrite").index(records())
    qv = rng.standard_normal((queries, dim)).astype("f4")
    out = {"passages": n, "depth": depth}
    for q in (1, queries):
        frame = pd.DataFrame({"qid": [str(i) for i in range(q)], "query_vec": list(qv[:q])})
        retr = flex.np_retriever(num_results=depth, drop_query_vec=True)
        retr(frame.head(1))  # page the vectors in: a running search has them cached
        t0, c0 = time.perf_counter(), machine.cpu_seconds()
        retr(frame)
        out[f"batch_{q}_wall_s"] = round(time.perf_counter() - t0, 3)
        out[f"batch_{q}_cpu_s"] = round(machine.cpu_seconds() - c0, 3)
    return out


def flex_files(flex: Path) -> dict[str, int]:
    """Bytes of each file of a FlexIndex directory."""
    return {p.name: p.stat().st_size for p in flex.iterdir()}


def vec_size(flex: Path) -> int:
    """The dimension of a FlexIndex's vectors (its ``pt_meta.json``)."""
    return int(json.loads((flex / "pt_meta.json").read_text())["vec_size"])


def flex_vectors(flex: Path) -> np.ndarray:
    """The vectors of a FlexIndex (``vecs.f4``: float32 rows of ``vec_size``), in docno order."""
    import numpy as np

    return np.fromfile(flex / "vecs.f4", dtype="<f4").reshape(-1, vec_size(flex))


def cosine_agreement(vectors: np.ndarray, reference: np.ndarray) -> dict:
    """Row-by-row cosines of ``vectors`` with ``reference`` (the same passages encoded
    elsewhere): how far another device or precision moves the index.

    >>> import numpy as np
    >>> a = np.array([[1.0, 0.0], [0.6, 0.8]])
    >>> cosine_agreement(a, np.array([[1.0, 0.0], [0.8, 0.6]]))["min"]
    0.96
    >>> cosine_agreement(a, a[:1])
    Traceback (most recent call last):
    ValueError: 2 vectors against 1 reference vectors: not the same passages
    """
    import numpy as np

    if vectors.shape != reference.shape:
        raise ValueError(f"{len(vectors)} vectors against {len(reference)} reference vectors: "
                         "not the same passages")
    a = np.asarray(vectors, dtype=np.float64)
    b = np.asarray(reference, dtype=np.float64)
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {"passages": int(len(cos)), "min": round(float(cos.min()), 6),
            "p1": round(float(np.percentile(cos, 1)), 6), "mean": round(float(cos.mean()), 7),
            "max_abs_diff": round(float(np.abs(a - b).max()), 6)}


def encode_repeated(passages, repeat: int, encoder, batch_size: int, into: Path) -> dict:
    """Encode ``passages`` ``repeat`` times over into a new FlexIndex at ``into``, timed.

    The records (docno made unique with ``~k``, text) go through the pipeline
    ``DenseAnswerIndex.build`` runs: the encoder's ``doc_encoder >> FlexIndex`` indexer.
    """
    import pyterrier_dr

    docnos, texts = passages["docno"].tolist(), passages["text"].tolist()

    def records():
        for k in range(repeat):
            for docno, text in zip(docnos, texts, strict=True):
                yield {"docno": f"{docno}~{k}", "text": text}

    flex = pyterrier_dr.FlexIndex(str(into), verbose=False)
    t0, c0 = time.perf_counter(), machine.cpu_seconds()
    (encoder.st.doc_encoder(verbose=False, batch_size=batch_size)
     >> flex.indexer(mode="overwrite")).index(records())
    wall, cpu = time.perf_counter() - t0, machine.cpu_seconds() - c0
    n = repeat * len(docnos)
    files = flex_files(into)
    if files["vecs.f4"] != n * 4 * vec_size(into):
        raise AssertionError(f"the FlexIndex holds {files['vecs.f4']} bytes of vectors, "
                             f"not {n} passages' worth")
    return {"repeat": repeat, "passages": n, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "passages_per_s": round(n / wall, 1), "cpu_ms_per_passage": round(1000 * cpu / n, 3),
            "flex_files": files,
            "includes": "encoding and writing the FlexIndex (texts already read and cut)"}


def _weights_sha256(model_dir: str) -> str | None:
    """SHA-256 of the model's safetensors weights (which copy of the model was used)."""
    from mathir.storage import sha256_file

    files = sorted(Path(model_dir).glob("*.safetensors"))
    return sha256_file(files[0]) if files else None


def _measured(answers: int, passages: int, wall: float, cpu: float, files: dict) -> dict:
    """What :func:`project` scales: counts, encoding seconds and the FlexIndex's bytes."""
    return {"answers": answers, "passages": passages, "encode_wall_s": wall,
            "encode_cpu_s": cpu, "vecs_bytes": files["vecs.f4"],
            "docnos_bytes": files["docnos.npids"],
            "other_bytes": sum(v for k, v in files.items()
                               if k not in ("vecs.f4", "docnos.npids"))}


def _device_info(device: str) -> dict:
    import torch

    if not device.startswith("cuda"):
        return {"measured": False, "reason": "encoded on the CPU; no GPU figure" + (
            "" if torch.cuda.is_available() else " (torch sees no GPU in this process)")}
    return {"measured": True, "name": torch.cuda.get_device_name(device),
            "torch": torch.__version__, "cuda": torch.version.cuda}


def run(data: Path, answers: int | None, batch_size: int, threads: int | None,
        device: str, scan_passages: int, target: int, *, texts_dir: Path | None = None,
        model: Path | None = None, dtype: str = "float32", repeat: int = 0,
        save_vectors: Path | None = None, compare_vectors: Path | None = None) -> dict:
    import numpy as np
    import torch

    from mathir.indexing.dense_index import AnswerTexts, DenseAnswerIndex
    from mathir.neural.bi_encoder import load_bi_encoder

    if threads:
        torch.set_num_threads(threads)
    result: dict = {"benchmark": "dense_encoding", "calibration_ms": machine.calibration_ms(),
                    "loadavg_start": machine.load_average()}
    t_all, c_all = time.perf_counter(), machine.cpu_seconds()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0, c0 = time.perf_counter(), machine.cpu_seconds()
        if texts_dir is not None:
            texts = AnswerTexts(texts_dir)
            result["data"] = {"source": str(texts_dir), "answers": len(texts),
                              "texts_manifest": texts.manifest}
        else:
            threads_dir = data / THREADS
            n_files = len(list(threads_dir.glob("*.html")))
            n = n_files if answers is None else answers
            subset = (threads_dir if n == n_files
                      else linked_subset(threads_dir, n, tmp / "threads"))
            texts = AnswerTexts.build(subset, tmp / "texts", quiet=True)
            result["data"] = {"source": str(threads_dir), "answers": len(texts),
                              "of_files": n_files, "order": "first N thread files by name",
                              "caveat": "MathDowsers' selection of threads (mostly judged "
                                        "answers), not a random draw from the collection"}
        result["reading"] = {"wall_s": round(time.perf_counter() - t0, 2),
                             "cpu_s": round(machine.cpu_seconds() - c0, 2)}

        t0, c0 = time.perf_counter(), machine.cpu_seconds()
        encoder = load_bi_encoder(model, batch_size=batch_size, device=device)
        # the weights' type on the device (a float16 copy of the model is computed in
        # float32 unless --dtype float16 is asked for)
        encoder.st.model.to(getattr(torch, dtype))
        encoder.encode(["warm up $x^2$"] * batch_size)
        result["model"] = {"path": encoder.model_path, "load_s": round(time.perf_counter() - t0, 2),
                           "load_cpu_s": round(machine.cpu_seconds() - c0, 2),
                           "dtype": str(next(encoder.st.model.parameters()).dtype),
                           "weights_sha256": _weights_sha256(encoder.model_path)}

        t0, c0 = time.perf_counter(), machine.cpu_seconds()
        dense = DenseAnswerIndex.build(texts, tmp / "dense", encoder, batch_size=batch_size,
                                       quiet=True)
        wall, cpu = time.perf_counter() - t0, machine.cpu_seconds() - c0
        n_passages = int(dense.manifest["num_passages"])
        result["encoding"] = {
            "device": device, "torch_threads": torch.get_num_threads(),
            "cpu_count": os.cpu_count(), "batch_size": batch_size,
            "passages": n_passages, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "cores_busy": round(cpu / wall, 2),
            "passages_per_s": round(n_passages / wall, 2),
            "answers_per_s": round(len(texts) / wall, 2),
            "cpu_ms_per_passage": round(1000 * cpu / n_passages, 2),
            "includes": "DenseAnswerIndex.build: cutting, encoding, writing the FlexIndex"}

        flex = dense.path / "flex"
        files = flex_files(flex)
        dim = vec_size(flex)
        result["index"] = {"flex_files": files, "dim": dim,
                           "bytes_per_passage": round(sum(files.values()) / n_passages, 1),
                           "vecs_bytes_per_passage": files["vecs.f4"] / n_passages,
                           "docnos_bytes_per_passage":
                               round(files["docnos.npids"] / n_passages, 2)}
        if save_vectors is not None:
            np.save(save_vectors, flex_vectors(flex))
        if compare_vectors is not None:
            result["vectors_against"] = {"file": str(compare_vectors), **cosine_agreement(
                flex_vectors(flex), np.load(compare_vectors))}
        frame, cut = cut_passages(texts)
        result["passages"] = _passage_stats(frame, cut, encoder)
        if result["passages"]["count"] != n_passages:  # the cut must be the build's own
            raise AssertionError(f"passage count {result['passages']['count']} != the index's "
                                 f"{n_passages}")
        measured = _measured(len(texts), n_passages, wall, cpu, files)
        if repeat:
            rep = encode_repeated(cut, repeat, encoder, batch_size, tmp / "repeated.flex")
            result["repeated"] = rep
            measured = _measured(len(texts) * repeat, rep["passages"], rep["wall_s"],
                                 rep["cpu_s"], rep["flex_files"])

        if scan_passages:
            result["scan"] = scan_rate(scan_passages, dim, tmp)
        result["projection"] = project(
            **measured, scan_passages=scan_passages, target=target,
            scan_s={k[:-len("_wall_s")]: v for k, v in result.get("scan", {}).items()
                    if k.endswith("_wall_s")})
        result["projection"]["from"] = "the repeated run" if repeat else "the sample's build"
        result["projection"]["search_memory"] = (
            "vecs.f4 is np.memmap'ed (page cache; np_retriever reads all of it per query "
            "batch), docnos.npids is copied into memory by npids' Lookup")
    result["gpu"] = _device_info(device)
    result["wall_s"] = round(time.perf_counter() - t_all, 2)
    result["cpu_s"] = round(machine.cpu_seconds() - c_all, 2)
    result["loadavg_end"] = machine.load_average()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = machine.parser(__doc__, data="arqmath")
    ap.add_argument("--answers", type=int, default=None,
                    help="how many answers (default: all 3,395 of the sample)")
    ap.add_argument("--batch-size", type=int, default=32, help="encoding batch size (32)")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads (default: torch's own, the core count)")
    ap.add_argument("--device", default="cpu", help="torch device (cpu; cuda where one is)")
    ap.add_argument("--scan-passages", type=int, default=200_000,
                    help="random vectors for the search scan rate (0: skip)")
    ap.add_argument("--target", type=int, default=TARGET_ANSWERS,
                    help="answers to project to (1,400,000)")
    ap.add_argument("--texts", type=Path, default=None,
                    help="an answer-texts store (mathir.indexing.AnswerTexts) to read instead of the "
                         "thread sample")
    ap.add_argument("--model", type=Path, default=None,
                    help="the bi-encoder's directory (default: the packaged all-MiniLM-L6-v2)")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float16", "bfloat16"),
                    help="the weights' type when encoding (float32)")
    ap.add_argument("--repeat", type=int, default=0,
                    help="also encode the passages K times over and project from that run")
    ap.add_argument("--save-vectors", type=Path, default=None,
                    help="save the sample's passage vectors (.npy)")
    ap.add_argument("--compare-vectors", type=Path, default=None,
                    help="cosines of the sample's passage vectors with these (.npy)")
    args = ap.parse_args(argv)
    if args.texts is None and not (args.data / THREADS).is_dir():
        print(f"error: no ARQMath thread sample at {args.data / THREADS}", file=sys.stderr)
        return 2
    if args.texts is not None and args.answers is not None:
        print("error: --answers takes the first thread files; with --texts every answer of "
              "the store is read", file=sys.stderr)
        return 2
    if args.repeat < 0:
        print("error: --repeat must be at least 0", file=sys.stderr)
        return 2
    if args.compare_vectors is not None and not args.compare_vectors.is_file():
        print(f"error: no vectors at {args.compare_vectors}", file=sys.stderr)
        return 2
    for name in ("answers", "batch_size", "threads"):
        value = getattr(args, name)
        if value is not None and value < 1:
            print(f"error: --{name.replace('_', '-')} must be at least 1", file=sys.stderr)
            return 2
    if args.threads:
        # the tokenizers' Rust thread pool, too, so that --threads 1 means one core
        os.environ.setdefault("RAYON_NUM_THREADS", str(args.threads))
    from mathir.errors import InputError

    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout holds the JSON only
            result = run(args.data, args.answers, args.batch_size, args.threads, args.device,
                         args.scan_passages, args.target, texts_dir=args.texts,
                         model=args.model, dtype=args.dtype, repeat=args.repeat,
                         save_vectors=args.save_vectors, compare_vectors=args.compare_vectors)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    machine.print_report(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
