"""What ``mathir tasks`` lists: every registered task with its data, pipelines (those of
entry points included), measures and qrels variants, as text or as a JSON-ready dict; and
what the tasks declare together (the choices of ``--run-format``, the flags of ``mathir
evaluate``)."""

from __future__ import annotations

from typing import Any

from mathir.experiment.pipelines import plugin_pipelines_by_task


def tasks_overview() -> str:
    """Every registered task with its data labels, pipelines (* = run by default) and
    measures: what ``mathir tasks`` prints and ``mathir experiment --help`` ends with.

    >>> print(tasks_overview().splitlines()[0])
    arqmath-task1: ARQMath Task 1: answer retrieval for Math StackExchange questions
    """
    from mathir.tasks import TASKS  # declarations only: imports no pipeline

    plugins = plugin_pipelines_by_task()
    lines = []
    for name, task in TASKS.items():
        pipes = [f"{p}*" if p in task.default_pipelines else p for p in task.pipelines]
        pipes += [f"{p} (entry point)" for p in plugins.get(name, {}) if p not in task.pipelines]
        lines += [f"{name}: {task.description}",
                  f"  --year/--split: {', '.join(task.years) or '-'}",
                  f"  pipelines: {', '.join(pipes)}",
                  f"  measures: {', '.join(task.measure_names)} (primary {task.primary_measure})"]
        if task.qrels_variants:
            lines.append("  --qrels: official (default), "
                         + ", ".join(v.name for v in task.qrels_variants))
        if task.published is not None:
            lines.append(f"  data: {task.published.what} ({task.published.url})")
    return "\n".join(lines)


def tasks_catalog() -> dict:
    """Every registered task as ``mathir tasks --format json`` prints it.

    >>> tasks_catalog()["worldtree"]["primary_measure"]
    'MAP'
    """
    from mathir.tasks import TASKS

    plugins = plugin_pipelines_by_task()
    return {name: {"description": t.description, "years": list(t.years),
                   "pipelines": list(dict.fromkeys([*t.pipelines, *plugins.get(name, {})])),
                   "default_pipelines": list(t.default_pipelines),
                   "measures": {m.name: m.description for m in t.measures},
                   "primary_measure": t.primary_measure,
                   "run_formats": list(t.run_formats),
                   "options": {o.flag: o.help for o in t.options},
                   "qrels_variants": {v.name: v.what for v in t.qrels_variants},
                   "datasets": [f"{t.dataset or name}/{s.name}" for s in t.splits],
                   "data": None if t.published is None else
                   {"what": t.published.what, "url": t.published.url}}
            for name, t in TASKS.items()}


def run_formats() -> list[str]:
    """The run formats of every registered task (``--run-format``'s choices).

    >>> run_formats()[:2]
    ['arqmath', 'trec']
    """
    from mathir.tasks import TASKS

    return list(dict.fromkeys(f for t in TASKS.values() for f in t.run_formats))


def evaluation_options() -> dict[Any, list[str]]:
    """Every registered task's evaluation options (:class:`mathir.tasks.Option`), each
    with the tasks that declare it: the flags of ``mathir evaluate``.

    >>> [tasks for option, tasks in evaluation_options().items() if option.name == "lemmas"]
    [['worldtree']]
    """
    from mathir.tasks import TASKS

    found: dict[Any, list[str]] = {}
    for name, task in TASKS.items():
        for option in task.options:
            same = next((o for o in found if o.name == option.name), option)
            found.setdefault(same, []).append(name)
    return found
