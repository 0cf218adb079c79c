"""No code of the repository evaluates text as Python (issue 16).

SymPy's text parsers run their input through ``eval``: a model response or a template
from a run file would execute. Math is read from text by
``mathir/answer_checking/safe_math.py`` (which builds SymPy objects itself) or by
latex2sympy2_extended (an ANTLR grammar). This test walks the syntax tree of every
``.py`` file under mathir/, scripts/, benchmarks/ and examples/ and fails on:

* any use of the builtins ``eval`` / ``exec`` (a name, so an alias ``f = eval`` too),
  ``builtins.eval`` / ``builtins.exec``, and ``getattr(..., "eval")``;
* any use of ``sympify`` or ``parse_expr`` (name, attribute or import);
* ``S(...)`` / ``sympy.S(...)`` on anything but a number literal (``S("x")`` sympifies);
* ``nsimplify(...)`` on a string or f-string literal;
* ``lambdify(...)`` without ``dummify=True`` (it generates code from symbol names).

Methods named ``eval`` (``model.eval()`` in torch) are attributes, so they are not
flagged. Not caught: names built at run time (``getattr(builtins, name)``), a string
that reaches ``nsimplify``/``S`` through a variable, SymPy constructors that sympify
strings internally (``sympy.Number("...")``), and evaluation inside third-party
libraries: tests/robustness/test_sandbox_escapes.py covers those at run time.
safe_math.py itself is held to the same rule (it calls none of these).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("mathir", "scripts", "benchmarks", "examples")
EVALUATING = {"eval", "exec"}
SYMPY_PARSERS = {"sympify", "parse_expr"}


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)))


def _callee(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def violations(source: str, filename: str = "<string>") -> list[str]:
    """``file:line: what`` for each use of an evaluating parser in ``source``.

    >>> violations("model.eval()\\nx = sympy.sympify(s)\\ny = eval(s)")
    ['<string>:2: sympify', '<string>:3: eval']
    """
    out = []
    for node in ast.walk(ast.parse(source, filename)):
        what = None
        if isinstance(node, ast.Name) and node.id in EVALUATING | SYMPY_PARSERS:
            what = node.id
        elif isinstance(node, ast.Attribute) and (
                node.attr in SYMPY_PARSERS
                or (node.attr in EVALUATING and isinstance(node.value, ast.Name)
                    and node.value.id in ("builtins", "__builtins__"))):
            what = node.attr
        elif isinstance(node, ast.ImportFrom | ast.Import):
            hit = [a.name for a in node.names if a.name.split(".")[-1] in SYMPY_PARSERS]
            what = f"import {hit[0]}" if hit else None
        elif isinstance(node, ast.Call):
            name, args = _callee(node), node.args
            if name == "getattr" and len(args) > 1 and isinstance(args[1], ast.Constant) \
                    and args[1].value in EVALUATING | SYMPY_PARSERS:
                what = f"getattr {args[1].value}"
            elif name == "S" and not (len(args) == 1 and _is_number(args[0])):
                what = "S() on a non-number"
            elif name == "nsimplify" and args and _is_text(args[0]):
                what = "nsimplify() on a string"
            elif name == "lambdify" and not any(
                    k.arg == "dummify" and isinstance(k.value, ast.Constant)
                    and k.value.value is True for k in node.keywords):
                what = "lambdify() without dummify=True"
        if what:
            out.append(f"{filename}:{node.lineno}: {what}")
    return out


def _files(root: Path) -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (root / folder).rglob("*.py")
                  if ".venv" not in p.parts)


def test_no_evaluating_parser_in_the_repository():
    files = _files(ROOT)
    assert any(p.name == "safe_math.py" for p in files)
    found = [v for p in files
             for v in violations(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))]
    assert found == []


def test_the_check_sees_each_form():
    src = "\n".join([
        "import builtins", "from sympy import sympify", "from sympy.parsing.sympy_parser "
        "import parse_expr as p", "eval(s)", "exec(s)", "f = eval", "builtins.eval(s)",
        "getattr(builtins, 'exec')(s)", "sympy.sympify(s)", "sympy.S(s)", "S('x')",
        "nsimplify('1/3')", "sympy.nsimplify(f'{s}')", "sympy.lambdify(a, e, 'numpy')",
        "sympy.parsing.sympy_parser.parse_expr(s)",
        # not flagged:
        "model.eval()", "net.eval()", "re.compile(s)", "sympy.S(1)", "S(-2)",
        "sympy.nsimplify(v)", "sympy.lambdify(a, e, 'numpy', dummify=True)",
    ])
    lines = [int(v.split(":")[1]) for v in violations(src)]
    assert sorted(set(lines)) == list(range(2, 16))
