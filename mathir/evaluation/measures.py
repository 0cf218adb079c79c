"""Measures as declarations: a name, what it measures, and how it is computed.

A task's measures (``mathir.Task.measures``) are :class:`Measure` objects: the columns
of its table, the lines of ``mathir tasks`` and of the docs all come from them. Each says
how its per-topic values aggregate (:attr:`Measure.aggregate`: the mean, or the sum for
ir_measures' counts), as ir_measures' own measures do.

The measures a user asks for (``--measures``) are checked here before any scoring
(:func:`parse_measure_list`, :func:`check_ir_measure`): every measure string either gives
``ir_measures.calc_aggregate``'s figure or is one InputError.

This module imports nothing heavy at its top (ir_measures is imported when a measure is
resolved or checked, or when a task declares a measure whose name ir_measures could read
as one of its own, :func:`name_conflict`), so that reading the task registry stays cheap.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mathir.errors import InputError

#: How a measure's per-topic values make the table's figure: their mean (trec_eval's, in
#: topic order), or their sum (the counts: ``NumQ``, ``NumRet``, ``NumRel``, ``NumRelRet``,
#: as ir_measures' ``SumAgg`` and trec_eval's summary add them).
AGGREGATIONS = ("mean", "sum")


@dataclass(frozen=True)
class Measure:
    """A measure of a task: its column name, what it measures, and how it is computed.

    ``ir_measure`` is the measure in ir_measures' syntax (``"nDCG@10"``) or an ir_measures
    object (e.g. one made with ``ir_measures.define_byquery``) when it is one: it then
    computes the column, and ``pt.Experiment`` can take it; None when the task's own
    evaluator computes it. ``aggregation``: how the per-topic values make the table's
    figure (:data:`AGGREGATIONS`); None: as ir_measures aggregates ``ir_measure`` (the sum
    for its counts, the mean otherwise), the mean for a measure the task computes
    (:attr:`aggregate` says which).

    >>> m = Measure("P'@5", "precision at 5 over judged answers", "P(rel=2,judged_only=True)@5")
    >>> m.resolve(), m.aggregate
    (P(rel=2,judged_only=True)@5, 'mean')
    >>> Measure("retrieved", "answers retrieved", "NumRet").aggregate
    'sum'
    """

    name: str
    description: str
    ir_measure: Any = None
    aggregation: str | None = None

    def __post_init__(self) -> None:
        if self.aggregation is not None and self.aggregation not in AGGREGATIONS:
            raise ValueError(f"measure {self.name!r}: aggregation {self.aggregation!r} is not "
                             f"one of {', '.join(AGGREGATIONS)}")

    @property
    def aggregate(self) -> str:
        """How its per-topic values aggregate: ``"mean"`` or ``"sum"`` (declared, else
        ir_measures' aggregator of its ir_measure, else the mean)."""
        if self.aggregation is not None:
            return self.aggregation
        if self.ir_measure is None:
            return "mean"
        return aggregation_of(self.resolve())

    def resolve(self):
        """The ir_measures object (imports ir_measures); ValueError when there is none."""
        if self.ir_measure is None:
            raise ValueError(f"{self.name} is computed by its task, not by ir_measures")
        if not isinstance(self.ir_measure, str):
            return self.ir_measure
        import ir_measures

        return ir_measures.parse_measure(self.ir_measure)


#: The "prime" measures of Tasks 1 and 2: unjudged documents removed, as ARQMath
#: evaluates (:mod:`mathir.evaluation.prime` computes them, averaged over every qrels topic).
PRIME_MEASURES = (
    Measure("nDCG'", "nDCG over judged answers only (graded 0-3, no cutoff)",
            "nDCG(judged_only=True)"),
    Measure("MAP'", "MAP over judged answers only, relevance >= 2 (H+M)",
            "AP(rel=2,judged_only=True)"),
    Measure("P'@10", "precision at 10 over judged answers only, relevance >= 2",
            "P(rel=2,judged_only=True)@10"),
    Measure("bpref", "bpref, relevance >= 2", "Bpref(rel=2)"),
)


def aggregation_of(measure: Any) -> str:
    """``"sum"`` or ``"mean"``: how ir_measures aggregates ``measure`` (its object's own
    ``aggregator()``, as ``ir_measures.calc_aggregate`` does); InputError for another
    aggregation.

    >>> import ir_measures
    >>> aggregation_of(ir_measures.NumQ), aggregation_of(ir_measures.parse_measure("P@5"))
    ('sum', 'mean')
    """
    from ir_measures.measures.base import MeanAgg, SumAgg

    agg = measure.aggregator()
    if isinstance(agg, SumAgg):
        return "sum"
    if isinstance(agg, MeanAgg):
        return "mean"
    raise InputError(f"measure {_label(measure)} aggregates by {type(agg).__name__}; mathir "
                     f"aggregates by {' or '.join(AGGREGATIONS)}")


def _label(measure: Any) -> str:
    try:
        return str(measure)
    except Exception:  # noqa: BLE001 - an unknown parameter breaks ir_measures' repr
        return getattr(measure, "NAME", None) or type(measure).__name__


def _keywords_twice(text: str) -> str | None:
    """The keyword a measure string gives twice (``AP(rel=2,rel=3)``; ``P(cutoff=5)@10``),
    which ir_measures would quietly reduce to the last one; None when there is none."""
    import ast

    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None  # ir_measures' parser says what is wrong
    at = isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)
    call = node.left if at else node
    if not isinstance(call, ast.Call):
        return None
    seen: set[str] = set()
    for kw in call.keywords:
        if kw.arg in seen:
            return kw.arg
        seen.add(kw.arg or "**")
    if at and isinstance(call.func, ast.Name):
        import ir_measures

        cls = ir_measures.measures.registry.get(call.func.id)
        if cls is not None and cls.AT_PARAM in seen:
            return cls.AT_PARAM
    return None


def _dtype_name(dtype: Any) -> str:
    names = {int: "an integer", float: "a number with a decimal point (e.g. 1.0)",
             bool: "True or False", str: "a quoted string", dict: "a {label: gain} map"}
    if isinstance(dtype, tuple):
        return " or ".join(names.get(d, d.__name__) for d in dtype)
    return names.get(dtype, getattr(dtype, "__name__", str(dtype)))


def _check_params(measure: Any, label: str) -> None:
    from ir_measures.measures.base import _NOT_PROVIDED

    supported = measure.SUPPORTED_PARAMS
    params = measure.params
    name = measure.NAME or type(measure).__name__
    unknown = sorted(set(params) - set(supported))
    if unknown:
        known = ", ".join(supported) or "none"
        raise InputError(f"measure {label!r}: {name} has no parameter {', '.join(unknown)} "
                         f"(its parameters: {known})")
    for key, info in supported.items():
        value = params.get(key, _NOT_PROVIDED)
        if value is _NOT_PROVIDED:
            if info.required:
                raise InputError(f"measure {label!r}: {name} needs its parameter {key}"
                                 + (f" ({info.desc})" if info.desc else ""))
            continue
        if info.dtype is not None and (not isinstance(value, info.dtype) or (
                isinstance(value, bool) and info.dtype is not bool)):
            raise InputError(f"measure {label!r}: {key}={value!r} is not "
                             f"{_dtype_name(info.dtype)}")
        if info.choices is not _NOT_PROVIDED and value not in info.choices:
            raise InputError(f"measure {label!r}: {key}={value!r} is not one of "
                             f"{', '.join(map(repr, info.choices))}")
    cutoff = params.get("cutoff")
    if "cutoff" in supported and cutoff is not None and (
            isinstance(cutoff, bool) or not isinstance(cutoff, int) or cutoff < 1):
        raise InputError(f"measure {label!r}: the cutoff must be a whole number of at least 1, "
                         f"not {cutoff!r}")
    recall = params.get("recall")
    if "recall" in supported and recall is not None and not 0 <= recall <= 1:
        raise InputError(f"measure {label!r}: the recall level must be between 0 and 1, "
                         f"not {recall!r}")
    gains = params.get("gains")
    if isinstance(gains, dict):
        keys = [k for k in gains if isinstance(k, bool) or not isinstance(k, int)]
        if keys:  # a str key matches no label: ir_measures would quietly ignore it
            raise InputError(f"measure {label!r}: the gains' keys are relevance labels, whole "
                             f"numbers (e.g. gains={{0:1}}), not {keys[0]!r}")


def _check_provider(measure: Any, label: str) -> None:
    import ir_measures

    supporting = []
    for provider in ir_measures.DefaultPipeline.providers:
        try:
            if provider.supports(measure):
                supporting.append(provider)
        except Exception:  # noqa: BLE001, S112 - a provider that cannot tell does not support it
            continue
    if any(p.is_available() for p in supporting):
        return
    if supporting:
        how = "; ".join(f"{p.NAME}: {p.install_instructions() or 'not installed'}"
                        for p in supporting)
        raise InputError(f"measure {label!r} is computed by an ir_measures provider that is "
                         f"not installed ({how})")
    raise InputError(f"measure {label!r}: no ir_measures provider computes it with these "
                     "parameters (e.g. RBP needs rel=..., SDCG needs max_rel=...)")


def _dry_run(measure: Any, label: str) -> None:
    """Score ``measure`` on one made-up topic: an error it raises is the user's, in words,
    before any real scoring."""
    import ir_measures

    if ir_measures.runtime.supports(measure):
        return  # the user's own function (define / define_byquery): it runs on the real data
    qrels = [ir_measures.Qrel("1", "a", 2), ir_measures.Qrel("1", "b", 1),
             ir_measures.Qrel("1", "c", 0)]
    run = [ir_measures.ScoredDoc("1", "a", 3.0), ir_measures.ScoredDoc("1", "d", 2.0),
           ir_measures.ScoredDoc("1", "b", 1.0)]
    try:
        ir_measures.calc_aggregate([measure], qrels, run)
    except Exception as e:  # noqa: BLE001 - any failure is the measure's: said in one line
        text = " ".join(str(e).split())[:200]
        raise InputError(f"measure {label!r} cannot be computed ({type(e).__name__}: "
                         f"{text})") from None


def check_ir_measure(measure: Any, given: str | None = None) -> Any:
    """``measure`` (an ir_measures measure) when mathir can compute it as
    ``ir_measures.calc_aggregate`` does; InputError otherwise, before any scoring: an
    unknown or ill-typed parameter, a cutoff below 1, gains keyed by something other than a
    label, no installed provider (naming the package that provides it), or an error on a
    one-topic trial (e.g. ``rel=0`` where trec_eval needs a positive level).

    >>> import ir_measures
    >>> check_ir_measure(ir_measures.parse_measure("P@0"))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: measure 'P@0': the cutoff must be a whole number of at least 1, not 0
    """
    label = given if given is not None else _label(measure)
    if not hasattr(measure, "SUPPORTED_PARAMS") or not hasattr(measure, "params"):
        raise InputError(f"measure {label!r} is not an ir_measures measure")
    _check_params(measure, label)
    _check_provider(measure, label)
    aggregation_of(measure)
    _dry_run(measure, label)
    return measure


def _identity(measure: Any) -> tuple:
    """What a measure computes: its kind and the parameters that differ from their default
    (gains written as label -> gain, a label mapped to itself left out, as ir_measures
    names them); a user's own measure by its object."""
    import ir_measures

    if ir_measures.runtime.supports(measure):
        return ("runtime", id(measure))

    def canon(v: Any) -> str:
        if isinstance(v, dict):
            return repr(sorted((repr(k), repr(g)) for k, g in v.items() if k != g))
        return repr(v)

    params = tuple(sorted((k, canon(v)) for k, v in measure.params.items()
                          if not (k in measure.SUPPORTED_PARAMS
                                  and v == measure.SUPPORTED_PARAMS[k].default)))
    return (type(measure).__name__, params)


def parse_measure_list(spec: str | Iterable[Any]) -> tuple[bool, dict[str, Any]]:
    """``(beside, {column: ir_measures measure})`` from ``--measures`` / ``measures=``: see
    :func:`mathir.evaluation.evaluated.parse_measures`. Each measure is checked
    (:func:`check_ir_measure`); a keyword given twice, or two different measures that
    ir_measures names alike (one column), are InputErrors.

    >>> parse_measure_list("AP(rel=2,rel=3)")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: measure 'AP(rel=2,rel=3)' gives rel twice
    """
    import ir_measures

    beside = False
    if isinstance(spec, str):
        text = spec.strip()
        if text.startswith("+"):
            beside, text = True, text[1:]
        parts, depth, current = [], 0, ""
        for ch in text:
            depth += {"(": 1, ")": -1, "{": 1, "}": -1, "[": 1, "]": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                parts.append(current)
                current = ""
            else:
                current += ch
        parts.append(current)
        items: list[Any] = [p.strip() for p in parts if p.strip()]
    else:
        items = list(spec)
        if items and items[0] == "+":
            beside, items = True, items[1:]
    if not items:
        raise InputError("no measure given (e.g. --measures 'nDCG(judged_only=True)@10,R@1000')")
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    for item in items:
        if isinstance(item, str):
            twice = _keywords_twice(item)
            if twice:
                raise InputError(f"measure {item!r} gives {twice} twice")
            try:
                measure = ir_measures.parse_measure(item)
            except (ValueError, NameError, SyntaxError, TypeError, KeyError) as e:
                raise InputError(f"measure {item!r} is not an ir_measures measure ({e}); e.g. "
                                 "nDCG@10, AP(rel=2), P(judged_only=True)@5, R@1000") from None
            label = item
        else:
            measure, label = item, _label(item)
        check_ir_measure(measure, label)
        name = str(measure)
        if name in out and _identity(out[name]) != _identity(measure):
            raise InputError(f"measures {given[name]!r} and {label!r} differ but would both be "
                             f"the column {name!r}; give one of them")
        out.setdefault(name, measure)
        given.setdefault(name, label)
    return beside, out


def name_conflict(measure: Measure) -> str | None:
    """Why ``measure``'s name misleads, or None: a name that is itself an ir_measures
    measure other than the one it computes (``Measure("P@5", ..., "P(rel=3)@5")``, where
    ``pt.Experiment`` and ``--measures P@5`` print ir_measures' P@5, relevance >= 1: one
    label, two numbers). A measure its task computes (no ir_measure) is not checked.

    >>> name_conflict(Measure("P@5", "precision at 5, grade >= 3", "P(rel=3)@5"))
    "its name 'P@5' is ir_measures' P@5, not the P(rel=3)@5 it computes: name it 'P(rel=3)@5' (or a name ir_measures does not have, e.g. 'P@5 (rel>=3)')"
    """
    if measure.ir_measure is None or measure.name == measure.ir_measure:
        return None
    if not _looks_like_measure(measure.name):
        return None  # e.g. "nDCG'" or "P@5~": no ir_measures measure is written so
    import ir_measures

    try:
        named = ir_measures.parse_measure(measure.name)
        repr(named)
    except Exception:  # noqa: BLE001 - not an ir_measures measure: no conflict
        return None
    computed = measure.resolve()
    if named == computed:
        return None
    rel = computed.params.get("rel")
    example = f", e.g. {measure.name + f' (rel>={rel})'!r}" if rel is not None else ""
    return (f"its name {measure.name!r} is ir_measures' {named}, not the {computed} it "
            f"computes: name it {str(computed)!r} (or a name ir_measures does not have"
            f"{example})")


def _looks_like_measure(name: str) -> bool:
    import ast

    try:
        node = ast.parse(name.strip(), mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        node = node.left
    if isinstance(node, ast.Call):
        node = node.func
    return isinstance(node, ast.Name)


def trec_sum(values: Iterable[float]) -> float:
    """The sum as trec_eval's summary and ir_measures' ``SumAgg`` give the counts
    (``NumRet``, ``NumRel``, ``NumRelRet``, ``NumQ``): the values added in the order given;
    NaN values left out.

    >>> trec_sum([3.0, float("nan"), 4.0])
    7.0
    """
    total = 0.0
    for v in values:
        v = float(v)
        if v == v:
            total += v
    return total


@functools.lru_cache(maxsize=4096)
def aggregation_by_name(column: str) -> str:
    """How ir_measures aggregates the measure ``column`` names (``"mean"`` when it names
    none): for per-topic frames that lost their declaration (merged with a task's own).

    >>> aggregation_by_name("NumRet(rel=2)"), aggregation_by_name("nDCG'")
    ('sum', 'mean')
    """
    if not _looks_like_measure(column):
        return "mean"
    import ir_measures

    try:
        return aggregation_of(ir_measures.parse_measure(column))
    except Exception:  # noqa: BLE001 - not an ir_measures measure
        return "mean"
