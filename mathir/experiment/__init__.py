"""Experiments: build the index, run pipelines into run files with manifests, reuse runs
whose declared identity is unchanged, evaluate once, test significance, write reports.

The task registry (:mod:`mathir.tasks`) says what a task is; this package runs one. It,
``tasks/`` and ``cli/`` are the only modules that wire the stages (indexing,
pipelines, runs, evaluation) together. Its rooms:

* :mod:`~mathir.experiment.pipelines`: pipelines declared, resolved, built once;
* :mod:`~mathir.experiment.running`: running them into run files with manifests, reuse,
  the one evaluation;
* :mod:`~mathir.experiment.identity`: a run's identity (its manifest: pipeline code and
  arguments, data and index checksums, package versions) and when a run is reused;
* :mod:`~mathir.experiment.code_fingerprint`: the fingerprint of a pipeline's code and
  declared state;
* :mod:`~mathir.experiment.quiet`: silencing the libraries (``--quiet``);
* :mod:`~mathir.experiment.reports`: per-topic files, the HTML report and its explorer;
* :mod:`~mathir.experiment.run_files`: anyone's run files (``mathir evaluate``, ``view``);
* :mod:`~mathir.experiment.catalog`: the tasks as ``mathir tasks`` lists them, and what
  they declare together (run formats, evaluation options);
* :mod:`~mathir.experiment.workflows`: the work of each ``mathir`` command, one function
  each (``workflows.experiment``, ``workflows.evaluate``...), saying what it did.

Nothing here imports pandas or PyTerrier at import time.
"""

from mathir.evaluation.evaluated import check_judged
from mathir.evaluation.settings import Evaluation, resolve_evaluation
from mathir.experiment.catalog import (
    evaluation_options,
    run_formats,
    tasks_catalog,
    tasks_overview,
)
from mathir.experiment.pipelines import (
    FACTORY_OPTIONS,
    PIPELINE_ENTRY_POINTS,
    PIPELINES_VARIABLE,
    FactoryOption,
    Pipeline,
    PipelineSource,
    accepts,
    available_pipelines,
    factory_options,
    import_reference,
    load_pipelines_file,
    own_pipelines,
    plugin_pipelines,
    plugin_pipelines_by_task,
    resolve_pipelines,
    select_pipelines,
    split_reference,
)
from mathir.experiment.quiet import quiet_libraries
from mathir.experiment.reports import (
    experiment_explorer,
    significance_note,
    write_experiment_report,
    write_per_topic,
)
from mathir.experiment.run_files import (
    collection_docnos,
    evaluate_run_files,
    evaluate_runs,
    read_runs,
    score_run_files,
    scoring_settings,
    view_run_files,
    view_runs,
)
from mathir.experiment.running import (
    Execution,
    ExperimentResult,
    PipelineError,
    build_pipeline,
    check_experiment,
    check_workers,
    evaluation_record,
    locate_data,
    run_experiment,
    run_pipeline,
    write_pipeline_run,
)

__all__ = ["FACTORY_OPTIONS", "PIPELINE_ENTRY_POINTS", "PIPELINES_VARIABLE", "Evaluation",
           "Execution", "ExperimentResult", "resolve_evaluation", "score_run_files",
           "scoring_settings", "view_run_files",
           "FactoryOption", "Pipeline", "PipelineError", "PipelineSource", "accepts",
           "available_pipelines", "build_pipeline", "check_experiment", "check_judged",
           "check_workers", "collection_docnos", "evaluation_options", "factory_options",
           "locate_data", "own_pipelines", "run_formats", "select_pipelines",
           "split_reference", "tasks_catalog", "tasks_overview",
           "evaluate_run_files", "evaluate_runs", "evaluation_record", "experiment_explorer",
           "import_reference", "load_pipelines_file", "plugin_pipelines",
           "plugin_pipelines_by_task", "quiet_libraries", "read_runs", "resolve_pipelines",
           "run_experiment", "run_pipeline", "significance_note", "view_runs",
           "write_experiment_report", "write_per_topic", "write_pipeline_run"]
