"""``--quiet``: progress bars, warnings and log messages of the libraries silenced."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


#: Environment read by tqdm, huggingface_hub and transformers when they load.
QUIET_ENVIRONMENT = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                     "TRANSFORMERS_VERBOSITY": "error", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
                     "HF_HUB_VERBOSITY": "error"}
#: Packages whose warnings and log messages ``--quiet`` hides: deprecation notices and
#: advice about their own internals, not about the user's input. mathir's own warnings
#: (a gold fact missing from the tablestore, a stand-in model) stay.
NOISY_PACKAGES = ("pyterrier", "pyterrier_[a-z_]+", "transformers", "sentence_transformers",
                  "torch", "sklearn", "lightgbm", "huggingface_hub", "bert_score", "ir_measures",
                  "ir_datasets", "pandas", "numpy", "scipy", "ray", "tokenizers", "safetensors",
                  "accelerate", "joblib")
_NOISE = rf"({'|'.join(NOISY_PACKAGES)})(\.|$)"


def _progress_switches() -> list[tuple[str, Callable[[], bool], Callable[[], None],
                                       Callable[[], None]]]:
    """(module, are bars on?, turn off, turn on) of the loaded libraries with a switch."""
    out = []
    if "huggingface_hub" in sys.modules:
        from huggingface_hub import utils as hub

        out.append(("huggingface_hub", lambda: not hub.are_progress_bars_disabled(),
                    hub.disable_progress_bars, hub.enable_progress_bars))
    if "transformers" in sys.modules:
        from transformers.utils import logging as tlog

        out.append(("transformers", tlog.is_progress_bar_enabled, tlog.disable_progress_bar,
                    tlog.enable_progress_bar))
    return out


@contextlib.contextmanager
def quiet_libraries(library_warnings: bool = True) -> Iterator[None]:
    """Silence progress bars (tqdm, Hugging Face downloads and weight loading) and, with
    ``library_warnings``, the warnings and log messages of :data:`NOISY_PACKAGES`, for
    the duration of the block (restored after)."""
    saved_env = {k: os.environ.get(k) for k in QUIET_ENVIRONMENT}
    os.environ.update(QUIET_ENVIRONMENT)
    before = {name: on() for name, on, _, _ in _progress_switches()}
    for _, _on, off, _ in _progress_switches():
        off()
    loggers = {}
    if library_warnings:
        for name in ("transformers", "sentence_transformers", "huggingface_hub", "pyterrier",
                     "pyterrier_dr", "torch", "lightgbm", "ray", "bert_score"):
            logger = logging.getLogger(name)
            loggers[name] = logger.level
            logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            if library_warnings:
                warnings.filterwarnings("ignore", module=_NOISE)
            yield
    finally:
        for name, level in loggers.items():
            logging.getLogger(name).setLevel(level)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for name, _, _, on in _progress_switches():
            # loaded in the block with the bars off: on again, unless they were off before
            if before.get(name, saved_env["HF_HUB_DISABLE_PROGRESS_BARS"] is None):
                with warnings.catch_warnings():  # huggingface_hub may refuse: it read
                    warnings.simplefilter("ignore")  # the variable when it was loaded
                    on()


# --- the experiment -------------------------------------------------------------------------
