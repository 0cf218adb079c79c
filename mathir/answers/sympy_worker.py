"""SymPy comparison of two LaTeX strings, also runnable as a worker process.

This module imports nothing from mathir so that :class:`mathir.answers.latex.
SymbolicChecker` can load it by path in a fresh interpreter, which
reads JSON lines ``[a, b]`` on stdin and answers ``{"equal": ..., "values": ...}``.
Starting it as a separate program (rather than through multiprocessing) keeps the caller's
``__main__`` from being re-imported in the worker.
"""

from __future__ import annotations

import json
import sys


def parse(s: str):
    """SymPy expression of ``s``: LaTeX via latex2sympy2_extended, else parse_expr."""
    from latex2sympy2_extended import latex2sympy
    from sympy.parsing.sympy_parser import parse_expr

    try:
        return latex2sympy(s)
    except Exception:  # noqa: BLE001 - any parser failure means "try the next parser"
        pass
    try:
        return parse_expr(s)
    except Exception:  # noqa: BLE001
        return None


def compare(a: str, b: str) -> dict:
    """``{"equal": True}`` when ``simplify(a - b) == 0``; otherwise the numeric values
    of both sides (``"values": [va, vb]``) when both are real numbers, else None.

    >>> compare("\\\\sqrt{169}", "13")
    {'equal': True, 'values': None}
    >>> compare("0.5", "\\\\frac{1}{3}")["values"]
    [0.5, 0.3333333333333333]
    """
    import sympy

    ea, eb = parse(a), parse(b)
    if ea is None or eb is None:
        return {"equal": False, "values": None}
    try:
        if sympy.simplify(ea - eb) == 0:
            return {"equal": True, "values": None}
        if getattr(ea, "is_number", False) and getattr(eb, "is_number", False):
            va, vb = complex(sympy.N(ea)), complex(sympy.N(eb))
            if not va.imag and not vb.imag:
                return {"equal": False, "values": [va.real, vb.real]}
    except Exception:  # noqa: BLE001 - SymPy raises many types on odd input
        pass
    return {"equal": False, "values": None}


def main() -> None:  # pragma: no cover - runs in the worker process
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
