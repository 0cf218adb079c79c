"""Bad output paths, read-only indexes and linked data folders, through the CLI."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mathir.cli import main
from mathir.samples import worldtree_sample
from tests.conftest import error_lines

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _one_error_line(err: str) -> str:
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith("error: "), err[-3000:]
    return lines[0]


# --- --out that cannot be written ---------------------------------------------------


@pytest.mark.parametrize("command,out", [
    (["experiment", "arqmath-task1"], "afile"),
    (["experiment", "arqmath-task1"], "afile/runs"),
    (["demo"], "afile"),
    (["run", "arqmath-task1", "--pipeline", "bm25"], "adir"),  # a folder, not a run file
    (["run", "arqmath-task1", "--pipeline", "bm25"], "afile/bm25.tsv"),
])
def test_bad_out_is_one_error_line_before_any_work(command, out, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a folder\n")
    (tmp_path / "adir").mkdir()
    assert main([*command, "--out", out, "--quiet"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: {out.split('/')[0]}: ")
    # Nothing was indexed or written: the check came first (`run` used to fail with
    # IsADirectoryError only after its pipeline ran).
    assert sorted(os.listdir(tmp_path)) == ["adir", "afile"] and not os.listdir("adir")
    assert (tmp_path / "afile").read_text() == "not a folder\n"


def _as_user_who_cannot_write() -> list[str]:
    """A command prefix under which chmod a-w folders are read-only (root ignores modes)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, which writes into read-only folders, and setpriv "
                    "(util-linux) is absent to drop that capability")
    prefix = [setpriv, "--bounding-set=-dac_override"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE: {probe.stderr!r}")
    return prefix


def _mathir(prefix: list[str], *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", "mathir.cli", *argv, "--quiet"],
                          capture_output=True, text=True, env=ENV, timeout=600)


@pytest.fixture
def read_only(tmp_path):
    """Make folders read-only (chmod -R a-w) for the test; restored afterwards."""
    made = []

    def make(folder: Path) -> Path:
        for d, _, files in os.walk(folder):
            for n in files:
                os.chmod(Path(d) / n, 0o444)
            os.chmod(d, 0o555)
        made.append(folder)
        return folder

    yield make
    for folder in made:
        for d, _, _ in os.walk(folder):
            os.chmod(d, 0o755)


@pytest.mark.parametrize("command,out", [
    (["experiment", "arqmath-task1"], "ro"),
    (["experiment", "arqmath-task1"], "ro/new"),
    (["run", "arqmath-task1", "--pipeline", "bm25"], "ro/bm25.tsv"),
])
def test_unwritable_out_is_one_error_line(command, out, tmp_path, read_only):
    prefix = _as_user_who_cannot_write()
    read_only(Path(tmp_path / "ro").mkdir() or tmp_path / "ro")
    proc = _mathir(prefix, *command, "--out", str(tmp_path / out))
    assert proc.returncode == 2
    line = _one_error_line(proc.stderr)
    assert "not writable (Permission denied)" in line or "Read-only file system" in line
    assert os.listdir(tmp_path / "ro") == []


# --- read-only index -------------------------------------------------------------


def _tree(folder: Path) -> dict:
    """Every path under ``folder`` with its size and modification time."""
    out = {}
    for d, dirs, files in os.walk(folder):
        for n in dirs + files:
            st = os.stat(Path(d) / n)
            out[str((Path(d) / n).relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return out


def test_read_only_index_is_searched_without_writing_anything(tmp_path, capsys, read_only):
    prefix = _as_user_who_cannot_write()
    index = tmp_path / "ro" / "idx"
    assert main(["index", "arqmath-task1", "--index", str(index), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["experiment", "arqmath-task1", "--out", str(tmp_path / "rw"), "--quiet",
                 "--format", "json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    read_only(tmp_path / "ro")
    before = _tree(tmp_path / "ro")
    proc = _mathir(prefix, "experiment", "arqmath-task1", "--index", str(index), "--out",
                   str(tmp_path / "out"), "--format", "json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout) == expected
    # No lock file beside it, no PISA data compiled into it, nothing appended to its log.
    assert _tree(tmp_path / "ro") == before


def test_read_only_index_without_bm25_data_is_one_error_line(tmp_path, read_only):
    # An index built by an older mathir lacks the BM25 data that PISA compiles on the
    # first search; read-only, PISA used to abort the process (SIGABRT, no message).
    prefix = _as_user_who_cannot_write()
    index = tmp_path / "ro" / "idx"
    assert main(["index", "arqmath-task1", "--index", str(index), "--quiet"]) == 0
    compiled = list((index / "pisa").glob("bm25.*"))
    assert compiled
    manifest = json.loads((index / "manifest.json").read_text(encoding="utf-8"))
    for f in compiled:
        f.unlink()  # (nor did its manifest record them)
        del manifest["data_files"][f"pisa/{f.name}"]
    (index / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    read_only(tmp_path / "ro")
    proc = _mathir(prefix, "experiment", "arqmath-task1", "--index", str(index), "--out",
                   str(tmp_path / "out"), "--pipelines", "bm25")
    assert proc.returncode == 2
    line = _one_error_line(proc.stderr)
    assert line.startswith(f"error: {index / 'pisa'}: the index has no BM25 data for k1=1.2")


def test_read_only_index_needing_a_derived_index_is_one_error_line(tmp_path, read_only):
    # formula-aware builds the collection's formula index beside the answer index.
    prefix = _as_user_who_cannot_write()
    index = tmp_path / "ro" / "idx"
    assert main(["index", "arqmath-task1", "--index", str(index), "--quiet"]) == 0
    read_only(tmp_path / "ro")
    proc = _mathir(prefix, "experiment", "arqmath-task1", "--index", str(index), "--out",
                   str(tmp_path / "out"), "--pipelines", "formula-aware")
    assert proc.returncode == 2
    line = _one_error_line(proc.stderr)
    assert line == (f"error: {tmp_path / 'ro'}: cannot write 'idx-formulas' here "
                    "(Permission denied)")


def test_bm25_data_missing_from_a_writable_index_is_compiled_once(tmp_path, capsys):
    index = tmp_path / "idx"
    assert main(["index", "arqmath-task1", "--index", str(index), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["experiment", "arqmath-task1", "--index", str(index), "--out",
                 str(tmp_path / "a"), "--quiet", "--format", "json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    for f in (index / "pisa").glob("bm25.*"):
        f.unlink()
    assert main(["experiment", "arqmath-task1", "--index", str(index), "--out",
                 str(tmp_path / "b"), "--quiet", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == expected
    assert len(list((index / "pisa").glob("bm25.*"))) == 2
    assert not [p for p in index.rglob("*") if p.name.endswith(".tmp")]


# --- --data made of linked folders ----------------------------------------------------


def test_arqmath_data_folder_of_links(tmp_path, capsys, sample):
    official = tmp_path / "elsewhere" / "official"
    official.mkdir(parents=True)
    shutil.copy(sample.task1_topics, official / "Topics_Task1_2022_V0.1.xml")
    shutil.copy(sample.task1_qrels, official / "qrel_task1_2022_official.tsv")
    data = tmp_path / "data"
    data.mkdir()
    (data / "topics_and_qrels").symlink_to(official, target_is_directory=True)
    (data / "collection").symlink_to(sample.posts.parent, target_is_directory=True)
    (data / "loop").symlink_to(data, target_is_directory=True)  # must not hang
    assert main(["experiment", "arqmath-task1", "--out", str(tmp_path / "a"), "--quiet",
                 "--format", "json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert main(["experiment", "arqmath-task1", "--data", str(data), "--year", "2022",
                 "--out", str(tmp_path / "b"), "--quiet", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == expected


def test_worldtree_data_folder_of_links(tmp_path, capsys):
    sample_root = worldtree_sample().tables.parents[2]
    data = tmp_path / "data"
    data.mkdir()
    for part in ("annotation", "questions"):
        (data / part).symlink_to(sample_root / part, target_is_directory=True)
    argv = ["experiment", "worldtree", "--split", "Dev", "--pipelines", "tfidf,bm25",
            "--quiet", "--format", "json"]
    assert main([*argv, "--data", str(sample_root), "--out", str(tmp_path / "a")]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert main([*argv, "--data", str(data), "--out", str(tmp_path / "b")]) == 0
    assert json.loads(capsys.readouterr().out) == expected


def test_worldtree_split_file_found_through_a_linked_folder(tmp_path):
    from mathir.topics.worldtree import find_split_file

    sample_root = worldtree_sample().tables.parents[2]
    data = tmp_path / "data"
    shutil.copytree(sample_root / "annotation", data / "annotation")
    (data / "questions").symlink_to(sample_root / "questions", target_is_directory=True)
    tables = data / "annotation" / "expl-tablestore-sample" / "tables"
    assert find_split_file(tables, "Train") == data / "questions" / "ARC-Elementary+EXPL-Train.tsv"
