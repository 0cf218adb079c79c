"""The argument parser of ``mathir``: its commands, their options and help (the
command-line contract; docs/experiments.md lists it). Parsing imports no library."""

from __future__ import annotations

import argparse

FORMATS = ("table", "markdown", "latex", "json")
#: the keys of mathir.neural.backends.BACKENDS, written here so that parsing arguments
#: imports no numpy (tests/neural/test_encoders.py checks that they agree)
BACKEND_NAMES = ("torch", "onnx", "onnx-int8", "openvino", "openvino-int8")


def parser(overview: bool = True) -> argparse.ArgumentParser:
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
    if overview:
        from mathir.experiment.catalog import tasks_overview
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
    sp.add_argument("--run-format", choices=run_formats(),
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
    sp.add_argument("--run-format", choices=run_formats(),
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
    for option, tasks in evaluation_options().items():
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


def run_formats() -> list[str]:
    """The run formats of every registered task (``--run-format``'s choices)."""
    from mathir.tasks import TASKS

    return list(dict.fromkeys(f for t in TASKS.values() for f in t.run_formats))


def evaluation_options() -> dict:
    """Every registered task's evaluation options (:class:`mathir.tasks.Option`), each
    with the tasks that declare it: the flags of ``mathir evaluate``."""
    from mathir.tasks import TASKS

    found: dict = {}
    for name, task in TASKS.items():
        for option in task.options:
            same = next((o for o in found if o.name == option.name), option)
            found.setdefault(same, []).append(name)
    return found
