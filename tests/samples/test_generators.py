"""The sample generators in scripts/ reproduce the shipped sample files byte for byte from their
YAML content files, and report mistakes in those files as one ``error: file:line: ...`` line."""

from __future__ import annotations

import doctest
import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
SAMPLES = ROOT / "mathir" / "samples"


def _script(name: str) -> ModuleType:
    """Import scripts/<name>.py (scripts/ is no package; its modules import sample_data)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up here
    # scripts/ on sys.path while the script's own imports run, not for the tests after it
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(SCRIPTS))
        spec.loader.exec_module(module)
    return module


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


# (script, shipped folder, shipped paths written by hand rather than by the script)
GENERATORS = [
    ("make_arqmath_sample", "arqmath", ("task3/",)),
    ("make_worldtree_sample", "worldtree", ()),
    ("make_word_problems_sample", "word_problems", ("README.md",)),
]


@pytest.mark.parametrize(("script", "folder", "by_hand"), GENERATORS)
def test_generator_reproduces_the_shipped_sample(script, folder, by_hand, tmp_path, capsys):
    _script(script).main(["--out", str(tmp_path / "out")])
    capsys.readouterr()
    made = _files(tmp_path / "out")
    shipped = {
        name: data
        for name, data in _files(SAMPLES / folder).items()
        if not name.startswith(by_hand) and "__pycache__" not in name
    }
    assert sorted(made) == sorted(shipped)
    changed = [name for name in shipped if made[name] != shipped[name]]
    assert changed == [], f"regenerating changes {changed}: run scripts/{script}.py and commit"


@pytest.mark.parametrize("name", ["sample_data", "make_arqmath_sample", "make_worldtree_sample"])
def test_doctests(name):
    result = doctest.testmod(_script(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def _line_of(text: str, needle: str, occurrence: int = 1) -> int:
    lines = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
    return lines[occurrence - 1]


# (file in scripts/arqmath_sample, text replaced (first occurrence), replacement,
#  (needle, occurrence) of the line the error names, message after "file:line: ")
ARQMATH_MISTAKES = [
    pytest.param(
        "topics.yaml",
        "    deriv-4.0: 1\n",
        "    deriv-4.0: 1\n    deriv-4.0: 2\n",
        ("deriv-4.0: 2", 1),
        "duplicate key 'deriv-4.0'",
        id="duplicate-judgment",
    ),
    pytest.param(
        "threads/01-derivatives.yaml",
        "    title: 'Derivative of $x^x$: why does the power rule give the wrong answer?'\n",
        "    title: yes\n",
        ("- key: deriv-1", 1),
        "question: 'title' must be non-empty text, got bool True",
        id="title-read-as-bool",
    ),
    pytest.param(
        "topics.yaml",
        "  dup_rels: [3, 3, 2, 2]\n",
        "  dup_rel: [3, 3, 2, 2]\n",
        ("- dup: deriv-1", 1),
        "topic: unknown key 'dup_rel' (allowed: dup, tags, title, formula, body, dup_rels, "
        "related, unrelated, formula_rels)",
        id="misspelt-key",
    ),
    pytest.param(
        "topics.yaml",
        "  dup_rels: [3, 3, 2, 2]\n",
        "  dup_rels: [3, 3, 2, 4]\n",
        ("- dup: deriv-1", 1),
        "topic: 'dup_rels' must be a non-empty list of relevance grades 0-3, got list [3, 3, 2, 4]",
        id="grade-out-of-range",
    ),
    pytest.param(
        "topics.yaml",
        "  dup_rels: [3, 3, 2, 2]\n",
        "  dup_rels: [3, 3, 2]\n",
        ("- dup: deriv-1", 1),
        "dup_rels has 3 grades, 'deriv-1' has 4 answers",
        id="grade-per-answer",
    ),
    pytest.param(
        "topics.yaml",
        "    deriv-4.0: 1\n",
        "    log-1.0: 1\n",
        ("- dup: deriv-1", 1),
        "related: 'log-1.0' is not an answer key ('question-key.j') of the subject 'derivatives'",
        id="related-from-other-subject",
    ),
    pytest.param(
        "topics.yaml",
        "    - {latex: '\\ln y=x\\ln x', rel: 3}\n",
        "    - {latex: '\\ln y=x\\ln x', rel: 3, first: [3]}\n",
        ("rel: 3, first: [3]", 1),
        "formula judgment needs exactly one of 'rel' (every instance) or 'first' (the first "
        "instances)",
        id="rel-and-first",
    ),
    pytest.param(
        "threads/01-derivatives.yaml",
        "  - key: deriv-2\n",
        "  - key: deriv-1\n",
        ("- key: deriv-1", 2),
        "question key 'deriv-1' also used in 01-derivatives.yaml:4",
        id="question-key-twice",
    ),
    pytest.param(
        "threads/01-derivatives.yaml",
        "    tags: [exponential-function]\n",
        "\ttags: [exponential-function]\n",
        ("\ttags", 1),
        "not valid YAML: found character '\\t' that cannot start any token",
        id="tab-indentation",
    ),
]


@pytest.mark.parametrize(("name", "old", "new", "where", "message"), ARQMATH_MISTAKES)
def test_arqmath_content_mistake_is_one_error_line(name, old, new, where, message, tmp_path,
                                                   capsys):  # fmt: skip
    data = tmp_path / "data"
    shutil.copytree(SCRIPTS / "arqmath_sample", data)
    path = data / name
    text = path.read_text(encoding="utf-8")
    assert old in text
    text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        _script("make_arqmath_sample").main(["--out", str(tmp_path / "out"), "--data", str(data)])
    assert exc.value.code == 2
    line = _line_of(text, *where)
    assert capsys.readouterr().err == f"error: {path}:{line}: {message}\n"
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_worldtree_unquoted_yes_no_option_is_an_error(tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(SCRIPTS / "worldtree_sample", data)
    path = data / "questions.yaml"
    text = path.read_text(encoding="utf-8")
    assert "  options: ['yes', 'no']\n" in text
    path.write_text(text.replace("['yes', 'no']", "[yes, no]"), encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        _script("make_worldtree_sample").main(["--out", str(tmp_path / "o"), "--data", str(data)])
    assert exc.value.code == 2
    line = _line_of(text, "- id: WT_DEV_07")
    assert capsys.readouterr().err == (
        f"error: {path}:{line}: question: 'options' must be a list of 1-5 options, "
        "got list [True, False]\n"
    )


def test_worldtree_explanation_naming_a_missing_fact_is_an_error(tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(SCRIPTS / "worldtree_sample", data)
    path = data / "questions.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("    melting-def: CENTRAL\n", "    melted-def: CENTRAL\n", 1),
                    encoding="utf-8")  # fmt: skip
    with pytest.raises(SystemExit):
        _script("make_worldtree_sample").main(["--out", str(tmp_path / "o"), "--data", str(data)])
    line = _line_of(text, "- id: WT_DEV_01")
    assert capsys.readouterr().err == (
        f"error: {path}:{line}: explanation: no fact 'melted-def' in tables.yaml\n"
    )
