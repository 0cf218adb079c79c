"""PyTerrier's parameter contract for mathir's transformers.

``pt.GridScan``, ``pt.GridSearch`` and ``pt.KFoldGridSearch`` change a transformer's
parameters with ``set_parameter(name, value)``, which PyTerrier implements as a plain
``setattr``. A transformer that builds something from its parameters (PISA's retriever
from ``k1`` and ``b``, a cross-encoder from its model path, BM25 weights of the facts)
must then build it again, or the grid scores one setting under every name. Two tools:

* :func:`derived`: an object built from parameter values is kept with those values and
  rebuilt when one of them changes, whether through ``set_parameter`` or a plain
  attribute assignment;
* :class:`Fixed`: a parameter whose derived state is too costly to rebuild on the fly
  (training statistics, a fitted vocabulary) refuses to change after ``__init__``, so a
  grid over it fails loudly instead of scoring the old value.

Parameters that a transformer reads on every call (``num_results``, fusion weights)
need neither.

What :func:`derived` builds, and a :class:`Cache` of results, is *live state*
(:class:`Live`): it follows from the parameters, so a run's fingerprint
(:mod:`mathir.experiment.identity`) leaves it out, and pickling drops it (it is built again
where it is unpickled). A transformer that has run once is then fingerprinted as it was
declared, and can be sent to a worker process even where its live state (a PISA
retrieval context, a loaded model) cannot be pickled.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import Any, TypeVar

T = TypeVar("T")
_VALUES = (str, bytes, int, float, complex, bool, type(None), PurePath)


def _same(a: Any, b: Any) -> bool:
    """Equal plain values (numbers, strings, paths, tuples of them) or the same object.

    Objects (indexes, encoders, data frames) compare by identity: their ``==`` may be
    costly, elementwise (data frames) or always true (dataclasses with equal fields are
    fine to rebuild from, but identity is the safe test).
    """
    if a is b:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return isinstance(a, _VALUES) and type(a) is type(b) and a == b


class Live:
    """State a transformer builds or gathers from its parameters (not part of what it
    is): left out of run fingerprints, not pickled."""

    __slots__ = ()


def _unbuilt() -> None:
    """What a pickled :class:`Derived` or :class:`Cache` becomes (built again on use)."""
    return None


class Derived(Live):
    """What :func:`derived` keeps in a slot: the ``value`` built from ``key``.

    >>> import pickle
    >>> pickle.loads(pickle.dumps(Derived((1.2,), object()))) is None  # rebuilt on use
    True
    """

    __slots__ = ("key", "value")

    def __init__(self, key: tuple, value: Any):
        self.key = key
        self.value = value

    def __reduce__(self):
        return _unbuilt, ()


class Cache(Live, dict):
    """A dict of results kept between calls (e.g. embeddings by text): live state, so
    it is left out of fingerprints and pickles empty.

    >>> import pickle
    >>> c = Cache(a=1)
    >>> c["a"], pickle.loads(pickle.dumps(c))
    (1, {})
    """

    __slots__ = ()

    def __reduce__(self):
        return Cache, ()


def derived(owner: object, slot: str, key: tuple, build: Callable[[], T]) -> T:
    """The object in ``owner``'s ``slot`` built from ``key``; built again when ``key`` changed.

    The key holds the parameter values the object depends on; the values are kept with
    the object (so objects compared by identity stay alive).

    >>> class Box:
    ...     k1 = 1.2
    >>> box = Box()
    >>> derived(box, "_w", (box.k1,), lambda: box.k1 * 10)
    12.0
    >>> box.k1 = 2.0  # what set_parameter does
    >>> derived(box, "_w", (box.k1,), lambda: box.k1 * 10)
    20.0
    """
    held = owner.__dict__.get(slot)
    if not isinstance(held, Derived) or not _same(held.key, key):
        held = Derived(key, build())
        owner.__dict__[slot] = held
    return held.value


class Fixed:
    """A transformer attribute set once, in ``__init__``; changing it later is an error.

    For parameters whose derived state is built at construction and is too costly to
    rebuild per change: ``set_parameter`` (GridScan) or an assignment raises instead
    of being silently ignored.

    >>> class Ranker:
    ...     index = Fixed()
    ...     def __init__(self, index):
    ...         self.index = index
    >>> r = Ranker("facts")
    >>> r.index
    'facts'
    >>> r.index = "other"
    Traceback (most recent call last):
    ...
    AttributeError: Ranker.index is fixed when it is built (its derived state depends on it): build a new Ranker instead
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.slot = f"_fixed_{name}"

    def __get__(self, obj: object, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.__dict__[self.slot]
        except KeyError:
            raise AttributeError(self.name) from None

    def __set__(self, obj: object, value: Any) -> None:
        if self.slot in obj.__dict__:
            cls = type(obj).__name__
            raise AttributeError(f"{cls}.{self.name} is fixed when it is built (its derived "
                                 f"state depends on it): build a new {cls} instead")
        obj.__dict__[self.slot] = value
