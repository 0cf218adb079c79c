"""Benchmark: dense search over ARQMath's 1.68M passages, exhaustive against FAISS HNSW / IVF.

The collection's passage vectors are not here (encoding them takes a day on this CPU), so
``--passages`` vectors (default 1,680,000) are drawn to match the real ones:

1. real passage vectors: ``--real`` passages of the real answers of
   ``collection_sample/threads_all`` (cut as ``DenseAnswerIndex.build`` cuts them), and
   the real queries (every ARQMath Task 1 topic of ``--years``), encoded by the packaged
   all-MiniLM-L6-v2 (``--backend``, default ``onnx``: its vectors equal torch's to a
   cosine of 1.0, see ``benchmarks/cpu_backends.py``);
2. a Gaussian mixture fitted to them: k-means (``--clusters``, FAISS) for the means and
   weights, one pooled within-cluster covariance (384 x 384, full rank); each synthetic
   vector is a cluster mean plus correlated noise, scaled to unit length as the model's
   vectors are;
3. the match is reported: for the real queries, the mean cosine of their 1st, 10th, 100th
   and 1000th nearest passage, and of random passage pairs, in a real sample and in a
   synthetic sample of the same size (``distribution``).

The synthetic vectors go into a pyterrier-dr FlexIndex (what ``dense`` searches), and the
real queries are searched (``--queries``, one at a time, depth 3,000 as ``dense`` asks):
the exhaustive ``np_retriever`` (the baseline), then each ``--kinds`` search of
:class:`mathir.indexing.ann_index.AnnIndex` (built, timed, sized), its candidates rescored
exactly (or from float16 copies: ``ivf:f16=1``). Recall@1000 is the share of the
exhaustive scan's 1,000 best passages that the approximate search returns in its 1,000
best. Memory is measured in a fresh process that
only opens the index and runs the queries (``VmHWM``, ``RssAnon``, ``RssFile`` of
``/proc/self/status``).

    python benchmarks/dense_ann.py --json
    python benchmarks/dense_ann.py --passages 200000 --kinds hnsw,ivf,ivf:f16=1 --json

``--json`` prints one JSON object on one line, CPU seconds beside wall seconds and
``calibration_ms``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:  # python benchmarks/dense_ann.py
    import machine
except ModuleNotFoundError:  # benchmarks.dense_ann, from the repository root
    from benchmarks import machine

COLLECTION = Path("collection_sample") / "threads_all"
#: --sweep: the search parameters tried on each kind of index
SWEEPS = {"hnsw": [{"ef_search": e} for e in (1024, 2048, 4096)],
          "ivf": [{"nprobe": p} for p in (16, 32, 64, 128, 256)]}


def split_specs(text: str) -> list[str]:
    """Search specs from one argument: a part with ``=`` belongs to the spec before it.

    >>> split_specs("hnsw,ivf:f16=1,nprobe=64,ivf")
    ['hnsw', 'ivf:f16=1,nprobe=64', 'ivf']
    """
    specs: list[str] = []
    for part in text.split(","):
        if "=" in part and ":" not in part and specs:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def real_vectors(data: Path, collection: Path, n: int, years, backend: str, tmp: Path):
    """(passage vectors, query vectors) of the real sample, encoded by ``backend``."""
    import numpy as np

    from mathir.indexing.dense_index import AnswerTexts, PassageSettings
    from mathir.neural.bi_encoder import load_bi_encoder
    from mathir.tasks import get_task

    task = get_task("arqmath-task1")
    texts = AnswerTexts.build(collection, tmp / "texts", quiet=True)
    cut = PassageSettings().transformer()(texts.frame())["text"].tolist()
    rng = np.random.default_rng(0)
    if n and n < len(cut):
        cut = [cut[i] for i in np.sort(rng.choice(len(cut), n, replace=False))]
    enc = load_bi_encoder(backend=backend)
    queries = []
    for year in years:
        d = task.data(data, year, collection)
        queries += task.read_topics(d.topics)["query"].tolist()
    return enc.st.encode_docs(cut), enc.st.encode_queries(queries)


def fit_mixture(vectors, clusters: int, seed: int = 0):
    """(means, weights, Cholesky factor of the pooled within-cluster covariance)."""
    import faiss
    import numpy as np

    x = np.ascontiguousarray(vectors, dtype=np.float32)
    km = faiss.Kmeans(x.shape[1], clusters, niter=25, seed=seed, spherical=False)
    km.train(x)
    _, assign = km.index.search(x, 1)
    assign = assign[:, 0]
    means = km.centroids.astype(np.float64)
    weights = np.bincount(assign, minlength=clusters) / len(x)
    resid = x.astype(np.float64) - means[assign]
    cov = resid.T @ resid / max(len(x) - clusters, 1)
    chol = np.linalg.cholesky(cov + 1e-6 * np.eye(len(cov)))
    return means, weights, chol


def sample_mixture(means, weights, chol, n: int, seed: int = 1):
    """``n`` unit vectors from the mixture (float32), in blocks."""
    import numpy as np

    rng = np.random.default_rng(seed)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        c = rng.choice(len(means), m, p=weights)
        v = means[c] + rng.standard_normal((m, means.shape[1])) @ chol.T
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        yield v.astype(np.float32)


def distribution(passages, queries, sample: int = 1000) -> dict:
    """Mean cosine of the queries' 1st/10th/100th/1000th nearest passage, and of random
    passage pairs."""
    import numpy as np

    sims = queries @ passages.T
    sims.sort(axis=1)
    out = {}
    for k in (1, 10, 100, 1000):
        if k <= sims.shape[1]:
            out[f"query_nn{k}"] = round(float(sims[:, -k].mean()), 4)
    rng = np.random.default_rng(2)
    i = rng.integers(0, len(passages), sample)
    j = rng.integers(0, len(passages), sample)
    pair = (passages[i] * passages[j]).sum(1)
    out["random_pairs_mean"] = round(float(pair.mean()), 4)
    out["random_pairs_sd"] = round(float(pair.std()), 4)
    return out


def write_flex(blocks, path: Path) -> None:
    import pyterrier_dr

    flex = pyterrier_dr.FlexIndex(str(path), verbose=False)

    def records():
        i = 0
        for block in blocks:
            for v in block:
                yield {"docno": f"{i}%p0", "doc_vec": v}
                i += 1

    flex.indexer(mode="overwrite").index(records())


def memory() -> dict:
    """VmRSS, VmHWM, RssAnon and RssFile of this process, in MB."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key + "_mb"] = round(int(line.split()[1]) / 1024, 1)
    return out


def search_child(flex: Path, kind: str, queries_file: Path, depth: int, params: dict,
                 truth_file: Path | None, sweep: list | None = None) -> dict:
    """Open ``kind``'s index (or the exhaustive scan) and time each query alone."""
    import numpy as np
    import pandas as pd

    before = memory()
    queries = np.load(queries_file)
    if kind == "exhaustive":
        import pyterrier_dr

        retr = pyterrier_dr.FlexIndex(str(flex), verbose=False).np_retriever(
            num_results=depth, drop_query_vec=True)

        def one(q):
            res = retr(pd.DataFrame({"qid": ["q"], "query_vec": [q]}))
            return res["docid"].to_numpy() if "docid" in res else \
                np.array([int(d.split("%")[0]) for d in res["docno"]])
    else:
        from mathir.indexing.ann_index import AnnIndex

        ann = AnnIndex.build(flex, kind, **params)

        def one(q):
            return ann.search(q[None, :], depth)[1][0]
    if sweep:  # search parameters tried in turn, the index opened once
        out = {}
        for values in sweep:
            ann.params.update(values)
            out[json.dumps(values, sort_keys=True)] = _timed(one, queries, depth, truth_file)
        out["memory_before_open"] = before
        out["memory_after"] = memory()
        return out
    out = _timed(one, queries, depth, truth_file)
    out["memory_before_open"] = before
    out["memory_after"] = memory()
    if truth_file is None:
        np.save(queries_file.with_suffix(".truth.npy"), np.stack(out.pop("ids")))
    out.pop("ids", None)
    return out


def _timed(one, queries, depth: int, truth_file: Path | None) -> dict:
    import numpy as np

    one(queries[0])  # warm up: pages in what a running search has in memory
    walls, cpus, ids = [], [], []
    for q in queries:
        t0, c0 = time.perf_counter(), machine.cpu_seconds()
        ids.append(one(q))
        walls.append(time.perf_counter() - t0)
        cpus.append(machine.cpu_seconds() - c0)
    out = {"queries": len(queries), "depth": depth,
           "median_ms": round(1000 * float(np.median(walls)), 2),
           "p95_ms": round(1000 * float(np.percentile(walls, 95)), 2),
           "cpu_ms_mean": round(1000 * float(np.mean(cpus)), 2),
           "cpu_ms_median": round(1000 * float(np.median(cpus)), 2)}
    if truth_file is None:
        out["ids"] = [np.asarray(i[:depth]) for i in ids]
    else:
        truth = np.load(truth_file)
        for k in sorted({min(1000, depth), depth}):
            rec = [len(set(t[:k]) & set(np.asarray(g)[:k])) / k
                   for t, g in zip(truth, ids, strict=True)]
            out[f"recall@{k}"] = round(float(np.mean(rec)), 4)
            out[f"recall@{k}_min"] = round(float(np.min(rec)), 4)
    return out


def _child(flex, kind, queries_file, depth, params, truth, sweep=None) -> dict:
    cmd = [sys.executable, __file__, "--child", str(flex), "--child-kind", kind,
           "--child-queries", str(queries_file), "--depth", str(depth),
           "--child-params", json.dumps(params), "--child-sweep", json.dumps(sweep or [])]
    if truth:
        cmd += ["--child-truth", str(truth)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"search child failed: {proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["child_wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def run(args) -> dict:
    import numpy as np

    from mathir.indexing.ann_index import AnnIndex, check_search, parse_search

    result: dict = {"benchmark": "dense_ann", "calibration_ms": machine.calibration_ms(),
                    "loadavg_start": machine.load_average(),
                    "cpu_count": os.cpu_count()}
    t_all, c_all = time.perf_counter(), machine.cpu_seconds()
    collection = args.collection or args.data / COLLECTION
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        tmp = Path(tmp)
        t0, c0 = time.perf_counter(), machine.cpu_seconds()
        real, queries = real_vectors(args.data, collection, args.real, args.years,
                                     args.backend, tmp)
        means, weights, chol = fit_mixture(real, args.clusters)
        synth_sample = next(sample_mixture(means, weights, chol, len(real), seed=7))
        result["vectors"] = {
            "real_passages": int(len(real)), "real_queries": int(len(queries)),
            "clusters": args.clusters, "backend": args.backend,
            "how": "Gaussian mixture fitted to real passage vectors (k-means means and "
                   "weights, pooled within-cluster covariance), rows scaled to unit length",
            "fit_wall_s": round(time.perf_counter() - t0, 1),
            "fit_cpu_s": round(machine.cpu_seconds() - c0, 1),
            "distribution": {"real": distribution(real, queries),
                             "synthetic_same_size": distribution(synth_sample, queries)}}
        flex = tmp / "synthetic.flex"
        t0, c0 = time.perf_counter(), machine.cpu_seconds()
        write_flex(sample_mixture(means, weights, chol, args.passages), flex)
        result["flex"] = {"passages": args.passages,
                          "write_wall_s": round(time.perf_counter() - t0, 1),
                          "vecs_bytes": (flex / "vecs.f4").stat().st_size}
        rng = np.random.default_rng(3)
        pick = rng.choice(len(queries), min(args.queries, len(queries)), replace=False)
        qfile = tmp / "queries.npy"
        np.save(qfile, queries[pick].astype(np.float32))
        result["exhaustive"] = _child(flex, "exhaustive", qfile, args.depth, {}, None)
        truth = qfile.with_suffix(".truth.npy")
        result["ann"] = {}
        for spec in args.kinds:
            kind, params = parse_search(spec)
            if args.params:
                params.update(json.loads(args.params.get(kind, "{}")))
            t0, c0 = time.perf_counter(), machine.cpu_seconds()
            ann = AnnIndex.build(flex, kind, quiet=True, **params)
            built = {"build_wall_s": round(time.perf_counter() - t0, 1),
                     "build_cpu_s": round(machine.cpu_seconds() - c0, 1),
                     "manifest": {k: ann.manifest[k] for k in ("params", "build_s", "train_s",
                                                               "bytes")},
                     "search_params": ann.params}
            built["search"] = _child(flex, kind, qfile, args.depth, params, truth,
                                     SWEEPS[kind] if args.sweep else None)
            result["ann"][check_search(spec)] = built
    result["wall_s"] = round(time.perf_counter() - t_all, 1)
    result["cpu_s"] = round(machine.cpu_seconds() - c_all, 1)
    result["loadavg_end"] = machine.load_average()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = machine.parser(__doc__, data="arqmath")
    ap.add_argument("--collection", type=Path, default=None)
    ap.add_argument("--passages", type=int, default=1_680_000)
    ap.add_argument("--real", type=int, default=0, help="real passages to fit (0: all)")
    ap.add_argument("--years", type=lambda s: s.split(","), default=["2020", "2021", "2022"])
    ap.add_argument("--backend", default="onnx")
    ap.add_argument("--clusters", type=int, default=64)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--depth", type=int, default=3000)
    ap.add_argument("--kinds", type=split_specs, default=["hnsw"],
                    help="searches, each KIND[:NAME=N,...] as --dense-search takes it, "
                         "e.g. ivf,ivf:f16=1,nprobe=128 (an index is built once and reused "
                         "by every search of its build parameters)")
    ap.add_argument("--params", type=json.loads, default=None,
                    help='JSON {kind: JSON params}, e.g. \'{"hnsw": "{\\"ef_search\\": 512}"}\'')
    ap.add_argument("--tmp", default=None, help="where the synthetic index is written")
    ap.add_argument("--sweep", action="store_true",
                    help="try several search parameters (SWEEPS) on each index")
    ap.add_argument("--child-sweep", default="[]", help=argparse.SUPPRESS)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-kind", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-queries", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-params", default="{}", help=argparse.SUPPRESS)
    ap.add_argument("--child-truth", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        with contextlib.redirect_stdout(sys.stderr):
            out = search_child(Path(args.child), args.child_kind, Path(args.child_queries),
                               args.depth, json.loads(args.child_params),
                               Path(args.child_truth) if args.child_truth else None,
                               json.loads(args.child_sweep))
        machine.print_report(out, True)
        return 0
    with contextlib.redirect_stdout(sys.stderr):
        result = run(args)
    machine.print_report(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
