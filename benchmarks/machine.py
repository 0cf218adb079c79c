"""What every benchmark reports about the machine: CPU seconds and ``calibration_ms``.

``calibration_ms`` is the CPU time of a fixed pure-Python + NumPy workload in the same
process (docs/architecture.md): figures from machines of different speed, or from one machine under
different load, can be compared through it.
"""

from __future__ import annotations

import json
import resource
import time


def cpu_seconds() -> float:
    """User + system CPU time of this process (all threads) and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


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


def print_report(report: dict, as_json: bool) -> None:
    """The report on stdout: one JSON line (``--json``: nothing else on stdout) or indented."""
    print(json.dumps(report) if as_json else json.dumps(report, indent=1))
