"""Read the hand-written YAML content files of the sample generators, with checks.

Shared by ``make_arqmath_sample.py``, ``make_worldtree_sample.py`` and
``make_word_problems_sample.py``. PyYAML parses; on top of it this module

- rejects duplicate keys (PyYAML silently keeps the last one, which would drop a judgment),
- remembers the file and line of every mapping, so that errors read ``file:line: message``,
- checks each mapping's keys and value types (``yes``, ``no``, ``1.0`` unquoted are not text).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

Check = tuple[Callable[[object], bool], str]  # (predicate, what the value must be)


class SampleDataError(ValueError):
    """A mistake in a content file, reported as ``path:line: message``.

    Same message format as ``mathir.errors.InputError``; defined here so that a generator does
    not import the whole mathir package (pandas, PyTerrier) just to report a typo.

    >>> str(SampleDataError("'title' must be text", Path("topics.yaml"), 3))
    "topics.yaml:3: 'title' must be text"
    """

    def __init__(self, message: str, path: Path | None = None, line: int | None = None):
        where = "" if path is None else (f"{path}:{line}: " if line else f"{path}: ")
        super().__init__(where + message)


class Map(dict):
    """A YAML mapping that remembers its file and first line (for error messages)."""

    path: Path | None = None
    line: int | None = None


class _Loader(yaml.SafeLoader):
    path: Path | None = None


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> Map:
    loader.flatten_mapping(node)
    result = Map()
    result.path, result.line = loader.path, node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if not isinstance(key, str):
            raise SampleDataError(f"key {key!r} must be text", loader.path, line)
        if key in result:
            raise SampleDataError(f"duplicate key {key!r}", loader.path, line)
        result[key] = loader.construct_object(value_node, deep=True)
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(path: Path) -> object:
    """Parse one content file; syntax errors and duplicate keys name the file and line.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.yaml"
    >>> _ = p.write_text("a: 1\\nb: [x, 'y z']\\n")
    >>> data = load_yaml(p)
    >>> data, data.line
    ({'a': 1, 'b': ['x', 'y z']}, 1)
    >>> _ = p.write_text("a: 1\\na: 2\\n")
    >>> load_yaml(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    sample_data.SampleDataError: ...t.yaml:2: duplicate key 'a'
    """
    loader = _Loader(path.read_text(encoding="utf-8"))
    loader.path = path
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise SampleDataError(f"not valid YAML: {exc.problem}", path, line) from None
    finally:
        loader.dispose()


def describe(value: object) -> str:
    """The type and value of ``value``, short, for error messages.

    >>> describe(True)
    'bool True'
    """
    return f"{type(value).__name__} {value!r}"[:80]


def is_text(value: object) -> bool:
    """Non-empty text (YAML reads unquoted ``yes``/``1.5``/``null`` as bool/float/None).

    >>> is_text("yes"), is_text(True), is_text(" ")
    (True, False, False)
    """
    return isinstance(value, str) and value.strip() != ""


def list_of(item: Callable[[object], bool], what: str, nonempty: bool = True) -> Check:
    """A check for a list whose items all pass ``item``.

    >>> check, _ = list_of(is_text, "texts")
    >>> check(["a", "b"]), check([]), check(["a", 1])
    (True, False, False)
    """

    def check(value: object) -> bool:
        ok = isinstance(value, list) and all(item(v) for v in value)
        return ok and (bool(value) or not nonempty)

    return check, ("a non-empty list of " if nonempty else "a list of ") + what


TEXT: Check = (is_text, "non-empty text")
ANY_LIST: Check = (lambda v: isinstance(v, list), "a list")


def check_fields(node: object, spec: dict[str, Check], what: str, parent: Map | Path) -> Map:
    """Check that ``node`` is a mapping with exactly the keys of ``spec`` (``"key?"``: optional)
    whose values pass the checks; return it. ``parent`` locates errors when ``node`` is no
    mapping.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.yaml"
    >>> _ = p.write_text("- title: no\\n")
    >>> check_fields(load_yaml(p)[0], {"title": TEXT}, "question", p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    sample_data.SampleDataError: ...t.yaml:1: question: 'title' must be non-empty text, got bool False
    """
    if not isinstance(node, Map):
        path, line = (parent, None) if isinstance(parent, Path) else (parent.path, parent.line)
        raise SampleDataError(f"{what} must be a mapping, got {describe(node)}", path, line)
    names = [k.rstrip("?") for k in spec]
    for key in node:
        if key not in names:
            message = f"{what}: unknown key {key!r} (allowed: {', '.join(names)})"
            raise SampleDataError(message, node.path, node.line)
    for spec_key, (check, expected) in spec.items():
        key = spec_key.rstrip("?")
        if key not in node:
            if not spec_key.endswith("?"):
                raise SampleDataError(f"{what}: missing {key!r}", node.path, node.line)
        elif not check(node[key]):
            message = f"{what}: {key!r} must be {expected}, got {describe(node[key])}"
            raise SampleDataError(message, node.path, node.line)
    return node


def generator_args(doc: str, out_dir: Path, data_dir: Path,
                   argv: list[str] | None = None) -> argparse.Namespace:
    """``--out`` and ``--data`` of a sample generator (its docstring's first paragraph
    as the description)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=out_dir,
                        help="where to write the sample (default: %(default)s)")
    parser.add_argument("--data", type=Path, default=data_dir,
                        help="the content files (default: %(default)s)")
    return parser.parse_args(argv)


def run_cli(generate: Callable[[], object]) -> object:
    """Call ``generate()``; a SampleDataError or OSError becomes ``error: ...`` and exit 2."""
    try:
        return generate()
    except (SampleDataError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
