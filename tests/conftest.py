"""Shared fixtures: the embedded sample, a built sample index, and the real data."""

from __future__ import annotations

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


def error_lines(err: str) -> list[str]:
    """The lines of a command's stderr other than its notes on defaults (``note: no
    --data: ... embedded sample``), which commands on the embedded samples print first."""
    return [line for line in err.strip().splitlines() if not line.startswith("note: ")]
