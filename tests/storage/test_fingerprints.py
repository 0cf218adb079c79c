"""mathir.storage.fingerprints: content digests, cached by inode, size, mtime, ctime."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

# --- fingerprints (issue 30 (7)): content digests, cached by inode, size, mtime, ctime --

def _posts_file(path, filler=3 << 20):
    """A Posts-like file whose middle row lies more than 1 MiB from either end."""
    pad = "<!-- " + "x" * (filler // 2) + " -->\n"
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n<posts>\n' + pad
                    + '  <row Id="1" PostTypeId="2" ParentId="0" Body="wombat" />\n'
                    + pad + "</posts>\n")
    return path


def _thread_folder(folder):
    folder.mkdir()
    for i in range(3):
        (folder / f"{i}_{i + 10}.html").write_text(f"<p>thread {i}: wombat</p>")
    return folder


def _edit_keeping_size_and_mtime(path, old, new):
    st = path.stat()
    data = path.read_bytes()
    assert len(old) == len(new) and data.count(old) == 1
    with open(path, "r+b") as f:  # in place, as cp -p onto an existing file writes
        f.write(data.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


@pytest.fixture
def digest_cache(tmp_path, monkeypatch):
    """A private digest cache; files older than 50 ms count as settled (not racy)."""
    from mathir.storage import fingerprints

    monkeypatch.setenv("MATHIR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(fingerprints, "RACY_NS", 50_000_000, raising=False)
    return tmp_path / "cache"


@pytest.mark.parametrize("kind", ["posts", "threads"])
def test_an_edit_that_keeps_size_and_mtime_changes_the_fingerprint(tmp_path, digest_cache, kind):
    from mathir.storage import file_fingerprint

    if kind == "posts":
        root = edited = _posts_file(tmp_path / "Posts.V1.3.xml")
    else:
        root = _thread_folder(tmp_path / "threads")
        edited = root / "1_11.html"
    time.sleep(0.1)  # older than RACY_NS: the first fingerprint is cached
    before = file_fingerprint(root)
    assert file_fingerprint(root) == before
    _edit_keeping_size_and_mtime(edited, b"wombat", b"quokka")
    after = file_fingerprint(root)
    assert after != before and after["size"] == before["size"]
    assert file_fingerprint(root) == after


def test_an_unchanged_reopen_reads_no_file(tmp_path, digest_cache, monkeypatch):
    from mathir import storage
    from mathir.storage import fingerprints

    posts = _posts_file(tmp_path / "Posts.V1.3.xml", filler=1000)
    threads = _thread_folder(tmp_path / "threads")
    time.sleep(0.1)
    reads = []
    real = storage.sha256_file
    monkeypatch.setattr(fingerprints, "sha256_file", lambda p: reads.append(p) or real(p))
    first = [storage.file_fingerprint(posts), storage.file_fingerprint(threads)]
    assert len(reads) == 4
    assert first[0]["sha256"] == real(posts) and first[1]["files"] == 3
    reads.clear()
    assert [storage.file_fingerprint(posts), storage.file_fingerprint(threads)] == first
    assert reads == []
    os.utime(posts)  # a new mtime alone: read again, same content, same fingerprint
    assert storage.file_fingerprint(posts) == first[0] and reads == [str(posts)]


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_a_file_changed_just_now_is_hashed_again(tmp_path, monkeypatch, kind):
    """Racy entries (ctime within RACY_NS of the read) are not cached, and a folder holding
    one is not reopened from its listing."""
    from mathir import storage
    from mathir.storage import fingerprints

    monkeypatch.setenv("MATHIR_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "folder"
    folder.mkdir()
    f = folder / "fresh.txt"
    f.write_text("fresh")
    reads = []
    real = storage.sha256_file
    monkeypatch.setattr(fingerprints, "sha256_file", lambda p: reads.append(p) or real(p))
    root = f if kind == "file" else folder
    storage.file_fingerprint(root)
    storage.file_fingerprint(root)
    assert len(reads) == 2


def test_an_unchanged_folder_reopens_from_its_listing(tmp_path, digest_cache, monkeypatch):
    """Reopening an unchanged folder costs a stat per file and reads neither the files nor
    the cached digests (issue: 1M thread files reopened in 36 s, most of it loading a
    123 MB digest cache); an edited one reads the digests and hashes the edited file."""
    from mathir import storage
    from mathir.storage import fingerprints

    threads = _thread_folder(tmp_path / "threads")
    (threads / "sub").mkdir()
    for i in range(100):
        (threads / "sub" / f"{i}.html").write_text(f"<p>{i}</p>")
    time.sleep(0.1)
    first = storage.file_fingerprint(threads)
    loads, reads, stats = [], [], []
    real_cache, real_stat = fingerprints._read_digest_cache, os.stat
    monkeypatch.setattr(fingerprints, "_read_digest_cache",
                        lambda root, digests=True: loads.append(digests)
                        or real_cache(root, digests))
    monkeypatch.setattr(fingerprints, "sha256_file", lambda p: reads.append(p))
    monkeypatch.setattr(os, "stat", lambda *a, **k: stats.append(a) or real_stat(*a, **k))
    assert storage.file_fingerprint(threads) == first
    assert loads == [False] and reads == [] and len(stats) <= first["files"] + 4
    monkeypatch.setattr(os, "stat", real_stat)

    loads.clear()
    _edit_keeping_size_and_mtime(threads / "sub" / "7.html", b"7", b"8")
    monkeypatch.setattr(fingerprints, "sha256_file", lambda p: reads.append(p) or "1" * 64)
    after = storage.file_fingerprint(threads)
    assert after != first and after["files"] == first["files"]
    assert loads == [False, True] and reads == [str(threads / "sub" / "7.html")]


def test_a_listing_reopens_in_another_process(tmp_path, digest_cache):
    """The listing's digest is the same in every process (marshal without back-references:
    equal records, equal bytes)."""
    from mathir import storage

    threads = _thread_folder(tmp_path / "threads")
    time.sleep(0.1)
    first = storage.file_fingerprint(threads)
    code = textwrap.dedent(f"""
        import json
        from mathir import storage
        from mathir.storage import fingerprints
        def refuse(*a, **k):
            raise AssertionError("read")
        fingerprints.sha256_file = refuse
        real = fingerprints._read_digest_cache
        fingerprints._read_digest_cache = lambda root, digests=True: (
            refuse() if digests else real(root, digests))
        print(json.dumps(storage.file_fingerprint({str(threads)!r})))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "MATHIR_CACHE_DIR": str(digest_cache)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == first


@pytest.mark.parametrize("kind", ["posts", "threads"])
def test_redigest_reads_every_byte_after_an_edit_the_stat_cannot_see(tmp_path, digest_cache,
                                                                    monkeypatch, kind):
    """A write through a shared memory map can keep size, mtime and ctime (Linux stamps
    them when a clean page is first written; tmpfs not at all), so the stat key still
    matches and the cached digest is stale. ``MATHIR_REDIGEST=1`` reads every byte again
    and replaces the cache (docs/robustness.md)."""
    from mathir import storage
    from mathir.storage import fingerprints

    root = (_posts_file(tmp_path / "Posts.V1.3.xml", filler=100) if kind == "posts"
            else _thread_folder(tmp_path / "threads"))
    time.sleep(0.1)
    real = storage.sha256_file
    # A cache whose digests are not the content's: what such an unseen edit leaves.
    monkeypatch.setattr(fingerprints, "sha256_file", lambda p: "0" * 64)
    stale = storage.file_fingerprint(root)
    monkeypatch.setattr(fingerprints, "sha256_file", real)
    assert storage.file_fingerprint(root) == stale  # what the stat key cannot see
    monkeypatch.setenv("MATHIR_REDIGEST", "1")
    fresh = storage.file_fingerprint(root)
    assert fresh != stale and (kind == "threads" or fresh["sha256"] == real(root))
    monkeypatch.setenv("MATHIR_REDIGEST", "0")  # "0" and "" ask nothing
    assert storage.file_fingerprint(root) == fresh  # the cache was replaced


def test_a_write_through_a_shared_map_may_keep_the_stat_key(tmp_path, digest_cache,
                                                             monkeypatch):
    """The limitation itself, on this machine's kernel and file system: a second write to
    a mapped page that is still dirty. Where the kernel stamps it anyway, the fingerprint
    sees it; where not, only MATHIR_REDIGEST does."""
    import mmap

    from mathir import storage
    from mathir.storage import fingerprints

    f = tmp_path / "Posts.V1.3.xml"
    f.write_bytes(b"wombat " * 1000)
    with open(f, "r+b") as fh, mmap.mmap(fh.fileno(), 0) as m:
        m[0:6] = b"quokka"  # the first write to the clean page stamps mtime and ctime
        time.sleep(0.1)  # older than RACY_NS: cached
        first = storage.file_fingerprint(f)
        key = fingerprints._stat_key(os.stat(f))
        m[0:6] = b"numbat"  # the page is still dirty: usually no new stamp
        truth = storage.sha256_file(f)  # (read through the same page cache)
        assert truth != first["sha256"]
        if fingerprints._stat_key(os.stat(f)) == key:
            assert storage.file_fingerprint(f) == first  # stale: the key cannot see it
        else:
            assert storage.file_fingerprint(f)["sha256"] == truth
        monkeypatch.setenv("MATHIR_REDIGEST", "1")
        assert storage.file_fingerprint(f)["sha256"] == truth


def _flip(data: bytes, at: int) -> bytes:
    """``data`` with the byte at ``at`` changed (a hex digit stays a hex digit)."""
    old = data[at:at + 1]
    new = b"1" if old == b"0" else b"0" if old.isalnum() else bytes([data[at] ^ 0xFF])
    return data[:at] + new + data[at + 1:]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other path", "empty", "binary",
                                    "summary digit", "summary text", "payload digit"])
def test_a_corrupt_digest_cache_is_ignored_and_replaced(tmp_path, digest_cache, monkeypatch,
                                                        damage):
    from mathir import storage
    from mathir.storage import fingerprints

    threads = _thread_folder(tmp_path / "threads")
    time.sleep(0.1)
    good = storage.file_fingerprint(threads)
    (cache,) = (digest_cache / "fingerprints").iterdir()
    data = cache.read_bytes()
    head, summary, payload = data.split(b"\n", 2)
    fingerprint = good["sha256"].encode()
    cache.write_bytes({
        "garbage": data.replace(b"\t", b" "),
        "truncated": data[:-5],
        "other path": data.replace(fingerprints._root_id(threads.resolve()).encode(), b"0" * 64),
        "empty": b"",
        "binary": b"\xff\xfe\x00" * 100,
        # a wrong fingerprint or listing under the summary's checksum
        "summary digit": _flip(data, data.index(fingerprint)),
        "summary text": data.replace(b'"listing": "', b'"listing": "0', 1),
        "payload digit": _flip(data, len(data) - 3),
    }[damage])
    # A corrupt entry must never be believed: a wrong digest under a right key.
    assert storage.file_fingerprint(threads) == good
    if damage in ("truncated", "payload digit"):
        # the summary is sound: an unchanged folder reopens from it; a changed one finds
        # the digests unusable and reads every file again
        (threads / "0_10.html").write_text("<p>thread 0: a wombat</p>")
        time.sleep(0.1)
        reads = []
        real = storage.sha256_file
        monkeypatch.setattr(fingerprints, "sha256_file", lambda p: reads.append(p) or real(p))
        good = storage.file_fingerprint(threads)
        assert good["sha256"] != fingerprint.decode() and len(reads) == 3
    else:
        assert cache.read_bytes() == data  # rewritten whole
    reads = []
    monkeypatch.setattr(fingerprints, "sha256_file", lambda p: reads.append(p))
    assert storage.file_fingerprint(threads) == good and reads == []


def test_a_wrong_digest_in_a_truncated_cache_is_not_used(tmp_path, digest_cache):
    from mathir import storage

    f = _posts_file(tmp_path / "Posts.V1.3.xml", filler=100)
    time.sleep(0.1)
    good = storage.file_fingerprint(f)
    (cache,) = (digest_cache / "fingerprints").iterdir()
    data = cache.read_bytes()
    cache.write_bytes(data.replace(good["sha256"].encode(), b"0" * 64)[:-1])
    assert storage.file_fingerprint(f) == good


def test_concurrent_fingerprints_leave_one_whole_cache(tmp_path, digest_cache):
    from concurrent.futures import ThreadPoolExecutor

    from mathir import storage
    from mathir.storage import fingerprints

    threads = _thread_folder(tmp_path / "threads")
    for i in range(200):
        (threads / f"more{i}.html").write_text(f"<p>{i}</p>")
    time.sleep(0.1)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: storage.file_fingerprint(threads), range(16)))
    assert all(r == results[0] for r in results) and results[0]["files"] == 203
    names = os.listdir(digest_cache / "fingerprints")
    assert len(names) == 1 and names[0].endswith(".digests")  # no temporaries left
    assert len(fingerprints._read_digest_cache(threads.resolve())[1]) == 203


def test_an_unwritable_cache_still_gives_content_fingerprints(tmp_path, monkeypatch):
    from mathir import storage

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MATHIR_CACHE_DIR", str(blocker / "cache"))
    f = tmp_path / "x.txt"
    f.write_text("x")
    assert storage.file_fingerprint(f)["sha256"] == storage.sha256_file(f)


def test_odd_path_names_are_fingerprinted_and_cached(tmp_path, digest_cache, monkeypatch):
    from mathir import storage
    from mathir.storage import fingerprints

    folder = tmp_path / "a\nb\tc"
    folder.mkdir()
    (folder / "x\ny.html").write_text("one")
    odd = os.fsdecode(b"\xff\xfe.html")  # not UTF-8: a surrogate-escaped name
    (folder / odd).write_text("two")
    time.sleep(0.1)
    first = storage.file_fingerprint(folder)
    reads = []
    monkeypatch.setattr(fingerprints, "sha256_file", lambda p: reads.append(p))
    assert storage.file_fingerprint(folder) == first and first["files"] == 2 and reads == []


def test_a_fingerprint_from_the_cache_equals_one_just_computed(tmp_path, monkeypatch):
    """Key for key and in the same order: run identities pickle the dict, so a model's
    fingerprint read back from the listing cache must hash as the first one did (it
    broke tests/pipelines/test_neural.py's reranker fingerprint when the order moved)."""
    import time

    from mathir import storage
    from mathir.storage import fingerprints

    monkeypatch.setenv("MATHIR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(fingerprints, "RACY_NS", 0)
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "a.bin").write_bytes(b"weights")
    time.sleep(0.01)
    first = storage.file_fingerprint(folder)
    again = storage.file_fingerprint(folder)
    assert list(first.items()) == list(again.items())
    assert list(first) == ["path", "size", "files", "sha256"]
