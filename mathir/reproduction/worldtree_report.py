"""The table of ``mathir reproduce worldtree``: MAP per pipeline over the seeds (mean ±
standard deviation, each seed's, the ensemble's), the headline beside the 2019 winner,
and the report files ``worldtree.md`` and ``worldtree.json``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from mathir.storage import atomic_file

#: The 2019 Test leaderboard's best MAP (the headline is compared with it).
WORLDTREE_WINNER_2019 = 0.5625


def _spread(values: list[float]) -> dict:
    mean = sum(values) / len(values)
    sd = (math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
          if len(values) > 1 else None)
    return {"mean": round(mean, 4), "sd": None if sd is None else round(sd, 4),
            "min": min(values), "max": max(values)}


def summarise(runs: dict, seeds: Sequence[int]) -> dict:
    """Per split and pipeline: MAP of each seed, their mean ± standard deviation
    (sample, n - 1) and the ensemble's, from :func:`reproduce_worldtree`'s ``runs``.

    >>> runs = {"dev": {"seed0": {"p": {"MAP": 0.5}}, "seed1": {"p": {"MAP": 0.6}}}}
    >>> s = summarise(runs, [0, 1])["dev"]["p"]
    >>> s["mean"], s["sd"], s["seeds"]
    (0.55, 0.0707, {'0': 0.5, '1': 0.6})
    """
    out: dict = {}
    for split, by_run in runs.items():
        names = list(dict.fromkeys(p for s in seeds for p in by_run.get(f"seed{s}", {})))
        for name in names:
            values = {str(s): by_run[f"seed{s}"][name]["MAP"] for s in seeds
                      if name in by_run.get(f"seed{s}", {})}
            row = {"seeds": values} | _spread(list(values.values()))
            if name in by_run.get("ensemble", {}):
                row["ensemble"] = by_run["ensemble"][name]["MAP"]
            out.setdefault(split, {})[name] = row
    return out


def _pm(row: dict | None) -> str:
    if row is None:
        return ""
    return f"{row['mean']:.4f}" + ("" if row["sd"] is None else f" ± {row['sd']:.4f}")


def markdown_tables(report: dict) -> str:
    """The report as markdown: MAP per pipeline (mean ± sd, each seed, the ensemble), then
    every measure of every run (the means over the seeds first)."""
    summary, splits = report["summary"], report["splits"]
    seeds = report["seeds"]
    names = list(dict.fromkeys(p for s in splits for p in summary.get(s, {})))
    title = {"dev": "Dev", "test": "Test"}
    head = ["pipeline"] + [f"{title.get(s, s)} MAP, mean ± sd of {len(seeds)} seed(s)"
                           for s in splits]
    head += [f"{title.get(s, s)} MAP per seed ({', '.join(map(str, seeds))})" for s in splits]
    if report.get("ensemble"):
        head += [f"{title.get(s, s)} MAP, seed ensemble" for s in splits]
    lines = ["| " + " | ".join(head) + " |", "|:--" + "|--:" * (len(head) - 1) + "|"]
    for name in names:
        rows = [summary.get(s, {}).get(name) for s in splits]
        cells = [name] + [_pm(r) for r in rows]
        cells += [" / ".join(f"{v:.4f}" for v in r["seeds"].values()) if r else "" for r in rows]
        if report.get("ensemble"):
            cells += [f"{r['ensemble']:.4f}" if r and "ensemble" in r else "" for r in rows]
        lines.append("| " + " | ".join(cells) + " |")
    for name, maps in report.get("reference", {}).items():
        cells = [f"{name} (no seed)"] + [f"{maps[s]['MAP']:.4f}" if s in maps else ""
                                         for s in splits]
        cells += [""] * (len(head) - len(cells))
        lines.append("| " + " | ".join(cells) + " |")
    measures = None
    full = []
    for split in splits:
        by_run = report["runs"].get(split, {})
        rows: list[tuple[str, dict]] = []
        for name in names:
            per_seed = [by_run[f"seed{s}"][name] for s in seeds if name in by_run.get(f"seed{s}", {})]
            if per_seed:
                measures = measures or list(per_seed[0])
                rows.append((f"{title.get(split, split)} {name} (mean of {len(per_seed)})",
                             {m: sum(r[m] for r in per_seed) / len(per_seed) for m in measures}))
        for key, label in [(f"seed{s}", f"seed {s}") for s in seeds] + [("ensemble", "ensemble"),
                                                                         ("reference", "")]:
            for name, values in by_run.get(key, {}).items():
                measures = measures or list(values)
                rows.append((f"{title.get(split, split)} {name}" + (f" ({label})" if label else ""),
                             values))
        full += rows
    if measures:
        lines += ["", "| run | " + " | ".join(measures) + " |",
                  "|:--" + "|--:" * len(measures) + "|"]
        lines += ["| " + run + " | " + " | ".join(f"{v[m]:.4f}" for m in measures) + " |"
                  for run, v in full]
    return "\n".join(lines)


def headline(summary: dict) -> dict | None:
    """The headline pipeline's Test MAP over the seeds, beside the 2019 winner's."""
    row = summary.get("test", {}).get("ltr-dense-crossencoder")
    if row is None:
        return None
    return {"pipeline": "ltr-dense-crossencoder", "test_mean": row["mean"],
            "test_sd": row["sd"], "test_min": row["min"],
            "winner_2019": WORLDTREE_WINNER_2019,
            "every_seed_above_winner": row["min"] > WORLDTREE_WINNER_2019}


def write_report(report: dict, out: Path) -> None:
    """Write ``worldtree.json`` and ``worldtree.md`` to ``out``; add their paths to the
    report (``files``)."""
    with atomic_file(out / "worldtree.json") as f:
        json.dump(report, f, indent=1, sort_keys=True)
    with atomic_file(out / "worldtree.md") as f:
        f.write(markdown_tables(report) + "\n")
    report["files"] = {"table": str(out / "worldtree.md"), "json": str(out / "worldtree.json")}
