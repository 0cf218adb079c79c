"""Equation templates: coefficient slots (``a, b, c, ...``) and unknowns (``m, n, o``).

A :class:`Template` is parsed when it is made, by :mod:`mathir.answer_checking.safe_math`
(never by SymPy's ``sympify``, which evaluates its input as Python: a template comes
from a dataset or a run file), and compiled (``lambdify``) to a function from slot
values to the linear system ``A x = b``, so that thousands of coefficient
assignments are solved at once with NumPy (the "Solve" routine of Upadhyay & Chang
2017, who use Gaussian elimination). Templates that are not linear in their
unknowns fall back to SymPy's ``solve``.

A template's names are ``[A-Za-z][A-Za-z0-9]*``; its equations admit numbers,
names, ``+ - * / ** ^`` and brackets. Anything else raises :class:`TemplateError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cached_property

import numpy as np

from mathir.answer_checking.safe_math import ExpressionError, identifiers, parse_equation
from mathir.errors import InputError

UNKNOWN_NAMES = tuple("mnopqrstuvwxyz")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")
MAX_EQUATIONS = 20
MAX_NAMES = 52


class TemplateError(InputError):
    """A template that is not a system of equations of the template grammar.

    An InputError, so the command line prints one ``error:`` line; callers that know
    the file and line (run and dataset readers) re-raise it naming them.

    >>> Template(["m = a.__class__"])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    TemplateError: template equation 1 'm = a.__class__': character '.' at position 5 ...
    """


class Template:
    """A system of template equations such as ``("a * m + b * n = c", "m + n = d")``.

    >>> t = Template(["a * m + b * n = c", "m + n = d"])
    >>> t.slots, t.unknowns
    (('a', 'b', 'c', 'd'), ('m', 'n'))
    >>> t.solve({"a": 8, "b": 5, "c": 236, "d": 34}).round(6).tolist()  # m, n
    [22.0, 12.0]
    """

    def __init__(self, equations: Sequence[str]):
        if isinstance(equations, (str, bytes)) or not isinstance(equations, Sequence):
            raise TemplateError(f"a template is a list of equations, not {_kind(equations)}")
        if not equations or len(equations) > MAX_EQUATIONS:
            raise TemplateError(f"a template has 1 to {MAX_EQUATIONS} equations, "
                                f"not {len(equations)}")
        for k, e in enumerate(equations, 1):
            if not isinstance(e, str):
                raise TemplateError(f"template equation {k} is {_kind(e)}, not a string")
        self.equations = tuple(equations)
        names: set[str] = set()
        sides = []
        for k, e in enumerate(self.equations, 1):
            try:
                names.update(identifiers(e))
                if len(names) > MAX_NAMES:
                    raise ExpressionError(f"more than {MAX_NAMES} names")
                sides.append(parse_equation(e, names, functions=False))
            except ExpressionError as err:
                raise TemplateError(f"template equation {k} {_short(e)}: {err}") from None
        self._exprs = tuple(lhs - rhs for lhs, rhs in sides)
        self.unknowns = tuple(sorted(n for n in names if n in UNKNOWN_NAMES))
        self.slots = tuple(sorted(n for n in names if n not in UNKNOWN_NAMES))

    def __repr__(self) -> str:
        return f"Template({list(self.equations)!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Template) and self.equations == other.equations

    def __hash__(self) -> int:
        return hash(self.equations)

    @cached_property
    def _compiled(self):
        import sympy

        syms = {n: sympy.Symbol(n) for n in self.slots + self.unknowns}
        exprs = list(self._exprs)
        unk = [syms[u] for u in self.unknowns]
        slot_syms = [syms[s] for s in self.slots]
        matrix = [[sympy.diff(ex, u) for u in unk] for ex in exprs]
        linear = all(not (c.free_symbols & set(unk)) for row in matrix for c in row)
        if not linear:
            return False, exprs, unk, slot_syms
        const = [-ex.subs({u: 0 for u in unk}) for ex in exprs]
        entries = [c for row in matrix for c in row] + const
        # dummify: the generated code names Dummy arguments, never the template's names.
        f = sympy.lambdify(slot_syms, entries, "numpy", dummify=True)
        return True, f, len(exprs), len(unk)

    @property
    def linear(self) -> bool:
        return self._compiled[0]

    def solve_batch(self, values: np.ndarray) -> np.ndarray:
        """Solve for each row of slot values (columns in ``slots`` order).

        Returns an array (rows, unknowns); a row is NaN where the system has no unique
        solution.
        """
        values = np.asarray(values, dtype=float)
        rows = values.shape[0]
        out = np.full((rows, len(self.unknowns)), np.nan)
        if rows == 0:
            return out
        compiled = self._compiled
        if not compiled[0]:
            for i in range(rows):
                out[i] = self._solve_symbolic(values[i])
            return out
        _, f, neq, nunk = compiled
        cols = [np.broadcast_to(np.asarray(x, dtype=float), (rows,))
                for x in f(*values.T)]
        a = np.stack(cols[:neq * nunk], axis=1).reshape(rows, neq, nunk)
        b = np.stack(cols[neq * nunk:], axis=1)
        if neq == nunk:
            with np.errstate(all="ignore"):
                det = np.linalg.det(a)
            ok = np.isfinite(det) & (np.abs(det) > 1e-9)
            if ok.any():
                out[ok] = np.linalg.solve(a[ok], b[ok][..., None])[..., 0]
        else:
            for i in range(rows):
                x, _, rank, _ = np.linalg.lstsq(a[i], b[i], rcond=None)
                if rank == nunk and np.allclose(a[i] @ x, b[i], rtol=1e-7, atol=1e-9):
                    out[i] = x
        return out

    def _solve_symbolic(self, values: np.ndarray) -> np.ndarray:
        import sympy

        _, exprs, unk, slot_syms = self._compiled
        subs = dict(zip(slot_syms, (sympy.nsimplify(v) for v in values), strict=True))
        try:
            sols = sympy.solve([e.subs(subs) for e in exprs], unk, dict=True)
        except Exception:  # noqa: BLE001 - no unique solution
            return np.nan
        real = [s for s in sols if all(s.get(u, None) is not None and s[u].is_real for u in unk)]
        if len(real) != 1:
            return np.nan
        return np.array([float(real[0][u]) for u in unk])

    def solve(self, values: Mapping[str, float]) -> np.ndarray:
        """Solve with one value per slot; NaN when there is no unique solution."""
        return self.solve_batch(np.array([[values[s] for s in self.slots]]))[0]

    def instantiate(self, values: Mapping[str, float]) -> tuple[str, ...]:
        """The equations with each slot replaced by its value.

        >>> Template(["m + n = a"]).instantiate({"a": 12})
        ('m + n = 12',)
        """
        def fmt(v: float) -> str:
            return str(int(v)) if float(v).is_integer() else repr(float(v))
        return tuple(_NAME.sub(lambda m: fmt(values[m.group(0)]) if m.group(0) in values
                               else m.group(0), e) for e in self.equations)


def _kind(x) -> str:
    return f"a {type(x).__name__}"


def _short(e: str) -> str:
    return ascii(e if len(e) <= 60 else e[:57] + "...")
