"""The ``mathir`` command: a thin layer that parses arguments and calls the library."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

from mathir.errors import InputError

FORMATS = ("table", "markdown", "latex", "json")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mathir", description="Math-aware retrieval experiments.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def common(sp, data=True):
        sp.add_argument("--quiet", action="store_true", help="no progress bars")
        if data:
            sp.add_argument("--data", help="directory with the official files (default: embedded sample)")
            sp.add_argument("--collection", help="collection file/directory (default: found under --data)")
            g = sp.add_mutually_exclusive_group()
            g.add_argument("--year", help="evaluation year (ARQMath: 2020, 2021, 2022)")
            g.add_argument("--split", help="split (WorldTree, word problems)")

    sp = sub.add_parser("demo", help="every task on the embedded samples")
    sp.add_argument("--out", default="runs/demo", help="output folder (default: runs/demo)")
    sp.add_argument("--quiet", action="store_true", help="no progress bars")

    sp = sub.add_parser("experiment", help="index, run the task's pipelines, compare them")
    sp.add_argument("task")
    common(sp)
    sp.add_argument("--pipelines", help="comma-separated pipeline names (default: the task's)")
    sp.add_argument("--out", default="runs", help="output folder for run files (default: runs)")
    sp.add_argument("--index", help="index directory (default: under OUT/.index)")
    sp.add_argument("--cross-encoder", help="model of the bm25>>crossencoder and WorldTree "
                    "ltr-crossencoder pipelines (from `mathir train-reranker`)")
    sp.add_argument("--bi-encoder", help="model of the WorldTree ltr-dense pipelines "
                    "(from `mathir train-reranker --kind bi-encoder`)")
    sp.add_argument("--format", choices=FORMATS + ("html",), default="table",
                    help="html writes a self-contained report beside the runs")
    sp.add_argument("--baseline", help="pipeline the others are tested against (default: first)")
    sp.add_argument("--test", choices=("t", "wilcoxon"), default="t", help="paired test")
    sp.add_argument("--correction", default="holm",
                    help="multiple-testing correction (statsmodels method; default holm)")
    sp.add_argument("--workers", type=int, default=1,
                    help="run topic batches in N local processes")
    sp.add_argument("--ray", metavar="ADDRESS",
                    help="run topic batches on a Ray cluster ('auto', an address, or 'local')")
    sp.add_argument("--no-reuse", action="store_true",
                    help="recompute runs even when their manifests still match")

    sp = sub.add_parser("index", help="build (or reuse) the task's index")
    sp.add_argument("task")
    common(sp)
    sp.add_argument("--index", required=True, help="index directory")

    sp = sub.add_parser("run", help="run one pipeline and write its run file")
    sp.add_argument("task")
    common(sp)
    sp.add_argument("--pipeline", required=True)
    sp.add_argument("--index", help="index directory (default: under the run's folder)")
    sp.add_argument("--out", required=True, help="run file to write")
    sp.add_argument("--run-format", choices=("arqmath", "trec", "predict"), default="arqmath",
                    help="run file format (WorldTree: arqmath means its own 'predict' format)")
    sp.add_argument("--cross-encoder", help="model of the bm25>>crossencoder and WorldTree "
                    "ltr-crossencoder pipelines (from `mathir train-reranker`)")
    sp.add_argument("--bi-encoder", help="model of the WorldTree ltr-dense pipelines "
                    "(from `mathir train-reranker --kind bi-encoder`)")

    sp = sub.add_parser("evaluate", help="evaluate run files with the task's measures")
    sp.add_argument("task")
    sp.add_argument("--qrels", required=True)
    sp.add_argument("--topics", help="topic file: a run line for another topic is an error")
    sp.add_argument("--formula-index", help="formula index TSV (Task 2: formula id -> visual id)")
    sp.add_argument("--qrels-key", choices=("visual_id", "formula_id"),
                    help="Task 2: what the qrels' doc ids are (default visual_id; formula-id "
                         "qrels become visual-id qrels with the maximum relevance)")
    sp.add_argument("--assignments", help="Task 3: run/topic -> judged answer id file")
    sp.add_argument("--tablestore", help="WorldTree: tablestore tables/ directory (default: "
                    "found beside the questions file)")
    sp.add_argument("--model", help="Task 3 LO/CS: tokenizer and BERTScore model, a local path "
                    "or a cached name (default: packaged all-MiniLM-L6-v2; official: "
                    "witiko/mathberta)")
    sp.add_argument("--layer", type=int, help="Task 3 CS: BERTScore layer (default: 6; 10 for "
                    "witiko/mathberta)")
    sp.add_argument("--tokenizer", help="Task 3 LO: tokenizer (default: the model's)")
    sp.add_argument("--format", choices=FORMATS, default="table")
    sp.add_argument("runs", nargs="*", metavar="RUN",
                    help="run files (arqmath-task3 with --assignments: default every run it names)")

    sp = sub.add_parser("train-reranker", help="fine-tune a cross-encoder on the task's qrels "
                        "(needs mathir[neural])")
    sp.add_argument("task")
    common(sp)
    sp.add_argument("--base", help="model to start from: a local path or cached name "
                    "(default: packaged all-MiniLM-L6-v2)")
    sp.add_argument("--out", required=True, help="directory for the trained model")
    sp.add_argument("--epochs", type=int, default=1)
    sp.add_argument("--batch-size", type=int, default=16)
    sp.add_argument("--max-pairs", type=int, help="train on a random sample of this many pairs")
    sp.add_argument("--max-steps", type=int, help="stop after this many steps")
    sp.add_argument("--negatives", type=int, default=3, help="negatives per positive (default 3)")
    sp.add_argument("--rel", type=int, help="lowest relevant label (default: 2 for graded qrels)")
    sp.add_argument("--max-length", type=int, default=256, help="word pieces per pair")
    sp.add_argument("--kind", choices=("cross-encoder", "bi-encoder"), default="cross-encoder",
                    help="cross-encoder (binary cross-entropy on pairs; default) or bi-encoder "
                    "(in-batch negatives)")
    sp.add_argument("--first-stage", default="bm25",
                    help="pipeline whose results give the negatives (default: bm25)")
    sp.add_argument("--negative-depth", type=int,
                    help="draw negatives at random from the first stage's top N (default: "
                    "its best-ranked non-relevant documents)")
    sp.add_argument("--learning-rate", type=float, default=2e-5)
    sp.add_argument("--warmup", type=float, default=0.1,
                    help="fraction of steps with a rising learning rate (default: 0.1)")
    sp.add_argument("--seed", type=int, default=0,
                    help="seed of the negative sampling, the batches and the new weights "
                    "(default: 0); another seed gives another model for an ensemble")
    sp.add_argument("--loss", choices=("pointwise", "listwise"), default="pointwise",
                    help="cross-encoder loss: pointwise (binary cross-entropy; default) or "
                    "listwise (softmax over a positive and its query's negatives)")

    sp = sub.add_parser("answers", help="check model answers against gold answers (JSON lines)")
    sp.add_argument("--input", required=True, help='JSON lines {"response", "gold", ["extract", '
                    '"check", "policy"]}')
    sp.add_argument("--format", choices=("json", "table"), default="json",
                    help="json: each line back with extracted and correct added (default); "
                    "table: counts and accuracy")
    sp.add_argument("--timeout", type=float, default=5.0,
                    help="seconds per symbolic (LaTeX) check (default: 5)")
    return p


def _data(task, args):
    return task.data(args.data, args.year or args.split, args.collection)


def _cmd_demo(args) -> None:
    from mathir.evaluation.tables import format_table
    from mathir.tasks import TASKS, run_experiment

    for name, task in TASKS.items():
        res = run_experiment(task, out=args.out, quiet=args.quiet)
        print(f"== {name} ({task.description}) on the embedded sample ==")
        print(format_table(res.table, "table"))
        for pipe, path in res.runs.items():
            print(f"  {pipe}: {path}")
        print()


def _cmd_experiment(args) -> None:
    from mathir.evaluation.tables import format_table
    from mathir.tasks import get_task, run_experiment

    task = get_task(args.task)
    pipes = [p.strip() for p in args.pipelines.split(",") if p.strip()] if args.pipelines else None
    res = run_experiment(task, _data(task, args), pipes, out=args.out, index_dir=args.index,
                         quiet=args.quiet, baseline=args.baseline, test=args.test,
                         correction=args.correction, workers=args.workers, ray_address=args.ray,
                         reuse=not args.no_reuse)
    if res.table is None:
        print("no qrels for these topics; runs written:", file=sys.stderr)
    elif args.format == "html":
        from mathir.tasks import write_experiment_report

        print(write_experiment_report(res))
    else:
        print(format_table(res.table, args.format, significance=res.significance))
        if res.significance is not None and args.format != "json":
            print(f"† significantly different from {res.baseline} (paired {args.test}-test, "
                  f"{args.correction} correction, p < 0.05)")
    if args.format != "json":
        for pipe, path in res.runs.items():
            how = "reused: manifest matches" if pipe in res.reused else f"{res.seconds[pipe]:.1f}s"
            print(f"{pipe}: {path} ({how})", file=sys.stderr)
    for what, path in getattr(res, "files", {}).items():
        print(f"{what}: {path}", file=sys.stderr)


def _cmd_index(args) -> None:
    from mathir.tasks import get_task

    task = get_task(args.task)
    idx = task.index(_data(task, args), args.index, quiet=args.quiet)
    print(f"{idx.path}: {idx.num_docs} documents")


def _cmd_run(args) -> None:
    from mathir.tasks import get_task

    task = get_task(args.task)
    data = _data(task, args)
    out = Path(args.out)
    index = task.index(data, args.index, quiet=args.quiet, cache_root=out.parent / ".index")
    topics = task.read_topics(data.topics)
    pipe = task.pipeline(args.pipeline, index, verbose=not args.quiet)
    results = pipe.transform(topics)
    task.write_run(results, out, name=out.stem, format=args.run_format, topics=topics["qid"])
    print(f"{out}: {results['qid'].nunique()} topics")


def _cmd_evaluate(args) -> None:
    from mathir.evaluation.tables import format_table
    from mathir.tasks import evaluate_runs

    options = {k: v for k, v in (("formula_index", args.formula_index),
                                 ("assignments", args.assignments),
                                 ("tablestore", args.tablestore),
                                 ("qrels_key", args.qrels_key)) if v}
    options.update({k: v for k, v in (("model", args.model), ("layer", args.layer),
                                      ("tokenizer", args.tokenizer)) if v is not None})
    table = evaluate_runs(args.task, args.qrels, args.runs, args.topics, **options)
    print(format_table(table, args.format))


def _cmd_answers(args) -> None:
    import json

    from mathir.answers.checking import check_records, read_answer_records

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


COMMANDS = {"demo": _cmd_demo, "experiment": _cmd_experiment, "index": _cmd_index,
            "run": _cmd_run, "evaluate": _cmd_evaluate}
COMMANDS["answers"] = _cmd_answers


def _cmd_train_reranker(args) -> None:
    from mathir.pipelines.reranker_training import (
        task_training_pairs,
        train_bi_encoder,
        train_cross_encoder,
    )
    from mathir.tasks import get_task

    if args.kind == "bi-encoder" and args.loss != "pointwise":
        raise InputError("--loss is a cross-encoder option: the bi-encoder learns from "
                         "in-batch negatives")
    task = get_task(args.task)
    labels = (args.year or args.split or "").split(",")
    datasets = [task.data(args.data, label or None, args.collection) for label in labels]
    pairs = task_training_pairs(task, datasets, rel=args.rel, negatives_per_positive=args.negatives,
                                first_stage=args.first_stage, max_pairs=args.max_pairs,
                                negative_depth=args.negative_depth, seed=args.seed,
                                quiet=args.quiet)
    print(f"{len(pairs)} pairs ({int(pairs['label'].sum())} positive) from "
          f"{pairs['qid'].nunique()} topics", file=sys.stderr)
    options = {} if args.kind == "bi-encoder" else {"loss": args.loss}
    train = train_bi_encoder if args.kind == "bi-encoder" else train_cross_encoder
    out = train(pairs, args.out, base=args.base, epochs=args.epochs, batch_size=args.batch_size,
                learning_rate=args.learning_rate, max_length=args.max_length,
                warmup=args.warmup, max_steps=args.max_steps, seed=args.seed, quiet=args.quiet,
                **options)
    print(f"{out}: {args.kind} trained on {len(pairs)} pairs")


COMMANDS["train-reranker"] = _cmd_train_reranker


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mathir`` console script; returns the exit status."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # evaluate's RUN ... may be empty (nargs="*"), so argparse matches it before the
        # options and leaves run files written after them over: they are runs too.
        if args.command == "evaluate" and not any(e.startswith("-") for e in extra):
            args.runs = [*args.runs, *extra]
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.version:
        from mathir import __version__

        print(__version__)
        return 0
    if not args.command:
        _parser().print_help()
        return 2
    if getattr(args, "quiet", False):
        os.environ["TQDM_DISABLE"] = "1"
    if getattr(args, "cross_encoder", None):  # read by the bm25>>crossencoder pipeline
        os.environ["MATHIR_CROSS_ENCODER"] = args.cross_encoder
    if getattr(args, "bi_encoder", None):  # read by the WorldTree ltr-dense pipelines
        os.environ["MATHIR_BI_ENCODER"] = args.bi_encoder
    warnings.simplefilter("default")
    warnings.formatwarning = lambda msg, cat, *a, **k: f"warning: {msg}\n"
    try:
        COMMANDS[args.command](args)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
