"""Math answers: answer checking, derivations and a template-retrieval solver.

>>> from mathir.answer_checking import check_answer
>>> check_answer("So 12 + 3 = 15. The answer is: 15", "15").correct
True
"""

from mathir.lazy_exports import attach

# name -> the module that defines it, imported on first use (see mathir.lazy_exports)
_EXPORTS = {
    "Judgment": "mathir.answer_checking.checking",
    "check_answer": "mathir.answer_checking.checking",
    "check_records": "mathir.answer_checking.checking",
    "read_answer_records": "mathir.answer_checking.checking",
    "dolphin_check": "mathir.answer_checking.dolphin",
    "parse_gold": "mathir.answer_checking.dolphin",
    "ANSWER_PATTERNS": "mathir.answer_checking.extraction",
    "extract_answer": "mathir.answer_checking.extraction",
    "SymbolicChecker": "mathir.answer_checking.latex",
    "latex_check": "mathir.answer_checking.latex",
    "normalize_latex": "mathir.answer_checking.latex",
    "numbers_equal": "mathir.answer_checking.numeric",
    "read_numbers": "mathir.answer_checking.numeric",
    "simple_check": "mathir.answer_checking.numeric",
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
