"""Run provenance: a manifest beside each run file, and reuse only when it matches.

``bm25.tsv`` gets ``bm25.manifest.json``: the task, the pipeline (its repr, which holds
its parameters and index path), the topics and qrels files with SHA-256 checksums, the
index's own manifest checksum, package versions, the command line and the time. A run
is reused only when everything that can change its content matches: a changed
pipeline, topic file, index or package version makes it stale, unlike the silent reuse
of PyTerrier's ``save_dir``.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from importlib import metadata
from pathlib import Path

from mathir.storage import atomic_file

PACKAGES = ("mathir", "python-terrier", "pyterrier-pisa", "ir_measures", "pandas", "numpy",
            "scikit-learn", "scipy", "torch", "transformers", "sentence-transformers")
# Fields that decide whether a stored run is still valid (not the time or command line).
IDENTITY = ("task", "pipeline", "topics", "index", "versions", "format")


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes.

    >>> len(sha256_file(__file__))
    64
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that shape results (absent ones omitted)."""
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def manifest_path(run_path: str | Path) -> Path:
    """``runs/bm25.tsv`` -> ``runs/bm25.manifest.json``."""
    p = Path(run_path)
    return p.with_name(p.stem + ".manifest.json")


def describe_file(path: str | Path | None) -> dict | None:
    """Path and checksum of an input file (None stays None)."""
    if path is None:
        return None
    p = Path(path)
    return {"path": str(p.resolve()), "sha256": sha256_file(p)}


def index_checksum(index_dir: str | Path | None) -> str | None:
    """Checksum of an index directory's ``manifest.json`` (which fingerprints its input)."""
    if index_dir is None:
        return None
    m = Path(index_dir) / "manifest.json"
    return sha256_file(m) if m.exists() else None


def run_manifest(task: str, pipeline, topics: str | Path, qrels: str | Path | None = None,
                 index_dir: str | Path | None = None, run_format: str = "arqmath") -> dict:
    """The manifest describing how a run file is (to be) produced.

    >>> m = run_manifest("arqmath-task1", "BM25(k1=1.2)", __file__)
    >>> sorted(m)[:4]
    ['command', 'created', 'format', 'index']
    """
    return {
        "task": task,
        "pipeline": repr(pipeline) if not isinstance(pipeline, str) else pipeline,
        "topics": describe_file(topics),
        "qrels": describe_file(qrels),
        "index": index_checksum(index_dir),
        "versions": package_versions(),
        "format": run_format,
        "command": sys.argv,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def write_manifest(run_path: str | Path, manifest: dict) -> Path:
    """Write the manifest beside the run file (atomically)."""
    p = manifest_path(run_path)
    with atomic_file(p) as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
    return p


def reusable(run_path: str | Path, wanted: dict) -> bool:
    """True when the run file exists and its manifest matches ``wanted`` on :data:`IDENTITY`."""
    run_path = Path(run_path)
    try:
        stored = json.loads(manifest_path(run_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return run_path.exists() and all(stored.get(k) == wanted.get(k) for k in IDENTITY)
