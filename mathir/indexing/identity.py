"""What an index's identity holds besides its input and parameters: the code that writes it
and the versions of the libraries it writes with.

Every builder's ``wanted`` manifest (:func:`mathir.storage.build_or_reuse`) holds
``writer`` = :func:`writer_identity` of its module, so an index built by other mathir
code (a one-word change in :mod:`mathir.readers.latex_words`) or with another
pyterrier-pisa, lxml, scikit-learn, faiss ... is rebuilt instead of reused; run
identity (:mod:`mathir.experiment.identity`) records the same two things for runs.

Which code: the source of the builder's module and of every mathir module it imports,
at any depth, also inside functions (:func:`module_sources`, read from the source with
:mod:`ast`, nothing imported). That is every mathir line that can run while the index is
built: the readers, tokenizers, the PISA and TF-IDF writers, :mod:`mathir.storage`.
The hash of *all* of mathir's source (what a run's identity holds) would be simpler, but
then editing a report template or an evaluation measure would rebuild every index (a
dense one takes hours); mathir's builders reach other code only through imports, never
by a name in a string. Only ``*.py`` files count, as for runs.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import platform
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path

#: The folder of the ``mathir`` package.
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def source_digest(files: Iterable[Path], root: Path | None = None) -> str:
    """Hex SHA-256 of the files' names (relative to ``root``, default :data:`PACKAGE_DIR`)
    and bytes, in the given order.

    >>> len(source_digest([Path(__file__)]))
    64
    """
    root = PACKAGE_DIR if root is None else root
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


def _module_file(name: str) -> Path | None:
    """The source file of the mathir module ``name`` (a package: its ``__init__.py``)."""
    parts = name.split(".")
    if parts[0] != "mathir":
        return None
    base = PACKAGE_DIR.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(tree: ast.Module, package: str) -> set[str]:
    """Names of the modules (or ``module.attribute``) that ``tree`` imports anywhere."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the package, up level - 1 packages
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
    return out


@functools.cache
def module_sources(module: str) -> tuple[Path, ...]:
    """The source files of the mathir module ``module`` and of every mathir module it
    imports, at any depth (imports inside functions too), with the ``__init__.py`` of
    each package on the way; sorted.

    >>> [p.relative_to(PACKAGE_DIR).as_posix() for p in module_sources("mathir.readers.latex_words")]
    ['__init__.py', '_version.py', 'lazy_exports.py', 'pipelines/__init__.py', 'readers/__init__.py', 'readers/latex_words.py']
    """
    seen: set[Path] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        # importing a.b.c runs a/__init__, a/b/__init__ too
        for i in range(1, len(parts) + 1):
            path = _module_file(".".join(parts[:i]))
            if path is None or path in seen:
                continue
            seen.add(path)
            package = ".".join(parts[:i]) if path.name == "__init__.py" \
                else ".".join(parts[:i - 1])
            tree = ast.parse(path.read_bytes(), str(path))
            todo.extend(m for m in _imported(tree, package) if m.startswith("mathir"))
    return tuple(sorted(seen))


@functools.cache
def code_digest(module: str) -> dict:
    """``{"sha256", "files"}`` of :func:`module_sources` (read once per process).

    >>> d = code_digest("mathir.readers.latex_words")
    >>> len(d["sha256"]), d["files"]
    (64, 6)
    """
    files = module_sources(module)
    return {"sha256": source_digest(files), "files": len(files)}


def package_version(name: str) -> str | None:
    """The installed version of the distribution ``name``, None when absent.

    >>> package_version("numpy") is not None, package_version("no-such-package-x")
    (True, None)
    """
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def library_versions(packages: Sequence[str]) -> dict[str, str]:
    """Versions of the installed ``packages`` (absent ones omitted) and of Python.

    >>> sorted(library_versions(["numpy", "no-such-package-x"]))
    ['numpy', 'python']
    """
    out = {}
    for name in packages:
        version = package_version(name)
        if version is not None:
            out[name] = version
    out["python"] = platform.python_version()
    return dict(sorted(out.items()))


def writer_identity(module: str, packages: Sequence[str]) -> dict:
    """What wrote an index: the hash of the mathir code the builder in ``module`` runs
    (:func:`code_digest`) and the versions of the ``packages`` it writes with. A builder
    puts it in its manifest as ``writer``: another value rebuilds the index.

    >>> w = writer_identity("mathir.readers.latex_words", ["numpy"])
    >>> sorted(w), sorted(w["versions"])
    (['code', 'versions'], ['numpy', 'python'])
    """
    return {"code": code_digest(module), "versions": library_versions(packages)}
