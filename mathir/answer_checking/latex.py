"""The LaTeX answer check: literal, then numbers, then symbolic equivalence (SymPy).

LaTeX is parsed with ``latex2sympy2_extended`` (the parser math-verify uses), falling
back to :mod:`mathir.answer_checking.safe_math` for plain text (no ``eval``: a model's answer is
never run as code). Symbolic work (parsing, ``simplify``) can take
unbounded time, so it runs in a worker process that is killed when a check exceeds
its time limit: unlike a signal alarm this works from any thread, and the worst case
of a check is bounded by the limit. Literal and numeric steps run in-process.

Modes: ``aggressive`` also compares the single number of each side when the rest of
the answer is simple text (``400 \\text{meters}`` vs ``400``); ``conservative``
compares the full answers only.

Where the reference tool contradicts its own README we follow the README and say so
in ``tests/answer_checking/test_latex.py``: numbers hidden in ``\\text{}`` units count in
aggressive mode, and numeric values compare with the README's 1e-3 relative
tolerance after symbolic evaluation (``0.428571`` vs ``\\frac{3}{7}``). Whole numbers and
fractions of them compare exactly, at any size: ``\\boxed{10^{20}+1}`` is not ``10^{20}``
(their floats are one number). No value past the float range is compared as a float
(:mod:`mathir.answer_checking.numeric`): the worker sends SymPy's ``1.5e+400`` as a decimal
string, not as the ``inf`` that every such float is, and only SymPy's infinity
(``\\infty``, ``inf``) equals infinity, of the same sign.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import queue
import re
import select
import subprocess
import sys
import threading
from concurrent.futures import Future
from decimal import Decimal, InvalidOperation
from pathlib import Path

from mathir.answer_checking.extraction import brace_partners
from mathir.answer_checking.numeric import (
    Number,
    UnreadableNumber,
    numbers_equal,
    read_number,
    read_numbers,
)
from mathir.errors import InputError

LATEX_MODES = ("aggressive", "conservative")
DEFAULT_TIMEOUT = 5.0

_DELETE = ("\\$", "$", "\\%", "%", "^{\\circ}", "^\\circ", "°", "{,}")
_WRAPPER_NAMES = ("boxed", "box", "mbox", "text")
_WRAPPER = re.compile(r"\\(?:boxed|box|mbox|text)\s*\{")
_BRACE = re.compile(r"[{}]")
_NOT_SIMPLE = set("()[]{}\\<>,xyz")
_WORKER = Path(__file__).with_name("sympy_worker.py")
# Load the worker file by path (not as a script: its folder must not shadow modules).
_WORKER_CODE = ("import importlib.util as u, sys; s = u.spec_from_file_location('w', sys.argv[1]); "
                "m = u.module_from_spec(s); s.loader.exec_module(m); m.main()")


def _unwrap_reference(s: str) -> str:
    """:func:`_unwrap` as first written: quadratic, kept as the oracle of the tests."""
    while True:
        m = _WRAPPER.search(s)
        if not m:
            return s
        depth, i = 1, m.end()
        while i < len(s) and depth:
            depth += {"{": 1, "}": -1}.get(s[i], 0)
            i += 1
        if depth:  # unbalanced: drop the command, keep the rest
            return s[:m.start()] + s[m.end():]
        s = s[:m.start()] + s[m.end():i - 1] + s[i:]


def _wrapper_before(out: list[str]) -> int | None:
    """Where ``out`` (ending with ``{``) starts a wrapper command, if it ends with one."""
    j = len(out) - 1
    while j and out[j - 1].isspace():  # \s of the pattern (the same characters)
        j -= 1
    for name in _WRAPPER_NAMES:
        a = j - len(name) - 1
        if a >= 0 and out[a] == "\\" and "".join(out[a + 1:j]) == name:
            return a
    return None


def _unwrap(s: str) -> str:
    """Replace ``\\boxed{X}``, ``\\box{X}``, ``\\mbox{X}``, ``\\text{X}`` by ``X``.

    The leftmost command first, again and again (a command can form where another was
    removed: ``\\te\\text{}xt{5}`` gives ``5``); at the first one without a closing
    brace, drop the command and stop. One pass, linear time: removing a command and its
    closing brace leaves every other brace with the partner it had, so the partners are
    found once, and the text is built left to right (re-searching from the start took
    quadratic time on nested commands); ``_unwrap_reference`` is the plain rule, and
    ``tests/answer_checking/test_latex.py`` checks both agree on random text.
    """
    if "{" not in s:
        return s
    partners = brace_partners(s)
    out: list[str] = []  # the text so far, one character an item (cheap to cut)
    dropped: set[int] = set()  # closing braces of the commands removed
    pos = 0
    for m in _BRACE.finditer(s):
        i = m.start()
        out.extend(s[pos:i])
        pos = i + 1
        if s[i] == "}":
            if i not in dropped:
                out.append("}")
            continue
        out.append("{")
        a = _wrapper_before(out)
        if a is None:
            continue
        del out[a:]
        close = partners.get(i)
        if close is None:  # unbalanced: drop the command, keep the rest
            rest = sorted(d for d in dropped if d > i)
            pieces, k = [], i + 1
            for d in rest:
                pieces.append(s[k:d])
                k = d + 1
            return "".join(out) + "".join(pieces) + s[k:]
        dropped.add(close)
    out.extend(s[pos:])
    return "".join(out)


def normalize_latex(s: str) -> str:
    """Delete dollars, percent and degree signs; lowercase; unwrap boxes and text.

    >>> normalize_latex("$\\\\boxed{90^\\\\circ}$")
    '90'
    >>> normalize_latex("2π \\\\text{ Meters}")
    '2\\\\pi  meters'
    """
    for t in _DELETE:
        s = s.replace(t, "")
    return _unwrap(s.replace("π", "\\pi").lower())


def _trim(s: str) -> str:
    s = s.strip(" \n")
    return s[:-1].strip(" \n") if s.endswith(".") else s


def _literal_equal(a: str, b: str) -> bool:
    a, b = (_trim(x).replace(",", "").replace(" ", "") for x in (a, b))
    if not re.search(r"\d", a + b):
        a, b = a.strip("[]() "), b.strip("[]() ")
    return a == b


def _single_number_equal(a: str, b: str) -> bool:
    """Aggressive mode: each side one number, the rest simple text, numbers equal."""
    try:
        na, nb = read_numbers(a), read_numbers(b)
    except UnreadableNumber:
        return False
    if len(na) != 1 or len(nb) != 1:
        return False
    rest = re.sub(r"-?\d[\d,./:]*", "", a) + re.sub(r"-?\d[\d,./:]*", "", b)
    if _NOT_SIMPLE & set(rest):
        return False
    return numbers_equal(na[0], nb[0])


def _drop_equation(s: str) -> str:
    """With one ``=``, keep the right side (the left when the right is 0)."""
    if s.count("=") != 1:
        return s
    lhs, rhs = (x.strip() for x in s.split("="))
    return lhs if rhs == "0" and len(lhs) >= 2 else rhs


def _plain_number(s: str) -> bool:
    """Whether ``s`` is a plain number: one float() reads, with a digit (``inf`` and
    ``nan`` go on to SymPy, which reads ``inf`` as infinity). Compared by
    :func:`read_number`, not as the float: ``1e400`` is no ``inf``."""
    try:
        float(s)
    except ValueError:
        return False
    return any(c.isdigit() for c in s)


# --- symbolic step, in a worker process -----------------------------------------------

def symbolic_timeout(timeout: float | None) -> float:
    """The time limit of one symbolic check, validated: ``None`` is
    :data:`DEFAULT_TIMEOUT`; a number of seconds above 0; ``inf`` means no limit (the
    check waits for SymPy however long it takes), and so does any limit longer than the
    operating system can wait (``threading.TIMEOUT_MAX``, some 292 years). NaN, zero,
    negative numbers and non-numbers raise :class:`~mathir.errors.InputError`.

    >>> symbolic_timeout(None), symbolic_timeout(2), symbolic_timeout(1e308)
    (5.0, 2.0, inf)
    >>> symbolic_timeout(0)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: the timeout must be a number of seconds above 0, or inf ...
    """
    if timeout is None:
        return DEFAULT_TIMEOUT
    try:
        value = float(timeout)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(timeout, bool) or not value > 0:  # NaN fails this too
        raise InputError("the timeout must be a number of seconds above 0, or inf for no "
                         f"limit, not {timeout!r}")
    return math.inf if value >= threading.TIMEOUT_MAX else value


def _sympy_number(v: float | str) -> Number:
    """A numeric value of the worker as a tolerant :class:`Number`: a float (SymPy's N;
    ``inf`` only for SymPy's infinity), or past the float range the decimal string of
    SymPy's Float, read exactly (never the ``inf`` or 0 its float would be). Never
    exact, even where it spells a whole number. UnreadableNumber or InvalidOperation
    past the decimal range."""
    if isinstance(v, str):
        d = Decimal(v)
        if not d.is_finite():
            raise UnreadableNumber(v)
        return Number(d, read_number(v).decimals, tolerant=True)
    return Number(float(v), read_number(repr(v)).decimals)


def _decide(reply: dict) -> bool:
    if reply.get("equal"):
        return True
    values = reply.get("values")
    if values:  # README: numeric values compare with the 1e-3 relative tolerance
        # Two exact rationals were decided exactly by the worker; these are SymPy's N,
        # compared with the tolerance, never as the integers their reprs may spell.
        try:
            a, b = (_sympy_number(v) for v in values)
        except (UnreadableNumber, InvalidOperation):
            return False
        return numbers_equal(a, b)
    return False


def symbolic_equal(a: str, b: str) -> bool:
    """Compare with SymPy in this process (no time limit: see :class:`SymbolicChecker`).

    >>> symbolic_equal("7x^2 - 63", "7(x - 3)(x + 3)"), symbolic_equal("2\\\\sqrt{3}", "\\\\sqrt{12}")
    (True, True)
    >>> symbolic_equal("0.428571", "\\\\frac{3}{7}"), symbolic_equal("x+1", "x")
    (True, False)
    """
    from mathir.answer_checking.sympy_worker import compare

    return _decide(compare(a, b))


_SPAWN_REQUESTS: queue.SimpleQueue | None = None
_SPAWN_LOCK = threading.Lock()


def _spawner(requests: queue.SimpleQueue) -> None:
    while True:
        done, args = requests.get()
        try:
            done.set_result(subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             text=True, encoding="utf-8"))
        except BaseException as e:  # noqa: BLE001 - handed to the thread that asked
            done.set_exception(e)


def _spawn(args: list[str]) -> subprocess.Popen:
    """Start a worker process from one thread that lives as long as this process.

    The worker asks Linux to kill it when its parent dies (``PR_SET_PDEATHSIG``, in
    ``sympy_worker.main``), so that a killed ``mathir answers`` leaves no SymPy process
    spinning; but Linux takes the *thread* that started a process for its parent, and a
    worker started from a short-lived thread would die with that thread, in the middle
    of another thread's check.
    """
    global _SPAWN_REQUESTS
    with _SPAWN_LOCK:
        if _SPAWN_REQUESTS is None:
            _SPAWN_REQUESTS = queue.SimpleQueue()
            threading.Thread(target=_spawner, args=(_SPAWN_REQUESTS,), daemon=True,
                             name="mathir-sympy-spawner").start()
        requests = _SPAWN_REQUESTS
    done: Future = Future()
    requests.put((done, args))
    return done.result()


def _forget_spawner() -> None:  # a forked child has no spawner thread: start its own
    global _SPAWN_REQUESTS, _SPAWN_LOCK
    _SPAWN_REQUESTS, _SPAWN_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_spawner)


class SymbolicChecker:
    """Symbolic comparisons in a worker process, each with a hard time limit.

    Thread-safe: checks from several threads take turns on the worker. A check that
    exceeds ``timeout`` seconds returns False and the worker is killed (a new one
    starts on the next check), so no runaway ``simplify`` keeps a CPU busy; ``timeout``
    ``inf`` waits for every check (:func:`symbolic_timeout`). The worker
    also dies with this process, even one killed by SIGKILL (see :func:`_spawn`).

    >>> with SymbolicChecker(timeout=30) as checker:
    ...     checker.equivalent("\\\\sqrt{169}", "13")
    True
    """

    def __init__(self, timeout: float = DEFAULT_TIMEOUT):
        self.timeout = symbolic_timeout(timeout)
        self.timeouts = 0
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None

    def __repr__(self) -> str:
        return f"SymbolicChecker(timeout={self.timeout})"

    def _readline(self, limit: float) -> str | None:
        # inf: no limit (select takes None; it overflows on inf or 1e308)
        ready, _, _ = select.select([self._proc.stdout], [], [],
                                    None if math.isinf(limit) else limit)
        return self._proc.stdout.readline() if ready else None

    def _start(self) -> None:
        # argv[2]: this process, which the worker watches so as to die with it
        self._proc = _spawn([sys.executable, "-u", "-c", _WORKER_CODE, str(_WORKER),
                             str(os.getpid())])
        if self._readline(120) != '"ready"\n':
            self._kill()
            raise RuntimeError("the SymPy worker process did not start")

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            for f in (self._proc.stdin, self._proc.stdout):
                f.close()
        self._proc = None

    def equivalent(self, a: str, b: str, timeout: float | None = None) -> bool:
        """Whether ``a`` and ``b`` are equal as math; False on timeout (``timeout``
        seconds, default the checker's; see :func:`symbolic_timeout`)."""
        limit = self.timeout if timeout is None else symbolic_timeout(timeout)
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            try:
                self._proc.stdin.write(json.dumps([a, b]) + "\n")
                self._proc.stdin.flush()
                line = self._readline(limit)
            except OSError:
                self._kill()
                return False
            except BaseException:  # Ctrl-C, SIGTERM as an exception: the reply may still
                self._kill()       # come, and would be read as the next check's answer
                raise
            if not line:
                self.timeouts += line is None
                self._kill()
                return False
            return _decide(json.loads(line))

    def close(self) -> None:
        """Stop the worker process."""
        with self._lock:
            self._kill()

    def __enter__(self) -> SymbolicChecker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_DEFAULT: SymbolicChecker | None = None
_DEFAULT_LOCK = threading.Lock()


def default_checker() -> SymbolicChecker:
    """The process-wide checker used by :func:`latex_check` (closed at exit)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = SymbolicChecker()
            atexit.register(_DEFAULT.close)
        return _DEFAULT


def latex_check(answer: str | None, gold: str, mode: str = "aggressive",
                timeout: float | None = None,
                checker: SymbolicChecker | None = None) -> bool:
    """Whether the extracted ``answer`` equals ``gold`` as math.

    Literal comparison first; in ``aggressive`` mode the single numbers of simple
    answers; then (no ``,`` on either side) the right-hand side of a single ``=``, a
    numeric comparison, and SymPy equivalence with a time limit.

    >>> latex_check("\\\\dfrac{1}{2}", "\\\\frac{1}{2}"), latex_check("x = 5", "5")
    (True, True)
    >>> latex_check("400 \\\\text{meters}", "400"), latex_check("400 \\\\text{meters}", "400", "conservative")
    (True, False)
    >>> latex_check("\\\\{1, 2\\\\}", "\\\\{2, 1\\\\}")
    False
    """
    if mode not in LATEX_MODES:
        raise ValueError(f"unknown LaTeX mode {mode!r}; expected one of {LATEX_MODES}")
    if answer is None:
        return False
    a, g = normalize_latex(answer), normalize_latex(gold)
    if _literal_equal(a, g):
        return True
    if mode == "aggressive" and _single_number_equal(a, g):
        return True
    a, g = _trim(a), _trim(g)
    if "," in a or "," in g:
        return False
    a, g = _drop_equation(a), _drop_equation(g)
    if _plain_number(a) and _plain_number(g):
        try:
            return numbers_equal(read_number(a), read_number(g))
        except UnreadableNumber:  # an exponent past the decimal range (numeric module)
            return False
    if not a or not g:
        return False
    return (checker or default_checker()).equivalent(a, g, timeout)
