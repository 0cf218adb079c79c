"""XML parsing that never expands entities and never touches the network.

Collections and topic files come from other people. A document type declaration with
entities (the XXE and "billion laughs" attacks) is refused before parsing; lxml is
additionally told not to resolve entities, load DTDs or use the network.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from mathir.errors import InputError, require_file

_PROLOG_BYTES = 65536
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)
_ENTITY = re.compile(rb"<!ENTITY", re.IGNORECASE)


def check_prolog(path: Path) -> None:
    """Refuse files whose prolog declares entities (XXE, entity-expansion bombs)."""
    with open(path, "rb") as f:
        head = f.read(_PROLOG_BYTES)
    m = _DOCTYPE.search(head)
    if m and _ENTITY.search(head, m.start()):
        line = head[: m.start()].count(b"\n") + 1
        raise InputError(
            "XML entity declarations are not allowed (possible XXE or entity-expansion attack)",
            path=path,
            line=line,
        )


def iter_elements(path: str | Path, tag: str) -> Iterator[etree._Element]:
    """Stream the ``tag`` elements of an XML file with bounded memory.

    Each element is yielded once complete and cleared afterwards, so callers must copy
    what they need before asking for the next one.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "p.xml"
    >>> _ = p.write_text('<posts><row Id="1"/><row Id="2"/></posts>')
    >>> [e.get("Id") for e in iter_elements(p, "row")]
    ['1', '2']
    """
    path = require_file(path)
    check_prolog(path)
    with open(path, "rb") as f:  # closed even when the caller stops early
        yield from _iterparse(f, path, tag)


def _iterparse(f, path: Path, tag: str) -> Iterator[etree._Element]:
    parser = etree.iterparse(
        f,
        events=("end",),
        tag=tag,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        remove_comments=True,
    )
    try:
        for _, elem in parser:
            yield elem
            elem.clear(keep_tail=False)
            parent = elem.getparent()
            if parent is not None:
                while elem.getprevious() is not None:
                    del parent[0]
    except etree.XMLSyntaxError as e:
        line = e.lineno if e.lineno else None
        msg = e.msg if getattr(e, "msg", None) else str(e)
        raise InputError(f"malformed XML: {msg}", path=path, line=line) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not valid UTF-8: {e.reason} at byte {e.start}", path=path) from None
