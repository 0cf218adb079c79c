"""Official files known by their digest (issue 51): a located file that is not the
published one of its name is said in ONE warning naming what differs; never refused,
never used silently; the published files themselves give no warning."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from mathir.tasks import TASKS, get_task
from mathir.tasks.declarations import PublishedFile, published_files
from mathir.tasks.locate import check_published
from tests.conftest import REAL_DATA, real_path

QRELS_2020 = ("qrels", "task1", "qrel_task1_2020_official.tsv")
MIRMU_2020 = ("runs", "arqmath1", "prim_MIRMU-task1-Ensemble-auto-both-A.tsv")


def _published(path, name=None) -> PublishedFile:
    import hashlib

    data = path.read_bytes()
    return PublishedFile(name or path.name, len(data), hashlib.sha256(data).hexdigest())


def _said(path, published) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_published(path, published, "test file")
    return [str(w.message) for w in caught]


# --- check_published on made-up files ------------------------------------------------------


def test_the_published_file_is_silent_and_another_name_is_not_checked(tmp_path):
    f = tmp_path / "q.tsv"
    f.write_bytes(b"A.1\t0\t7\t2\r\nA.1\t0\t8\t0\r\n")
    assert _said(f, [_published(f)]) == []
    assert _said(f, [PublishedFile("other.tsv", 1, "0" * 64)]) == []  # nothing known of it


def test_a_changed_line_of_the_same_size_is_said_by_its_digest(tmp_path):
    f = tmp_path / "q.tsv"
    f.write_bytes(b"A.1\t0\t7\t2\r\nA.1\t0\t8\t0\r\n")
    published = _published(f)
    f.write_bytes(b"A.1\t0\t7\t3\r\nA.1\t0\t8\t0\r\n")  # one judgment changed: same size
    (said,) = _said(f, [published])
    assert said.startswith(f"{f}: not the published q.tsv (test file): sha256 ")
    assert f", published {published.sha256[:16]}… (the same size, 22 bytes); scores " in said


def test_another_size_is_said_with_both_sizes_and_digests(tmp_path):
    f = tmp_path / "q.tsv"
    f.write_bytes(b"A.1\t0\t7\t2\r\n" * 1000)
    published = _published(f)
    f.write_bytes(b"A.1\t0\t7\t2\r\n" * 999)
    (said,) = _said(f, [published])
    assert ": 10,989 bytes, published 11,000 (sha256 " in said
    assert f"published {published.sha256[:16]}…); scores on it may differ" in said


def test_a_copy_with_other_line_endings_is_said_as_such(tmp_path):
    f = tmp_path / "q.tsv"
    f.write_bytes(b"A.1\t0\t7\t2\r\nA.1\t0\t8\t0")  # CRLF, no final newline (as published)
    crlf = _published(f)
    text = PublishedFile(crlf.name, crlf.size, crlf.sha256,
                         __import__("hashlib").sha256(b"A.1\t0\t7\t2\nA.1\t0\t8\t0\n").hexdigest())
    f.write_bytes(b"A.1\t0\t7\t2\nA.1\t0\t8\t0\n")
    (said,) = _said(f, [text])
    assert said.endswith(": only its line endings or final newline differ (20 bytes, "
                         "published 20): its text is the same")
    # without the text digest it is only another file
    assert "scores on it may differ" in _said(f, [crlf])[0]


def test_a_folder_is_said_by_its_files(tmp_path):
    from mathir.storage import file_fingerprint

    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "A.tsv").write_text("x\n")
    fp = file_fingerprint(tables)
    published = PublishedFile("tables", fp["size"], fp["sha256"], None, 1)
    assert _said(tables, [published]) == []
    (tables / "B.tsv").write_text("y\n")
    (said,) = _said(tables, [published])
    assert ": 2 files, published 1; 4 bytes, published 2 (sha256 " in said


def test_a_file_of_the_published_size_is_digested_once(tmp_path, monkeypatch):
    """Cheap: size first; the digest is cached by the file's stat key (the fingerprint
    cache), so checking an unchanged file again reads none of its bytes."""
    import mathir.storage.fingerprints as fingerprints

    f = tmp_path / "q.tsv"
    f.write_bytes(b"A.1\t0\t7\t2\n" * 10)
    published = [_published(f)]
    reads = []
    real = fingerprints.sha256_file
    monkeypatch.setattr(fingerprints, "sha256_file", lambda p: reads.append(p) or real(p))
    monkeypatch.setattr(fingerprints, "RACY_NS", -10**9)  # its ctime is now: cache it all the same
    assert _said(f, published) == [] and len(reads) <= 1
    before = len(reads)
    assert _said(f, published) == [] and len(reads) == before


def test_needs_keep_the_published_files_their_patterns_match():
    task2 = get_task("arqmath-task2")
    qrels = next(n for s in task2.splits if s.name == "2021" for n in s.needs
                 if "qrels" in n.roles)
    assert sorted(f.name for f in qrels.published) == [
        "qrel_task2_2021_visual_id_official.tsv", "qrel_task2_2021_visual_id_v3_official.tsv"]
    variant = next(v for v in get_task("arqmath-task1").qrels_variants if v.name == "all")
    assert [f.name for f in variant.published] == ["qrel_task1_2021_all.tsv"]
    assert published_files(("a.tsv", 1, "0" * 64))[0].text_digest == "0" * 64


def test_the_sample_folder_is_not_the_published_release(tmp_path):
    """A folder of the embedded sample's files, given as the data folder, is said."""
    from mathir.samples import word_problems_sample

    folder = word_problems_sample().problems.parent
    with pytest.warns(UserWarning, match=r"draw-test.txt: not the published draw-test.txt "
                      r"\(DRAW-1K split file\): [\d,]+ bytes, published 1,571"):
        get_task("word-problems").data(folder, "test")


# --- the real files ------------------------------------------------------------------------


def _real_files() -> dict[str, PublishedFile]:
    out = {}
    for task in TASKS.values():
        for split in task.splits:
            for need in split.needs:
                out.update((f.name, f) for f in need.published)
        for variant in task.qrels_variants:
            out.update((f.name, f) for f in variant.published)
    return out


def test_every_published_file_is_found_by_a_need_or_a_qrels_variant():
    from mathir.tasks.arqmath import ARQMATH_PUBLISHED
    from mathir.tasks.word_problems import DERIVATION_RELEASE
    from mathir.tasks.worldtree import WORLDTREE_PUBLISHED

    declared = [*ARQMATH_PUBLISHED, *WORLDTREE_PUBLISHED, *DERIVATION_RELEASE]
    assert sorted(f.name for f in declared) == sorted(_real_files())


@pytest.mark.realdata
def test_every_declared_digest_is_that_of_the_real_file():
    import hashlib

    from mathir.storage import file_fingerprint

    real_path()
    files = _real_files()
    assert len(files) == 22 + 4 + 16  # ARQMath; WorldTree; the derivation release
    for name, published in files.items():
        (path,) = [p for p in REAL_DATA.rglob(name) if "collection_sample" not in p.parts]
        if path.is_dir():
            fp = file_fingerprint(path)
            assert (fp["files"], fp["size"], fp["sha256"]) == \
                (published.files, published.size, published.sha256), name
            continue
        data = path.read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == \
            (published.size, published.sha256), name
        text = data.replace(b"\r\n", b"\n").rstrip(b"\n") + b"\n"
        assert hashlib.sha256(text).hexdigest() == published.text_digest, name


@pytest.mark.realdata
@pytest.mark.parametrize("task, folder, years", [
    ("arqmath-task1", "arqmath", ("2020", "2021", "2022")),
    ("arqmath-task2", "arqmath", ("2020", "2021", "2022")),
    ("arqmath-task3", "arqmath", ("2022",)),
    ("worldtree", "worldtree", ("Train", "Dev", "Test")),
    ("word-problems", "word_problems", ("test", "dev", "alg514-fold-1", "dolphin-fold-4"))])
def test_the_real_files_give_no_warning(task, folder, years):
    root = real_path(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for year in years:
            get_task(task).data(root, year)


def _data_with_changed_qrels(tmp_path):
    """A data folder laid out like the real one: its topics and thread files linked, a
    copy of the 2020 Task 1 qrels with one judgment changed (the same size)."""
    arqmath = real_path("arqmath")
    root = tmp_path / "data"
    (root / "collection_sample").mkdir(parents=True)
    (root / "topics").symlink_to(arqmath / "topics")
    (root / "collection_sample" / "threads_all").symlink_to(
        arqmath / "collection_sample" / "threads_all")
    qrels = root.joinpath(*QRELS_2020)
    qrels.parent.mkdir(parents=True)
    lines = arqmath.joinpath(*QRELS_2020).read_bytes().split(b"\n")
    first = lines[0].split(b"\t")
    first[3] = b"3\r" if first[3] != b"3\r" else b"2\r"
    lines[0] = b"\t".join(first)
    qrels.write_bytes(b"\n".join(lines))
    return root, qrels


@pytest.mark.realdata
def test_a_changed_official_qrels_is_said_by_task_data(tmp_path):
    root, qrels = _data_with_changed_qrels(tmp_path)
    task = get_task("arqmath-task1")
    with pytest.warns(UserWarning) as said:
        data = task.data(root, "2020")
    assert data.qrels == qrels  # used all the same, never refused
    ours = [str(w.message) for w in said if "not the published" in str(w.message)]
    assert ours == [f"{qrels}: not the published qrel_task1_2020_official.tsv (Task 1 qrels): "
                    f"sha256 {ours[0].split('sha256 ')[1][:17]}, published 6b8c248e6a70a79b… "
                    "(the same size, 684,110 bytes); scores on it may differ from those on "
                    "the published file"]


@pytest.mark.realdata
def test_a_changed_qrels_variant_is_said(tmp_path):
    root, _ = _data_with_changed_qrels(tmp_path)
    name = "qrel_task1_2021_all.tsv"
    real = real_path("arqmath", "qrels", "task1")
    (root / "qrels" / "task1" / "qrel_task1_2021_official.tsv").symlink_to(
        real / "qrel_task1_2021_official.tsv")
    (root / "qrels" / "task1" / name).write_bytes((real / name).read_bytes()[:-100])
    with pytest.warns(UserWarning, match=rf"{name}: not the published {name} \(every "):
        get_task("arqmath-task1").data(root, "2021", qrels="all")


def _cli(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mathir.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


@pytest.mark.realdata
def test_a_changed_official_qrels_is_said_by_evaluate(tmp_path):
    root, qrels = _data_with_changed_qrels(tmp_path)
    run = real_path("arqmath", *MIRMU_2020)
    args = ("evaluate", "arqmath-task1", "--year", "2020", "--judged", "file", "--quiet",
            str(run))
    changed = _cli(*args, "--data", str(root), cwd=tmp_path)
    assert changed.returncode == 0, changed.stderr
    said = [line for line in changed.stderr.splitlines() if "not the published" in line]
    assert len(said) == 1 and said[0].startswith(
        f"warning: {qrels}: not the published qrel_task1_2020_official.tsv (Task 1 qrels): ")
    real = _cli(*args, "--data", str(real_path("arqmath")), cwd=tmp_path)
    assert real.returncode == 0 and "not the published" not in real.stderr, real.stderr


@pytest.mark.realdata
def test_a_changed_split_file_is_said_by_experiment(tmp_path):
    """The DRAW-1K test split with one id changed (to a dev problem's): the experiment
    runs on it, and says once that it is not the published file."""
    release = real_path("word_problems", "draw_release")
    root = tmp_path / "data"
    root.mkdir()
    for name in ("draw.json", "draw-train.txt"):
        (root / name).symlink_to(release / name)
    lines = (release / "draw-test.txt").read_bytes().split(b"\r\n")
    lines[0] = (release / "draw-dev.txt").read_bytes().split(b"\r\n")[0]
    (root / "draw-test.txt").write_bytes(b"\r\n".join(lines))
    done = _cli("experiment", "word-problems", "--data", str(root), "--split", "test",
                "--pipelines", "nearest-template", "--out", "runs", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "not the published" in line]
    assert len(said) == 1 and said[0].startswith(
        f"warning: {root / 'draw-test.txt'}: not the published draw-test.txt (DRAW-1K split "
        "file): sha256 ")
    assert "nearest-template" in done.stdout
