"""Lazy package attributes: ``import mathir`` imports no pyterrier, pandas or torch.

A package declares ``name -> module`` and gets a module ``__getattr__`` (PEP 562) that
imports the module on first use, as ir_measures' ``lazylibs.py`` does for the same
reason: command-line tools should not pay for imports they never use.

>>> getattr_, dir_, all_ = attach("mathir.answer_checking", {"check_answer": "mathir.answer_checking.checking"})
>>> getattr_("check_answer").__name__, all_
('check_answer', ['check_answer'])
>>> by_module({"mathir.runs.trec": "read_run validate_run"})
{'read_run': 'mathir.runs.trec', 'validate_run': 'mathir.runs.trec'}
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def attach(package: str, exports: Mapping[str, str]
           ) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package`` exporting ``exports`` lazily.

    Each value is the module that defines the name (``"module:attribute"`` when the
    attribute is named differently there).
    """
    exports = dict(exports)

    def __getattr__(name: str) -> object:
        try:
            target = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        module, _, attribute = target.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        setattr(sys.modules[package], name, value)  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(exports) | set(vars(sys.modules[package])))

    return __getattr__, __dir__, sorted(exports)


def by_module(modules: Mapping[str, str]) -> dict[str, str]:
    """``name -> module`` from ``module -> "name name ..."``: a package's export table
    written once per module.

    >>> by_module({"mathir.tasks.task": "Task"})
    {'Task': 'mathir.tasks.task'}
    """
    return {name: module for module, names in modules.items() for name in names.split()}
