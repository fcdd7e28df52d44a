"""An ``if`` whose answer is known before anything happens: always true, or never.

A rule that cannot be false clears the way to an action that moves things while deciding
nothing (a time window covering the whole day, a site mode list naming every mode, a value
test listing every value an AI field can take), and one that cannot be true hides its path
for good. Both are warnings that name the condition: the file is legal, and probably not what
its author meant.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal, get_args

from ..model import (
    AIStep,
    AlertTrigger,
    Condition,
    IfStep,
    SiteMode,
    SiteModeCondition,
    TimeCondition,
    ValueCondition,
    Weekday,
)
from ..paths import PathPart
from ..walk import step_paths
from .context import CheckContext

__all__ = ["check_constant_ifs"]

_ALL_MODES = frozenset(get_args(SiteMode.__value__))
_ALL_DAYS = frozenset(get_args(Weekday.__value__))
_SEVERITIES = frozenset({"low", "medium", "high", "critical"})

type Answer = Literal["always", "never"] | None


def check_constant_ifs(ctx: CheckContext) -> None:
    """Warn about every ``if`` (the workflow's own, and each step) with a known answer."""
    domains = _domains(ctx)
    _check(ctx, ctx.workflow.conditions, ("if",), domains)
    for top, steps in (("then", ctx.workflow.then), ("always", ctx.workflow.always)):
        for parts, step in step_paths(steps, (top,)):
            if isinstance(step, IfStep):
                _check(ctx, step.conditions, (*parts, "if"), domains)


def _check(
    ctx: CheckContext,
    conditions: Iterable[Condition],
    parts: tuple[PathPart, ...],
    domains: Mapping[str, frozenset[str]],
) -> None:
    answers = [_answer(c, domains) for c in conditions]
    if not answers:
        return
    if "never" in answers:
        i = answers.index("never")
        ctx.report(
            "WF-IF-NEVER-TRUE",
            "this condition can never be true, so the `if` never takes its true path; write "
            "`is` with values the name can take, and `above` below `below`",
            (*parts, i),
            severity="warning",
        )
    elif all(a == "always" for a in answers):
        ctx.report(
            "WF-IF-ALWAYS-TRUE",
            "this `if` can never be false (it covers every time, mode or value), so it decides "
            "nothing, yet clears the way to an action that moves things as a plain rule would; "
            "write `from` and `to` apart, or fewer modes or values, or remove it",
            parts,
            severity="warning",
        )


def _answer(condition: Condition, domains: Mapping[str, frozenset[str]]) -> Answer:
    match condition:
        case TimeCondition(start=start, end=end, days=days):
            every_day = not days or set(days) >= _ALL_DAYS
            return "always" if start == end and every_day else None
        case SiteModeCondition(modes=modes):
            return "always" if set(modes) >= _ALL_MODES else None
        case ValueCondition():
            return _value_answer(condition, domains.get(condition.name))
        case _:
            return None


def _value_answer(cond: ValueCondition, domain: frozenset[str] | None) -> Answer:
    wanted = set(cond.is_in)
    if wanted and wanted <= set(cond.is_not_in):
        return "never"
    if cond.above is not None and cond.below is not None and cond.above >= cond.below:
        return "never"
    if domain is None:
        return None
    allowed = (wanted or set(domain)) - set(cond.is_not_in)
    if not allowed & domain:
        return "never"
    numeric = cond.above is not None or cond.below is not None
    if not numeric and domain <= allowed:
        return "always"
    return None


def _domains(ctx: CheckContext) -> dict[str, frozenset[str]]:
    """Every value a name can take where the file says so: an AI step's fields (their
    options), and an alert trigger's severity."""
    out: dict[str, set[str]] = {}
    if isinstance(ctx.workflow.when, AlertTrigger):
        out["severity"] = set(_SEVERITIES)
    for top, steps in (("then", ctx.workflow.then), ("always", ctx.workflow.always)):
        for _parts, step in step_paths(steps, (top,)):
            if isinstance(step, AIStep):
                for name, values in step.fields.items():
                    out.setdefault(name, set()).update(values)
    return {name: frozenset(values) for name, values in out.items()}
