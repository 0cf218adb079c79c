"""An index's data files are checked before use: a truncated, edited or missing file is
never read as if it were the index that was built (issue 49).

Before, only ``manifest.json`` was read: zeroing the last 4,000 bytes of a TF-IDF index's
``idf.npy`` changed nDCG' from 0.9344 to 0.8671 with no word, a truncated PISA file
crashed the process (exit 139) and a truncated ``matrix.npz`` was a BadZipFile traceback.
Now each build records every data file's size, times and SHA-256
(:func:`mathir.storage.record_data_files`); opening by path is one InputError naming the
file, the build protocol rebuilds it with a warning, ``mathir verify`` reads every byte.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pyterrier as pt
import pytest

from mathir.cli import main
from mathir.errors import InputError
from mathir.storage import DATA_FILES, read_manifest, record_data_files, verify_index
from mathir.storage.indexes import data_file_problems
from tests.conftest import error_lines
from tests.indexing.test_artifacts import KINDS

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# (kind of index, a data file that opening or searching it reads)
TARGETS = [("answers", "pisa/inv.docs"), ("answers", "tfidf/idf.npy"),
           ("answers", "tfidf/matrix.npz"), ("texts", "texts.sqlite"),
           ("formulas", "tuples/inv.docs"), ("formulas", "meta/post_id.npy"),
           ("facts", "counts.npz"), ("dense", "flex/vecs.f4")]
IDS = [f"{kind}:{rel}" for kind, rel in TARGETS]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Each kind of index, built once (lazily) in its own folder: never damaged itself."""
    cache = {}

    def get(kind: str) -> Path:
        if kind not in cache:
            cache[kind] = KINDS[kind].build(tmp_path_factory.mktemp(kind) / "idx").path
        return cache[kind]

    return get


def _fresh_copy(source: Path, into: Path) -> Path:
    """A copy of the index at ``source`` whose manifest records the copy's files as a build
    there would (the same bytes; this copy's times): opening it costs a stat per file."""
    copy = into / "idx"
    shutil.copytree(source, copy)
    manifest = read_manifest(copy)
    manifest[DATA_FILES] = record_data_files(copy)
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert data_file_problems(copy) == []
    return copy


def _edit_same_size(file: Path, restore_mtime: bool = False) -> None:
    """Zero the last 4,000 bytes (at most half) of ``file``, keeping its size; its mtime
    moves on a second (or is set back with ``restore_mtime``)."""
    st = file.stat()
    data = bytearray(file.read_bytes())
    n = min(4000, len(data) // 2)
    data[len(data) - n:] = bytes(b ^ 0xFF for b in data[len(data) - n:])
    file.write_bytes(bytes(data))
    mtime = st.st_mtime_ns if restore_mtime else st.st_mtime_ns + 1_000_000_000
    os.utime(file, ns=(st.st_atime_ns, mtime))
    assert file.stat().st_size == st.st_size


DAMAGES = {
    "edit": (_edit_same_size, "digest differs"),
    "truncate": (lambda f: os.truncate(f, f.stat().st_size // 2), "bytes, recorded"),
    "delete": (lambda f: f.unlink(), "missing"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize(("kind", "rel"), TARGETS, ids=IDS)
def test_a_damaged_data_file_is_an_error_when_opened_by_path(kind, rel, damage, built, tmp_path,
                                                             capsys):
    copy = _fresh_copy(built(kind), tmp_path)
    KINDS[kind].cls(copy)  # intact: opens
    harm, says = DAMAGES[damage]
    harm(copy / rel)
    with pytest.raises(InputError, match=f"{rel}: [^;]*{says}"):
        KINDS[kind].cls(copy)
    assert main(["verify", str(copy)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(err) == 1 and f"{copy}: {rel}: " in err[0] and says in err[0]


def test_artifact_load_checks_the_files_too(built, tmp_path):
    copy = _fresh_copy(built("answers"), tmp_path)
    assert pt.Artifact.load(str(copy)).num_docs == 250
    os.truncate(copy / "tfidf" / "idf.npy", 1000)
    with pytest.raises(InputError, match="tfidf/idf.npy: 1,000 bytes, recorded"):
        pt.Artifact.load(str(copy))


@pytest.mark.parametrize(("kind", "rel"), TARGETS, ids=IDS)
def test_an_edit_the_stat_cannot_see_is_found_by_redigest_and_verify(kind, rel, built, tmp_path,
                                                                     monkeypatch):
    copy = _fresh_copy(built(kind), tmp_path)
    _edit_same_size(copy / rel, restore_mtime=True)
    # Only utime sets an mtime back, and it moves the ctime: opening sees that.
    with pytest.raises(InputError, match=f"{rel}: digest differs"):
        KINDS[kind].cls(copy)
    # A change that leaves both times (a write through a shared memory map may): as if
    # the record held the file's present times.
    manifest = read_manifest(copy)
    st = (copy / rel).stat()
    manifest[DATA_FILES][rel].update(mtime_ns=st.st_mtime_ns, ctime_ns=st.st_ctime_ns)
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert data_file_problems(copy) == []  # the documented limit: a stat per file at open
    assert verify_index(copy).problems == [f"{rel}: digest differs"]
    monkeypatch.setenv("MATHIR_REDIGEST", "1")
    with pytest.raises(InputError, match=f"{rel}: digest differs"):
        KINDS[kind].cls(copy)


@pytest.mark.parametrize("kind", ["answers", "texts", "formulas", "facts", "dense"])
def test_the_build_protocol_rebuilds_a_damaged_index_saying_so(kind, tmp_path):
    rel = next(r for k, r in TARGETS if k == kind)
    path = KINDS[kind].build(tmp_path / "idx").path
    os.truncate(path / rel, 0)
    with pytest.warns(UserWarning, match=f"{rel}: 0 bytes, recorded .*: rebuilding it"):
        index = KINDS[kind].build(path)
    assert verify_index(index.path).ok
    assert not [p for p in tmp_path.iterdir() if p.name.endswith((".tmp", ".old"))]


def test_a_damaged_index_that_cannot_be_rebuilt_is_one_error_naming_the_file(tmp_path,
                                                                             monkeypatch):
    from mathir.storage import indexes

    path = KINDS["facts"].build(tmp_path / "idx").path
    _edit_same_size(path / "counts.npz")

    def unwritable(path, message="folder not writable"):  # as exclusive_lock there
        raise InputError(f"{message} (Permission denied)", path=path.parent)

    monkeypatch.setattr(indexes, "exclusive_lock", unwritable)
    with warnings.catch_warnings(record=True) as said, pytest.raises(
            InputError, match=r"cannot write 'idx' here to rebuild it \(counts.npz: digest "
                              r"differs\) \(Permission denied\)"):
        warnings.simplefilter("always")
        KINDS["facts"].build(path)
    assert not said  # the one error line, no "rebuilding it" beside it


def test_files_written_after_the_build_are_not_records_and_do_not_stale(built, tmp_path):
    from mathir.pipelines.lexical import bm25
    from mathir.samples import arqmath_sample
    from mathir.topics.arqmath import read_task1_topics

    copy = _fresh_copy(built("answers"), tmp_path)
    index = KINDS["answers"].cls(copy)
    bm25(index, k1=0.9, b=0.4)(read_task1_topics(arqmath_sample().task1_topics))
    verified = verify_index(copy)
    assert verified.ok and verified.unrecorded == ["pisa/bm25.k1-0.9.b-0.4.q0.bmw.64",
                                                   "pisa/bm25.k1-0.9.b-0.4.q0.bmw.64.block_simdbp"]
    assert KINDS["answers"].build(copy).path == copy  # reused (a rebuild would warn)


def test_an_index_built_before_the_records_warns_and_is_rebuilt_by_the_protocol(tmp_path):
    path = KINDS["facts"].build(tmp_path / "idx").path
    manifest = read_manifest(path)
    del manifest[DATA_FILES]
    (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.warns(UserWarning, match="before mathir recorded its data files"):
        KINDS["facts"].cls(path)
    with pytest.raises(InputError, match="nothing to verify"):
        verify_index(path)
    KINDS["facts"].build(path)
    assert verify_index(path).ok


def test_verify_command_summarises_each_index(built, capsys):
    assert main(["verify", str(built("facts")), str(built("texts"))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == [str(built("facts")), str(built("texts"))]
    assert out[0].endswith("3 files, " + f"{verify_index(built('facts')).size:,}"
                           + " bytes: all match their records")
    assert main(["verify", "--files", str(built("facts"))]) == 0
    assert capsys.readouterr().out.splitlines()[0] == \
        f"{built('facts')}: counts.npz: ok ({(built('facts') / 'counts.npz').stat().st_size:,} " \
        "bytes recorded)"
    assert main(["verify", str(built("facts").parent)]) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"error: {built('facts').parent}: not a mathir index (no readable manifest.json)"]


# --- the rename of a finished index folder ---------------------------------------------

RENAME = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from mathir.process import Terminated, command_process
    from mathir.storage import atomic_directory

    path = Path(sys.argv[1]) / "idx"
    path.mkdir()
    (path / "old.txt").write_text("old")
    real = os.replace

    def replace(src, dst):  # SIGTERM arrives while the finished folder is renamed
        if Path(dst) == path:
            os.kill(os.getpid(), signal.SIGTERM)
        real(src, dst)

    try:
        with command_process():
            with atomic_directory(path) as tmp:
                (tmp / "new.txt").write_text("new")
                os.replace = replace
    except Terminated:
        print("terminated")
""")


def test_sigterm_while_the_finished_folder_is_renamed_leaves_no_temporary(tmp_path):
    # Before: Terminated was raised between the renames: the new folder stayed a
    # temporary, the previous one at .idx.PID-HOST.old, and no idx at all.
    proc = subprocess.run([sys.executable, "-c", RENAME, str(tmp_path)], capture_output=True,
                          text=True, env=ENV, timeout=120)
    assert proc.stdout.strip() == "terminated", proc.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == ["new.txt"]


def test_a_failed_rename_puts_the_previous_folder_back(tmp_path, monkeypatch):
    from mathir.storage import atomic_directory

    path = tmp_path / "idx"
    path.mkdir()
    (path / "old.txt").write_text("old")
    real, failed = os.replace, []

    def replace(src, dst):
        if Path(dst) == path and not failed:  # the new folder's rename, not the way back
            failed.append(src)
            raise OSError(5, "Input/output error")
        real(src, dst)

    with pytest.raises(OSError, match="Input/output"), atomic_directory(path) as tmp:
        (tmp / "new.txt").write_text("new")
        monkeypatch.setattr(os, "replace", replace)
    assert failed and sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert sorted(p.name for p in path.iterdir()) == ["old.txt"]
