"""Python sandbox escapes through every entry point that reads math from text (issue 16).

Each payload would create a canary file if any code ran it as Python (SymPy's
``parse_expr``/``sympify`` did: a model response or a run-file template executed).
Every entry point must judge it incorrect or refuse it with one clear error, and:

* the canary file must not exist afterwards (the only proof for the SymPy worker
  process and the command line, which run in other processes);
* in this process, no process may start (``os.system``, ``subprocess.Popen``, ... are
  replaced by recorders, and an audit hook records the ``os.system``,
  ``subprocess.Popen``, ``os.exec``, ``os.posix_spawn`` events), nothing may open the
  canary, and no code object that names the canary or a dunder chain may be run
  (audit event ``exec``, which ``eval`` and ``exec`` raise).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mathir.answer_checking.checking import CHECKS, check_answer
from mathir.answer_checking.derivations import reconcile_templates
from mathir.answer_checking.dolphin import dolphin_check
from mathir.answer_checking.latex import (
    SymbolicChecker,
    default_checker,
    latex_check,
    symbolic_equal,
)
from mathir.answer_checking.safe_math import ExpressionError, parse_equation, parse_expression
from mathir.answer_checking.solver import TemplateSolver
from mathir.answer_checking.sympy_worker import compare, parse
from mathir.answer_checking.templates import Template, TemplateError
from mathir.errors import InputError
from mathir.evaluation.word_problems import compare as word_problems_compare
from mathir.experiment import evaluate_runs
from mathir.qrels.word_problems import read_gold
from mathir.readers.word_problems import iter_derivation_problems
from mathir.runs.word_problems import write_run
from mathir.samples import word_problems_sample

# --- the payloads -------------------------------------------------------------------------


def _octal(s: str) -> str:
    return "".join(f"\\{ord(c):03o}" for c in s)


def _hex(s: str) -> str:
    return "".join(f"\\x{ord(c):02x}" for c in s)


def _unicode(s: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in s)


def _fullwidth(s: str) -> str:
    """Full-width letters and low line: Python NFKC-normalises them in identifiers."""
    return "".join(chr(ord(c) + 0xFEE0) if c.isalpha() or c == "_" else c for c in s)


def payloads(path: Path) -> dict[str, str]:
    """Name -> text that creates ``path`` when Python evaluates it."""
    p, cmd = str(path), f"touch {path}"
    chain = '(1).__class__.__new__.__globals__["__builtins__"]["__import__"]'
    return {
        "import-system": f'__import__("os").system("{cmd}")',
        "import-system-single-quotes": f"__import__('os').system('{cmd}')",
        "open-write": f'open("{p}", "w").write("x")',
        "pathlib": f'__import__("pathlib").Path("{p}").touch()',
        "subprocess": f'__import__("subprocess").Popen(["touch", "{p}"]).wait()',
        "getattr": f'getattr(__import__("os"), "system")("{cmd}")',
        "eval": f"eval(\"__import__('os').system('{cmd}')\")",
        "exec": f"exec(\"import os; os.system('{cmd}')\")",
        "globals-chain": f'{chain}("os").system("{cmd}")',
        "globals-chain-octal": (
            f'(1).__class__.__new__.__globals__["{_octal("__builtins__")}"]'
            f'["{_octal("__import__")}"]("{_octal("os")}").system("{_octal(cmd)}")'),
        "globals-chain-octal-fullwidth": (
            f'(1).{_fullwidth("__class__")}.{_fullwidth("__new__")}.'
            f'{_fullwidth("__globals__")}["{_octal("__builtins__")}"]'
            f'["{_octal("__import__")}"]("{_octal("os")}").{_fullwidth("system")}'
            f'("{_octal(cmd)}")'),
        # Names SymPy's old template parsing did not count as slots: the octal strings
        # and full-width "system" hide theirs, so the template has the two slots
        # (evalf, __globals__) and two unknowns of the gold template it is compared with.
        "evalf-globals-octal-fullwidth": (
            f'(1).evalf.__globals__["{_octal("__builtins__")}"]["{_octal("__import__")}"]'
            f'("{_octal("os")}").{_fullwidth("system")}("{_octal(cmd)}")'),
        "hex-escapes": f'__import__("{_hex("os")}").system("{_hex(cmd)}")',
        "unicode-escapes": f'__import__("{_unicode("os")}").system("{_unicode(cmd)}")',
        "fullwidth": f'{_fullwidth("__import__")}("os").{_fullwidth("system")}("{cmd}")',
        "subclasses": "().__class__.__bases__[0].__subclasses__()",
        "subclasses-chain": (
            '[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '
            f'"catch_warnings"][0]()._module.__builtins__["__import__"]("os").system("{cmd}")'),
        "lambda": f'(lambda: __import__("os").system("{cmd}"))()',
        "f-string": f"f\"{{__import__('os').system('{cmd}')}}\"",
        "walrus": f'(s := __import__("os")).system("{cmd}")',
        "comprehension": f'[__import__("os").system("{cmd}") for _ in (1,)]',
        "builtins": f'__builtins__.__import__("os").system("{cmd}")',
        "arithmetic-prefix": f'1 + __import__("os").system("{cmd}")',
        "sympy-integer-globals": (
            'Integer(1).__class__.__new__.__globals__["__builtins__"]["__import__"]'
            f'("os").system("{cmd}")'),
        "sympify-inside": f"sympify(\"__import__('os').system('{cmd}')\")",
        "boxed": f'\\boxed{{__import__("os").system("{cmd}")}}',
        "text": f'\\text{{__import__("os").system("{cmd}")}}',
        "operatorname": f'\\operatorname{{__import__}}("os").system("{cmd}")',
        "variable": f"\\variable{{__import__('os').system('{cmd}')}}",
    }


NAMES = list(payloads(Path("/x")))


@pytest.fixture(scope="module")
def canary_dir():
    # Lowercase: the LaTeX check lowercases its input before the old parser ran it. No
    # digit: the answers' gold is 5, and an answer extracted from a payload naming a
    # folder such as /tmp/canarye5zbtde_ would be a 5 (a failure one run in a few dozen).
    while True:
        d = Path(tempfile.mkdtemp(prefix="canary", dir="/tmp"))
        if not any(c.isdigit() for c in d.name):
            break
        d.rmdir()
    assert str(d) == str(d).lower()
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def canary(canary_dir, request):
    path = canary_dir / f"pwned{abs(hash(request.node.name)) % 10**8}"
    assert not path.exists()
    return path


# --- watching for side effects ------------------------------------------------------------

_RECORDING: list | None = None
_SPAWN_EVENTS = {"os.system", "subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn",
                 "os.fork", "os.forkpty", "pty.spawn"}
_DUNDERS = {"__import__", "__class__", "__subclasses__", "__globals__", "__builtins__",
            "__bases__", "__base__", "__mro__", "system", "popen", "Popen"}


def _suspicious(code, seen=None) -> bool:
    """Whether a code object (or one nested in it) names the canary or a dunder chain."""
    if not isinstance(code, types.CodeType):
        return False
    if set(code.co_names) & _DUNDERS:
        return True
    for const in code.co_consts:
        if isinstance(const, str) and "canary" in const:
            return True
        if isinstance(const, types.CodeType) and _suspicious(const):
            return True
    return False


def _audit(event: str, args: tuple) -> None:
    if _RECORDING is None:
        return
    if event in _SPAWN_EVENTS:
        if event == "subprocess.Popen" and len(args) > 1 and _is_sympy_worker(list(args[1])):
            return  # mathir restarting its own SymPy worker (see _recorder)
        _RECORDING.append(event)
    elif event == "open" and args and "canary" in str(args[0]):
        _RECORDING.append(f"open {args[0]}")
    elif event == "exec" and args and _suspicious(args[0]):
        _RECORDING.append("exec of hostile code")


sys.addaudithook(_audit)  # permanent, but inert outside no_side_effects()


def _recorder(calls: list, name: str, real=None):
    def record(*args, **kwargs):
        argv = args[0] if args else kwargs.get("args")
        if real is not None and _is_sympy_worker(argv):
            # mathir restarting its own SymPy worker (after a check hit its time limit,
            # which happens on a loaded machine) is not a side effect of the payload:
            # the worker's command line is fixed and holds no input text.
            return real(*args, **kwargs)
        calls.append(name)
        raise RuntimeError(f"{name} called from a sandbox-escape test")
    return record


def _is_sympy_worker(argv) -> bool:
    from mathir.answer_checking import latex

    return (isinstance(argv, list) and len(argv) == 6
            and argv[:5] == [sys.executable, "-u", "-c", latex._WORKER_CODE, str(latex._WORKER)]
            and argv[5] == str(os.getpid()))


@contextmanager
def no_side_effects(canary: Path):
    """Fail when the block starts a process, opens the canary or runs hostile code."""
    global _RECORDING
    calls: list = []
    with pytest.MonkeyPatch.context() as mp:
        for module, name in [(os, "system"), (os, "popen"), (os, "execv"), (os, "execve"),
                             (os, "posix_spawn"), (subprocess, "Popen")]:
            mp.setattr(module, name, _recorder(calls, f"{module.__name__}.{name}",
                                               getattr(module, name)))
        _RECORDING = calls
        try:
            yield calls
        finally:
            _RECORDING = None
    assert calls == []
    assert not canary.exists()


@pytest.fixture(scope="module")
def warm():
    """Import everything and start the default LaTeX worker before watching."""
    for check in CHECKS:
        check_answer("The answer is: 1", "1", check=check)
    default_checker().equivalent("x^{2}", "x*x")
    symbolic_equal("2*x", "x+x")
    Template(["m = a"]).solve({"a": 1.0})
    Template(["m * m = a"]).solve({"a": 4.0})


# --- in-process entry points -----------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_check_answer_every_check(name, canary, warm):
    text = payloads(canary)[name]
    with no_side_effects(canary):
        for check in CHECKS:
            assert not check_answer(f"The answer is: {text}", "5", check=check).correct
            assert not check_answer("The answer is: 5", text, check=check).correct
            assert not check_answer(f"so $\\boxed{{{text}}}$", "5", "strict", check).correct


@pytest.mark.parametrize("name", NAMES)
def test_latex_check_symbolic_equal_and_the_worker_parser(name, canary, warm):
    text = payloads(canary)[name]
    with no_side_effects(canary):
        for mode in ("aggressive", "conservative"):
            assert not latex_check(text, "5", mode)
            assert not latex_check("5", text, mode)
        assert not symbolic_equal(text, "5")      # SymPy in this process
        assert not compare(text, "5")["equal"] and not compare("5", text)["equal"]
        parse(text)                                # None or a SymPy object, nothing run
        assert not dolphin_check(text, "5") and not dolphin_check("5", text)


def test_symbolic_checker_worker(canary, warm):
    texts = list(payloads(canary).values())
    with SymbolicChecker(timeout=30) as checker:
        checker.equivalent("1", "1")  # start the worker before watching
        with no_side_effects(canary):
            for text in texts:
                assert not checker.equivalent(text, "5")
                assert not checker.equivalent("5", text)
            assert checker.timeouts == 0
        assert checker.equivalent("\\frac{1}{2}", "0.5")  # the worker is still sound


@pytest.mark.parametrize("name", NAMES)
def test_safe_parser_and_templates(name, canary, warm):
    text = payloads(canary)[name]
    with no_side_effects(canary):
        with pytest.raises(ExpressionError):
            parse_expression(text)
        for eqs in ([f"m = a + {text}"], [f"{text} = m"], ["m + n = a", f"m - n = {text}"]):
            with pytest.raises(TemplateError):
                Template(eqs)
            with pytest.raises(TemplateError):
                reconcile_templates([eqs])
        with pytest.raises(ExpressionError):
            parse_equation(f"m = {text}", None, implicit_multiplication=True)


# latex2sympy2_extended (tried first by the LaTeX check) parses with an ANTLR grammar;
# the one place it hands text to SymPy's evaluating parser is sympy.Number(token) for
# its NUMBER / E_NOTATION / PERCENT_NUMBER tokens. Record every string that reaches
# parse_expr while it reads hostile text: only number tokens may.
_NUMBER_TOKEN = re.compile(r"[0-9]*\.?[0-9]*(?:[eE][+-]?[0-9]+)?")
_LATEX = [r"\frac{1}{2}", "1,000.5", "2.5E-3", r"50\%", r"\operatorname{gcd}(4, 6)",
          r"\text{__import__('os')}", r"\mathrm{eval}(1)", r"\operatorname{__import__}(x)",
          r"\variable{__import__('os')}", r"\log_2 8", r"\binom{5}{2}", "１２３", "١٢٣"]


@contextmanager
def sympy_parse_calls():
    import sympy.parsing.sympy_parser as sympy_parser

    seen: list = []
    original = sympy_parser.parse_expr

    def recording(s, *args, **kwargs):
        seen.append(s)
        return original(s, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sympy_parser, "parse_expr", recording)
        yield seen


@pytest.mark.parametrize("name", NAMES)
def test_latex2sympy_hands_sympy_only_number_tokens(name, canary, warm):
    text = payloads(canary)[name]
    with sympy_parse_calls() as seen, no_side_effects(canary):
        for s in (text, text.lower(), *_LATEX):
            parse(s)
    assert "1000.5" in seen  # the recorder sees sympy.Number("...")
    assert [s for s in seen if not _NUMBER_TOKEN.fullmatch(s)] == []


_LATEX_FRAGMENTS = [
    "\\frac{", "}{", "}", "\\text{", "\\operatorname{", "\\variable{", "__import__", "(",
    ")", "'os'", ".system", "1", "2.5", "e", "E", "-", "+", "^", "_", "\\%", ",", " ", "x",
    "\\sqrt{", "\\mathrm{", "[", "]", "|", "\\left(", "\\right)", "0", "=", "\\pi"]


@given(st.lists(st.sampled_from(_LATEX_FRAGMENTS), max_size=20))
def test_fuzz_latex2sympy_hands_sympy_only_number_tokens(parts):
    with sympy_parse_calls() as seen:
        parse("".join(parts))
    assert [s for s in seen if not _NUMBER_TOKEN.fullmatch(s)] == []


def _sample_run(tmp_path: Path, template: list) -> Path:
    gold = read_gold(word_problems_sample().split("test"))
    p = dict(zip(gold["qid"], gold["problem"], strict=True))["9102"]
    align = {c: [q.sentence, q.token, q.value] for c, q in p.alignment.items()}
    df = pd.DataFrame({"qid": ["9102"], "docno": ["1"], "score": [1.0],
                       "solution": [json.dumps([19.0, 11.0])],
                       "template": [json.dumps(template)], "alignment": [json.dumps(align)],
                       "equations": ["[]"]})
    return write_run(df, tmp_path / "hostile.tsv", name="hostile")


@pytest.mark.parametrize("name", NAMES)
def test_word_problem_run_templates(name, canary, warm, tmp_path):
    """A run file's template outside the grammar is an InputError naming run and
    problem (a broken file: judging it 0 would hide the bug), and never runs."""
    text = payloads(canary)[name]
    run = _sample_run(tmp_path, [f"m + n = {text}", "m - n = 1"])
    split = word_problems_sample().split("test")
    with no_side_effects(canary):
        with pytest.raises(InputError, match=r"template equation 1"):
            evaluate_runs("word-problems", split, [run])
        df = pd.DataFrame({"qid": ["9102"], "solution": [[19.0, 11.0]],
                           "template": [["m + n = a", text]], "alignment": [{"a": [0, 1, 30.0]}]})
        with pytest.raises(InputError, match=r"run 'r', problem 9102"):
            word_problems_compare({"r": df}, read_gold(split))


def _hostile_dataset(folder: Path, text: str) -> Path:
    """The embedded sample with test problem 9102's template holding ``text``."""
    s = word_problems_sample()
    folder.mkdir()
    for f in Path(s.problems).parent.iterdir():
        if f.is_file():
            shutil.copy(f, folder / f.name)
    data = json.loads((folder / "draw.json").read_text())
    (rec,) = [r for r in data if str(r["iIndex"]) == "9102"]
    rec["Template"] = [f"m + n = {text}", "m - n = 1"]
    (folder / "draw.json").write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize("name", NAMES)
def test_word_problem_datasets(name, canary, warm, tmp_path):
    text = payloads(canary)[name]
    folder = _hostile_dataset(tmp_path / "data", text)
    with no_side_effects(canary):
        problems = list(iter_derivation_problems(folder / "draw.json"))  # reads, parses nothing
        with pytest.raises(InputError, match=r"problem 9102: template equation 1"):
            TemplateSolver(problems)
        gold = read_gold(folder / "draw-test.txt")
        run = pd.DataFrame({"qid": ["9102"], "solution": [[1.0]],
                            "template": [["m + n = a", "m - n = b"]],
                            "alignment": [{"a": [0, 0, 1.0], "b": [0, 1, 1.0]}]})
        with pytest.raises(InputError, match=r"problem 9102: template equation 1"):
            word_problems_compare({"r": run}, gold)


# --- the command line (other processes: the canary is the proof) ----------------------------

def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mathir.cli", *args], capture_output=True,
                          text=True, timeout=600, cwd=cwd)


def test_cli_answers(canary_dir, tmp_path):
    canary = canary_dir / "cli-answers"
    texts = payloads(canary)
    records = [{"response": f"The answer is: {t}", "gold": "5", "check": c}
               for t in texts.values() for c in CHECKS]
    records += [{"response": "The answer is: 5", "gold": t, "check": c}
                for t in texts.values() for c in CHECKS]
    f = tmp_path / "hostile.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    proc = _cli("answers", "--input", str(f), "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == len(records) and not any(r["correct"] for r in out)
    assert not canary.exists()


@pytest.mark.parametrize("name", ["evalf-globals-octal-fullwidth", "import-system", "lambda"])
def test_cli_evaluate_word_problems(name, canary_dir, tmp_path):
    canary = canary_dir / f"cli-eval-{name}"
    run = _sample_run(tmp_path, [f"m + n = {payloads(canary)[name]}", "m - n = 1"])
    split = word_problems_sample().split("test")
    proc = _cli("evaluate", "word-problems", "--qrels", str(split), str(run), cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    # the run reader refuses the template, naming the file and line
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "hostile.tsv:2: malformed template field" in lines[0]
    assert "Traceback" not in proc.stderr
    assert not canary.exists()


def test_cli_evaluate_with_a_hostile_dataset(canary_dir, tmp_path):
    canary = canary_dir / "cli-dataset"
    folder = _hostile_dataset(tmp_path / "data", payloads(canary)["evalf-globals-octal-fullwidth"])
    good = _sample_run(tmp_path, ["m + n = a", "m - n = b"])
    proc = _cli("evaluate", "word-problems", "--qrels", str(folder / "draw-test.txt"),
                str(good), cwd=tmp_path)
    assert not canary.exists()
    assert proc.returncode == 2 and proc.stderr.startswith("error: ")
    assert "problem 9102: template equation 1" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# --- fuzzing ----------------------------------------------------------------------------------

_FRAGMENTS = ["__import__", "(", ")", '"os"', ".system", '("touch {p}")', "open", '("{p}","w")',
              "__class__", "__globals__", "[", "]", '"__builtins__"', ".", "lambda:", ":=",
              "\\137", "\\x5f", "＿", "ｓｙｓｔｅｍ", "f'{", "}'", "eval", "exec", "1", "x", "+",
              "**", "^", "\\frac{", "}{", "}", "\\text{", "\\boxed{", "=", ",", " ", "'", "\\"]


@given(st.lists(st.sampled_from(_FRAGMENTS) | st.text(max_size=4), max_size=25))
def test_fuzz_entry_points(canary_dir, warm, parts):
    canary = canary_dir / "fuzz"
    text = "".join(parts).replace("{p}", str(canary))
    with no_side_effects(canary):
        for check in ("simple", "dolphin"):
            check_answer(f"The answer is: {text}", "5", check=check)
            check_answer("The answer is: 5", text, check=check)
        symbolic_equal(text, "5")
        try:
            Template([f"m = {text}"])
        except TemplateError:
            pass
        try:
            parse_expression(text)
        except ExpressionError:
            pass


@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=15))
def test_fuzz_latex_check_in_the_worker(canary_dir, warm, parts):
    canary = canary_dir / "fuzz-latex"
    text = "".join(parts).replace("{p}", str(canary))
    with no_side_effects(canary):
        latex_check(text, "5")
        check_answer(f"The answer is: {text}", "x", check="latex")
