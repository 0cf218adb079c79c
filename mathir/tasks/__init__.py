"""Tasks: each one declaration in parts (:mod:`mathir.tasks.parts`), registered by name
(:mod:`mathir.tasks.registry`); this package hands their names on, imported on first use.

>>> from mathir.tasks import get_task
>>> get_task("arqmath-task1").years
('2020', '2021', '2022')
"""

from mathir.lazy_exports import attach, by_module

# imported on first use (see mathir.lazy_exports)
__getattr__, __dir__, __all__ = attach(__name__, by_module({
    "mathir.tasks.registry": "FAMILIES TASKS TASK_ENTRY_POINTS get_task load_entry_points "
                             "register register_task",
    "mathir.tasks.declarations": "DATA_ENV ROLES Need Option Published QrelsVariant Ref Split "
                                 "Stage TaskData data_folder no_options",
    "mathir.tasks.parts": "Engines Files Formats Scoring Views",
    "mathir.tasks.task": "Task",
    "mathir.evaluation.measures": "Measure",
    "mathir.tasks.derive": "TopicPredicate derive_task",
}))
