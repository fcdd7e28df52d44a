"""For each steps: repeat a branch over cameras, a site list or recent events.

The items are recorded before the first iteration, so a replay walks the same
items even if the list or the events changed meanwhile; each item's branch is
an ordinary path (``<path>.<index>``), recorded and replayed like any other.
Items from something the site does not have (a list that does not exist, a
camera role no camera is mapped to) stop the run rather than read as none.

An item is what its list is (:mod:`.provenance`): a camera the file names, an entry of a
site list, or one of the recent events, which include the alerts workflows raise from AI
decisions; a ``collect`` is made of every item and every AI reason in it. Over events, the
events decide whether the steps run at all, so the record says the loop chose as the AI
would (``by: ai``, see :mod:`.trail`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..workflow import model
from .conditions import require_camera_roles
from .ports import Effects, ProviderUnavailable
from .provenance import CONSTANT, SITE, Held, Provenance, Source, made_by, merged
from .recorder import StepRecorder
from .records import SETTLED, ActiveRun
from .steps import Lineage, ProviderLost

#: The path walk: run ``steps`` under a path prefix with these values and lineage.
Walk = Callable[[ActiveRun, Sequence[model.Step], str, Held, Lineage], Awaitable[None]]


class ForEachSteps:
    """Runs For each steps; each item's steps go back through the path walk."""

    def __init__(self, recorder: StepRecorder, effects: Effects) -> None:
        self._recorder = recorder
        self._effects = effects

    async def run(
        self,
        run: ActiveRun,
        step: model.ForEachStep,
        path: str,
        values: Held,
        lineage: Lineage,
        walk: Walk,
    ) -> Lineage:
        """Walk the step's branch once per item (through ``walk``, the runner's path
        walk), collecting a line per item; returns the lineage of the steps after it."""
        after = lineage.defining(frozenset({step.collect}), ai=True) if step.collect else lineage
        item = item_provenance(step, path)
        by = "ai" if isinstance(step.items, model.ForEachEvents) else "world"
        rec = run.steps.get(path)
        if rec is not None and rec.result is not None:
            rec.result.setdefault("by", by)  # a record an older version wrote
        if rec is not None and rec.status in SETTLED:
            if step.collect and rec.result is not None:
                collected = rec.result.get("collected", "")
                values.define(step.collect, collected, _collected(run, path, item))
            return after
        if rec is not None and rec.result is not None and "items" in rec.result:
            items = list(rec.result["items"])
        else:
            try:
                items = (await self._items(step))[: step.max_items]
            except (ProviderUnavailable, LookupError) as err:
                self._recorder.record(
                    run, path, "for_each", "failed", outcome="done", result={"error": str(err)}
                )
                raise ProviderLost(path, str(err) or "the items cannot be read") from err
            self._recorder.record(
                run, path, "for_each", "running", result={"items": items, "by": by}
            )
        lines: list[str] = []
        body = _body_lineage(step, path, lineage)
        for j, value in enumerate(items):
            # Every value defined before the loop stays (the validator's names), and the
            # item defines what the validator says it does: a value is never missing in
            # the loop where the file was checked to have one.
            scope = values.copy()
            shown = value if not isinstance(value, Mapping) else _label(value)
            scope.define(step.as_name, shown, item)
            if isinstance(step.items, model.ForEachCameras):
                scope.define("camera", value, item)
            elif isinstance(step.items, model.ForEachEvents):
                event = value if isinstance(value, Mapping) else {}
                scope.define("camera", event.get("camera"), item)
                scope.define("event_type", event.get("event_type"), item)
                scope.define("event_id", event.get("event_id", event.get("id")), item)
            await walk(run, step.steps, f"{path}.{j}", scope, body)
            if step.collect:
                label = scope[step.as_name]
                reason = _last_reason(run, f"{path}.{j}.")
                lines.append(f"{label}: {reason}" if reason else str(label))
        result: dict[str, Any] = {"items": items, "by": by}
        if step.collect:
            result["collected"] = "\n".join(lines)
            values.define(step.collect, result["collected"], _collected(run, path, item))
        self._recorder.record(run, path, "for_each", "done", outcome="done", result=result)
        return after

    async def _items(self, step: model.ForEachStep) -> list[Any]:
        match step.items:
            case model.ForEachCameras(cameras=cameras):
                require_camera_roles(self._effects, cameras)
                return list(cameras)
            case model.ForEachList(list_name=name):
                return [str(v) for v in await self._effects.site_list(name)]
            case model.ForEachEvents(within_s=within_s, cameras=cameras):
                require_camera_roles(self._effects, cameras)
                events = await self._effects.recent_events(cameras, within_s)
                return [json.loads(json.dumps(dict(ev), default=str)) for ev in events]
        return []


def _body_lineage(step: model.ForEachStep, path: str, lineage: Lineage) -> Lineage:
    """The lineage of the loop's steps: the item replaces values of its names; over
    events, the events (AI-raised alerts among them) decide that the steps run at all."""
    names = {step.as_name}
    if isinstance(step.items, model.ForEachCameras):
        names.add("camera")
    elif isinstance(step.items, model.ForEachEvents):
        return lineage.by_items(path, frozenset({*names, "camera", "event_type", "event_id"}))
    return lineage.defining(frozenset(names), ai=False)


def item_provenance(step: model.ForEachStep, path: str) -> Provenance:
    """What the loop's items are: cameras the file names, entries of a site list, or the
    recent events (AI output: the alerts workflows raise from AI decisions are among them)."""
    if isinstance(step.items, model.ForEachEvents):
        return made_by(Source("events", path))
    return SITE if isinstance(step.items, model.ForEachList) else CONSTANT


def _collected(run: ActiveRun, path: str, item: Provenance) -> Provenance:
    """A ``collect`` is made of the items and of the reasons of every AI step that decided
    in the loop's steps (a replay reads the same records, so it finds the same)."""
    prefix = f"{path}."
    reasons = [
        Source("ai", rec.path)
        for rec in run.steps.values()
        if rec.kind == "ai" and rec.path.startswith(prefix) and rec.result is not None
    ]
    return merged((item, made_by(*reasons))) if reasons else item


def _last_reason(run: ActiveRun, prefix: str) -> str | None:
    """The reason of the last AI step that decided in one item's steps (``prefix``)."""
    decided = [
        rec
        for rec in run.steps.values()
        if rec.kind == "ai" and rec.path.startswith(prefix) and rec.result is not None
    ]
    if not decided:
        return None
    reason = max(decided, key=lambda rec: rec.seq).result or {}
    found = reason.get("reason")
    return str(found) if found else None


def _label(item: Mapping[str, Any]) -> str:
    parts = [str(item.get(k)) for k in ("time", "camera", "event_type") if item.get(k)]
    return " ".join(parts) or json.dumps(item, default=str)
