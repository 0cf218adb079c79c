"""Math answers: answer checking, derivations and a template-retrieval solver.

>>> from mathir.answers import check_answer
>>> check_answer("So 12 + 3 = 15. The answer is: 15", "15").correct
True
"""

from mathir.answers.checking import Judgment, check_answer, check_records, read_answer_records
from mathir.answers.dolphin import dolphin_check, parse_gold
from mathir.answers.extraction import ANSWER_PATTERNS, extract_answer
from mathir.answers.latex import SymbolicChecker, latex_check, normalize_latex
from mathir.answers.numeric import numbers_equal, read_numbers, simple_check

__all__ = [
    "ANSWER_PATTERNS", "Judgment", "SymbolicChecker", "check_answer", "check_records",
    "dolphin_check", "extract_answer", "latex_check", "normalize_latex", "numbers_equal",
    "parse_gold", "read_answer_records", "read_numbers", "simple_check",
]
