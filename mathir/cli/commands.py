"""The commands of ``mathir``: each reads its parsed arguments and calls one library
function, most of them a workflow (:mod:`mathir.experiment.workflows`) that says what it
did through :func:`echo`."""

from __future__ import annotations

import sys
from argparse import Namespace
from types import ModuleType
from typing import Any


def echo(text: str, err: bool = False) -> None:
    """Print ``text`` on stdout, or with ``err`` on stderr: what a workflow says."""
    print(text, file=sys.stderr if err else sys.stdout)


def _workflows() -> ModuleType:
    """:mod:`mathir.experiment.workflows`, imported when a command runs."""
    from mathir.experiment import workflows

    return workflows


def _given(args: Namespace, names: str) -> dict[str, Any]:
    """The arguments ``names`` (dests, space-separated) as keyword arguments."""
    return {name: getattr(args, name) for name in names.split()}


def _files(args: Namespace) -> dict[str, Any]:
    """``--data``, ``--year`` or ``--split`` and ``--collection`` as keyword arguments."""
    return {"data": args.data, "year": args.year or args.split, "collection": args.collection}


def _models(args: Namespace) -> dict[str, Any]:
    """The pipeline factories' keyword arguments (:data:`~mathir.experiment.FACTORY_OPTIONS`)."""
    from mathir.experiment.pipelines import FACTORY_OPTIONS

    return {o.keyword: getattr(args, o.flag[2:].replace("-", "_")) for o in FACTORY_OPTIONS}


def pipeline_options(args: Namespace) -> dict[str, str]:
    """The keyword arguments that ``--cross-encoder``, ``--bi-encoder``, ``--backend`` and
    ``--dense-search`` give every pipeline factory naming them (checked)."""
    from mathir.experiment.pipelines import factory_options

    return factory_options(_models(args))


def _cmd_demo(args: Namespace) -> None:
    _workflows().demo(args.out, quiet=args.quiet, echo=echo)


def _evaluation(args: Namespace) -> dict[str, Any]:
    """The task's evaluation options given (``--qrels-key``, ``--formula-index`` ...), by name."""
    return {k.removeprefix("option_"): v for k, v in vars(args).items()
            if k.startswith("option_")}


#: the options of every command that scores, by dest
SCORING = "qrels judged measures per_topic baseline test correction format quiet"


def _cmd_experiment(args: Namespace) -> None:
    _workflows().experiment(
        args.task, args.pipelines, args.own or [], args.pipelines_file or [], **_files(args),
        index_dir=args.index, options=_models(args), ray_address=args.ray,
        reuse=not args.no_reuse, evaluation_options=_evaluation(args), echo=echo,
        **_given(args, f"out run_format workers {SCORING}"))


def _cmd_index(args: Namespace) -> None:
    _workflows().index(args.task, **_files(args), index_dir=args.index, shards=args.shards,
                       ray_address=args.ray, scoring=args.scoring, quiet=args.quiet, echo=echo)


def _cmd_run(args: Namespace) -> None:
    _workflows().run(args.task, args.pipeline, args.out, args.pipelines_file or [],
                     **_files(args), index_dir=args.index, run_format=args.run_format,
                     options=_models(args), quiet=args.quiet, echo=echo)


def _cmd_evaluate(args: Namespace) -> None:
    _workflows().evaluate(args.task, args.qrels, args.runs, args.topics, **_files(args),
                          options=_evaluation(args), echo=echo,
                          **_given(args, f"qrels_duplicates {SCORING.replace('qrels ', '')}"))


def _cmd_view(args: Namespace) -> None:
    _workflows().view(args.task, args.runs, **_files(args), options=_evaluation(args),
                      echo=echo, **_given(args, f"out depth {SCORING}"))


def _cmd_train_reranker(args: Namespace) -> None:
    _workflows().train_reranker(
        args.task, args.out, args.kind, **_files(args), echo=echo,
        **_given(args, "base epochs batch_size max_pairs max_steps negatives rel max_length "
                 "first_stage negative_depth learning_rate warmup seed loss quiet"))


def _cmd_answers(args: Namespace) -> None:
    _workflows().check_answers(args.input, args.format, args.timeout, echo=echo)


def _cmd_verify(args: Namespace) -> None:
    from mathir.errors import InputError
    from mathir.storage.indexes import verify_index

    damaged = []
    for path in args.indexes:
        v = verify_index(path)
        if args.files:
            failed = {p.split(": ", 1)[0]: p for p in v.problems}
            for rel, size in v.files:
                echo(f"{v.path}: {failed.get(rel, f'{rel}: ok')} ({size:,} bytes recorded)")
        if v.ok:
            unrecorded = (f"; {len(v.unrecorded)} file(s) written after its build not verified"
                          if v.unrecorded else "")
            echo(f"{v.path}: {len(v.files)} files, {v.size:,} bytes: all match their "
                 f"records{unrecorded}")
        damaged += [f"{v.path}: {p}" for p in v.problems]
    if damaged:
        raise InputError(f"{len(damaged)} file(s) differ from the index's records: "
                         + "; ".join(damaged))


def _cmd_tasks(args: Namespace) -> None:
    from mathir.experiment import tasks_catalog, tasks_overview

    if args.format == "text":
        print(tasks_overview())
        return
    import json

    print(json.dumps(tasks_catalog()))


def _cmd_reproduce(args: Namespace) -> None:
    from mathir.reproduction.worldtree_headline import reproduce_or_combine

    reproduce_or_combine(args.data, args.seeds, args.seed, args.combine, models_dir=args.models,
                         test=not args.no_test, as_json=args.json, parallel=not args.sequential,
                         echo=echo, **_given(args, "out ensemble quiet smoke max_questions "
                                             "max_steps"))


#: command name -> handler (tests replace handlers here)
COMMANDS = {"demo": _cmd_demo, "experiment": _cmd_experiment, "index": _cmd_index,
            "run": _cmd_run, "evaluate": _cmd_evaluate, "answers": _cmd_answers,
            "tasks": _cmd_tasks, "view": _cmd_view, "train-reranker": _cmd_train_reranker,
            "reproduce": _cmd_reproduce, "verify": _cmd_verify}
