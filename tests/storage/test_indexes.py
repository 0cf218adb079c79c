"""mathir.storage.indexes: build_or_reuse, the one build protocol of every index."""

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

# --- build_or_reuse: the one build protocol of every index ---------------------------


WANTED = {"kind": "demo", "format": 1, "source": {"size": 3}}
PT_META = {"type": "sparse_index", "format": "mathir.demo", "package_hint": "mathir"}


class Builder:
    """A ``build_into`` that records its calls and writes ``docs.txt``."""

    def __init__(self, text: str = "a b c"):
        self.text = text
        self.calls = 0

    def __call__(self, tmp):
        self.calls += 1
        (tmp / "docs.txt").write_text(self.text)
        return {"num_docs": len(self.text.split())}


def _listing(folder) -> dict:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def test_build_writes_files_manifest_and_pt_meta(tmp_path):
    from mathir._version import __version__
    from mathir.storage import build_or_reuse, read_manifest

    idx = tmp_path / "idx"
    assert build_or_reuse(idx, WANTED, Builder(), pt_meta=PT_META) is True
    manifest = read_manifest(idx)
    st = (idx / "docs.txt").stat()  # each data file recorded: size, times, SHA-256
    assert manifest.pop("data_files") == {"docs.txt": {
        "size": 5, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns,
        "sha256": hashlib.sha256(b"a b c").hexdigest()}}
    assert manifest == {**WANTED, "num_docs": 3, "mathir_version": __version__}
    assert json.loads((idx / "pt_meta.json").read_text()) == PT_META
    assert sorted(os.listdir(idx)) == ["docs.txt", "manifest.json", "pt_meta.json"]
    assert sorted(os.listdir(tmp_path)) == ["idx"]  # no lock file left


def test_up_to_date_is_reused_without_creating_a_lock_file(tmp_path):
    from mathir.storage import build_or_reuse

    idx = tmp_path / "idx"
    build_or_reuse(idx, WANTED, Builder(), pt_meta=PT_META)
    (tmp_path / ".idx.lock").unlink(missing_ok=True)
    before = _listing(tmp_path)
    again = Builder()
    assert build_or_reuse(idx, dict(WANTED), again, pt_meta=PT_META) is False
    assert again.calls == 0
    assert _listing(tmp_path) == before  # a read-only index must open like this


@pytest.mark.parametrize("change", ["format", "source", "missing key", "overwrite",
                                    "no manifest"])
def test_stale_is_rebuilt(tmp_path, change):
    from mathir.storage import build_or_reuse, read_manifest

    idx = tmp_path / "idx"
    build_or_reuse(idx, WANTED, Builder("old"))
    wanted, overwrite = dict(WANTED), False
    if change == "format":
        wanted["format"] = 2
    elif change == "source":
        wanted["source"] = {"size": 4}
    elif change == "missing key":
        wanted["params"] = {"stemmer": "porter2"}
    elif change == "overwrite":
        overwrite = True
    else:
        (idx / "manifest.json").unlink()
    new = Builder("new text")
    assert build_or_reuse(idx, wanted, new, overwrite=overwrite) is True
    assert new.calls == 1 and (idx / "docs.txt").read_text() == "new text"
    assert read_manifest(idx)["num_docs"] == 2 and read_manifest(idx)["format"] == wanted["format"]


def test_an_out_of_date_index_that_cannot_be_rebuilt_says_what_changed(tmp_path, monkeypatch):
    # A read-only index built by other code (its "writer") is no longer reused: the one
    # error line says why it had to be rebuilt.
    from mathir import storage
    from mathir.errors import InputError
    from mathir.storage import indexes

    idx = tmp_path / "idx"
    storage.build_or_reuse(idx, {**WANTED, "writer": {"code": "a"}}, Builder())

    @contextlib.contextmanager
    def read_only(path, message="folder not writable"):
        raise InputError(f"{message} (Permission denied)", path=path.parent)
        yield

    monkeypatch.setattr(indexes, "exclusive_lock", read_only)
    with pytest.raises(InputError, match=r"cannot write 'idx' here to rebuild it "
                                         r"\(changed: writer\) \(Permission denied\)"):
        storage.build_or_reuse(idx, {**WANTED, "writer": {"code": "b"}}, Builder())
    with pytest.raises(InputError, match=r"cannot write 'new' here \(Permission denied\)"):
        storage.build_or_reuse(tmp_path / "new", WANTED, Builder())


def test_failed_build_keeps_the_previous_directory(tmp_path):
    from mathir.storage import build_or_reuse

    idx = tmp_path / "idx"
    build_or_reuse(idx, WANTED, Builder("old"))

    def fails(tmp):
        (tmp / "docs.txt").write_text("half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        build_or_reuse(idx, {**WANTED, "format": 2}, fails)
    assert (idx / "docs.txt").read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["idx"]  # no lock file left


def test_concurrent_builder_waits_then_reuses(tmp_path):
    import threading

    from mathir.storage import build_or_reuse

    idx = tmp_path / "idx"
    started, go = threading.Event(), threading.Event()
    first, second = Builder("first"), Builder("second")

    def slow(tmp):
        started.set()
        assert go.wait(60)
        return first(tmp)

    a = threading.Thread(target=build_or_reuse, args=(idx, WANTED, slow))
    a.start()
    assert started.wait(60)
    result = []
    b = threading.Thread(target=lambda: result.append(build_or_reuse(idx, WANTED, second)))
    b.start()
    b.join(0.5)
    assert b.is_alive()  # waiting for the lock, not building beside the first
    go.set()
    a.join(60)
    b.join(60)
    assert result == [False] and second.calls == 0 and first.calls == 1
    assert (idx / "docs.txt").read_text() == "first"


def test_killed_build_leaves_a_temporary_that_the_next_build_removes(tmp_path):
    from mathir.storage import build_or_reuse

    idx = tmp_path / "idx"
    build_or_reuse(idx, WANTED, Builder("old"))
    script = textwrap.dedent(f"""
        import time
        from mathir.storage import build_or_reuse

        def stuck(tmp):
            (tmp / "docs.txt").write_text("half")
            print("building", flush=True)
            time.sleep(60)

        build_or_reuse({str(idx)!r}, {{"kind": "demo", "format": 2}}, stuck)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "building"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert len(left) == 1 and left[0].startswith(f".idx.{proc.pid}-")
    assert (idx / "docs.txt").read_text() == "old"
    # The lock died with its holder; the next build cleans the leftover and builds.
    assert build_or_reuse(idx, {"kind": "demo", "format": 2}, Builder("new")) is True
    assert sorted(os.listdir(tmp_path)) == ["idx"]  # no lock file left
    assert (idx / "docs.txt").read_text() == "new"


def test_up_to_date_without_pt_meta_gets_it_without_rebuild(tmp_path):
    from mathir.storage import build_or_reuse

    idx = tmp_path / "idx"
    build_or_reuse(idx, WANTED, Builder())  # as an older mathir built it: no pt_meta.json
    assert not (idx / "pt_meta.json").exists()
    stamp = (idx / "docs.txt").stat().st_mtime_ns
    again = Builder()
    assert build_or_reuse(idx, WANTED, again, pt_meta=PT_META) is False
    assert again.calls == 0 and (idx / "docs.txt").stat().st_mtime_ns == stamp
    assert json.loads((idx / "pt_meta.json").read_text()) == PT_META
    assert not [n for n in os.listdir(idx) if n.endswith(".tmp")]


def test_up_to_date_without_pt_meta_in_a_read_only_folder_is_reused(tmp_path, monkeypatch):
    import mathir.storage as storage
    from mathir.errors import InputError
    from mathir.storage import indexes

    idx = tmp_path / "idx"
    storage.build_or_reuse(idx, WANTED, Builder())
    (tmp_path / ".idx.lock").unlink(missing_ok=True)

    def unwritable(path, message="folder not writable"):
        raise InputError(f"{message} (Permission denied)", path=tmp_path)

    monkeypatch.setattr(indexes, "exclusive_lock", unwritable)
    before = _listing(tmp_path)
    assert storage.build_or_reuse(idx, WANTED, Builder(), pt_meta=PT_META) is False
    assert _listing(tmp_path) == before
