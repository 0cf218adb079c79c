"""The argument parser of ``mathir``: its commands, their options and help (the
command-line contract, rendered in docs/cli.md by scripts/cli_reference.py). An option
several commands take is declared once; an option list of a command holds options
(:func:`_option`), lists of mutually exclusive options and functions adding the options
the tasks declare. Parsing imports the task declarations, no other library."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

FORMATS = ("table", "markdown", "latex", "json")
#: an option: its flags and the keyword arguments of ``add_argument``
Option = tuple[tuple[str, ...], dict[str, Any]]


def _option(*flags: str, **kwargs: Any) -> Option:
    return flags, kwargs


QUIET = _option("--quiet", action="store_true", help="no progress bars")
#: --quiet and the options that find a task's files: --data, --collection, --year or --split
FILES = [QUIET,
         _option("--data", help="directory with the official files (default: embedded sample)"),
         _option("--collection", help="collection file/directory (default: found under --data)"),
         [_option("--year", help="evaluation year (ARQMath: 2020, 2021, 2022)"),
          _option("--split", help="split (WorldTree, word problems)")]]
INDEX = _option("--index", help="index directory (default: one per collection and index "
                "builder under $MATHIR_INDEX_DIR, else ~/.cache/mathir/indexes; shared by every "
                "command and pt.get_dataset)")
MEASURES = _option("--measures", metavar="MEASURES", help="ir_measures measures, "
                   "comma-separated, instead of the task's (a leading + keeps the task's beside "
                   "them), e.g. \"nDCG(judged_only=True)@10,R(rel=2)@1000\"; columns are named "
                   "as ir_measures writes them")
QRELS = _option("--qrels", metavar="VARIANT|FILE", help="judge with a published variant of the "
                "task's qrels ('mathir tasks' lists them: official, the task's own, or e.g. all "
                "for ARQMath Task 1 2021) or a qrels file (default: official)")
JUDGED = _option("--judged", choices=("collection", "file"), help="which judgments score the "
                 "runs (ARQMath Task 1): collection = those of the documents the collection "
                 "holds, file = every judgment of the qrels file (default: collection when a "
                 "collection is known: the experiment's, --data/--collection/--year, the one "
                 "the runs' manifests record, or the data's own with its qrels; else file)")
PER_TOPIC = _option("--per-topic", metavar="FILE.csv", help="write per-topic scores (qid, run, "
                    "one column per measure) there, and the significance tests to "
                    "FILE.significance.csv")


def _scoring(baseline: str) -> list:
    """The options of every command that scores (experiment, evaluate, view): the same
    words, the same defaults."""
    return [JUDGED, MEASURES, QRELS, PER_TOPIC,
            _option("--baseline", help=f"{baseline} the others are tested against "
                    "(default: the first)"),
            _option("--test", choices=("t", "wilcoxon"), default="t", help="paired test"),
            _option("--correction", default="holm", help="multiple-testing correction "
                    "(statsmodels method; default holm)"),
            _evaluation_options]


def _factory_options(sp: argparse.ArgumentParser) -> None:
    """``--cross-encoder``, ``--bi-encoder``, ``--backend``, ``--dense-search``: keyword
    arguments of every pipeline factory naming them (:data:`~mathir.experiment.FACTORY_OPTIONS`)."""
    from mathir.experiment.pipelines import FACTORY_OPTIONS

    for option in FACTORY_OPTIONS:
        sp.add_argument(option.flag, metavar=option.metavar, choices=option.choices,
                        help=option.help)


def _evaluation_options(sp: argparse.ArgumentParser) -> None:
    """The evaluation options the tasks declare (:class:`mathir.tasks.Option`), each
    help naming the tasks that take it."""
    from mathir.experiment.catalog import evaluation_options

    for option, tasks in evaluation_options().items():
        if option.flag in sp._option_string_actions:  # e.g. --collection: one option
            continue
        metavar = None if option.choices else option.metavar or option.name.upper()
        sp.add_argument(option.flag, dest=f"option_{option.name}", type=option.type,
                        choices=option.choices or None, metavar=metavar,
                        help=f"{option.help} [{', '.join(tasks)}]")


def _commands(overview: bool) -> dict[str, tuple[dict[str, Any], list]]:
    """Each command: the keyword arguments of its parser and its options, in order."""
    from mathir.experiment.catalog import run_formats, tasks_overview

    task, runs = _option("task"), run_formats()
    # experiment --help ends with the tasks (their entry points scanned: only for help)
    tasks = "tasks (* = default pipelines):\n" + tasks_overview() if overview else None
    return {
        "demo": (dict(help="every task on the embedded samples"), [
            _option("--out", default="runs/demo", help="output folder (default: runs/demo)"),
            QUIET]),
        "experiment": (dict(help="index, run the task's pipelines, compare them",
                            epilog=tasks,
                            formatter_class=argparse.RawDescriptionHelpFormatter), [
            task, *FILES,
            _option("--pipelines", help="comma-separated pipeline names (default: the task's "
                    "defaults, plus those of --pipeline and --pipelines-file)"),
            _option("--pipeline", action="append", dest="own", metavar="NAME=MODULE:FACTORY",
                    help="add your pipeline: a factory (index) -> pt.Transformer, or a "
                    "transformer, importable from the current folder or an installed package "
                    "(repeatable)"),
            _option("--pipelines-file", action="append", metavar="FILE.py", help="add the "
                    "pipelines of a Python file defining PIPELINES = {name: transformer | "
                    "factory | 'module:factory'} (repeatable)"),
            _option("--out", default="runs", help="output folder for run files (default: runs)"),
            INDEX, _factory_options,
            _option("--format", choices=FORMATS + ("html",), default="table",
                    help="html writes a self-contained report beside the runs"),
            _option("--run-format", choices=runs, help="run files (default: the task's own "
                    "format, the first of its run formats in 'mathir tasks'): arqmath (the "
                    "ARQMath-2/3 submission format, 5 columns; WorldTree: its predict format) "
                    "or trec (6 columns)"),
            *_scoring("pipeline"),
            _option("--workers", type=int, default=1,
                    help="run topic batches in N local processes"),
            _option("--ray", metavar="ADDRESS", help="run topic batches on a Ray cluster "
                    "('auto', an address, or 'local')"),
            _option("--no-reuse", action="store_true",
                    help="recompute runs even when their manifests still match")]),
        "index": (dict(help="build (or reuse) the task's index"), [
            task, *FILES, INDEX,
            _option("--shards", type=int, metavar="N", help="index N slices of the collection "
                    "side by side: arqmath-task2 merges them into the same index (or keeps "
                    "them, with --scoring bm25-impacts); arqmath-task1 keeps them (with "
                    "--scoring bm25-impacts)"),
            _option("--ray", metavar="ADDRESS", help="with --shards: index the slices as Ray "
                    "tasks ('auto', an address, or 'local')"),
            _option("--scoring", choices=("bm25", "bm25-impacts"), help="arqmath-task1 and "
                    "-task2: bm25 (default for a new index; BM25 computed when searching) or "
                    "bm25-impacts (the shards kept and searched side by side, BM25 impacts from "
                    "the whole collection: the same ranking for any N); default: an existing "
                    "index's")]),
        "run": (dict(help="run one pipeline and write its run file"), [
            task, *FILES,
            _option("--pipeline", required=True, metavar="NAME[=MODULE:FACTORY]", help="a "
                    "pipeline of the task, of an entry point or of --pipelines-file, or "
                    "NAME=package.module:factory"),
            _option("--pipelines-file", action="append", metavar="FILE.py",
                    help="a Python file defining PIPELINES = {name: pipeline}"),
            INDEX, _option("--out", required=True, help="run file to write"),
            _option("--run-format", choices=runs, help="run file format (default: the task's "
                    "own; WorldTree: arqmath means its own 'predict' format)"),
            _factory_options]),
        "evaluate": (dict(help="evaluate run files with the task's measures (the table "
                          "'mathir view' of the same files and options shows)"), [
            task, *FILES,
            _option("--topics", help="topic file: a run line for another topic is an error"),
            _option("--qrels-duplicates", choices=("error", "last"), default="error",
                    help="a document judged twice for a topic: an error, as in trec_eval "
                    "(default), or the last judgment counts, as in ir_measures"),
            _option("--format", choices=FORMATS, default="table"), *_scoring("run (file stem)"),
            _option("runs", nargs="*", metavar="RUN", help="run files (arqmath-task3 with "
                    "--assignments: default every run it names)")]),
        "train-reranker": (dict(help="fine-tune a cross-encoder on the task's qrels (needs "
                                "mathir[neural])"), [
            task, *FILES,
            _option("--base", help="model to start from: a local path or cached name "
                    "(default: packaged all-MiniLM-L6-v2)"),
            _option("--out", required=True, help="directory for the trained model"),
            _option("--epochs", type=int, default=1),
            _option("--batch-size", type=int, default=16),
            _option("--max-pairs", type=int, help="train on a random sample of this many pairs"),
            _option("--max-steps", type=int, help="stop after this many steps"),
            _option("--negatives", type=int, default=3, help="negatives per positive (default 3)"),
            _option("--rel", type=int, help="lowest relevant label (default: 2 for graded qrels)"),
            _option("--max-length", type=int, default=256, help="word pieces per pair"),
            _option("--kind", choices=("cross-encoder", "bi-encoder"), default="cross-encoder",
                    help="cross-encoder (binary cross-entropy on pairs; default) or bi-encoder "
                    "(in-batch negatives)"),
            _option("--first-stage", default="bm25",
                    help="pipeline whose results give the negatives (default: bm25)"),
            _option("--negative-depth", type=int, help="draw negatives at random from the "
                    "first stage's top N (default: its best-ranked non-relevant documents)"),
            _option("--learning-rate", type=float, default=2e-5),
            _option("--warmup", type=float, default=0.1,
                    help="fraction of steps with a rising learning rate (default: 0.1)"),
            _option("--seed", type=int, default=0, help="seed of the negative sampling, the "
                    "batches and the new weights (default: 0); another seed gives another "
                    "model for an ensemble"),
            _option("--loss", choices=("pointwise", "listwise"), default="pointwise",
                    help="cross-encoder loss: pointwise (binary cross-entropy; default) or "
                    "listwise (softmax over a positive and its query's negatives)")]),
        "reproduce": (dict(help="train a headline's models with fixed seeds, evaluate them and "
                           "write its table (needs mathir[neural])"), [
            _option("target", choices=("worldtree",), help="worldtree: the bi-encoder and the "
                    "two cross-encoder stages of docs/worldtree.md; ltr-dense, "
                    "ltr-crossencoder, ltr-dense-crossencoder"),
            _option("--data", help="the WorldTree distribution (default: the embedded sample, "
                    "a test of the command, not the headline)"),
            [_option("--seeds", type=int, default=3, metavar="N",
                     help="train and evaluate seeds 0..N-1 (default: 3)"),
             _option("--seed", type=int, action="append", metavar="S",
                     help="this seed instead (repeatable)")],
            _option("--models", default="models/reproduce", metavar="DIR", help="trained "
                    "models, each with its manifest; reused when the manifest matches "
                    "(default: models/reproduce, ignored by git)"),
            _option("--out", default="runs/reproduce", metavar="DIR", help="runs and the "
                    "table: worldtree.md and worldtree.json (default: runs/reproduce)"),
            _option("--no-test", action="store_true", help="evaluate on Dev only"),
            _option("--combine", nargs="+", metavar="REPORT.json", help="train nothing: put "
                    "the worldtree.json reports of single seeds (one per working session) "
                    "together into one table in --out; with --ensemble, also evaluate their "
                    "seed ensemble (the models must be here)"),
            _option("--ensemble", action="store_true", help="also the seed ensemble (every "
                    "seed's models, scores averaged)"),
            _option("--json", action="store_true", help="print the report as one JSON object"),
            _option("--quiet", action="store_true", help="no progress lines, no library warnings"),
            # Tiny configurations (tests, smoke runs): a few questions, steps and word pieces.
            _option("--smoke", action="store_true", help=argparse.SUPPRESS),
            _option("--max-questions", type=int, help=argparse.SUPPRESS),
            _option("--max-steps", type=int, help=argparse.SUPPRESS),
            _option("--sequential", action="store_true", help=argparse.SUPPRESS)]),
        "view": (dict(help="write the HTML report and run explorer of any run files (the page "
                      "`experiment --format html` writes)"), [
            _option("runs", nargs="+", metavar="RUN", help="run files (named by file stem)"),
            _option("--task", required=True, help="the task the runs are for"), *FILES,
            _option("--out", help="HTML file to write (default: report.html beside the first run)"),
            _option("--depth", type=int, default=20, help="results listed per run and topic "
                    "(default 20; the page shows the top k of them, k chosen in the page)"),
            _option("--format", choices=FORMATS, default="table", help="the table it says "
                    "(the page is HTML)"),
            *_scoring("run (file stem)")]),
        "tasks": (dict(help="the tasks, their pipelines and measures"), [
            _option("--format", choices=("text", "json"), default="text")]),
        "answers": (dict(help="check model answers against gold answers (JSON lines)"), [
            _option("--input", required=True,
                    help='JSON lines {"response", "gold", ["extract", "check", "policy"]}'),
            _option("--format", choices=("json", "table"), default="json", help="json: each "
                    "line back with extracted and correct added (default); table: counts and "
                    "accuracy"),
            _option("--timeout", type=float, default=5.0, help="seconds per symbolic (LaTeX) "
                    "check, above 0 (default: 5; inf: no limit)")]),
        "verify": (dict(help="read every data file of indexes and compare it with the size "
                        "and SHA-256 their build recorded (opening an index only stats them)"), [
            _option("indexes", nargs="+", metavar="INDEX", help="index folders (an answer, "
                    "formula, fact, dense or approximate index, answer texts)"),
            _option("--files", action="store_true", help="one line per file, not a summary "
                    "per index")]),
    }


def _add(sp: Any, item: Option | list | Callable[[Any], None]) -> None:
    """Add an option, a list of mutually exclusive ones, or what a function adds."""
    if callable(item):
        item(sp)
    elif isinstance(item, list):
        group = sp.add_mutually_exclusive_group()
        for option in item:
            _add(group, option)
    else:
        sp.add_argument(*item[0], **item[1])


def parser(overview: bool = True) -> argparse.ArgumentParser:
    """The argument parser; ``overview``: end ``experiment --help`` with the tasks.

    >>> parser(overview=False).parse_args(["index", "arqmath-task1", "--shards", "4"]).shards
    4
    """
    p = argparse.ArgumentParser(prog="mathir", description="Math-aware retrieval experiments.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, (settings, options) in _commands(overview).items():
        sp = sub.add_parser(name, **settings)
        for item in options:
            _add(sp, item)
    return p
