"""PISA's BM25 data of a mathir index: which files, compiled before any search.

PISA compiles an index's BM25 data (block-max WAND data and the compressed index) on the
first search with a k1 and b. A build compiles it for :data:`BM25_DEFAULTS`
(:func:`compile_bm25`), so that searching with mathir's defaults writes nothing;
:func:`pisa_index` opens a ``PisaIndex`` that compiles other parameters' data under a
lock and renames it into place (:func:`prepare_bm25`) rather than writing in place. An
index package leaves out the BM25 data of other parameters (:func:`packaged`).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from mathir.errors import InputError
from mathir.storage import USER_OS_ERRORS, exclusive_lock, scratch_directory

# BM25's (k1, b) in mathir's pipelines (mathir.pipelines.lexical.bm25 and the formula
# retrievers): a build compiles their block-max data, so that searching writes nothing.
BM25_DEFAULTS = (1.2, 0.75)


def _fmt_double(x: float) -> str:
    """A double as pisathon names its files (``fmt::format("{}", x)``: 1.0 -> "1")."""
    r = repr(float(x))
    return r[:-2] if r.endswith(".0") else r


def bm25_data_files(pisa_dir: Path, k1: float, b: float, encoding: str = "block_simdbp",
                    quantize: bool = False) -> list[Path]:
    """The files PISA compiles on the first BM25 search with ``k1``, ``b``: block-max
    (WAND) data and the compressed index (``pyterrier_pisa``'s prepare_index).

    >>> [p.name for p in bm25_data_files(Path("pisa"), 1.2, 0.75)]
    ['bm25.k1-1.2.b-0.75.q0.bmw.64', 'bm25.k1-1.2.b-0.75.q0.bmw.64.block_simdbp']
    """
    wand = pisa_dir / f"bm25.k1-{_fmt_double(k1)}.b-{_fmt_double(b)}.q{int(quantize)}.bmw.64"
    return [wand, wand.with_name(f"{wand.name}.{encoding}")]


def packaged(rel: str) -> bool:
    """Whether an index package holds the file at ``rel`` (a path inside a mathir index
    with PISA parts): not PISA's forward index (``fwd``, ``fwd.urls``: only re-indexing
    reads them) nor the BM25 data of a k1 and b other than :data:`BM25_DEFAULTS` (a
    parameter scan compiles them; a search compiles them again where needed).

    >>> [packaged(p) for p in ("pisa/inv.docs", "pisa/fwd", "pisa/bm25.k1-0.9.b-0.4.q0.bmw.64",
    ...                        "pisa/bm25.k1-1.2.b-0.75.q0.bmw.64.block_simdbp")]
    [True, False, False, True]
    """
    name = rel.rsplit("/", 1)[-1]
    if name in ("fwd", "fwd.urls"):
        return False
    if name.startswith("bm25.k1-"):
        return name in {p.name for p in bm25_data_files(Path(), *BM25_DEFAULTS)}
    return True


def compile_bm25(pisa_dir: Path, k1: float, b: float, quantize: bool = False) -> None:
    """Compile a PISA index's BM25 data in place (for an index being built: no lock)."""
    from pyterrier_pisa import PisaIndex

    PisaIndex(str(pisa_dir), threads=1).bm25(k1=k1, b=b, precompute_impact=quantize)


def prepare_bm25(pisa_dir: str | Path, k1: float, b: float, encoding: str = "block_simdbp",
                 quantize: bool = False) -> None:
    """Compile a PISA index's BM25 data for ``k1``, ``b`` unless it is there already.

    PISA would write it in place on the first search, where a concurrent search could
    read a half-written file and a read-only index aborts the process. Here it is
    compiled under a lock in a scratch folder and renamed into place; an index that
    lacks it and cannot be written is an :class:`InputError`.
    """
    pisa_dir = Path(pisa_dir)
    if all(f.exists() for f in bm25_data_files(pisa_dir, k1, b, encoding, quantize)):
        return
    try:
        with exclusive_lock(pisa_dir):
            if all(f.exists() for f in bm25_data_files(pisa_dir, k1, b, encoding, quantize)):
                return
            with scratch_directory(pisa_dir) as tmp:
                for f in pisa_dir.iterdir():
                    if f.is_file():
                        (tmp / f.name).symlink_to(f.resolve())
                compile_bm25(tmp, k1, b, quantize)
                for f in tmp.iterdir():
                    if f.is_file() and not f.is_symlink():
                        os.replace(f, pisa_dir / f.name)
    except (InputError, OSError) as e:
        if isinstance(e, OSError) and e.errno not in USER_OS_ERRORS:
            raise
        why = e.message if isinstance(e, InputError) else f"not writable ({e.strerror})"
        raise InputError(f"the index has no BM25 data for k1={k1}, b={b} (PISA compiles it on "
                         f"the first search) and its folder is {why.removeprefix('folder ')}: "
                         "search it once with write access", path=pisa_dir) from None


@functools.cache
def _prepared_pisa_class():
    from pyterrier_pisa import PisaIndex

    class PreparedPisaIndex(PisaIndex):
        """A PisaIndex whose BM25 data is compiled by :func:`prepare_bm25` first."""

        def bm25(self, k1=0.9, b=0.4, *args, precompute_impact=False, **kwargs):
            prepare_bm25(self.path, k1, b, self.index_encoding.value, precompute_impact)
            return super().bm25(k1, b, *args, precompute_impact=precompute_impact, **kwargs)

    return PreparedPisaIndex


def pisa_index(path: str | Path, **kwargs):
    """``pyterrier_pisa.PisaIndex(path, **kwargs)`` whose ``bm25`` first prepares its data
    (:func:`prepare_bm25`), so that a search never writes into a finished index in place."""
    return _prepared_pisa_class()(str(path), **kwargs)
