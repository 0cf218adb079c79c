"""Shared fixtures: the embedded sample, a built sample index, and the real data."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from mathir.samples import arqmath_sample

# Fuzzing: modest example counts in CI; HYPOTHESIS_PROFILE=long for a thorough run.
settings.register_profile("ci", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture])
settings.register_profile("long", max_examples=3000, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Collection fingerprints cache file digests in the user's cache folder: the tests keep
# theirs in the run's temporary folder (../conftest.py), inherited by the processes they start.

REAL_DATA = Path(os.environ.get("MATHIR_SHARED_DATA",
                                Path(__file__).resolve().parents[2] / "shared" / "data"))


def real_path(*parts: str) -> Path:
    """A file of ../shared/data; skips the test (with the reason) when it is absent."""
    p = REAL_DATA.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"real data not available: {p} (set MATHIR_SHARED_DATA or keep ../shared/data)")
    return p


@pytest.fixture(scope="session")
def sample():
    return arqmath_sample()


@pytest.fixture(scope="session")
def sample_index(sample, samples_dir):
    """The answer index of the embedded sample, built once per run: in the folder where the
    doctests build theirs (../conftest.py), so they reuse it (and the dense index beside it)."""
    from mathir.indexing.answer_index import AnswerIndex

    return AnswerIndex.build(sample.posts, samples_dir / "sample-answers", quiet=True)


@pytest.fixture(scope="session")
def sample_formula_index(sample, samples_dir):
    """The formula index of the embedded sample (its formula TSV), built once per run
    beside :func:`sample_index` (the doctests' ``"sample-formulas"``)."""
    from mathir.indexing.formula_index import FormulaIndex

    return FormulaIndex.build(sample.formulas, samples_dir / "sample-formulas", quiet=True)


@pytest.fixture(scope="session")
def two_layer_minilm() -> Path:
    """The packaged all-MiniLM-L6-v2 cut to its first 2 of 6 transformer layers (its
    tokenizer, pooling and normalisation unchanged), for tests whose checks (an export
    and its agreement, a training, the commands around a model) hold at any depth, at
    about a third of the cost. Made once per run in the run's folder, which the
    pytest-xdist workers share (so they share its exports too)."""
    pytest.importorskip("sentence_transformers")  # the neural extra (with safetensors)
    import json
    import re
    import shutil

    from safetensors.numpy import load_file, save_file

    from mathir.models import default_model_path
    from mathir.storage import build_or_reuse

    src = default_model_path()
    root = Path(os.environ["MATHIR_TESTS_TMP"]) / "two-layer-encoder"

    def build_into(tmp: Path) -> None:
        shutil.copytree(src, tmp / "model", ignore=shutil.ignore_patterns("model.safetensors"))
        kept = {k: v for k, v in load_file(str(src / "model.safetensors")).items()
                if not re.match(r"encoder\.layer\.([2-9]|\d\d+)\.", k)}
        save_file(kept, str(tmp / "model" / "model.safetensors"), metadata={"format": "pt"})
        config = json.loads((src / "config.json").read_text(encoding="utf-8"))
        (tmp / "model" / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 2}),
                                                   encoding="utf-8")

    build_or_reuse(root, {"kind": "test-model", "layers": 2, "source": str(src)}, build_into)
    return root / "model"


# BERTScore's (P, R, F) by everything that decides them: the scorer's model, layer and
# settings (its hash, layers, device), the batch size, the exact candidates and references.
_BERTSCORES: dict = {}


@contextlib.contextmanager
def memoized_bertscore():
    """``BERTScorer.score`` computed once per distinct input in this test process.

    Task 3's CS encodes every answer and reference with the model (seconds of CPU per
    run); the experiments of the sample (and every path of one figure) score the same
    texts again and again. The scorer is deterministic on CPU for identical inputs
    (same sentences, same batches), so a repeated call returns the tensors the first
    computed: every mathir code path still runs and builds its own inputs, and any
    input that differs, in text, model, layer or batch size, is encoded afresh.
    """
    try:
        import bert_score
    except ImportError:  # Task 3's CS is not computed without it
        yield
        return

    score = bert_score.BERTScorer.score

    def once(self, cands, refs, verbose=False, batch_size=64, return_hash=False):
        if self.idf:  # weights from compute_idf, not in the key
            return score(self, cands, refs, verbose, batch_size, return_hash)
        key = (self.hash, self.all_layers, str(self.device), batch_size, tuple(cands),
               tuple(r if isinstance(r, str) else tuple(r) for r in refs))
        if key not in _BERTSCORES:
            _BERTSCORES[key] = score(self, cands, refs, verbose, batch_size)
        out = tuple(t.clone() for t in _BERTSCORES[key])
        return (out, self.hash) if return_hash else out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bert_score.BERTScorer, "score", once)
        yield


@pytest.fixture
def bertscore_once():
    with memoized_bertscore():
        yield


def error_lines(err: str) -> list[str]:
    """The lines of a command's stderr other than its notes on defaults (``note: no
    --data: ... embedded sample``), which commands on the embedded samples print first."""
    return [line for line in err.strip().splitlines() if not line.startswith("note: ")]


def install_distribution(root: Path, name: str, group: str, entry_points: str) -> Path:
    """A distribution ``name`` declaring ``entry_points`` (lines ``name = module:attr``) in
    the entry-point ``group``, as pip leaves its metadata in a folder on ``sys.path``:
    ``root/NAME-0.1.dist-info``, returned."""
    info = root / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry_points}")
    return info
