"""Math answers: answer checking, derivations and a template-retrieval solver.

>>> from mathir.answers import check_answer
>>> check_answer("So 12 + 3 = 15. The answer is: 15", "15").correct
True
"""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports)
_EXPORTS = {
    "Judgment": "mathir.answers.checking",
    "check_answer": "mathir.answers.checking",
    "check_records": "mathir.answers.checking",
    "read_answer_records": "mathir.answers.checking",
    "dolphin_check": "mathir.answers.dolphin",
    "parse_gold": "mathir.answers.dolphin",
    "ANSWER_PATTERNS": "mathir.answers.extraction",
    "extract_answer": "mathir.answers.extraction",
    "SymbolicChecker": "mathir.answers.latex",
    "latex_check": "mathir.answers.latex",
    "normalize_latex": "mathir.answers.latex",
    "numbers_equal": "mathir.answers.numeric",
    "read_numbers": "mathir.answers.numeric",
    "simple_check": "mathir.answers.numeric",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
