"""The README's Python example and first lines are part of the contract: test them."""

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "runs" / "bm25.tsv").exists()


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
    assert "| bm25+tfidf" in proc.stdout
