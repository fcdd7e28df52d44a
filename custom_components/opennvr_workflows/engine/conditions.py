"""Conditions: a workflow's ``if`` gate and ``if`` steps.

A gate's result is recorded like any step, so a replay takes the branch that
was taken the first time even if the time of day, the site mode or a list has
changed since.

The record says what the decision read and where it came from (``read``), and whether it
was a plain rule or a choice made on AI output (``by``: see :mod:`.trail`), so the run-time
monitor can judge the path it chose.

A condition on a value that is missing at run time (not defined at this point, or
empty) is false, whatever it tests (:func:`missing`): ``is_not`` a revoked plate does
not hold for an alert that carries no plate. A condition on something the site does
not have fails closed too: a site list that
does not exist (``not_in`` an empty list would hold for everything) or a camera
role no camera is mapped to stops the run with the reason, and the workflow
needs attention, as when a provider is lost. It never quietly reads as false.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..workflow import model
from .ports import Effects, ProviderUnavailable, SiteCameras, SiteClock
from .provenance import Held, condition_reads
from .recorder import StepRecorder
from .records import SETTLED, ActiveRun
from .schedule import in_window
from .steps import ProviderLost


class Conditions:
    """Evaluates and records condition lists."""

    def __init__(self, recorder: StepRecorder, effects: Effects, clock: SiteClock) -> None:
        self._recorder = recorder
        self._effects = effects
        self._clock = clock

    async def gate(
        self,
        run: ActiveRun,
        path: str,
        conditions: Sequence[model.Condition],
        values: dict[str, Any],
    ) -> bool:
        """Evaluate the conditions once; a replay takes the recorded result.
        A read whose provider is gone loses the step's provider, as any effect does."""
        rec = run.steps.get(path)
        if rec is not None and rec.status in SETTLED:
            if rec.result is not None and "by" not in rec.result:
                # Decided before records said what decided them (an older version's run):
                # a replay holds the values it read, with their provenance, as they were.
                rec.result.update(decided_by(path, conditions, values))
            return rec.outcome == "true"
        try:
            results = [await self._condition(c, values) for c in conditions]
        except (ProviderUnavailable, LookupError) as err:
            self._recorder.record(
                run, path, "if", "failed", outcome="false", result={"error": str(err)}
            )
            raise ProviderLost(path, str(err) or "a condition cannot be read") from err
        ok = all(results)
        self._recorder.record(
            run,
            path,
            "if",
            "done",
            outcome="true" if ok else "false",
            result={"conditions": results, **decided_by(path, conditions, values)},
        )
        return ok

    async def _condition(self, cond: model.Condition, values: Mapping[str, Any]) -> bool:
        match cond:
            case model.TimeCondition():
                return in_window(cond, self._clock.local_now())
            case model.SiteModeCondition(modes=modes):
                return (await self._effects.site_mode()) in modes
            case model.CameraCondition(roles=roles):
                require_camera_roles(self._effects, roles)
                return values.get("camera") in roles
            case model.ValueCondition():
                return value_ok(cond, values.get(cond.name))
            case model.ListCondition(name=name, list_name=list_name, negate=negate):
                entries = {str(v).casefold() for v in await self._effects.site_list(list_name)}
                value = values.get(name)
                if missing(value):
                    return False  # "not on the list" says nothing of a value that is gone
                return (str(value).casefold() in entries) != negate
        return False


def decided_by(
    path: str, conditions: Sequence[model.Condition], values: Mapping[str, Any]
) -> dict[str, Any]:
    """What the ``if`` at ``path`` read, each value with where it came from, and whether it
    is a plain rule (``by: rule``: it read no AI output, or only AI output a person's reply
    on its path approved as shown) or chose as the AI would (``by: ai``). Values without
    provenance are of unknown origin, never plain."""
    held = values if isinstance(values, Held) else Held(values)
    read: dict[str, str] = {}
    plain = True
    for condition in conditions:
        for name in condition_reads(condition):
            if name not in held:
                continue  # a missing value fails the condition closed; it reads nothing
            provenance = held.provenance(name)
            read[name] = provenance.label
            plain = plain and provenance.cleared_on(path)
    by = "rule" if plain else "ai"
    return {"read": read, "by": by} if read else {"by": by}


def require_camera_roles(effects: object, roles: Sequence[str]) -> None:
    """Raise :class:`ProviderUnavailable` naming a role the site does not map, when
    the host says which roles it maps (:class:`~.ports.SiteCameras`)."""
    if not roles or not isinstance(effects, SiteCameras):
        return
    mapped = effects.mapped_camera_roles()
    if mapped is None:
        return
    missing = [role for role in roles if role not in mapped]
    if missing:
        names = ", ".join(repr(role) for role in missing)
        raise ProviderUnavailable(
            f"the camera role {names} is not mapped to a camera on this site"
            if len(missing) == 1
            else f"the camera roles {names} are not mapped to a camera on this site"
        )


def missing(value: Any) -> bool:
    """Whether a condition's value is missing: not defined at this point of the run, or
    defined as nothing (an alert without a plate, an empty text)."""
    return value is None or (isinstance(value, str) and not value.strip())


def value_ok(cond: model.ValueCondition, value: Any) -> bool:
    """Whether ``value`` passes every test of ``cond``. A missing value passes none, not
    even ``is_not``: a revoked plate that is not there is not "some other plate", and a
    condition never holds on what it could not read (it fails closed)."""
    if missing(value):
        return False
    text = str(value)
    if cond.is_in and text not in cond.is_in:
        return False
    if cond.is_not_in and text in cond.is_not_in:
        return False
    if cond.above is not None or cond.below is not None:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return False
        if cond.above is not None and not number > cond.above:
            return False
        if cond.below is not None and not number < cond.below:
            return False
    return True
