"""The scaffold every benchmark stands on: arguments, data folder, timing, calibration and
the JSON report.

* :func:`parser`: the arguments every benchmark shares (``--json``; ``--data``, the data
  folder, where it reads real data);
* :func:`shared_data`: the default data folder, ``../shared/data`` beside the repository
  or ``$MATHIR_SHARED_DATA`` (as ``tests/conftest.py`` finds it);
* :func:`cpu_seconds` and :class:`Clock`: CPU seconds (this process and its finished
  children) beside wall seconds;
* :func:`calibration_ms`: the CPU time of a fixed pure-Python + NumPy workload in the
  same process (docs/measurements.md, "Reading the figures"): figures from machines of
  different speed, or from one machine under different load, compare through it;
* :func:`load_average` and :func:`machine_facts`: the load, and the CPU (model, cores, the vector and int8 units that decide
  which backend is fastest) and the load average, which :func:`print_report` adds to
  every report as ``machine``;
* :func:`print_report`: ``--json`` prints one JSON object on one line and nothing else on
  stdout; without it, a text for people;
* :func:`work_folder`: the folder a benchmark generates its collection in (kept when
  given, else temporary).

A benchmark is a script, ``python benchmarks/NAME.py``: Python then searches
``benchmarks/`` for modules first, so it imports this module as ``machine``. The tests import benchmarks
from the repository root as ``benchmarks.NAME``; so each benchmark starts with::

    try:  # python benchmarks/NAME.py
        import machine
    except ModuleNotFoundError:  # benchmarks.NAME, from the repository root (tests)
        from benchmarks import machine

and imports another benchmark with :func:`benchmark`, which takes the same route.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

#: the environment variable naming the shared data folder (as for the tests)
DATA_ENV = "MATHIR_SHARED_DATA"


def shared_data(*parts: str) -> Path:
    """The shared data folder (``$MATHIR_SHARED_DATA``, else ``../shared/data`` beside the
    repository), or ``parts`` under it.

    >>> shared_data("arqmath").name
    'arqmath'
    """
    root = os.environ.get(DATA_ENV) or Path(__file__).resolve().parents[2] / "shared" / "data"
    return Path(root).joinpath(*parts)


def parser(doc: str | None, data: str | None = None,
           data_help: str | None = None) -> argparse.ArgumentParser:
    """An argument parser described by the first line of ``doc`` with ``--json``, and,
    given ``data`` (a folder of the shared data, e.g. ``"arqmath"``), ``--data`` (a
    :class:`~pathlib.Path`, default :func:`shared_data` ``(data)``).

    >>> args = parser("Benchmark: x.\\n\\nMore.", data="arqmath").parse_args(["--json"])
    >>> args.json, args.data.name
    (True, 'arqmath')
    """
    ap = argparse.ArgumentParser(description=(doc or "").strip().split("\n")[0])
    ap.add_argument("--json", action="store_true",
                    help="print one JSON object on one line, nothing else on stdout")
    if data is not None:
        ap.add_argument("--data", type=Path, default=shared_data(data),
                        help=(data_help or f"the {data} data folder") + " (default: %(default)s)")
    return ap


def cpu_seconds() -> float:
    """User + system CPU time of this process (all threads) and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class Clock:
    """Wall seconds and CPU seconds (:func:`cpu_seconds`) since the clock was made.

    >>> sorted(Clock().seconds())
    ['cpu_s', 'wall_s']
    """

    def __init__(self) -> None:
        self.wall0, self.cpu0 = time.perf_counter(), cpu_seconds()

    def seconds(self, digits: int = 2) -> dict[str, float]:
        """``{"wall_s": ..., "cpu_s": ...}`` so far, rounded to ``digits``."""
        return {"wall_s": round(time.perf_counter() - self.wall0, digits),
                "cpu_s": round(cpu_seconds() - self.cpu0, digits)}


def calibration_ms() -> float:
    """CPU milliseconds of a fixed pure-Python + NumPy workload (machine speed)."""
    import numpy as np

    t0 = time.process_time()
    total = 0
    for i in range(2_000_000):
        total += i * i % 7
    a = np.random.default_rng(0).random((300, 300))
    for _ in range(20):
        a = a @ a
        a /= np.abs(a).max()
    return round(1000 * (time.process_time() - t0), 1)


#: CPU flags (as /proc/cpuinfo names them) that change which encoder backend is fastest:
#: int8 inference gains little over float32 without VNNI or AMX (docs/measurements.md,
#: "CPU backends")
SPEED_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16",
               "amx_tile", "amx_int8", "amx_bf16")


def load_average() -> list[float] | None:
    """The 1, 5 and 15-minute load averages, to two decimals (None where the system has
    none).

    >>> len(load_average() or [0, 0, 0])
    3
    """
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def machine_facts() -> dict:
    """The machine a report was measured on: CPU model, cores, which of
    :data:`SPEED_FLAGS` it has, and the load averages (:func:`load_average`).

    >>> facts = machine_facts()
    >>> sorted(facts), facts["cores"] >= 1
    (['cores', 'cpu', 'flags', 'load_average'], True)
    """
    model, flags = "unknown", set()
    with contextlib.suppress(OSError):  # /proc/cpuinfo: Linux only
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown":
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    return {"cpu": model, "cores": os.cpu_count() or 1,
            "flags": [f for f in SPEED_FLAGS if f in flags], "load_average": load_average()}


def key_values(report: dict) -> str:
    """A report as lines of ``key value``, the keys padded to one width.

    >>> print(key_values({"a": 1, "bcd": [2]}))
    a   1
    bcd [2]
    """
    width = max((len(str(k)) for k in report), default=0)
    return "\n".join(f"{str(k):{width}s} {v}" for k, v in report.items())


def print_report(report: dict, as_json: bool,
                 text: Callable[[dict], str] | None = None) -> None:
    """The report on stdout: with ``as_json`` (``--json``) one JSON line and nothing else;
    otherwise ``text(report)``, or the JSON indented. ``machine`` (:func:`machine_facts`)
    is added when the report has none.

    >>> print_report({"wall_s": 1.0, "cpu_s": 0.5, "machine": "here"}, True)
    {"wall_s": 1.0, "cpu_s": 0.5, "machine": "here"}
    """
    report = report if "machine" in report else {**report, "machine": machine_facts()}
    if as_json:
        print(json.dumps(report))
    else:
        print(text(report) if text else json.dumps(report, indent=1))


@contextlib.contextmanager
def work_folder(keep: str | Path | None, prefix: str = "mathir-bench-") -> Iterator[Path]:
    """The folder to generate data in: ``keep`` (made if missing, kept afterwards) or a
    temporary folder (removed afterwards, also after an error).

    >>> with work_folder(None) as w:
    ...     w.is_dir()
    True
    >>> w.exists()
    False
    """
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    try:
        yield work
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def benchmark(name: str) -> ModuleType:
    """Another benchmark module, imported the way this module was: ``NAME`` when the
    benchmarks run as scripts, ``benchmarks.NAME`` from the repository root.

    >>> benchmark("machine").cpu_seconds is cpu_seconds
    True
    """
    package = __name__.rpartition(".")[0]
    return importlib.import_module(f"{package}.{name}" if package else name)
