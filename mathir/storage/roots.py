"""Where mathir keeps what it caches and builds: :func:`cache_dir` (``$MATHIR_CACHE_DIR``)
and :func:`index_root` (``$MATHIR_INDEX_DIR``).
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the folder of mathir's caches (default below).
CACHE_ENV = "MATHIR_CACHE_DIR"


def cache_dir() -> Path:
    """The folder of mathir's caches: ``$MATHIR_CACHE_DIR``, else ``$XDG_CACHE_HOME/mathir``,
    else ``~/.cache/mathir``. File digests (:func:`file_fingerprint`) live in its
    ``fingerprints`` folder, one file per fingerprinted file or folder; deleting it
    is always safe (the next open reads the collection once more).

    >>> (cache_dir() / "fingerprints").is_absolute() or "MATHIR_CACHE_DIR" in os.environ
    True
    """
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "mathir"


INDEX_ENV = "MATHIR_INDEX_DIR"


def index_root() -> Path:
    """Where every path builds and reuses indexes unless told another folder:
    ``$MATHIR_INDEX_DIR``, else ``indexes`` under :func:`cache_dir`. ``pt.get_dataset(...)
    .get_index()``, :func:`mathir.run_experiment`, ``mathir experiment``, ``mathir run``
    and ``mathir index`` without ``--index`` share it, so one collection is indexed once
    (an index is rebuilt when its collection's content or its parameters change).

    >>> index_root().name == "indexes" or INDEX_ENV in os.environ
    True
    """
    if os.environ.get(INDEX_ENV):
        return Path(os.environ[INDEX_ENV]).expanduser()
    return cache_dir() / "indexes"
