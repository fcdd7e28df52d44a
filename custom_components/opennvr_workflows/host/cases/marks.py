"""A person's mark on a run, kept as one of the home's cases.

``mark_run`` (the action, the panel's *Right* / *Wrong*, a phone) says whether a run
decided right; with keeping on (the options' *Own cases and measuring* page) the run's AI
step becomes a case (:mod:`...evaluation.home_case`): the step as it ran, the values its
question read, the picture it looked at (the run's evidence, :mod:`..model.evidence_store`) and
the right answer. A wrong mark may say what was right (``decision``, ``fields``, a
``note``); ``step`` picks the AI step of a run that has several (else the last one that
decided, the one whose picture the evidence holds).

A correction that cannot be right (an outcome the step does not have, the model's own
answer on a wrong mark) is refused before anything is marked. A run that cannot make a
case (an Investigate step, a picture no longer kept, a step edited since) is still
marked; the response says why no case was kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import probatio as vol
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.helpers import config_validation as cv

from ...engine.ai_step import ai_values
from ...engine.events import NvrEvent
from ...engine.steps import event_values
from ...evaluation.home_case import (
    HomeCaseError,
    MarkedRun,
    case_data,
    case_id,
    expectation,
    marked_step,
    needs_pictures,
)
from ...workflow.model import AIStep, LookSpec
from ..action_support import entry_of
from ..errors import invalid, listed
from ..read_scope import run_touched

if TYPE_CHECKING:
    from ..workflows import WorkflowHost

#: What a mark may say besides right or wrong (the action's and the panel's fields).
MARK_FIELDS: Final[dict[Any, Any]] = {
    vol.Optional("decision"): cv.string,
    vol.Optional("fields"): vol.Schema({cv.string: cv.string}),
    vol.Optional("note"): vol.All(cv.string, vol.Length(max=500)),
    vol.Optional("step"): cv.string,
}
#: Why a mark kept no case, when nothing was wrong with it.
SKIPPED: Final = frozenset({"off", "investigate", "no_picture", "step_changed", "no_ai_step"})


@dataclass(frozen=True)
class Correction:
    """What the person said along with the mark (see the module)."""

    decision: str | None = None
    fields: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    note: str = ""
    step: str | None = None

    @property
    def given(self) -> bool:
        return bool(self.decision or self.fields or self.note or self.step)

    @classmethod
    def from_call(cls, data: Mapping[str, Any]) -> Correction:
        return cls(
            decision=data.get("decision") or None,
            fields=MappingProxyType(
                {str(k): str(v) for k, v in (data.get("fields") or {}).items()}
            ),
            note=str(data.get("note") or "").strip(),
            step=data.get("step") or None,
        )


@dataclass(frozen=True)
class Prepared:
    """A case ready to keep (``data`` and its ``pictures``), or why there is none."""

    data: dict[str, Any] | None = None
    pictures: tuple[bytes, ...] = ()
    skipped: str | None = None


async def async_prepare(
    host: WorkflowHost,
    detail: Mapping[str, Any],
    right: bool,
    correction: Correction,
    *,
    keep: bool,
    now: datetime | None = None,
) -> Prepared:
    """The case ``detail`` (a stored run) makes with this mark; raises the action's
    translated error for a correction that cannot be right (checked whether cases are
    kept or not)."""
    rows = _ai_rows(detail)
    if correction.step is not None and correction.step not in {str(r["path"]) for r in rows}:
        raise invalid("unknown_step", step=correction.step, steps=listed(r["path"] for r in rows))
    if not rows:
        return Prepared(skipped="no_ai_step")
    row = next((r for r in rows if r["path"] == correction.step), rows[-1])
    result = _json(row.get("result"))
    workflow_id = str(detail["workflow_id"])
    loaded = host.files.get(workflow_id)
    try:
        if loaded is None or loaded.workflow is None:
            raise HomeCaseError("step_changed", workflow_id)
        step, body = marked_step(loaded.workflow, str(result.get("key", "")).rpartition("@")[2])
        values = _values(detail, row)
        evidence = await host.evidence_store.async_read(str(detail["id"])) if keep else None
        camera = values.get("camera")
        if evidence is not None and evidence.camera and not _own_camera(step):
            camera = evidence.camera  # a for-each's camera, not the trigger's
        pictures = (evidence.image,) if evidence is not None and needs_pictures(step) else ()
        run_id = str(detail["id"])
        touched = run_touched(host, detail)
        mark = MarkedRun(
            workflow_id=workflow_id,
            workflow_name=loaded.workflow.name,
            site=host.entry_id,
            run_id=run_id,
            step_path=str(row["path"]),
            step=step,
            body=body,
            answered_decision=str(row.get("outcome") or result.get("decision") or "unsure"),
            answered_fields={
                str(k): str(v)
                for k, v in (_json(row.get("fields")) or result.get("fields") or {}).items()
            },
            answered_reason=str(row.get("reason") or result.get("reason") or ""),
            model=str(row.get("model") or ""),
            right=right,
            marked_at=now or datetime.now(UTC),
            values=values,
            camera=str(camera) if camera else None,
            pictures=tuple(
                f"pictures/{case_id(workflow_id, run_id)}_{n}.jpg"
                for n in range(1, len(pictures) + 1)
            ),
            cameras=tuple(sorted(touched.cameras)),
            all_cameras=touched.everywhere,
            decision=correction.decision,
            fields=correction.fields,
            note=correction.note,
        )
        expectation(mark)  # a correction that cannot be right is refused, kept or not
        if not keep:
            return Prepared(skipped="off")
        return Prepared(data=case_data(mark), pictures=pictures)
    except HomeCaseError as err:
        if err.reason in SKIPPED:
            return Prepared(skipped=err.reason)
        raise invalid(f"case_{err.reason}", answer=err.detail) from err


async def async_prepare_mark(
    hass: HomeAssistant, call: ServiceCall, host: WorkflowHost, detail: Mapping[str, Any]
) -> Prepared | None:
    """What ``mark_run``'s ``call`` on the run ``detail`` keeps as a case; None when
    there is nothing to say about cases (keeping is off and nothing was corrected)."""
    evaluation = entry_of(hass, call).runtime_data.evaluation
    correction = Correction.from_call(call.data)
    keep = evaluation is not None and evaluation.settings().keep
    if not keep and not correction.given:
        return None
    return await async_prepare(host, detail, bool(call.data["right"]), correction, keep=keep)


async def async_keep_mark(
    hass: HomeAssistant, call: ServiceCall, prepared: Prepared
) -> dict[str, Any]:
    """Keep a prepared case (once the mark is recorded); what the response says of it."""
    evaluation = entry_of(hass, call).runtime_data.evaluation
    if prepared.data is None or evaluation is None:
        return {"kept": False, "why": prepared.skipped or "off"}
    kept = await evaluation.cases.async_add(prepared.data, list(prepared.pictures))
    return {"kept": True, "case_id": kept.case.id, "pictures": len(kept.pictures)}


def _own_camera(step: AIStep) -> bool:
    """Whether the step names the camera it looks at (else it looks at the run's)."""
    return isinstance(step.spec, LookSpec) and step.spec.camera is not None


def _ai_rows(detail: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The run's AI steps that decided, in the order they ran."""
    steps = [s for s in detail.get("steps") or () if s.get("kind") == "ai"]
    return [s for s in sorted(steps, key=lambda s: s.get("seq") or 0) if s.get("status") == "done"]


def _values(detail: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    """The placeholders the step read: the trigger's, then what each AI step before it
    decided (as the engine defines them)."""
    trigger = _json(detail.get("trigger"))
    try:
        values = event_values(NvrEvent.from_summary(trigger))
    except (KeyError, TypeError, ValueError):
        values = {}
    for earlier in _ai_rows(detail):
        if (earlier.get("seq") or 0) >= (row.get("seq") or 0):
            break
        ai_values(values, _json(earlier.get("result")))
    return values


def _json(raw: Any) -> dict[str, Any]:
    """A stored JSON column as a mapping (empty when it is not one)."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return dict(value) if isinstance(value, Mapping) else {}
