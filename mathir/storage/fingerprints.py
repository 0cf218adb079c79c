"""Fingerprints of input files and folders (:func:`file_fingerprint`): the SHA-256 of
every byte, each file's digest cached on disk under :func:`~mathir.storage.roots.cache_dir`
by its device, inode, size, mtime and ctime (the comment below says why that is sound).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import stat as stat_module
import tempfile
import time
from pathlib import Path

from mathir.storage.files import temporary_prefix
from mathir.storage.roots import cache_dir

# --- fingerprints of input files ---------------------------------------------------------
# A fingerprint is the SHA-256 of every byte of the input (of each file of a folder), so
# that any edit is noticed, also one that keeps the size and the modification time, as
# ``cp -p`` and ``rsync -a`` deliveries do (the first and last MiB, sizes and mtimes used
# to be hashed, and a stale index was reused). Reading a 15 GB collection on every open
# would cost minutes, so each file's digest is cached on disk, keyed by the file's
# device, inode, size, mtime and ctime: an unchanged file is not read again.
#
# The ctime is what makes the cache sound. ``cp -p``, ``rsync -a`` and ``touch -d`` can set
# a file's mtime back, but no program can set its ctime: the kernel sets it to the current
# time on every write, every ``utime`` and every rename into place, and a new file (rsync
# writes one and renames it, which may reuse a freed inode number) gets a new one. So a
# cached entry whose key still matches describes an unchanged file -- unless the file
# changed within the same tick of the file system's clock as the ctime we saw (git's
# "racy" entries): a file whose ctime is less than :data:`RACY_NS` older than the moment
# we started reading it is hashed but not cached, and is hashed again on the next open.
#
# What the key cannot see: a write through a shared memory map (``mmap`` MAP_SHARED) to a
# page that is already dirty does not update mtime or ctime on Linux (the kernel stamps
# them when a clean page is first written, and tmpfs not at all), so such an edit keeps
# the cached digest. ``MATHIR_REDIGEST=1`` (:data:`REDIGEST_ENV`) reads every byte again
# and replaces the cache; so does deleting ``fingerprints/`` under :func:`cache_dir`.
#
# Reopening: a folder's cache also holds the digest of its *listing* -- every file's
# relative name and key, in the order the folders list them -- and the fingerprint it
# gave. When the listing is the same, the fingerprint is (each key matches an entry that
# gave it), so an unchanged folder costs one ``stat`` per file and no read of the cached
# digests. The listing is recorded only when no file was racy.

#: Environment variable: set (not to "" or "0"), every fingerprint reads every byte again
#: and replaces its cached digests (after edits the stat key cannot see, see above).
REDIGEST_ENV = "MATHIR_REDIGEST"
#: A file changed this recently (ns) before it was hashed is not cached (see above).
RACY_NS = 2_000_000_000
_CACHE_HEADER = b"mathir-file-digests 2"
# Files' stat records (relative name, device, inode, size, mtime, ctime) marshalled and
# hashed per this many (version 2: no back-references, so equal records give equal bytes).
_CHUNK = 65_536
_MARSHAL = 2


def redigest_forced() -> bool:
    """Whether ``$MATHIR_REDIGEST`` (:data:`REDIGEST_ENV`) asks every fingerprint to read
    every byte again instead of trusting the cached digests.

    >>> os.environ.get(REDIGEST_ENV, "") in ("", "0") or redigest_forced()
    True
    """
    return os.environ.get(REDIGEST_ENV, "") not in ("", "0")


def _root_id(root: Path) -> str:
    """Hex SHA-256 of the path's bytes (any name: newlines, undecodable bytes)."""
    return hashlib.sha256(os.fsencode(str(root))).hexdigest()


def _digest_cache_path(root: Path) -> Path:
    return cache_dir() / "fingerprints" / f"{_root_id(root)[:32]}.digests"


def _cache_head(root: Path) -> bytes:
    return _CACHE_HEADER + b"\t" + _root_id(root).encode() + b"\n"


# A cache file: the head (format, the root's id); the summary line (its SHA-256, then
# JSON: the listing's digest or null, the fingerprint it gave, the payload's SHA-256); the
# payload: marshalled (device, inode, size, mtime, ctime, 32-byte digest) records. Both
# checksums are verified before anything is believed or unmarshalled.
_CACHE_ERRORS = (OSError, ValueError, KeyError, TypeError, IndexError, EOFError)


def _read_digest_cache(root: Path, digests: bool = True) -> tuple[dict | None, dict[tuple, str]]:
    """The summary and the ``stat key -> hex digest`` entries cached for ``root`` (the
    entries only with ``digests``); None and no entries when the cache is absent,
    unreadable, written for another path, truncated or otherwise corrupt (it is only a
    cache; a corrupt payload under a sound summary loses the entries only)."""
    try:
        with open(_digest_cache_path(root), "rb") as f:
            head = f.readline()
            if head != _cache_head(root):
                return None, {}
            line = f.readline()
            check, _, text = line[:-1].partition(b"\t")
            if not line.endswith(b"\n") or hashlib.sha256(head + text).hexdigest().encode() != check:
                return None, {}
            summary = json.loads(text)
            if not isinstance(summary, dict):
                return None, {}
            if not digests:
                return summary, {}
            payload = f.read()
    except _CACHE_ERRORS:
        return None, {}
    try:
        if hashlib.sha256(payload).hexdigest() != summary["payload"]:
            return summary, {}
        return summary, {tuple(r[:5]): r[5].hex() for r in marshal.loads(payload)}
    except _CACHE_ERRORS:
        return summary, {}


def _write_digest_cache(root: Path, summary: dict, entries: dict[tuple, str]) -> None:
    """Replace ``root``'s cache file (temporary file, then rename: concurrent writers
    each leave a whole file, the last one wins). A cache that cannot be written (a
    read-only home) is skipped: fingerprints stay right, only slower."""
    path = _digest_cache_path(root)
    payload = marshal.dumps([(*k, bytes.fromhex(v)) for k, v in entries.items()], _MARSHAL)
    text = json.dumps({**summary, "entries": len(entries),
                       "payload": hashlib.sha256(payload).hexdigest()}, sort_keys=True).encode()
    head = _cache_head(root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=".tmp",
                                   dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(head + hashlib.sha256(head + text).hexdigest().encode() + b"\t"
                        + text + b"\n")
                f.write(payload)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        with contextlib.suppress(OSError):  # the text cache of mathir before 2
            path.with_suffix(".tsv").unlink()
    except OSError:
        pass


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, streamed (bounded memory).

    >>> len(sha256_file(__file__))
    64
    """
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _stat_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _list_folder(root: Path) -> tuple[list[bytes], str]:
    """The stat records ``(relative name, device, inode, size, mtime_ns, ctime_ns)`` of
    every regular file under the folder ``root`` -- links to files and folders followed,
    each real folder entered once (a loop walked one time round, in ``os.walk``'s order,
    as :func:`walk_glob`), folders that cannot be read and dangling links skipped -- in
    the order the folders list them, marshalled in chunks; and their SHA-256.

    One ``stat`` per entry, relative to its open folder, and a tuple: what reopening an
    unchanged folder costs (``os.listdir`` and ``os.stat(name, dir_fd=)`` measured
    cheaper than ``os.scandir`` and ``DirEntry.stat`` with the tuple built).
    """
    h = hashlib.sha256()
    blobs: list[bytes] = []
    chunk: list[tuple] = []
    seen: set[tuple[int, int]] = set()
    folders = [(str(root), "")]
    stat, is_reg, is_dir = os.stat, stat_module.S_ISREG, stat_module.S_ISDIR
    while folders:
        folder, prefix = folders.pop()
        subfolders = []
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:  # a folder that cannot be read (as os.walk skips it)
            continue
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            names = os.listdir(fd)
            for name in names:
                try:
                    st = stat(name, dir_fd=fd)
                except OSError:  # a dangling link, or removed meanwhile: not content
                    continue
                if is_reg(st.st_mode):
                    chunk.append((prefix + name, st.st_dev, st.st_ino, st.st_size,
                                  st.st_mtime_ns, st.st_ctime_ns))
                    if len(chunk) == _CHUNK:
                        blobs.append(marshal.dumps(chunk, _MARSHAL))
                        h.update(blobs[-1])
                        chunk = []
                elif is_dir(st.st_mode):
                    subfolders.append((os.path.join(folder, name), prefix + name + os.sep))
        except OSError:
            continue
        finally:
            os.close(fd)
        folders.extend(reversed(subfolders))
    if chunk:
        blobs.append(marshal.dumps(chunk, _MARSHAL))
        h.update(blobs[-1])
    return blobs, h.hexdigest()


def file_fingerprint(path: str | Path) -> dict:
    """The identity of a file or folder's content: the SHA-256 of every byte.

    A file: ``{"path", "size", "sha256"}`` (``sha256`` as ``sha256sum`` prints it). A
    folder: ``{"path", "size", "files", "sha256"}``, the digest of each file's relative
    name, size and SHA-256. Any edit changes it, also one that keeps sizes and
    modification times (``cp -p``, ``rsync -a``); modification times alone do not.
    Each file's digest is cached by device, inode, size, mtime and ctime under
    :func:`cache_dir` (see the comment above), so an unchanged collection is not read
    again: reopening costs a ``stat`` per file. ``MATHIR_REDIGEST=1`` reads every byte
    again (after a write through a shared memory map, which the ``stat`` may not show).

    >>> fp = file_fingerprint(__file__)
    >>> sorted(fp), fp["sha256"] == sha256_file(__file__)
    (['path', 'sha256', 'size'], True)
    """
    p = Path(path).resolve()
    is_dir = p.is_dir()
    if is_dir:
        blobs, listing = _list_folder(p)
    else:
        blobs = [marshal.dumps([("", *_stat_key(os.stat(p)))], _MARSHAL)]
        listing = hashlib.sha256(blobs[0]).hexdigest()
    reread = redigest_forced()
    summary, cached = (None, {}) if reread else _read_digest_cache(p, digests=False)
    if summary is not None and summary.get("listing") == listing \
            and isinstance(summary.get("fingerprint"), dict):
        return _fingerprint_dict(p, summary["fingerprint"])  # every key as when it was cached
    if not reread:
        summary, cached = _read_digest_cache(p)
    records = [r for blob in blobs for r in marshal.loads(blob)]
    records.sort()  # by relative name (each name once)
    entries: dict[tuple, str] = {}
    complete = True  # every digest cached: the listing can stand for them
    h = hashlib.sha256()
    size = count = 0
    digest = ""
    for record in records:
        rel, key = record[0], record[1:]
        digest = cached.get(key)
        if digest is None:
            full = os.path.join(p, rel) if rel else str(p)
            started = time.time_ns()
            try:
                digest = sha256_file(full)
            except FileNotFoundError:
                if not is_dir:
                    raise
                complete = False  # removed meanwhile: not content
                continue
            try:
                after = _stat_key(os.stat(full))
            except OSError:
                after = None
            # Cached only when unchanged while read and not changed recently (racy).
            if after == key and key[4] < started - RACY_NS:
                entries[key] = digest
            else:
                complete = False
        else:
            entries[key] = digest
        size += key[2]
        count += 1
        if is_dir:
            h.update(f"{rel}\0{key[2]}\0{digest}\n".encode("utf-8", "surrogateescape"))
    fingerprint = ({"size": size, "files": count, "sha256": h.hexdigest()} if is_dir
                   else {"size": size, "sha256": digest})
    wanted = {"listing": listing if complete else None, "fingerprint": fingerprint}
    if summary is None or any(summary.get(k) != v for k, v in wanted.items()) \
            or entries.keys() != cached.keys():
        _write_digest_cache(p, wanted, entries)
    return _fingerprint_dict(p, fingerprint)


def _fingerprint_dict(path: Path, fingerprint: dict) -> dict:
    """``{"path", "size", ["files",] "sha256"}`` in this order, however the cache stored
    it: the order is part of every fingerprint that hashes the dict (run identities
    pickle it), so a fingerprint read from the cache must equal one just computed."""
    order = ("size", "files", "sha256")
    return {"path": str(path), **{k: fingerprint[k] for k in order if k in fingerprint},
            **{k: v for k, v in fingerprint.items() if k not in order}}
