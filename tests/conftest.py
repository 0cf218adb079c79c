"""Shared fixtures: the embedded sample, a built sample index, and the real data."""

from __future__ import annotations

import os
import tempfile
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

# Collection fingerprints cache file digests in the user's cache folder: tests keep theirs
# in a temporary one (inherited by the processes they start).
os.environ.setdefault("MATHIR_CACHE_DIR", tempfile.mkdtemp(prefix="mathir-test-cache-"))

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
def sample_index(sample, tmp_path_factory):
    from mathir.indexing.answer_index import AnswerIndex

    return AnswerIndex.build(sample.posts, tmp_path_factory.mktemp("idx") / "answers", quiet=True)


def error_lines(err: str) -> list[str]:
    """The lines of a command's stderr other than its notes on defaults (``note: no
    --data: ... embedded sample``), which commands on the embedded samples print first."""
    return [line for line in err.strip().splitlines() if not line.startswith("note: ")]
