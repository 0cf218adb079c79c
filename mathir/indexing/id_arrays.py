"""Identifier columns (formula, post, thread, visual ids) as memory-mapped arrays.

ARQMath's identifiers are decimal integers, so a column of 28M of them is a 224 MB
``int64`` array on disk, memory-mapped when opened (only the pages a search touches are
read), where Python strings in a pandas frame took about 290 MB per million rows in
memory. A column is stored as integers when every value is a canonical decimal
(``"0"`` or digits without a leading zero, up to 18 digits) or empty (stored as -1), so
that turning it back into strings gives exactly the values read; otherwise (an id such
as ``"A.1"`` or ``"007"``) it is stored as fixed-width unicode, still an array.
"""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np

_EMPTY = -1


def canonical_int(value: str) -> int | None:
    """``value`` as an int when ``str(int(value)) == value`` (and it fits), else None.

    >>> canonical_int("42"), canonical_int("042"), canonical_int("4.2"), canonical_int("")
    (42, None, None, None)
    """
    if value.isascii() and value.isdigit() and len(value) <= 18 and \
            (len(value) == 1 or value[0] != "0"):
        return int(value)
    return None


class IdColumnWriter:
    """Collects one identifier column, as integers while it can.

    >>> w = IdColumnWriter(); w.add("12"); w.add(""); w.values().tolist()
    [12, -1]
    >>> w.add("x7"); w.values().tolist()
    ['12', '', 'x7']
    """

    def __init__(self) -> None:
        self._ints: array | None = array("q")
        self._texts: list[str] | None = None

    def add(self, value: str) -> None:
        """Append one value."""
        if self._ints is not None:
            number = canonical_int(value)
            if number is not None:
                self._ints.append(number)
                return
            if value == "":
                self._ints.append(_EMPTY)
                return
            self._texts = [text_of(v) for v in self._ints]
            self._ints = None
        self._texts.append(value)

    def values(self) -> np.ndarray:
        """The column: ``int64`` (-1 for empty) or unicode."""
        if self._ints is not None:
            return np.frombuffer(self._ints, dtype=np.int64).copy()
        return np.array(self._texts, dtype=str)


def text_of(value: int) -> str:
    """The string an integer cell stands for (``""`` for -1).

    >>> text_of(7), text_of(-1)
    ('7', '')
    """
    return "" if value == _EMPTY else str(value)


def as_texts(values: np.ndarray) -> np.ndarray:
    """A column's cells as Python strings (an object array), as they were read.

    >>> as_texts(np.array([3, -1])).tolist()
    ['3', '']
    """
    if values.dtype.kind in "iu":
        return np.array([text_of(v) for v in values.tolist()], dtype=object)
    return values.astype(object)


class IdLookup:
    """Row positions of identifiers in a column of unique ids (sorted copy + order).

    >>> lk = IdLookup.of(np.array([30, 10, 20]))
    >>> lk.positions(["20", "30", "99", "x"]).tolist()
    [2, 0, -1, -1]
    """

    def __init__(self, sorted_ids: np.ndarray, order: np.ndarray):
        self.sorted_ids = sorted_ids
        self.order = order

    @classmethod
    def of(cls, ids: np.ndarray) -> IdLookup:
        """The lookup of an in-memory column."""
        order = np.argsort(ids, kind="stable")
        return cls(ids[order], order)

    def save(self, path: Path, name: str) -> None:
        """Write as ``NAME.sorted.npy`` and ``NAME.order.npy`` in ``path``."""
        np.save(path / f"{name}.sorted.npy", self.sorted_ids)
        small = len(self.order) < 2**31
        np.save(path / f"{name}.order.npy", self.order.astype(np.int32 if small else np.int64))

    @classmethod
    def load(cls, path: Path, name: str) -> IdLookup:
        """Memory-map a saved lookup."""
        return cls(np.load(path / f"{name}.sorted.npy", mmap_mode="r"),
                   np.load(path / f"{name}.order.npy", mmap_mode="r"))

    def positions(self, ids) -> np.ndarray:
        """Row of each id (-1 when absent); ``ids`` are strings."""
        ids = list(ids)
        if self.sorted_ids.dtype.kind in "iu":
            keys = np.fromiter((_int_key(str(i)) for i in ids), dtype=np.int64, count=len(ids))
        else:
            keys = np.array([str(i) for i in ids], dtype=str)
        if not len(keys) or not len(self.sorted_ids):
            return np.full(len(keys), -1, dtype=np.int64)
        at = np.searchsorted(self.sorted_ids, keys)
        at = np.minimum(at, len(self.sorted_ids) - 1)
        found = self.sorted_ids[at] == keys
        return np.where(found, np.asarray(self.order[at], dtype=np.int64), -1)


def _int_key(value: str) -> int:
    number = canonical_int(value)
    return -2 if number is None else number  # -2 never matches: no stored id is below -1


class SeenIds:
    """Which ids were seen: a bit per canonical integer id (a set for any other).

    >>> seen = SeenIds(); seen.add("5"), seen.add("5"), seen.add("a"), seen.add("a")
    (True, False, True, False)
    """

    _BITS_UP_TO = 1 << 36  # ids beyond (8 GB of bits) go to the set

    def __init__(self) -> None:
        self._bits = bytearray()
        self._others: set[str] = set()

    def add(self, value: str) -> bool:
        """Mark ``value``; True when it had not been seen."""
        number = canonical_int(value)
        if number is None or number >= self._BITS_UP_TO:
            if value in self._others:
                return False
            self._others.add(value)
            return True
        byte, mask = number >> 3, 1 << (number & 7)
        bits = self._bits
        if byte >= len(bits):
            bits.extend(bytes(max(byte + 1 - len(bits), len(bits))))
        if bits[byte] & mask:
            return False
        bits[byte] |= mask
        return True


def save_column(path: Path, name: str, values: np.ndarray) -> None:
    """Write a column as ``NAME.npy`` in ``path``."""
    np.save(path / f"{name}.npy", values)


def load_column(path: Path, name: str) -> np.ndarray:
    """Memory-map a column written by :func:`save_column`."""
    return np.load(path / f"{name}.npy", mmap_mode="r")
