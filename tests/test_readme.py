"""The README's Python example and first lines are part of the contract: test them."""

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def markdown_table(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The columns and rows (first cell -> other cells) of the markdown table in ``text``."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    assert len(cells) >= 3 and set("".join(cells[1])) <= set(":-"), text  # header rule
    return cells[0][1:], {row[0]: row[1:] for row in cells[2:]}


MEASURES = ["nDCG'", "MAP'", "P'@10", "bpref"]
# The embedded sample's scores (PISA's BM25 and scikit-learn's TF-IDF are deterministic).
SAMPLE_SCORES = {
    "bm25": ["0.934", "0.905", "0.370", "0.859"],             # Terrier's k1 1.2, b 0.75
    "bm25_k0.9_b0.4": ["0.941", "0.906", "0.370", "0.855"],
    "tfidf": ["0.934", "0.918", "0.370", "0.900"],
    "bm25+tfidf": ["0.933", "0.905", "0.370", "0.859"],
}


def test_readme_python_example_runs(tmp_path, monkeypatch, capsys):
    from mathir.runs.trec import read_run

    monkeypatch.chdir(tmp_path)
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    scope: dict = {}
    exec(compile(block, "README.md", "exec"), scope)
    columns, rows = markdown_table(capsys.readouterr().out)
    assert columns == MEASURES  # what the README's comment promises
    assert rows == {name: SAMPLE_SCORES[name] for name in ("bm25", "bm25+tfidf")}
    written = read_run(tmp_path / "runs" / "bm25.tsv")
    bm25 = scope["runs"]["bm25"]
    assert written.groupby("qid")["docno"].apply(list).to_dict() == (
        bm25.sort_values(["qid", "rank"]).groupby("qid")["docno"].apply(list).to_dict())


def test_readme_starts_with_the_two_commands_ci_runs():
    text = README.read_text()
    commands = re.search(r"```bash\n(.*?)```", text, re.S).group(1).strip().splitlines()
    assert len(commands) == 2 and commands[0].endswith("mathir demo")
    ci = (README.parent / ".ci" / "run").read_text()
    assert commands[1] in ci


def test_example_script_runs():
    script = README.parent / "examples" / "compare_pipelines.py"
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    columns, rows = markdown_table(proc.stdout)
    assert columns == MEASURES and rows == SAMPLE_SCORES
