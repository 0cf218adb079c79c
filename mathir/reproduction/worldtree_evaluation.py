"""The evaluations of ``mathir reproduce worldtree``: the splits (cut to their first
questions for smoke runs), the headline's pipelines run and measured on them (runs
reused when their manifests match), the seed ensemble's, the log of the Test runs
computed, and the progress lines of the command.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from mathir.errors import InputError
from mathir.storage import atomic_file

#: The WorldTree pipelines the headline is about, and the non-neural ones shown beside.
WORLDTREE_PIPELINES = ("ltr-dense", "ltr-crossencoder", "ltr-dense-crossencoder")
WORLDTREE_REFERENCE = ("ltr", "ltr-minilm")


class Progress:
    """One line per stage on stderr (or ``write``), with the elapsed wall time."""

    def __init__(self, write: Callable[[str], None] | None = None):
        self.started = time.perf_counter()
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))

    def __call__(self, message: str) -> None:
        s = int(time.perf_counter() - self.started)
        self.write(f"[{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}] {message}")


# --- the data: splits, subsets for smoke runs ------------------------------------------


def _subset_questions(path: Path, n: int, dest: Path) -> Path:
    """The first ``n`` explained questions of a WorldTree question file, as a file of
    the same name in ``dest`` (written only when its content changes)."""
    from mathir.readers.tabular import iter_lines
    from mathir.topics.worldtree import read_questions

    keep = set(read_questions(path, explained_only=True)["qid"].head(n))
    lines = [line for _, line in iter_lines(path)]
    column = lines[0].split("\t").index("questionID")
    text = "\n".join([lines[0]] + [x for x in lines[1:] if x.split("\t")[column].strip()
                                   in keep]) + "\n"
    out = dest / path.name
    if not out.is_file() or out.read_text(encoding="utf-8") != text:
        dest.mkdir(parents=True, exist_ok=True)
        with atomic_file(out) as f:
            f.write(text)
    return out


def split_data(task, data: str | Path | None, split: str, max_questions: int | None,
               scratch: Path):
    """The TaskData of a split, cut to its first ``max_questions`` questions if given."""
    found = task.data(data, split)
    if max_questions is None:
        return found
    if found.qrels is None:
        raise InputError(f"the {split} questions have no explanations", path=found.topics)
    sub = _subset_questions(Path(found.topics), max_questions, scratch / found.label)
    return dataclasses.replace(found, topics=sub, qrels=sub)


# --- the runs and their measures -------------------------------------------------------


def _measures(table) -> dict[str, dict[str, float]]:
    return {str(run): {m: round(float(v), 4) for m, v in row.items()}
            for run, row in table.iterrows()}


def evaluate_pipelines(task, split, pipelines: Sequence[str], options: dict, out: Path,
                       index_dir: Path, progress: Progress, title: str
                       ) -> tuple[dict, list[str]]:
    """Run and evaluate ``pipelines`` on ``split`` (reusing runs whose manifests match);
    returns their measures and the pipelines whose runs were computed now."""
    from mathir.experiment import run_experiment

    t0 = time.perf_counter()
    res = run_experiment(task, split, list(pipelines), out=out, index_dir=index_dir,
                         quiet=True, options=options)
    if res.table is None:
        raise InputError(f"the {split.label} questions have no explanations to evaluate",
                         path=split.topics)
    measures = _measures(res.table)
    maps = ", ".join(f"{p} {measures[p]['MAP']:.4f}" for p in pipelines)
    computed = [p for p in pipelines if p not in res.reused]
    how = f"{len(computed)} run(s) computed" if computed else "runs reused"
    progress(f"{title}: MAP {maps} ({how}; {time.perf_counter() - t0:.0f} s)")
    return measures, computed


def evaluate_ensemble(task, split, seeds: Sequence[int], models: dict, runs_dir: Path,
                      index_dir: Path, progress: Progress, title: str
                      ) -> tuple[dict, list[str]]:
    """The seed ensemble's measures on ``split`` (every seed's bi-encoder and second-stage
    cross-encoder, ``models[seed]["bi"]`` and ``["ce2"]``, scores averaged), its runs in
    ``runs_dir/ensemble-<seeds>``; and the pipelines whose runs were computed now."""
    options = {"bi_encoder": tuple(str(models[s]["bi"]) for s in seeds),
               "cross_encoder": tuple(str(models[s]["ce2"]) for s in seeds)}
    return evaluate_pipelines(task, split, WORLDTREE_PIPELINES, options,
                              runs_dir / f"ensemble-{'-'.join(map(str, seeds))}", index_dir,
                              progress, f"{title} ensemble of seeds {', '.join(map(str, seeds))}")


def log_test_evaluations(out: Path, data: str | None, computed_test: list[str]) -> dict:
    """Append the Test runs computed now to ``out/test_evaluations.jsonl`` (when any);
    what the report says of them: those runs, the log and how many entries it holds."""
    log = out / "test_evaluations.jsonl"
    if computed_test:
        from mathir.experiment.identity import git_state

        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "git": git_state(),
                                "data": data, "computed": computed_test}) + "\n")
    logged = len(log.read_text(encoding="utf-8").splitlines()) if log.is_file() else 0
    return {"computed_now": computed_test, "logged_in": str(log), "logged_evaluations": logged}
