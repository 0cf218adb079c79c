"""The package's layout rules (docs/architecture.md): no import cycles, no imports of another
module's private names, and a cheap ``import mathir``."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mathir"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, ast.Module]:
    return {_module_name(p): ast.parse(p.read_text(encoding="utf-8"), str(p))
            for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The mathir module ``name`` refers to (a module, or the module holding an attribute)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, tree: ast.Module, top_level_only: bool):
    """``(imported module, imported name or None, line)`` for each mathir import."""
    nodes = tree.body if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("mathir"):
                    yield a.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.startswith("mathir"):
            for a in node.names:
                yield node.module, a.name, node.lineno


def _graph(top_level_only: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, tree in MODULES.items():
        for target, name, _ in _imports(module, tree, top_level_only):
            full = f"{target}.{name}" if name and f"{target}.{name}" in MODULES else target
            dep = _resolve(full)
            # A package loading its own submodules (mathir.tasks registering its task
            # families, as ir_datasets does) is how the package is assembled, not a cycle.
            if dep and dep != module and not dep.startswith(module + "."):
                graph[module].add(dep)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _is_package(module: str) -> bool:
    return (PACKAGE.parent / module.replace(".", "/") / "__init__.py").is_file()


def test_no_import_cycles_between_modules():
    # Every import counts, also those deferred into functions: a deferred import that
    # closes a cycle still ties the two modules together. Package __init__ files only
    # declare lazy exports (strings), so they add no edges.
    cycles = _cycles(_graph(top_level_only=False))
    assert cycles == [], f"import cycles: {cycles}"


def test_no_module_imports_another_modules_private_names():
    offenders = []
    for module, tree in MODULES.items():
        for target, name, line in _imports(module, tree, top_level_only=False):
            names = [name] if name else []
            names += [p for p in target.split(".")[1:]]
            private = [n for n in names if n.startswith("_") and not n.startswith("__")
                       and n != "_version"]
            if private and _resolve(target) != module:
                offenders.append(f"{module}:{line} imports {target}"
                                 + (f".{name}" if name else ""))
    assert offenders == []


def test_the_cycle_check_can_fail():
    # The checker itself: a two-module cycle and a private import are found.
    graph = {"a": {"b"}, "b": {"a"}, "c": set()}
    assert _cycles(graph) == [["a", "b"]]


#: docs/architecture.md: files -> readers -> indexing/topics/qrels -> pipelines -> runs ->
#: evaluation -> report; only tasks, experiment, reproduction and cli wire them together.
#: answer_checking (answer checking, templates and the template solver) is math that
#: pipelines and evaluation both use.
STAGES = {"readers": 0, "indexing": 1, "topics": 1, "qrels": 1, "answer_checking": 2,
          "pipelines": 2, "runs": 3, "evaluation": 4, "report": 5}


def _against_the_flow(graph: dict[str, set[str]], order: dict[str, int]) -> list[str]:
    """The imports of a stage's module from a later stage's."""
    offenders = []
    for module, deps in graph.items():
        parts = module.split(".")
        if len(parts) < 2 or parts[1] not in order:
            continue
        for dep in deps:
            dparts = dep.split(".")
            if len(dparts) >= 2 and dparts[1] in order and order[dparts[1]] > order[parts[1]]:
                offenders.append(f"{module} -> {dep}")
    return offenders


def test_data_flows_one_way_between_stages():
    assert _against_the_flow(_graph(top_level_only=False), STAGES) == []


def test_the_flow_check_can_fail():
    graph = {"mathir.evaluation.x": {"mathir.report.y"}, "mathir.report.y": set()}
    assert _against_the_flow(graph, STAGES) == ["mathir.evaluation.x -> mathir.report.y"]


#: What the report may use of indexing: formula tokens (the explorer's highlighting), no
#: module that reads a collection or an index's files.
REPORT_MAY_USE = ("mathir.indexing.formula_tuples", "mathir.indexing.slt")


def _collection_readers(graph: dict[str, set[str]]) -> list[str]:
    """Imports of report/ modules from readers/ or from indexing/ beyond REPORT_MAY_USE."""
    return sorted(f"{module} -> {dep}" for module, deps in graph.items()
                  if module.startswith("mathir.report") for dep in deps
                  if dep.startswith("mathir.readers") or (
                      dep.startswith("mathir.indexing") and dep not in REPORT_MAY_USE))


def test_the_report_reads_no_collection():
    # issue 51: the report reads the evaluated runs and what the experiment looked up in
    # the index (mathir.experiment.reports.explorer_lookups: the answer index's text
    # store), never a collection file (before: the explorer parsed the 3,395 thread files
    # again, 7.2 s, for texts the text store gives in 0.06 s).
    assert _collection_readers(_graph(top_level_only=False)) == []


def test_the_collection_check_can_fail():
    graph = {"mathir.report.a": {"mathir.readers.thread_html", "mathir.indexing.formula_tuples"},
             "mathir.report.b": {"mathir.indexing.answer_collection"}, "mathir.x": set()}
    assert _collection_readers(graph) == ["mathir.report.a -> mathir.readers.thread_html",
                                          "mathir.report.b -> mathir.indexing.answer_collection"]


_MARKUP = ("<div", "<span", "<table", "<style", "<script", "<details", "<bdi", "<math",
           "<!doctype", "<section", "<svg")


def _html_in(tree: ast.Module) -> list[str]:
    """What in a module writes HTML: an import of ``html``, or a string with markup."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "html" for a in node.names):
            found.append(f"line {node.lineno}: import html")
        elif isinstance(node, ast.ImportFrom) and node.module == "html":
            found.append(f"line {node.lineno}: from html import ...")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            low = node.value.lower()
            found += [f"line {node.lineno}: {tag}" for tag in _MARKUP if tag in low]
    return found


def test_evaluation_holds_no_html():
    # issue 51: evaluation/ scores; tables, the HTML report and the explorer are report/'s.
    offenders = {m: _html_in(t) for m, t in MODULES.items()
                 if m.startswith("mathir.evaluation") and _html_in(t)}
    assert offenders == {}


def test_the_html_check_can_fail():
    tree = ast.parse('import html\nx = f\'<div class="a">{html.escape(y)}</div>\'\n')
    assert _html_in(tree) == ["line 1: import html", "line 2: <div"]


@pytest.mark.parametrize("statement", ["import mathir", "import mathir.cli",
                                       "import mathir.answer_checking.checking"])
def test_importing_mathir_loads_no_heavy_library(statement):
    code = (f"{statement}; import sys, json; print(json.dumps(sorted(m for m in "
            "('pyterrier', 'torch', 'pandas', 'sympy', 'sklearn', 'ir_measures', 'lightgbm') "
            "if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_mathir_help_loads_no_pyterrier():
    code = ("import sys, json\nfrom mathir.cli import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(json.dumps(sorted(m for m in ('pyterrier', 'torch') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == []


def test_scoring_one_system_loads_neither_scipy_nor_statsmodels():
    """check_test, which every scoring command calls, and the table of one system need
    neither (a second of the start of every `mathir experiment` and `mathir evaluate`)."""
    code = ("import sys, json, pandas as pd\n"
            "from mathir.evaluation.significance import check_test, significance_table\n"
            "check_test('t', 'holm')\n"
            "significance_table({'a': pd.DataFrame({'qid': ['1', '2'], 'm': [0.1, 0.3]})}, "
            "['m'])\n"
            "print(json.dumps(sorted(m for m in ('scipy.stats', 'statsmodels') "
            "if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_lazy_exports_resolve():
    import mathir
    import mathir.answer_checking
    import mathir.evaluation
    import mathir.indexing
    import mathir.pipelines
    import mathir.qrels
    import mathir.report
    import mathir.runs
    import mathir.topics

    for package in (mathir, mathir.answer_checking, mathir.evaluation, mathir.indexing,
                    mathir.pipelines, mathir.qrels, mathir.report, mathir.runs, mathir.topics):
        for name in package.__all__:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"


def _longest_chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest chain of imports between mathir's modules (the graph has no cycles)."""
    memo: dict[str, list[str]] = {}

    def longest(v: str) -> list[str]:
        if v not in memo:
            memo[v] = [v] + max((longest(w) for w in graph[v]), key=len, default=[])
        return memo[v]

    return max((longest(v) for v in graph), key=len)


def test_the_longest_import_chain_is_at_most_12_modules():
    # Every import counts, deferred ones too (a command reaches a reader through the
    # reproduction, training, index and text store: 12 modules, the reader stack of
    # thread files -> formula TSVs -> tables -> errors being its deepest part).
    chain = _longest_chain(_graph(top_level_only=False))
    assert len(chain) <= 12, " -> ".join(chain)


def test_the_chain_check_can_fail():
    graph = {f"m{i}": ({f"m{i + 1}"} if i < 12 else set()) for i in range(13)}
    assert len(_longest_chain(graph)) == 13


# Test files at the top of tests/ are those that cross rooms: the command line's contract,
# the docs and their generated references, the layout itself, the paths that must give one
# figure, the process-state check of every test; mathir's own top-level modules (models,
# datasets) are mirrored there too. Every folder mirrors a room of mathir (or benchmarks/),
# but robustness/, the attacks on every room at once, and reproduction/, the published
# figures of every task.
CROSSING = {"test_cli.py", "test_cli_reference.py", "test_docs.py", "test_extending.py",
            "test_layout.py", "test_no_eval.py", "test_path_equality.py",
            "test_process_state.py", "test_readme.py", "test_tasks_reference.py"}
ACROSS_ROOMS = {"robustness", "reproduction", "benchmarks"}


def test_the_tests_mirror_the_package():
    tests = Path(__file__).resolve().parent
    top_modules = {f"test_{p.stem}.py" for p in PACKAGE.glob("*.py")}
    stray = sorted(p.name for p in tests.glob("test_*.py")
                   if p.name not in CROSSING | top_modules)
    assert not stray, f"test files at the top of tests/ that belong in a room's folder: {stray}"
    rooms = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    folders = {p.name for p in tests.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders - rooms <= ACROSS_ROOMS, folders - rooms - ACROSS_ROOMS
