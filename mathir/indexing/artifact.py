"""The one protocol every mathir index opens by: a PyTerrier artifact whose folder holds a
``manifest.json`` of its ``kind`` (and, where declared, its ``format``), and data files
that must be those the build recorded (:func:`mathir.storage.require_data_files`: a stat
per file, a digest when a stat changed). The index kinds (answers, formulas, facts, dense
answers) declare only what differs: their kind, their words, what they open and ship.
Building goes through the one build-or-reuse protocol, :func:`mathir.storage.build_or_reuse`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pyterrier as pt

from mathir.errors import InputError
from mathir.storage import artifact_meta, package_files, read_manifest, require_data_files


class MathirIndex(pt.Artifact):
    """A built mathir index, opened from its folder: ``KIND`` (the manifest's ``kind``),
    ``WHAT`` (its name in words), ``UNIT`` (what it holds, for ``repr``), ``FORMAT`` (the
    manifest format this mathir reads; None: any), ``PACKAGED`` (a filter of the files a
    package ships, :func:`mathir.storage.package_files`; None: every data file). A
    subclass opens what it needs in :meth:`_open`.

    >>> from mathir.indexing.answer_index import AnswerIndex
    >>> AnswerIndex("/nowhere")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: /nowhere: not a mathir answer index (no manifest.json)
    """

    ARTIFACT_TYPE: ClassVar[str] = "sparse_index"
    ARTIFACT_FORMAT: ClassVar[str]
    KIND: ClassVar[str]
    WHAT: ClassVar[str]
    UNIT: ClassVar[str] = "documents"
    FORMAT: ClassVar[int | None] = None
    PACKAGED: ClassVar[Callable[..., Any] | None] = None

    def __init__(self, path: str | Path):
        super().__init__(path)
        self.manifest = read_manifest(self.path)
        if self.manifest is None or self.manifest.get("kind") != self.KIND:
            raise InputError(f"not a mathir {self.WHAT} (no manifest.json)", path=self.path)
        if self.FORMAT is not None and self.manifest.get("format") != self.FORMAT:
            raise InputError(f"{self.WHAT} of format {self.manifest.get('format')} (this "
                             f"mathir reads format {self.FORMAT}): build it again with "
                             f"{type(self).__name__}.build or `mathir index`", path=self.path)
        require_data_files(self.path, self.manifest)  # one stat a file
        self._open()

    def _open(self) -> None:
        """What the index opens at once (nothing by default: most open on first use)."""

    @property
    def num_docs(self) -> int:
        """Number of indexed documents."""
        return int(self.manifest["num_docs"])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r}, {self.num_docs} {self.UNIT})"

    def _package_files(self):
        # What build_package() and to_hf() ship (pt.Artifact's hook): what opening and
        # searching read, no lock, log or absolute path (mathir.storage.package_files).
        packaged = type(self).PACKAGED
        if packaged is None:
            return package_files(self.path, pt_meta=artifact_meta(type(self)))
        return package_files(self.path, packaged, artifact_meta(type(self)))


__all__ = ["MathirIndex"]
