"""XML parsing that never expands entities and never touches the network.

Collections and topic files come from other people. A document type declaration with
entities (the XXE and "billion laughs" attacks) is refused before parsing, whatever the
file's encoding (:func:`check_xml_prolog` decodes the prolog as libxml2 would); lxml is
additionally told not to resolve entities, load DTDs or use the network.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from mathir.errors import InputError, require_file

_BOMS = ((b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe\x00\x00", "UTF-32"),
         (b"\xef\xbb\xbf", "ascii"), (b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le"))
_SIGNATURES = ((b"\x00\x00\x00<", "UTF-32"), (b"<\x00\x00\x00", "UTF-32"),
               (b"\x00\x00<\x00", "UCS-4"), (b"\x00<\x00\x00", "UCS-4"),
               (b"\x00<\x00?", "utf-16-be"), (b"<\x00?\x00", "utf-16-le"),
               (b"\x4c\x6f\xa7\x94", "EBCDIC"))
# "ascii": any ASCII-compatible encoding, scanned as Latin-1 (markup is ASCII in all)
_DECLARABLE = {"ascii": {"utf-8", "ascii", "latin-1"},
               "utf-16-le": {"utf-16", "utf-16-le"}, "utf-16-be": {"utf-16", "utf-16-be"}}
_PROLOG_LIMIT = 1 << 20
_DECL_ENCODING = re.compile(r"""encoding\s*=\s*(["'])([A-Za-z][A-Za-z0-9._-]*)\1""")


def check_xml_prolog(path: str | Path) -> None:
    """Refuse an XML file whose prolog can declare entities, whatever its encoding.

    The prolog (XML declaration, comments, processing instructions, DOCTYPE) is decoded
    as the parser will decode it and read up to the root element: a DOCTYPE with an
    internal subset (where entities are declared: XXE, "billion laughs") is refused, as
    is an encoding other than UTF-8, ASCII, Latin-1 or UTF-16 (UTF-32, EBCDIC, or a
    declared UTF-7 would hide the declarations from a byte check), and a prolog longer
    than 1 MiB. An external DTD (``<!DOCTYPE x SYSTEM "...">``) is allowed: the parser
    never loads it.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bomb.xml"
    >>> _ = p.write_text('<!DOCTYPE r [<!ENTITY a "ha">]><r>&a;</r>', encoding="utf-16")
    >>> check_xml_prolog(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    mathir.errors.InputError: ...: XML entity declarations are not allowed: ...
    """
    path = require_file(path)
    with open(path, "rb") as f:
        head = f.read(_PROLOG_LIMIT)
    family, skip = "ascii", 0
    for mark, name in _BOMS:
        if head.startswith(mark):
            family, skip = name, len(mark)
            break
    else:
        for mark, name in _SIGNATURES:
            if head.startswith(mark):
                family = name
                break
    if family not in _DECLARABLE:
        raise InputError(f"XML in {family} is not supported; convert the file to UTF-8",
                         path=path, line=1)
    text = head[skip:].decode("latin-1" if family == "ascii" else family, errors="replace")
    pos = 0
    if text.startswith("<?xml"):
        end = text.find("?>")
        if end < 0:
            raise InputError("unterminated XML declaration", path=path, line=1)
        decl = text[:end]
        m = _DECL_ENCODING.search(decl)
        if "encoding" in decl and not m:
            raise InputError("malformed encoding in the XML declaration", path=path, line=1)
        if m and _codec_name(m.group(2)) not in _DECLARABLE[family]:
            raise InputError(f"XML encoding {m.group(2)!r} is not supported here (UTF-8, "
                             "ASCII, Latin-1 or UTF-16); convert the file to UTF-8",
                             path=path, line=1)
        pos = end + 2
    _check_prolog_text(text, pos, len(head) < _PROLOG_LIMIT, path)


def _codec_name(label: str) -> str:
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return label
    return {"iso8859-1": "latin-1"}.get(name, name)


def _check_prolog_text(text: str, pos: int, whole_file: bool, path: Path) -> None:
    # Hand-written: a tokenizer for the few prolog constructs (XML 1.0 rules 22-29),
    # as no library checks a prolog without parsing (and expanding) it.
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if text.startswith("<!--", pos):
            end, size = text.find("-->", pos + 4), 3
        elif text.startswith("<?", pos):
            if re.match(r"<\?xml\s", text[pos:pos + 6], re.IGNORECASE):  # its encoding counts
                raise InputError("XML declaration not at the start of the file", path=path,
                                 line=text.count("\n", 0, pos) + 1)
            end, size = text.find("?>", pos + 2), 2
        elif text[pos:pos + 9].upper() == "<!DOCTYPE":
            end, size = _doctype_end(text, pos, path), 1
        else:
            return  # the root element (or text the parser refuses), or the end of the file
        if end < 0:
            if whole_file:
                return  # unterminated: the parser reports it
            raise InputError(f"the XML prolog is longer than {_PROLOG_LIMIT >> 20} MiB (no "
                             "root element found)", path=path, line=text.count("\n", 0, pos) + 1)
        pos = end + size


def _doctype_end(text: str, start: int, path: Path) -> int:
    """The index of the ``>`` closing the DOCTYPE at ``start`` (-1: not in ``text``)."""
    quote = None
    for i in range(start + 9, len(text)):
        c = text[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "[":
            raise InputError(
                "XML entity declarations are not allowed: the DOCTYPE has an internal subset "
                "(possible XXE or entity-expansion attack)",
                path=path, line=text.count("\n", 0, start) + 1)
        elif c == ">":
            return i
    return -1


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
    check_xml_prolog(path)
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
