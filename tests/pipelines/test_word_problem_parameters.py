"""SolveFromTemplates follows set_parameter("index", ...) (PyTerrier's contract)."""

from mathir.pipelines.word_problems import SolveFromTemplates, WordProblemIndex
from mathir.samples import word_problems_sample


def test_solver_follows_a_new_index():
    s = word_problems_sample()
    small = WordProblemIndex.build(s.problems, train=s.split("train"))
    other = WordProblemIndex.build(s.problems, train=s.split("train"))
    solve = SolveFromTemplates(small)
    assert solve.solver is small.solver
    solve.set_parameter("index", other)
    # before: the solver of the first index stayed in use
    assert solve.solver is other.solver
    assert solve.get_parameter("index") is other
