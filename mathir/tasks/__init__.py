"""Tasks: each one declaration in parts (:mod:`mathir.tasks.parts`), registered by name
(:mod:`mathir.tasks.registry`); this package hands their names on, imported on first use.

>>> from mathir.tasks import get_task
>>> get_task("arqmath-task1").years
('2020', '2021', '2022')
"""

from mathir.lazy_exports import attach

_REGISTRY = ("FAMILIES", "TASKS", "TASK_ENTRY_POINTS", "get_task", "load_entry_points",
             "register", "register_task")
_DECLARATIONS = ("DATA_ENV", "ROLES", "Need", "Option", "Published", "QrelsVariant", "Ref",
                 "Split", "Stage", "TaskData", "data_folder", "no_options")
_PARTS = ("Engines", "Files", "Formats", "Scoring", "Views")

# name -> the module that defines it (see mathir.lazy_exports)
_EXPORTS = {
    **{n: "mathir.tasks.registry" for n in _REGISTRY},
    **{n: "mathir.tasks.declarations" for n in _DECLARATIONS},
    **{n: "mathir.tasks.parts" for n in _PARTS},
    "Task": "mathir.tasks.task",
    "Measure": "mathir.evaluation.measures",
    "TopicPredicate": "mathir.tasks.derive",
    "derive_task": "mathir.tasks.derive",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
