"""Benchmark: the CPU backends of the bi- and cross-encoders against PyTorch float32.

Everything is measured in one process, the backends interleaved (each round encodes the
same slice of passages with every backend in turn, each topic is reranked by every
backend in turn), so that the ratios compare the same machine at the same moment even
when other jobs share it. Backends (``--backends``): ``torch`` (the baseline:
sentence-transformers on PyTorch, float32), ``onnx`` and ``onnx-int8`` (ONNX Runtime),
``openvino`` and ``openvino-int8`` (OpenVINO; int8 quantised statically by NNCF)
(:mod:`mathir.neural`: all exported locally from the packaged weights).

* ``encoding``: ``--passages`` passages (a seeded random sample of the real ARQMath
  answers of ``collection_sample/threads_all``, cut as ``DenseAnswerIndex.build`` cuts
  them: 128 words, stride 64, title first) encoded by each backend's ``encode_docs``
  (batch ``--batch-size``; at most ``ENCODE_CHUNK`` = 2,048 passages a call, ordered by
  length within it, as the index build encodes them) in ``--rounds`` rounds;
  passages/s, CPU-ms a passage, the ratio to torch, the cosine of each backend's vectors with torch's (min / mean) and the
  projection to the collection's 1.68M passages (``--target-passages``);
* ``rerank``: BM25's top 100 of ``--topics`` topics (2022) reranked by the cross-encoder
  (``--cross-encoder DIR``; default: the packaged MiniLM with an untrained one-logit head,
  which measures speed only), ms a topic per backend, and the ratio;
* ``quality`` (``--quality``): ``run_experiment`` on the judged pools of ``--years``
  (default 2021, 2022; qrels restricted to the threads_all answers) with ``dense`` per
  backend and ``dense`` with ``--dense-search hnsw`` (torch vectors) on every topic, and
  BM25's top 100 reranked by the cross-encoder per backend on the first
  ``--quality-topics`` judged topics of each year (0: all): nDCG' and its difference to
  torch, the dense indexes' vector cosines to torch's, and recall@1000 of the HNSW run
  against the exhaustive one.

    python benchmarks/cpu_backends.py --json
    python benchmarks/cpu_backends.py --quality --cross-encoder models/ce --json

``--json`` prints one JSON object on one line; CPU seconds sit beside wall seconds, and
``calibration_ms`` is the CPU time of a fixed workload, for comparing machines.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import time
from pathlib import Path

try:  # python benchmarks/cpu_backends.py
    import machine
except ModuleNotFoundError:  # benchmarks.cpu_backends, from the repository root
    from benchmarks import machine

COLLECTION = Path("collection_sample") / "threads_all"
TARGET_PASSAGES = 1_680_000  # ARQMath's 1.4M answers at 1.2 passages an answer
BACKENDS = ("torch", "onnx", "onnx-int8", "openvino", "openvino-int8")


def cosines(a, b) -> dict:
    """Min and mean row cosine of ``a`` with ``b``.

    >>> import numpy as np
    >>> cosines(np.array([[1.0, 0.0], [0.6, 0.8]]), np.array([[1.0, 0.0], [0.8, 0.6]]))
    {'min': 0.96, 'mean': 0.98}
    """
    import numpy as np

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {"min": round(float(c.min()), 6), "mean": round(float(c.mean()), 6)}


def recall_at(run, reference, k: int = 1000) -> float:
    """Mean over topics of |top k of ``run`` ∩ top k of ``reference``| / |top k of reference|.

    >>> import pandas as pd
    >>> r = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.0, 1.0]})
    >>> recall_at(r, r.assign(docno=["a", "c"]), 2)
    0.5
    """
    def tops(frame):
        frame = frame.sort_values(["qid", "score"], ascending=[True, False])
        return {q: set(g["docno"].head(k)) for q, g in frame.groupby("qid")}

    got, ref = tops(run), tops(reference)
    shares = [len(got.get(q, set()) & docs) / len(docs) for q, docs in ref.items() if docs]
    return round(sum(shares) / len(shares), 4) if shares else float("nan")


def _texts(data: Path, collection: Path):
    from mathir.tasks import get_task

    task = get_task("arqmath-task1")
    d = task.data(data, "2022", collection)
    index = task.index(d, quiet=True)
    from mathir.indexing.dense_index import AnswerTexts

    return task, d, index, AnswerTexts.for_index(index)


def encoding(texts, backends, n: int, rounds: int, batch_size: int, target: int) -> dict:
    import numpy as np
    import torch

    from mathir.indexing.dense_index import ENCODE_CHUNK, PassageSettings
    from mathir.neural.bi_encoder import load_bi_encoder

    cut = PassageSettings().transformer()(texts.frame())
    rng = np.random.default_rng(0)
    pick = np.sort(rng.choice(len(cut), min(n, len(cut)), replace=False))
    passages = cut["text"].to_numpy()[pick].tolist()
    t0, c0 = time.perf_counter(), machine.cpu_seconds()
    encoders = {b: load_bi_encoder(batch_size=batch_size, backend=b) for b in backends}
    load = {"wall_s": round(time.perf_counter() - t0, 2),
            "cpu_s": round(machine.cpu_seconds() - c0, 2)}
    for enc in encoders.values():  # warm up
        enc.st.encode_docs(passages[:batch_size], batch_size=batch_size)
    spent = {b: [0.0, 0.0] for b in backends}
    vecs: dict[str, list] = {b: [] for b in backends}
    slices = np.array_split(np.arange(len(passages)), rounds)
    for part in slices:
        # handed to the encoder ENCODE_CHUNK passages at a time, as the index build does
        chunks = [[passages[i] for i in part[s:s + ENCODE_CHUNK]]
                  for s in range(0, len(part), ENCODE_CHUNK)]
        for b in backends:
            t0, c0 = time.perf_counter(), machine.cpu_seconds()
            vecs[b].extend(encoders[b].st.encode_docs(c, batch_size=batch_size)
                           for c in chunks)
            spent[b][0] += time.perf_counter() - t0
            spent[b][1] += machine.cpu_seconds() - c0
    out: dict = {"passages": len(passages), "of_passages": int(len(cut)),
                 "rounds": rounds, "batch_size": batch_size, "encode_chunk": ENCODE_CHUNK,
                 "torch_threads": torch.get_num_threads(), "load_and_export": load,
                 "backends": {}}
    base = np.concatenate(vecs[backends[0]])
    for b in backends:
        wall, cpu = spent[b]
        v = np.concatenate(vecs[b])
        rate = len(passages) / wall
        row = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
               "passages_per_s": round(rate, 2),
               "cpu_ms_per_passage": round(1000 * cpu / len(passages), 2),
               "projected_hours": round(target / rate / 3600, 2),
               "projected_cpu_hours": round(target * cpu / len(passages) / 3600, 2),
               "cosine_to_" + backends[0]: cosines(v, base)}
        if b != backends[0]:
            row["speedup_wall"] = round(spent[backends[0]][0] / wall, 2)
            row["speedup_cpu"] = round(spent[backends[0]][1] / cpu, 2)
        if encoders[b].backend != "torch":
            row["onnx_sha256"] = encoders[b].st.onnx.exported.sha256
            row["onnx_bytes"] = encoders[b].st.onnx.exported.manifest["bytes"]
        out["backends"][b] = row
    out["target_passages"] = target
    return out


def _untrained_cross_encoder(into: Path) -> str:
    """The packaged MiniLM with a new one-logit head (seed 0): for speed only."""
    import torch
    from sentence_transformers import CrossEncoder

    from mathir.models import default_model_path

    torch.manual_seed(0)
    ce = CrossEncoder(str(default_model_path()), num_labels=1, device="cpu")
    ce.save_pretrained(str(into))
    return str(into)


def rerank(task, d, index, texts, backends, cross_encoder: str, topics_n: int) -> dict:
    import numpy as np

    from mathir.pipelines import neural
    from mathir.pipelines.lexical import bm25

    topics = task.read_topics(d.topics).head(topics_n)
    first = bm25(index, num_results=100).transform(topics)
    rerankers = {b: neural.cross_encoder_reranker(texts, cross_encoder, backend=b)
                 for b in backends}
    q0 = topics["qid"].iloc[0]
    for rr in rerankers.values():
        rr.transform(first[first["qid"] == q0])  # warm up
    times = {b: [] for b in backends}
    cpus = {b: 0.0 for b in backends}
    scores = {b: [] for b in backends}
    for qid in topics["qid"]:
        res = first[first["qid"] == qid]
        for b in backends:
            t0, c0 = time.perf_counter(), machine.cpu_seconds()
            out = rerankers[b].transform(res)
            times[b].append(time.perf_counter() - t0)
            cpus[b] += machine.cpu_seconds() - c0
            scores[b].append(out.sort_values("docno")["score"].to_numpy())
    base = backends[0]
    result: dict = {"topics": len(topics), "depth": 100, "cross_encoder": cross_encoder,
                    "year": "2022", "backends": {}}
    for b in backends:
        row = {"ms_per_topic_mean": round(1000 * float(np.mean(times[b])), 1),
               "ms_per_topic_median": round(1000 * float(np.median(times[b])), 1),
               "cpu_ms_per_topic": round(1000 * cpus[b] / len(topics), 1)}
        if b != base:
            row["speedup_wall"] = round(float(np.sum(times[base]) / np.sum(times[b])), 2)
            row["speedup_cpu"] = round(cpus[base] / cpus[b], 2)
            diff = np.concatenate([x - y for x, y in zip(scores[b], scores[base], strict=True)])
            row["max_abs_score_diff"] = round(float(np.abs(diff).max()), 5)
        result["backends"][b] = row
    return result


def rerank_quality(task, d, backends, cross_encoder: str, topics_n: int) -> dict:
    """nDCG' of BM25's top 100 reranked by the cross-encoder with each backend, on the
    first ``topics_n`` judged topics of ``d`` (0: all), pool qrels; seconds per backend."""
    from mathir.evaluation.evaluated import qrels_in_collection
    from mathir.evaluation.prime import per_query
    from mathir.indexing.dense_index import AnswerTexts
    from mathir.pipelines import neural
    from mathir.pipelines.lexical import bm25

    index = task.index(d, quiet=True)
    qrels = task.read_qrels(d.qrels)
    qrels = qrels_in_collection(qrels, index.docnos())
    topics = task.read_topics(d.topics)
    topics = topics[topics["qid"].isin(set(qrels["qid"]))]
    if topics_n:
        topics = topics.head(topics_n)
    qrels = qrels[qrels["qid"].isin(set(topics["qid"]))]
    first = bm25(index, num_results=100).transform(topics)
    texts = AnswerTexts.for_index(index)
    out_rows: dict = {"topics": int(len(topics))}
    ref = None
    for b in backends:
        t0, c0 = time.perf_counter(), machine.cpu_seconds()
        run = neural.cross_encoder_reranker(texts, cross_encoder, backend=b).transform(first)
        wall, cpu = time.perf_counter() - t0, machine.cpu_seconds() - c0
        ndcg = float(per_query(run, qrels)["nDCG'"].mean())
        row = {"nDCG'": round(ndcg, 4), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}
        if ref is None:
            ref = ndcg
        else:
            row["delta_vs_" + backends[0]] = round(ndcg - ref, 4)
        out_rows[f"bm25>>crossencoder[{b}]"] = row
    out_rows["bm25 (first stage)"] = {"nDCG'": round(float(
        per_query(first, qrels)["nDCG'"].mean()), 4)}
    return out_rows


def quality(data: Path, collection: Path, out: Path, years, backends, cross_encoder,
            quiet: bool, topics_n: int = 0) -> dict:
    import numpy as np

    from mathir.experiment import run_experiment
    from mathir.indexing.dense_index import DenseAnswerIndex
    from mathir.neural.bi_encoder import load_bi_encoder
    from mathir.pipelines import neural
    from mathir.tasks import get_task

    task = get_task("arqmath-task1")
    pipes = {f"dense[{b}]": functools.partial(neural.dense, backend=b) for b in backends}
    pipes["dense[torch,hnsw]"] = functools.partial(neural.dense, search="hnsw")
    result: dict = {"years": {}}
    for year in years:
        d = task.data(data, year, collection)
        t0, c0 = time.perf_counter(), machine.cpu_seconds()
        res = run_experiment(task, d, [pipes], out=out, quiet=quiet)
        table = res.table
        rows = {}
        for name in pipes:
            family = name.split("[")[0]
            ref = f"{family}[{backends[0]}]"
            ndcg = float(table.loc[name, "nDCG'"])
            rows[name] = {"nDCG'": round(ndcg, 4)}
            if name != ref and ref in table.index:
                rows[name]["delta_vs_" + backends[0]] = round(
                    ndcg - float(table.loc[ref, "nDCG'"]), 4)
        runs = {n: task.read_run(p) for n, p in res.runs.items()}
        rows["dense[torch,hnsw]"]["recall@1000_vs_exhaustive"] = recall_at(
            runs["dense[torch,hnsw]"], runs[f"dense[{backends[0]}]"])
        result["years"][year] = {"runs": rows, "wall_s": round(time.perf_counter() - t0, 1),
                                 "cpu_s": round(machine.cpu_seconds() - c0, 1),
                                 "seconds": {k: round(v, 1) for k, v in res.seconds.items()}}
        if cross_encoder:
            result["years"][year]["rerank"] = rerank_quality(task, d, backends,
                                                             cross_encoder, topics_n)
    # the dense indexes' vectors, passage for passage, against the baseline's
    index = task.index(task.data(data, years[0], collection), quiet=True)
    flex = {}
    for b in backends:
        dense = DenseAnswerIndex.for_index(index, load_bi_encoder(backend=b))
        n = int(dense.manifest["num_passages"])
        flex[b] = np.fromfile(dense.path / "flex" / "vecs.f4", dtype="<f4").reshape(n, -1)
    result["index_vector_cosines"] = {b: cosines(flex[b], flex[backends[0]]) for b in backends}
    result["passages"] = int(len(flex[backends[0]]))
    return result


def run(args) -> dict:
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    result: dict = {"benchmark": "cpu_backends", "calibration_ms": machine.calibration_ms(),
                    "loadavg_start": machine.load_average(),
                    "cpu_count": os.cpu_count(), "backends": list(args.backends)}
    t_all, c_all = time.perf_counter(), machine.cpu_seconds()
    collection = args.collection or args.data / COLLECTION
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        # the indexes under OUT, for every path of this run (run_experiment's too)
        os.environ.setdefault("MATHIR_INDEX_DIR", str(out / ".index"))
        task, d, index, texts = _texts(args.data, collection)
        result["data"] = {"collection": str(collection), "answers": len(texts)}
        if args.passages:
            result["encoding"] = encoding(texts, args.backends, args.passages, args.rounds,
                                          args.batch_size, args.target_passages)
        ce = args.cross_encoder
        if args.topics:
            trained = ce is not None
            ce = ce or _untrained_cross_encoder(Path(tmp) / "ce")
            result["rerank"] = rerank(task, d, index, texts, args.backends, str(ce),
                                      args.topics)
            result["rerank"]["trained_model"] = trained
        if args.quality:
            result["quality"] = quality(args.data, collection, out, args.years, args.backends,
                                        args.cross_encoder, args.quiet, args.quality_topics)
    result["wall_s"] = round(time.perf_counter() - t_all, 1)
    result["cpu_s"] = round(machine.cpu_seconds() - c_all, 1)
    result["loadavg_end"] = machine.load_average()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = machine.parser(__doc__, data="arqmath")
    ap.add_argument("--collection", type=Path, default=None,
                    help="the Task 1 collection (default: collection_sample/threads_all)")
    ap.add_argument("--backends", type=lambda s: tuple(s.split(",")), default=BACKENDS,
                    help="comma-separated; the first is the baseline "
                    "(torch,onnx,onnx-int8,openvino,openvino-int8)")
    ap.add_argument("--passages", type=int, default=1200, help="passages to encode (0: skip)")
    ap.add_argument("--rounds", type=int, default=4, help="interleaved rounds of encoding")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=None, help="torch / ONNX Runtime threads")
    ap.add_argument("--target-passages", type=int, default=TARGET_PASSAGES)
    ap.add_argument("--topics", type=int, default=10,
                    help="topics whose BM25 top 100 the cross-encoder reranks (0: skip)")
    ap.add_argument("--cross-encoder", default=None, help="a trained cross-encoder folder")
    ap.add_argument("--quality", action="store_true",
                    help="nDCG' of every backend on the judged pools of --years")
    ap.add_argument("--years", type=lambda s: s.split(","), default=["2021", "2022"])
    ap.add_argument("--quality-topics", type=int, default=0,
                    help="judged topics a year whose cross-encoder reranking is evaluated "
                         "(0: all)")
    ap.add_argument("--out", type=Path, default=None,
                    help="keep indexes and runs here (default: a temporary folder)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    from mathir.errors import InputError
    from mathir.neural.backends import check_backend

    try:
        for b in args.backends:
            check_backend(b)
        if args.backends[0] != "torch":
            raise InputError("the first backend is the baseline: torch")
        with contextlib.redirect_stdout(sys.stderr):  # stdout holds the JSON only
            result = run(args)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    machine.print_report(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
