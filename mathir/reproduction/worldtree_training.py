"""The models of the WorldTree headline: how each is trained (:data:`WORLDTREE_RECIPES`),
what a trained one is (its checksums and the ``reproduce`` entry of its manifest), whether
one is done, and the training of one, seeded and deterministic.

**Models** go to ``MODELS/worldtree/seed<S>/{bi,ce1,ce2}`` (``models/`` is ignored by
git), each with the ``manifest.json`` of its training plus a ``reproduce`` entry: the
seed, the recipe (hyperparameters, threads, device), checksums of the training pairs,
of the Train file and of the base model's weights, a checksum of the training code and
the versions of mathir and of the libraries that compute the weights. A model whose
entry equals what would be trained now is reused (a later session resumes where the
last one stopped); any other is trained again. A model is written into a temporary
directory that is renamed into place when it is complete
(:func:`mathir.storage.atomic_directory`), so a killed training never looks finished;
the git commit is recorded but not compared, so a commit that does not touch the
training code keeps the models.

**Determinism.** Every training runs with fixed seeds (Python, NumPy, torch; the pairs'
negative sampling and the batch order are seeded by the trainers),
``torch.use_deterministic_algorithms(True)`` and one torch thread each, in two
subprocesses side by side (:mod:`mathir.reproduction.scheduling`): seed by seed, the
bi-encoder and the first cross-encoder stage, and the second stage as soon as the first
is finished (a stopped command keeps whole seeds). On one machine the same
seed gives the same weights, byte for byte (``weights_sha256`` in the manifest;
tests/reproduction/test_worldtree_headline.py). Another CPU or library version gives other rounding, hence
other weights: compare the seed means, not single runs, across machines.

>>> [r.name for r in WORLDTREE_RECIPES]
['bi', 'ce1', 'ce2']
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mathir.errors import InputError
from mathir.storage import atomic_directory, read_manifest, sha256_file, write_manifest


@dataclass(frozen=True)
class Recipe:
    """How one model is trained: the pairs (first stage, negatives), the training
    (``mathir train-reranker`` options) and the torch ``threads`` it runs with.

    ``base``: the recipe whose model this one starts from (None: the packaged MiniLM).
    ``max_steps`` stops early (smoke runs only).
    """

    name: str
    kind: str  # "bi-encoder" or "cross-encoder"
    first_stage: str
    negatives: int
    negative_depth: int | None
    epochs: int
    batch_size: int
    max_length: int
    learning_rate: float
    warmup: float = 0.1
    loss: str = "pointwise"
    base: str | None = None
    threads: int = 1
    max_steps: int | None = None

    @property
    def label(self) -> str:
        """What progress lines call it."""
        return {"bi": "bi-encoder", "ce1": "cross-encoder stage 1",
                "ce2": "cross-encoder stage 2"}.get(self.name, self.name)

    def describe(self) -> dict:
        """The recipe as JSON (part of a model's manifest)."""
        return dataclasses.asdict(self)


#: The three models of the WorldTree headline (docs/worldtree.md): the bi-encoder and the
#: first cross-encoder stage on TF-IDF negatives; the second cross-encoder stage from the
#: first, on ``ltr``'s negatives; each on one thread (two train side by side).
WORLDTREE_RECIPES = (
    Recipe("bi", "bi-encoder", first_stage="tfidf", negatives=1, negative_depth=None,
           epochs=3, batch_size=128, max_length=128, learning_rate=1e-4),
    Recipe("ce1", "cross-encoder", first_stage="tfidf", negatives=2, negative_depth=100,
           epochs=2, batch_size=16, max_length=128, learning_rate=6e-5),
    Recipe("ce2", "cross-encoder", first_stage="ltr", negatives=3, negative_depth=100,
           epochs=1, batch_size=16, max_length=128, learning_rate=3e-5, base="ce1"),
)


# --- checksums -----------------------------------------------------------------------


def weights_checksum(model_dir: str | Path) -> str:
    """SHA-256 of a saved model's weight files (``*.safetensors``, ``*.bin``; names and
    bytes), the files that training changes.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "model.safetensors").write_bytes(b"w")
    >>> weights_checksum(d) == weights_checksum(d), len(weights_checksum(d))
    (True, 64)
    """
    root = Path(model_dir)
    files = sorted(p for pattern in ("*.safetensors", "*.bin") for p in root.rglob(pattern)
                   if not any(part.startswith(".") for part in p.relative_to(root).parts))
    if not files:
        raise InputError("no weight file (*.safetensors, *.bin) in the model directory",
                         path=root)
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + sha256_file(p).encode())
    return h.hexdigest()


def pairs_checksum(pairs) -> str:
    """SHA-256 of training pairs (their rows, in order, as tab-separated text).

    >>> import pandas as pd
    >>> p = pd.DataFrame({"qid": ["1"], "query": ["q"], "docno": ["d"], "text": ["t"], "label": [1]})
    >>> pairs_checksum(p) == pairs_checksum(p.copy()), pairs_checksum(p) == pairs_checksum(p.assign(label=0))
    (True, False)
    """
    text = pairs.to_csv(sep="\t", index=False, lineterminator="\n")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def training_code_checksum() -> str:
    """SHA-256 of the training code (mathir/pipelines/reranker_training.py) as Python
    syntax: comments, docstrings and layout left out, so that editing them keeps the
    trained models.

    >>> len(training_code_checksum())
    64
    """
    from mathir.pipelines import reranker_training

    tree = ast.parse(Path(reranker_training.__file__).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()


def _training_packages() -> dict[str, str]:
    """Versions of the libraries that compute the weights (and of mathir)."""
    from importlib.metadata import PackageNotFoundError, version

    from mathir import __version__

    out = {"mathir": __version__}
    for name in ("torch", "transformers", "sentence-transformers", "tokenizers",
                 "safetensors"):
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name)
    return out


# --- one model: its key, whether it is done, its training -----------------------------


def model_key(recipe: Recipe, seed: int, pairs_sha256: str, train_file_sha256: str,
              base_weights_sha256: str, device: str) -> dict:
    """What a model trained now would be: the ``reproduce`` entry of its manifest.

    >>> k = model_key(WORLDTREE_RECIPES[0], 0, "p", "t", "b", "cpu")
    >>> k["seed"], k["recipe"]["learning_rate"], k["base_weights_sha256"]
    (0, 0.0001, 'b')
    """
    return {"task": "worldtree", "seed": seed, "recipe": recipe.describe(), "device": device,
            "training_pairs_sha256": pairs_sha256, "train_file_sha256": train_file_sha256,
            "base_weights_sha256": base_weights_sha256,
            "training_code_sha256": training_code_checksum(),
            "packages": _training_packages()}


def why_not_done(model_dir: str | Path, key: dict) -> str | None:
    """None when ``model_dir`` holds the finished model ``key`` describes; else why not
    (no manifest, which entries differ, weights changed since they were written).

    A directory being written is a temporary sibling (``.bi.<pid>-....tmp``), never
    ``model_dir`` itself, so a half-written model is never taken for a finished one.

    >>> import tempfile
    >>> why_not_done(tempfile.mkdtemp() + "/bi", {"seed": 0})
    'not trained yet'
    """
    manifest = read_manifest(model_dir)
    if manifest is None:
        return "not trained yet"
    stored = manifest.get("reproduce")
    if not isinstance(stored, dict):
        return "its manifest has no reproduce entry (trained by another command)"
    changed = sorted(k for k in set(key) | set(stored) if stored.get(k) != key.get(k))
    if changed:
        return f"changed: {', '.join(changed)}"
    try:
        if weights_checksum(model_dir) != manifest.get("weights_sha256"):
            return "its weight files differ from those its manifest records"
    except InputError:
        return "its weight files are missing"
    return None


@contextlib.contextmanager
def deterministic_torch(seed: int, threads: int) -> Iterator[None]:
    """Seed Python, NumPy and torch, use ``threads`` torch threads and torch's
    deterministic algorithms; the previous settings come back afterwards."""
    import random

    import numpy as np
    import torch

    previous = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled())
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(previous[0])
        torch.use_deterministic_algorithms(previous[1])


def train_model(recipe: Recipe, pairs, out: str | Path, seed: int, key: dict,
                base: str | Path | None = None, device: str = "cpu",
                quiet: bool = True) -> Path:
    """Train ``recipe``'s model on ``pairs`` into ``out`` (whole or not at all), with
    :func:`deterministic_torch`; its manifest gets ``reproduce`` = ``key`` and the
    ``weights_sha256`` of what was trained. Returns ``out``.
    """
    from mathir.experiment.identity import git_state
    from mathir.pipelines.reranker_training import train_bi_encoder, train_cross_encoder

    out = Path(out)
    git = git_state()  # the code it starts with (a commit made while it trains is not it)
    options = {"loss": recipe.loss} if recipe.kind == "cross-encoder" else {}
    train = train_bi_encoder if recipe.kind == "bi-encoder" else train_cross_encoder
    with deterministic_torch(seed, recipe.threads), atomic_directory(out) as tmp:
        trained = train(pairs, tmp / "model", base=base, epochs=recipe.epochs,
                        batch_size=recipe.batch_size, learning_rate=recipe.learning_rate,
                        max_length=recipe.max_length, warmup=recipe.warmup,
                        max_steps=recipe.max_steps, device=device, seed=seed, quiet=quiet,
                        **options)
        for child in trained.iterdir():
            os.replace(child, tmp / child.name)
        trained.rmdir()
        manifest = read_manifest(tmp) or {}
        write_manifest(tmp, manifest | {"reproduce": key, "weights_sha256": weights_checksum(tmp),
                                        "git": git, "threads": recipe.threads})
    return out
