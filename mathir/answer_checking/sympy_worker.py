"""SymPy comparison of two LaTeX strings, also runnable as a worker process.

This module imports nothing from mathir so that :class:`mathir.answer_checking.latex.
SymbolicChecker` can load it by path in a fresh interpreter, which
reads JSON lines ``[a, b]`` on stdin and answers ``{"equal": ..., "values": ...}``.
Starting it as a separate program (rather than through multiprocessing) keeps the caller's
``__main__`` from being re-imported in the worker.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path


def _load_safe_math():
    """mathir/answer_checking/safe_math.py: the package's module when this one is imported as
    mathir.answer_checking.sympy_worker, else (in the worker process) the sibling file loaded
    by path, as this one is: importing mathir there would be slow."""
    if __package__:
        return importlib.import_module(f"{__package__}.safe_math")
    module = sys.modules.get("_mathir_worker_safe_math")
    if module is None:
        name = "_mathir_worker_safe_math"
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).with_name("safe_math.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


safe_math = _load_safe_math()


def parse(s: str):
    """SymPy expression of ``s``: LaTeX via latex2sympy2_extended, else the plain-text
    parser of :mod:`safe_math` (which evaluates nothing); None when neither reads it.

    latex2sympy2_extended parses with an ANTLR grammar and builds SymPy objects; the one
    place it hands text to SymPy's evaluating parser is ``sympy.Number(token)`` for
    number tokens, which its lexer restricts to digits, ``,``, ``.`` and an exponent
    (``tests/robustness/test_sandbox_escapes.py`` records every string SymPy evaluates
    while it parses hostile input). We pass no ``variable_values`` (those it would
    ``parse_expr``). SymPy's ``parse_expr``, the old fallback, ran its input as Python.

    >>> parse("x^{2}"), parse("2*x**2"), parse('__import__("os")') is None
    (x**2, 2*x**2, True)
    """
    from latex2sympy2_extended import latex2sympy

    try:
        return latex2sympy(s)
    except Exception:  # noqa: BLE001 - any parser failure means "try the next parser"
        pass
    try:
        return safe_math.parse_expression(s)
    except Exception:  # noqa: BLE001 - ExpressionError, or SymPy failing on odd input
        return None


def _exact_rational(expr):
    """``expr`` evaluated to a SymPy Rational (integers included) when its value is an
    exact rational number (``10^{20}+1``, ``\\frac{6}{4}``, ``5!``), else None (floats,
    irrationals, symbols)."""
    value = expr.doit()
    return value if getattr(value, "is_Rational", False) else None


def _real(value, real: float) -> float | str:
    """``real`` (the float of SymPy number ``value``'s real part) where it stands for
    that part: within the normal float range, 0 for 0, inf for SymPy's infinity (oo);
    else the part's decimal string (``"1.50000000000000e+400"``): the float of a finite
    value past the range is ``inf`` or 0, and would equal every other such float."""
    import sympy

    if math.isfinite(real) and (real == 0 or abs(real) >= sys.float_info.min):
        if real or sympy.re(value).is_zero:
            return real
    elif not math.isfinite(real) and not sympy.re(value).is_finite:
        return real  # oo, -oo (or nan): infinity as SymPy reads it
    return str(sympy.re(value))


def compare(a: str, b: str) -> dict:
    """``{"equal": True}`` when ``simplify(a - b) == 0``; two exact rational numbers
    otherwise differ (``"equal": False``); else the numeric values of both sides
    (``"values": [va, vb]``) when both are real numbers, else None.

    >>> compare("\\\\sqrt{169}", "13")
    {'equal': True, 'values': None}
    >>> compare("10^{20}+1", "10^{20}")
    {'equal': False, 'values': None}
    >>> compare("0.5", "\\\\frac{1}{3}")["values"]
    [0.5, 0.3333333333333333]
    >>> compare("1.5 \\\\cdot 10^{400}", "\\\\infty")["values"]
    ['1.50000000000000e+400', inf]
    """
    import sympy

    ea, eb = parse(a), parse(b)
    if ea is None or eb is None:
        return {"equal": False, "values": None}
    try:
        if sympy.simplify(ea - eb) == 0:
            return {"equal": True, "values": None}
        if getattr(ea, "is_number", False) and getattr(eb, "is_number", False):
            xa, xb = _exact_rational(ea), _exact_rational(eb)
            if xa is not None and xb is not None:  # both exact: no tolerance
                return {"equal": bool(xa == xb), "values": None}
            na, nb = sympy.N(ea), sympy.N(eb)
            va, vb = complex(na), complex(nb)
            if not va.imag and not vb.imag:
                return {"equal": False, "values": [_real(na, va.real), _real(nb, vb.real)]}
    except Exception:  # noqa: BLE001 - SymPy raises many types on odd input
        pass
    return {"equal": False, "values": None}


def _die_with(parent: int) -> None:  # pragma: no cover - runs in the worker process
    """Exit when process ``parent`` does, however it ends (SIGKILL included)."""
    import ctypes
    import os
    import signal
    import threading
    import time

    try:  # Linux: the kernel kills us when the parent (thread) ends; 1 = PR_SET_PDEATHSIG
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError, TypeError):
        pass  # no prctl (macOS): the watchdog below does it
    started_by = os.getppid()  # parent itself, unless a launcher stands between

    def gone() -> bool:
        if os.getppid() != started_by:  # orphaned: adopted by init or a subreaper
            return True
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
        return False

    if gone():  # it died before we asked
        os._exit(1)

    def watchdog() -> None:  # also where the kernel's signal is missing
        while not gone():
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watchdog, daemon=True).start()


def main() -> None:  # pragma: no cover - runs in the worker process
    import os

    # argv: [-c, this file, the pid of the process that started us (SymbolicChecker)]
    _die_with(int(sys.argv[2]) if len(sys.argv) > 2 else os.getppid())
    import latex2sympy2_extended  # noqa: F401  (import before reporting ready)
    import sympy  # noqa: F401

    out = sys.stdout
    out.write('"ready"\n')
    out.flush()
    for line in sys.stdin:
        try:
            a, b = json.loads(line)
            reply = compare(a, b)
        except Exception:  # noqa: BLE001
            reply = {"equal": False, "values": None}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
