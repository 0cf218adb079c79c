"""The commands of ``mathir``: each reads its parsed arguments and calls the library."""

from __future__ import annotations

import sys
from pathlib import Path

from mathir.errors import InputError
from mathir.storage import require_output_file, require_writable_dir


def pipeline_options(args) -> dict[str, str]:
    """The keyword arguments that ``--cross-encoder``, ``--bi-encoder``, ``--backend`` and
    ``--dense-search`` give every pipeline factory naming them."""
    search = getattr(args, "dense_search", None)
    if search:
        from mathir.indexing.ann_index import check_search

        # a wrong spec fails before any index is built; the canonical form (parameters by
        # name) makes the same search the same keyword argument of a run's identity
        search = check_search(search)
    return {k: v for k, v in (("cross_encoder", args.cross_encoder),
                              ("bi_encoder", args.bi_encoder),
                              ("backend", getattr(args, "backend", None)),
                              ("search", search)) if v}


def _data(task, args):
    """The task's files (:func:`mathir.experiment.locate_data`), the defaults it took said
    first on stderr."""
    from mathir.experiment import locate_data

    data, notes = locate_data(task, args.data, args.year or args.split, args.collection,
                              qrels=getattr(args, "qrels", None))
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return data


def _cmd_demo(args) -> None:
    from mathir.evaluation.tables import format_table
    from mathir.experiment import run_experiment
    from mathir.tasks import TASKS

    require_writable_dir(args.out, "--out folder")
    for name, task in TASKS.items():
        if not task.has_sample:  # e.g. a plug-in's task: it needs its data
            print(f"== {name}: no embedded sample (mathir experiment {name} --data DIR) ==\n")
            continue
        res = run_experiment(task, out=args.out, quiet=args.quiet)
        print(f"== {name} ({task.description}) on the embedded sample ==")
        print(format_table(res.table, "table"))
        for pipe, path in res.runs.items():
            print(f"  {pipe}: {path}")
        print()


def _cmd_experiment(args) -> None:
    from mathir.experiment import (
        check_experiment,
        own_pipelines,
        run_experiment,
        select_pipelines,
    )
    from mathir.tasks import get_task

    task = get_task(args.task)
    _check_experiment_outputs(task, args)
    own = own_pipelines(args.pipelines_file or [], args.own or [])
    selection = select_pipelines(task, args.pipelines, own, args.own or [])
    check_experiment(task, selection, workers=args.workers, test=args.test,
                     correction=args.correction, measures=args.measures, judged=args.judged,
                     run_format=args.run_format, options=pipeline_options(args))
    res = run_experiment(task, _data(task, args), selection, out=args.out,
                         index_dir=args.index, quiet=args.quiet, baseline=args.baseline,
                         test=args.test, correction=args.correction, workers=args.workers,
                         ray_address=args.ray, reuse=not args.no_reuse,
                         options=pipeline_options(args),
                         run_format=args.run_format, judged=args.judged,
                         measures=args.measures)
    _print_experiment(res, args)


def _check_experiment_outputs(task, args) -> None:
    """``--out`` and ``--per-topic`` can be written, checked before any work."""
    require_writable_dir(args.out, "--out folder")
    if args.per_topic:
        _output_file(args.per_topic, "--per-topic file")


def _print_experiment(res, args) -> None:
    """The table on stdout; the report, per-topic files and each run's line on stderr."""
    from mathir.evaluation.tables import format_table
    from mathir.experiment import significance_note, write_per_topic

    if res.table is None:
        print("no qrels for these topics; runs written:", file=sys.stderr)
    else:
        shown = "table" if args.format == "html" else args.format
        print(format_table(res.table, shown, significance=res.significance,
                           footnote=significance_note(res)))
        if res.judged_note:  # said with every table (stderr: stdout stays the table)
            print(f"judged set: {res.judged_note}", file=sys.stderr)
        if args.format == "html":
            from mathir.experiment import write_experiment_report

            print(write_experiment_report(res))
        if args.per_topic:
            for path in write_per_topic(res, args.per_topic):
                print(f"per-topic: {path}", file=sys.stderr)
    if args.format != "json":
        for pipe, path in res.runs.items():
            how = ("reused: manifest matches" if pipe in res.reused else
                   f"recomputed: {res.recomputed[pipe]}; {res.seconds[pipe]:.1f}s")
            print(f"{pipe}: {path} ({how})", file=sys.stderr)
    for what, path in getattr(res, "files", {}).items():
        print(f"{what}: {path}", file=sys.stderr)


def _output_file(path: str, what: str):
    """``require_output_file``, saying so when it creates the file's folder."""
    missing = [p for p in Path(path).parents if not p.exists()]
    out = require_output_file(path, what)
    if missing:
        print(f"note: created the folder {missing[-1]} for the {what}", file=sys.stderr)
    return out


def _cmd_index(args) -> None:
    from mathir.tasks import get_task

    task = get_task(args.task)
    if args.ray is not None and args.shards is None:
        raise InputError("--ray indexes shards: give --shards N too")
    if args.shards is not None and args.shards < 1:
        raise InputError(f"--shards must be at least 1, not {args.shards}")
    options = {k: v for k, v in (("shards", args.shards), ("ray_address", args.ray),
                                 ("scoring", args.scoring)) if v is not None}
    idx = task.index(_data(task, args), args.index, quiet=args.quiet, **options)
    print(f"{idx.path}: {idx.num_docs} documents")


def _cmd_run(args) -> None:
    from mathir.experiment import own_pipelines, resolve_pipelines, write_pipeline_run
    from mathir.tasks import get_task

    task = get_task(args.task)
    run_format = task.check_run_format(args.run_format or task.run_formats[0])
    out = _output_file(args.out, "--out run file")
    own = own_pipelines(args.pipelines_file or [],
                        [args.pipeline] if "=" in args.pipeline else [])
    name = args.pipeline.partition("=")[0].strip()
    pipeline = resolve_pipelines(task, [{name: own[name]} if name in own else name],
                                 pipeline_options(args))[name]
    data = _data(task, args)
    write_pipeline_run(task, pipeline, data, out, index_dir=args.index, quiet=args.quiet,
                       run_format=run_format)
    print(f"{out}: {task.read_run(out)['qid'].nunique()} topics (manifest: "
          f"{out.with_name(out.stem + '.manifest.json').name})")


def _cmd_evaluate(args) -> None:
    from mathir.evaluation.tables import format_table
    from mathir.experiment import evaluate_run_files
    from mathir.tasks import get_task

    task = get_task(args.task)
    options = {k.removeprefix("option_"): v for k, v in vars(args).items()
               if k.startswith("option_") and v is not None}
    declared = {o.name for o in task.options}
    unused = sorted(set(options) - declared)
    if unused:
        flags = ", ".join("--" + u.replace("_", "-") for u in unused)
        own = ", ".join(o.flag for o in task.options) or "none"
        raise InputError(f"{flags}: not an option of {task.name} (its options: {own})")
    if args.measures is not None:
        options["measures"] = args.measures
    ev = evaluate_run_files(task, args.qrels, args.runs, args.topics,
                            qrels_duplicates=args.qrels_duplicates, judged=args.judged,
                            **options)
    print(format_table(ev.table, args.format))
    if ev.judged_note:
        how = (" (as the runs' manifests record: as their experiment scored them)"
               if args.judged is None and ev.judged == "collection" else "")
        print(f"judged set: {ev.judged_note}{how}", file=sys.stderr)


def _cmd_answers(args) -> None:
    import json

    from mathir.answer_checking.checking import check_records, read_answer_records
    from mathir.answer_checking.latex import symbolic_timeout

    symbolic_timeout(args.timeout)  # before any work: one error line for 0, -1, nan
    n = correct = 0
    for rec in check_records(read_answer_records(args.input), args.input, timeout=args.timeout):
        n += 1
        correct += rec["correct"]
        if args.format == "json":
            print(json.dumps(rec, ensure_ascii=False))
    if args.format == "table":
        print(f"answers\t{n}\ncorrect\t{correct}\naccuracy\t{correct / n if n else 0.0:.4f}")
    else:
        print(f"{correct}/{n} correct", file=sys.stderr)


def _cmd_tasks(args) -> None:
    from mathir.experiment import tasks_catalog, tasks_overview

    if args.format == "text":
        print(tasks_overview())
        return
    import json

    print(json.dumps(tasks_catalog()))


def _cmd_view(args) -> None:
    from mathir.experiment import view_runs
    from mathir.tasks import get_task

    task = get_task(args.task)
    if args.depth < 1:
        raise InputError(f"--depth must be at least 1, not {args.depth}")
    out = _output_file(args.out, "--out file") if args.out else None
    print(view_runs(task, args.runs, _data(task, args), out=out, baseline=args.baseline,
                    depth=args.depth, judged=args.judged, measures=args.measures))


def _cmd_train_reranker(args) -> None:
    from mathir.pipelines.reranker_training import train_bi_encoder, train_cross_encoder
    from mathir.tasks import get_task

    if args.kind == "bi-encoder" and args.loss != "pointwise":
        raise InputError("--loss is a cross-encoder option: the bi-encoder learns from "
                         "in-batch negatives")
    task = get_task(args.task)
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise InputError("--out (the model directory) is a file", path=args.out)
    require_writable_dir(Path(args.out).parent, "folder of --out")
    pairs = _training_pairs(task, args)
    options = {} if args.kind == "bi-encoder" else {"loss": args.loss}
    train = train_bi_encoder if args.kind == "bi-encoder" else train_cross_encoder
    out = train(pairs, args.out, base=args.base, epochs=args.epochs, batch_size=args.batch_size,
                learning_rate=args.learning_rate, max_length=args.max_length,
                warmup=args.warmup, max_steps=args.max_steps, seed=args.seed, quiet=args.quiet,
                **options)
    print(f"{out}: {args.kind} trained on {len(pairs)} pairs")


def _training_pairs(task, args):
    """The training pairs of ``--year``/``--split`` (comma-separated: all of them), said
    on stderr."""
    from mathir.pipelines.reranker_training import task_training_pairs

    labels = (args.year or args.split or "").split(",")
    datasets = [task.data(args.data, label or None, args.collection) for label in labels]
    pairs = task_training_pairs(task, datasets, rel=args.rel, negatives_per_positive=args.negatives,
                                first_stage=args.first_stage, max_pairs=args.max_pairs,
                                negative_depth=args.negative_depth, seed=args.seed,
                                quiet=args.quiet)
    print(f"{len(pairs)} pairs ({int(pairs['label'].sum())} positive) from "
          f"{pairs['qid'].nunique()} topics", file=sys.stderr)
    return pairs


def _cmd_reproduce(args) -> None:
    import json

    from mathir.reproduction.worldtree_headline import combine_reports, reproduce_worldtree
    from mathir.reproduction.worldtree_report import markdown_tables

    progress = (lambda line: None) if args.quiet else None
    if args.combine:
        report = combine_reports(args.combine, args.out, ensemble=args.ensemble,
                                 progress=progress)
        print(json.dumps(report) if args.json else markdown_tables(report))
        return
    _check_reproduce_counts(args)
    report = reproduce_worldtree(
        args.data, seeds=args.seed or list(range(args.seeds)), models_dir=args.models,
        out=args.out, evaluate=("dev",) if args.no_test else ("dev", "test"),
        ensemble=args.ensemble, parallel=not args.sequential, smoke=args.smoke,
        max_questions=args.max_questions, max_steps=args.max_steps, progress=progress)
    if args.json:
        print(json.dumps(report))
        return
    print(markdown_tables(report))
    for what, path in report["files"].items():
        print(f"{what}: {path}", file=sys.stderr)


def _check_reproduce_counts(args) -> None:
    """``--seeds``, ``--max-questions`` and ``--max-steps`` at least 1, before any work."""
    if args.seeds < 1:
        raise InputError("--seeds must be at least 1")
    for name in ("max_questions", "max_steps"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1")


#: command name -> handler (tests replace handlers here)
COMMANDS = {"demo": _cmd_demo, "experiment": _cmd_experiment, "index": _cmd_index,
            "run": _cmd_run, "evaluate": _cmd_evaluate, "answers": _cmd_answers,
            "tasks": _cmd_tasks, "view": _cmd_view, "train-reranker": _cmd_train_reranker,
            "reproduce": _cmd_reproduce}
