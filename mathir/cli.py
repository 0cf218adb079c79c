"""The ``mathir`` command: a thin layer that parses arguments and calls the library."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import warnings
from pathlib import Path

from mathir.errors import CALLER, InputError
from mathir.storage import USER_OS_ERRORS, require_output_file, require_writable_dir

FORMATS = ("table", "markdown", "latex", "json")
#: the keys of mathir.neural.backends.BACKENDS, written here so that parsing arguments
#: imports no numpy (tests/neural/test_encoders.py checks that they agree)
BACKEND_NAMES = ("torch", "onnx", "onnx-int8", "openvino", "openvino-int8")


def tasks_overview() -> str:
    """Every registered task with its data labels, pipelines (* = run by default) and
    measures: what ``mathir tasks`` prints and ``mathir experiment --help`` ends with.

    >>> print(tasks_overview().splitlines()[0])
    arqmath-task1: ARQMath Task 1: answer retrieval for Math StackExchange questions
    """
    from mathir.experiment import plugin_pipelines_by_task
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


def _parser(overview: bool = True) -> argparse.ArgumentParser:
    """The argument parser; ``overview``: end ``experiment --help`` with the tasks (which
    scans the installed packages' entry points, so only when help is asked for)."""
    p = argparse.ArgumentParser(prog="mathir", description="Math-aware retrieval experiments.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    _add_demo(sub)
    _add_experiment(sub, overview)
    _add_index(sub)
    _add_run(sub)
    _add_evaluate(sub)
    _add_train_reranker(sub)
    _add_reproduce(sub)
    _add_view(sub)
    _add_tasks(sub)
    _add_answers(sub)
    return p


def _add_common(sp) -> None:
    """``--quiet`` and the options that find a task's files: ``--data``, ``--collection``,
    ``--year`` or ``--split``."""
    sp.add_argument("--quiet", action="store_true", help="no progress bars")
    sp.add_argument("--data", help="directory with the official files (default: embedded sample)")
    sp.add_argument("--collection", help="collection file/directory (default: found under --data)")
    g = sp.add_mutually_exclusive_group()
    g.add_argument("--year", help="evaluation year (ARQMath: 2020, 2021, 2022)")
    g.add_argument("--split", help="split (WorldTree, word problems)")


def _add_judged(sp, default: str) -> None:
    """``--judged``: which judgments score the runs (tasks with ``qrels_in_collection``)."""
    sp.add_argument("--judged", choices=("collection", "file"),
                    help="which judgments score the runs (ARQMath Task 1): collection = those "
                    "of the documents the collection holds, file = every judgment of the "
                    f"qrels file (default: {default})")


def _add_measures(sp) -> None:
    """``--measures``: ir_measures measures instead of (``+...``: beside) the task's."""
    sp.add_argument("--measures", metavar="MEASURES",
                    help="ir_measures measures, comma-separated, instead of the task's (a "
                    "leading + keeps the task's beside them), e.g. "
                    "\"nDCG(judged_only=True)@10,R(rel=2)@1000\"; columns are named as "
                    "ir_measures writes them")


def _add_qrels_choice(sp) -> None:
    """``--qrels``: a published variant of the task's judgments, or a file."""
    sp.add_argument("--qrels", metavar="VARIANT|FILE",
                    help="judge with a published variant of the task's qrels ('mathir tasks' "
                    "lists them, e.g. all for ARQMath Task 1 2021) or a qrels file "
                    "(default: the official qrels)")


def _add_demo(sub) -> None:
    """``mathir demo``: every task on the embedded samples."""
    sp = sub.add_parser("demo", help="every task on the embedded samples")
    sp.add_argument("--out", default="runs/demo", help="output folder (default: runs/demo)")
    sp.add_argument("--quiet", action="store_true", help="no progress bars")


def _add_experiment(sub, overview: bool) -> None:
    """``mathir experiment``: index, run the task's pipelines, compare them."""
    sp = sub.add_parser("experiment", help="index, run the task's pipelines, compare them",
                        epilog="tasks (* = default pipelines):\n" + tasks_overview()
                        if overview else None,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    sp.add_argument("task")
    _add_common(sp)
    sp.add_argument("--pipelines", help="comma-separated pipeline names (default: the task's "
                    "defaults, plus those of --pipeline and --pipelines-file)")
    _add_own_pipelines(sp)
    sp.add_argument("--out", default="runs", help="output folder for run files (default: runs)")
    sp.add_argument("--index", help="index directory (default: one per collection and index builder under $MATHIR_INDEX_DIR, else ~/.cache/mathir/indexes; shared by every command and pt.get_dataset)")
    _add_model_options(sp)
    sp.add_argument("--format", choices=FORMATS + ("html",), default="table",
                    help="html writes a self-contained report beside the runs")
    sp.add_argument("--run-format", choices=_run_formats(),
                    help="run files (default: the task's own format, the first of its run "
                    "formats in 'mathir tasks'): arqmath (the ARQMath-2/3 submission format, 5 "
                    "columns; WorldTree: its predict format) or trec (6 columns)")
    sp.add_argument("--per-topic", metavar="FILE.csv",
                    help="write per-topic scores (qid, run, one column per measure) there, "
                    "and the significance tests to FILE.significance.csv")
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
    _add_judged(sp, "collection, recorded in each run's manifest")
    _add_measures(sp)
    _add_qrels_choice(sp)


def _add_index(sub) -> None:
    """``mathir index``: build (or reuse) the task's index."""
    sp = sub.add_parser("index", help="build (or reuse) the task's index")
    sp.add_argument("task")
    _add_common(sp)
    sp.add_argument("--index", help="index directory (default: one per collection and index builder under $MATHIR_INDEX_DIR, else ~/.cache/mathir/indexes; shared by every command and pt.get_dataset)")
    sp.add_argument("--shards", type=int, default=None, metavar="N",
                    help="index N slices of the collection side by side: arqmath-task2 "
                         "merges them into the same index (or keeps them, with --scoring "
                         "bm25-impacts); arqmath-task1 keeps them (with --scoring "
                         "bm25-impacts)")
    sp.add_argument("--ray", default=None, metavar="ADDRESS",
                    help="with --shards: index the slices as Ray tasks ('auto', an address, "
                         "or 'local')")
    sp.add_argument("--scoring", choices=("bm25", "bm25-impacts"), default=None,
                    help="arqmath-task1 and -task2: bm25 (default for a new index; BM25 "
                         "computed when searching) or bm25-impacts (the shards kept and "
                         "searched side by side, BM25 impacts from the whole collection: "
                         "the same ranking for any N); default: an existing index's")


def _add_run(sub) -> None:
    """``mathir run``: run one pipeline and write its run file."""
    sp = sub.add_parser("run", help="run one pipeline and write its run file")
    sp.add_argument("task")
    _add_common(sp)
    sp.add_argument("--pipeline", required=True, metavar="NAME[=MODULE:FACTORY]",
                    help="a pipeline of the task, of an entry point or of --pipelines-file, "
                    "or NAME=package.module:factory")
    sp.add_argument("--pipelines-file", action="append", metavar="FILE.py",
                    help="a Python file defining PIPELINES = {name: pipeline}")
    sp.add_argument("--index", help="index directory (default: one per collection and index builder under $MATHIR_INDEX_DIR, else ~/.cache/mathir/indexes; shared by every command and pt.get_dataset)")
    sp.add_argument("--out", required=True, help="run file to write")
    sp.add_argument("--run-format", choices=_run_formats(),
                    help="run file format (default: the task's own; WorldTree: arqmath means "
                    "its own 'predict' format)")
    _add_model_options(sp)


def _add_evaluate(sub) -> None:
    """``mathir evaluate``: evaluate run files with the task's measures."""
    sp = sub.add_parser("evaluate", help="evaluate run files with the task's measures")
    sp.add_argument("task")
    sp.add_argument("--qrels", required=True)
    sp.add_argument("--topics", help="topic file: a run line for another topic is an error")
    sp.add_argument("--qrels-duplicates", choices=("error", "last"), default="error",
                    help="a document judged twice for a topic: an error, as in trec_eval "
                    "(default), or the last judgment counts, as in ir_measures")
    for option, tasks in _evaluation_options().items():
        metavar = None if option.choices else option.metavar or option.name.upper()
        sp.add_argument(option.flag, dest=f"option_{option.name}", type=option.type,
                        choices=option.choices or None, metavar=metavar,
                        help=f"{option.help} [{', '.join(tasks)}]")
    sp.add_argument("--format", choices=FORMATS, default="table")
    _add_judged(sp, "as each run's manifest records, as its experiment scored it; file "
                "for a run without one")
    _add_measures(sp)
    sp.add_argument("runs", nargs="*", metavar="RUN",
                    help="run files (arqmath-task3 with --assignments: default every run it names)")


def _add_train_reranker(sub) -> None:
    """``mathir train-reranker``: fine-tune a cross-encoder (or bi-encoder) on qrels."""
    sp = sub.add_parser("train-reranker", help="fine-tune a cross-encoder on the task's qrels "
                        "(needs mathir[neural])")
    sp.add_argument("task")
    _add_common(sp)
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


def _add_reproduce(sub) -> None:
    """``mathir reproduce worldtree``: train a headline's models, evaluate, write the table."""
    sp = sub.add_parser("reproduce", help="train a headline's models with fixed seeds, evaluate "
                        "them and write its table (needs mathir[neural])")
    sp.add_argument("target", choices=("worldtree",),
                    help="worldtree: the bi-encoder and the two cross-encoder stages of "
                    "docs/worldtree.md; ltr-dense, ltr-crossencoder, ltr-dense-crossencoder")
    sp.add_argument("--data", help="the WorldTree distribution (default: the embedded sample, "
                    "a test of the command, not the headline)")
    g = sp.add_mutually_exclusive_group()
    g.add_argument("--seeds", type=int, default=3, metavar="N",
                   help="train and evaluate seeds 0..N-1 (default: 3)")
    g.add_argument("--seed", type=int, action="append", metavar="S",
                   help="this seed instead (repeatable)")
    sp.add_argument("--models", default="models/reproduce", metavar="DIR",
                    help="trained models, each with its manifest; reused when the manifest "
                    "matches (default: models/reproduce, ignored by git)")
    sp.add_argument("--out", default="runs/reproduce", metavar="DIR",
                    help="runs and the table: worldtree.md and worldtree.json "
                    "(default: runs/reproduce)")
    sp.add_argument("--no-test", action="store_true", help="evaluate on Dev only")
    sp.add_argument("--combine", nargs="+", metavar="REPORT.json",
                    help="train nothing: put the worldtree.json reports of single seeds "
                    "(one per working session) together into one table in --out; with "
                    "--ensemble, also evaluate their seed ensemble (the models must be here)")
    sp.add_argument("--ensemble", action="store_true",
                    help="also the seed ensemble (every seed's models, scores averaged)")
    sp.add_argument("--json", action="store_true", help="print the report as one JSON object")
    sp.add_argument("--quiet", action="store_true", help="no progress lines, no library warnings")
    # Tiny configurations (tests, smoke runs): a few questions, steps and word pieces.
    sp.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    sp.add_argument("--max-questions", type=int, help=argparse.SUPPRESS)
    sp.add_argument("--max-steps", type=int, help=argparse.SUPPRESS)
    sp.add_argument("--sequential", action="store_true", help=argparse.SUPPRESS)


def _add_view(sub) -> None:
    """``mathir view``: the HTML report and run explorer of any run files."""
    sp = sub.add_parser("view", help="write the HTML report and run explorer of any run "
                        "files (the page `experiment --format html` writes)")
    sp.add_argument("runs", nargs="+", metavar="RUN", help="run files (named by file stem)")
    sp.add_argument("--task", required=True, help="the task the runs are for")
    _add_common(sp)
    sp.add_argument("--out", help="HTML file to write (default: report.html beside the first run)")
    sp.add_argument("--baseline", help="run (file stem) the others are compared with "
                    "(default: the first)")
    sp.add_argument("--depth", type=int, default=20,
                    help="results listed per run and topic (default 20; the page shows the "
                    "top k of them, k chosen in the page)")
    _add_judged(sp, "collection")
    _add_measures(sp)
    _add_qrels_choice(sp)


def _add_tasks(sub) -> None:
    """``mathir tasks``: the tasks, their pipelines and measures."""
    sp = sub.add_parser("tasks", help="the tasks, their pipelines and measures")
    sp.add_argument("--format", choices=("text", "json"), default="text")


def _add_answers(sub) -> None:
    """``mathir answers``: check model answers against gold answers."""
    sp = sub.add_parser("answers", help="check model answers against gold answers (JSON lines)")
    sp.add_argument("--input", required=True, help='JSON lines {"response", "gold", ["extract", '
                    '"check", "policy"]}')
    sp.add_argument("--format", choices=("json", "table"), default="json",
                    help="json: each line back with extracted and correct added (default); "
                    "table: counts and accuracy")
    sp.add_argument("--timeout", type=float, default=5.0,
                    help="seconds per symbolic (LaTeX) check, above 0 (default: 5; inf: no "
                    "limit)")


def _add_own_pipelines(sp) -> None:
    """``--pipeline NAME=MODULE:FACTORY`` and ``--pipelines-file FILE.py``."""
    sp.add_argument("--pipeline", action="append", dest="own", metavar="NAME=MODULE:FACTORY",
                    help="add your pipeline: a factory (index) -> pt.Transformer, or a "
                    "transformer, importable from the current folder or an installed package "
                    "(repeatable)")
    sp.add_argument("--pipelines-file", action="append", metavar="FILE.py",
                    help="add the pipelines of a Python file defining PIPELINES = "
                    "{name: transformer | factory | 'module:factory'} (repeatable)")


def _add_model_options(sp) -> None:
    """``--cross-encoder`` and ``--bi-encoder``: keyword arguments of the factories."""
    sp.add_argument("--cross-encoder", metavar="DIR", help="cross-encoder model (from `mathir "
                    "train-reranker`): the cross_encoder argument of every pipeline taking one "
                    "(bm25>>crossencoder, WorldTree ltr-crossencoder, ltr-dense-crossencoder)")
    sp.add_argument("--bi-encoder", metavar="DIR", help="bi-encoder model (from `mathir "
                    "train-reranker --kind bi-encoder`): the bi_encoder argument of every "
                    "pipeline taking one (WorldTree ltr-dense, ltr-dense-crossencoder)")
    sp.add_argument("--backend", choices=BACKEND_NAMES,
                    help="how the bi- and cross-encoders compute: torch (default; PyTorch "
                    "float32), onnx (ONNX Runtime float32), onnx-int8 (8-bit weights), "
                    "openvino (OpenVINO float32) or openvino-int8 (8-bit weights and "
                    "activations, calibrated on the embedded sample), "
                    "exported locally and cached on first use; the backend argument of every "
                    "pipeline taking one (bm25>>biencoder, dense, fusion, bm25>>crossencoder)")
    sp.add_argument("--dense-search", metavar="KIND[:NAME=N,...]",
                    help="how dense retrieval searches the passage vectors: exhaustive "
                    "(default; NumPy scan) or a FAISS hnsw / ivf index built beside them, "
                    "candidates rescored exactly; parameters after a colon, e.g. "
                    "ivf:nprobe=128,f16=1 (f16=1: rescore from float16 copies, half the "
                    "memory) (the search argument of dense, fusion)")


def _options(args) -> dict[str, str]:
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


def _split_reference(spec: str) -> tuple[str, str]:
    name, sep, target = spec.partition("=")
    if not sep or not name.strip() or ":" not in target:
        raise InputError(f"--pipeline {spec!r}: expected NAME=package.module:factory")
    return name.strip(), target.strip()


def _own_pipelines(args) -> dict[str, object]:
    """The pipelines of ``--pipelines-file`` and ``--pipeline NAME=MODULE:FACTORY``."""
    from mathir.experiment import load_pipelines_file

    found: dict[str, object] = {}
    for file in args.pipelines_file or []:
        for name, source in load_pipelines_file(file).items():
            if name in found:
                raise InputError(f"two pipelines are named {name!r}", path=file)
            found[name] = source
    refs = [_split_reference(spec) for spec in getattr(args, "own", None) or []]
    if refs and os.getcwd() not in sys.path:
        # `module:factory` from the current folder, as uvicorn and gunicorn resolve apps
        # (the console script's sys.path starts with its own bin folder).
        sys.path.insert(0, os.getcwd())
    for name, target in refs:
        if name in found:
            raise InputError(f"two pipelines are named {name!r}")
        found[name] = target
    return found


def _data(task, args):
    """The task's files: ``--data``, else ``$MATHIR_DATA`` where a year or split asks for
    real data (as ``pt.get_dataset`` reads it), else the embedded sample."""
    from mathir.tasks import data_folder

    year = args.year or args.split
    folder = data_folder(args.data, bool(year or args.collection))
    data = task.data(folder, year, args.collection, qrels=getattr(args, "qrels", None))
    # defaults said out loud, first on stderr
    if folder is None:
        print(f"note: no --data: {task.name} on its embedded sample "
              f"({len(task.topics(data))} topics; give --data DIR for the real files)",
              file=sys.stderr)
    elif year is None and data.label not in ("sample", None) and (task.years or task.splits):
        what = "year" if task.years else "split"
        print(f"note: no --{what}: {data.label}, the default (--{what} chooses)", file=sys.stderr)
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


def _selection(task, args, own: dict[str, object]) -> list:
    """What ``run_experiment`` runs: ``--pipelines`` (names of the task, of entry points
    or of your own pipelines), or else the task's defaults and all of your own."""
    if not args.pipelines:
        return [*task.default_pipelines, *({n: s} for n, s in own.items())]
    names = [p.strip() for p in args.pipelines.split(",") if p.strip()]
    given = [_split_reference(spec)[0] for spec in args.own or []]
    left_out = [n for n in given if n not in names]
    if left_out:
        raise InputError(f"--pipeline {left_out[0]} is not among --pipelines "
                         f"{args.pipelines}: add it there, or leave --pipelines out")
    return [{n: own[n]} if n in own else n for n in names]


def _cmd_experiment(args) -> None:
    from mathir.experiment import run_experiment
    from mathir.tasks import get_task

    task = get_task(args.task)
    _check_experiment_outputs(task, args)
    own = _own_pipelines(args)
    selection = _selection(task, args, own)
    _check_choices(task, args, selection)
    res = run_experiment(task, _data(task, args), selection, out=args.out,
                         index_dir=args.index, quiet=args.quiet, baseline=args.baseline,
                         test=args.test, correction=args.correction, workers=args.workers,
                         ray_address=args.ray, reuse=not args.no_reuse, options=_options(args),
                         run_format=args.run_format, judged=args.judged,
                         measures=args.measures)
    _print_experiment(res, args)


def _check_choices(task, args, selection) -> None:
    """What ``run_experiment`` checks before any work, checked before the data are located
    (so that a mistake is the only line, before the notes on defaults)."""
    from mathir.evaluation.evaluated import parse_measures
    from mathir.evaluation.significance import check_test
    from mathir.experiment import check_judged, check_workers, resolve_pipelines

    check_workers(args.workers)
    check_test(args.test, args.correction)
    if args.measures is not None:
        parse_measures(args.measures)
    if args.judged is not None:
        check_judged(task, args.judged)
    task.check_run_format(args.run_format or task.run_formats[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # said again when the experiment resolves them
        resolve_pipelines(task, selection, _options(args))


def _check_experiment_outputs(task, args) -> None:
    """``--out`` and ``--per-topic`` can be written, checked before any work."""
    require_writable_dir(args.out, "--out folder")
    if args.per_topic:
        _output_file(args.per_topic, "--per-topic file")
        if not task.has_per_topic:
            raise InputError(f"--per-topic: {task.name} has no per-topic scores (its measures "
                             "are means only)")


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
    from mathir.experiment import resolve_pipelines, write_pipeline_run
    from mathir.tasks import get_task

    task = get_task(args.task)
    run_format = task.check_run_format(args.run_format or task.run_formats[0])
    out = require_output_file(args.out, "--out run file")
    own = _own_pipelines(argparse.Namespace(
        pipelines_file=args.pipelines_file, own=[args.pipeline] if "=" in args.pipeline else []))
    name = args.pipeline.partition("=")[0].strip()
    pipeline = resolve_pipelines(task, [{name: own[name]} if name in own else name],
                                 _options(args))[name]
    data = _data(task, args)
    write_pipeline_run(task, pipeline, data, out, index_dir=args.index, quiet=args.quiet,
                       run_format=run_format)
    print(f"{out}: {task.read_run(out)['qid'].nunique()} topics (manifest: "
          f"{out.with_name(out.stem + '.manifest.json').name})")


def _run_formats() -> list[str]:
    """The run formats of every registered task (``--run-format``'s choices)."""
    from mathir.tasks import TASKS

    return list(dict.fromkeys(f for t in TASKS.values() for f in t.run_formats))


def _evaluation_options() -> dict:
    """Every registered task's evaluation options (:class:`mathir.tasks.Option`), each
    with the tasks that declare it: the flags of ``mathir evaluate``."""
    from mathir.tasks import TASKS

    found: dict = {}
    for name, task in TASKS.items():
        for option in task.options:
            same = next((o for o in found if o.name == option.name), option)
            found.setdefault(same, []).append(name)
    return found


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

    from mathir.answers.checking import check_records, read_answer_records
    from mathir.answers.latex import symbolic_timeout

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
    if args.format == "text":
        print(tasks_overview())
        return
    import json

    from mathir.experiment import plugin_pipelines_by_task
    from mathir.tasks import TASKS

    plugins = plugin_pipelines_by_task()
    print(json.dumps({name: {"description": t.description, "years": list(t.years),
                             "pipelines": list(dict.fromkeys([*t.pipelines,
                                                              *plugins.get(name, {})])),
                             "default_pipelines": list(t.default_pipelines),
                             "measures": {m.name: m.description for m in t.measures},
                             "primary_measure": t.primary_measure,
                             "run_formats": list(t.run_formats),
                             "options": {o.flag: o.help for o in t.options},
                             "qrels_variants": {v.name: v.what for v in t.qrels_variants},
                             "datasets": [f"{t.dataset or name}/{s.name}" for s in t.splits],
                             "data": None if t.published is None else
                             {"what": t.published.what, "url": t.published.url}}
                      for name, t in TASKS.items()}))


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

    from mathir.reproduction.worldtree import combine_reports, reproduce_worldtree
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


class Terminated(BaseException):
    """SIGTERM arrived: unwind (removing temporaries, releasing locks), then exit 143."""


# Seconds a SIGTERM may wait for Python code: while the main thread is inside a long
# native call (PISA compiling an index), the handler cannot run before the call returns.
TERMINATE_GRACE_S = 3.0


def _terminate(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM kills at once
    raise Terminated


@contextlib.contextmanager
def _terminate_cleanly():
    """Turn SIGTERM into :class:`Terminated` while a command runs.

    Python's default SIGTERM ends the process without running ``finally`` blocks, and so
    leaves the temporary files of a run or index being written; as an exception it
    unwinds like Ctrl-C. Where the main thread sits in native code, a watchdog thread
    (woken through ``signal.set_wakeup_fd``) ends the process after
    :data:`TERMINATE_GRACE_S`; the next run removes what that leaves. (Only the main
    thread can install a handler.)
    """
    import threading

    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread
        yield
        return
    read, write = os.pipe()
    os.set_blocking(write, False)
    previous_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    done = threading.Event()

    def watchdog() -> None:
        while not done.is_set():
            woken = os.read(read, 512)
            if not woken:  # the pipe was closed: the command is over
                return
            if signal.SIGTERM in woken and not done.wait(TERMINATE_GRACE_S):
                os.write(2, b"error: terminated\n")
                os._exit(128 + signal.SIGTERM)

    thread = threading.Thread(target=watchdog, name="mathir-sigterm", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        signal.set_wakeup_fd(previous_fd)
        signal.signal(signal.SIGTERM, previous)
        os.close(write)
        thread.join()
        os.close(read)


@contextlib.contextmanager
def _warnings_as_lines():
    """Each warning shown once per place, as one ``warning: ...`` line (restored after)."""
    previous = warnings.formatwarning
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.formatwarning = lambda msg, cat, *a, **k: f"warning: {msg}\n"
        try:
            yield
        finally:
            warnings.formatwarning = previous


def _quiet(quiet: bool):
    """``--quiet``: no progress bar, and no warning or log message of the libraries."""
    if not quiet:
        return contextlib.nullcontext()
    from mathir.experiment import quiet_libraries

    return quiet_libraries()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mathir`` console script; returns the exit status."""
    token = CALLER.set("cli")  # messages name options as --flags
    try:
        return _main(argv)
    finally:
        CALLER.reset(token)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = _parser(overview=any(a in ("-h", "--help") for a in argv))
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
    try:
        with _terminate_cleanly(), _warnings_as_lines(), _quiet(getattr(args, "quiet", False)):
            COMMANDS[args.command](args)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("error: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except BrokenPipeError:
        return 0
    except OSError as e:
        # A read-only or full disk, a folder where a file goes: the user's to fix. Other
        # OS errors (a missing internal file) are bugs and keep their traceback.
        if e.errno not in USER_OS_ERRORS:
            raise
        where = f"{e.filename}: " if e.filename else ""
        print(f"error: {where}{e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
