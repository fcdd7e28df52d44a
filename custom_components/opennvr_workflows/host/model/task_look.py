"""An AI Task answered through the Look path, with everything a workflow's Look guarantees.

Home Assistant's ``ai_task.generate_data`` hands the entity a task: instructions, an
optional ``structure`` and attachments. A task about one of this site's cameras is asked as
a Look step, checked by the contract's validator and run by the same AI step library as a
workflow's (:func:`.actions.checked_step`, :func:`~...ai.run_ai_step`), so it gets:

* OpenNVR's pictures through the read port (the attached picture first), and several frames
  when the structure asks a decision (:mod:`.task_structure`);
* the site's rules, the step's limits by hardware class, the agreement draws;
* an hourly budget of model calls (the options' default ``ai_per_hour``), kept by the
  engine under the runs' name :data:`AI_TASK_RUNS` (a restart counts the hour's calls
  again from the trace, so it does not reset the allowance);
* a run in the engine's database with its step, its trace rows and its history line
  (:mod:`...engine.outside_runs`), and the picture it looked at kept as that run's evidence;
* ``unsure`` as an answer: the decision field says so and ``unsure_reason`` says why.

The caller is the person Home Assistant says made the call, checked at the entity's door
(:mod:`..permissions`, a reading door): a camera they may not see is refused exactly like a
camera that is not this site's. A task with no camera attachment is refused with the
reason: this entity looks at cameras, and a plain model call would have none of the above
(Home Assistant's own Ollama integration offers one). What the caller gets back is AI
output: their context is marked (:mod:`..runs.lineage`), as after the look action.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from homeassistant.components import conversation
from homeassistant.const import Platform
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers.dispatcher import async_dispatcher_send

from ...ai import AISuspended, run_ai_step
from ...ai.context import DEFAULT_FRAMES
from ...ai.ports import NvrReadPort
from ...const import DOMAIN
from ...engine import AiResult, NvrEvent
from ...engine.limits import Budget, LimitSettings
from ...engine.outside_runs import OutsideRun, record_outside_run
from ...workflow.model import AIStep, LookSpec
from ..errors import failed, invalid
from ..permissions import Caller, allow, async_caller
from ..read_scope import visible_lists
from ..runs.lineage import context_lineage
from .actions import camera_name, checked_step
from .port import Evidence, to_engine_result
from .task_structure import StructureError, TaskPlan, plan_of, text_answer

if TYPE_CHECKING:
    from ...coordinator import OpenNVRConfigEntry
    from ..workflows import WorkflowHost

_LOGGER = logging.getLogger(__name__)

#: The runs' name of the AI Task's Looks (no workflow file's id has a ``-``).
AI_TASK_RUNS: Final = "ai-task"
#: How a camera entity is named as a media source (what the media picker attaches).
CAMERA_SOURCE: Final = f"media-source://{Platform.CAMERA}/"


def model_stats_signal(entry_id: str) -> str:
    """Sent after every AI Task answer: the model device's figures changed."""
    return f"{DOMAIN}_{entry_id}_model_stats"


@dataclass(frozen=True, slots=True)
class TaskCamera:
    """The one camera a task is about: its entity, the attached picture's file."""

    entity_id: str
    picture: Path | None


async def async_answer_task(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    door: str,
    context: Context | None,
    *,
    instructions: str,
    structure: Any,
    attachments: list[conversation.Attachment] | None,
    task_name: str,
) -> Any:
    """The task's data (a dict for a structure, else the model's sentence), or a
    translated error: not allowed, AI off, no camera, a structure a Look cannot answer,
    the hourly budget spent, the model unreachable."""
    host = entry.runtime_data.workflows
    if host is None:
        raise invalid("no_loaded_entry")
    user_id = context.user_id if context is not None else None
    caller = allow(door, await async_caller(hass, context), user_id)
    settings = host.settings
    if not settings.ai_enabled or not settings.vision_model:
        raise invalid("ai_off")
    if not host.ai.may_send():
        raise failed("ollama_not_local", url=settings.ollama_url)
    camera = task_camera(attachments)
    role, cameras = camera_name(hass, entry, host, camera.entity_id, caller)
    try:
        plan = plan_of(structure)
    except StructureError as err:
        raise invalid(err.key, **err.placeholders) from err
    frames = DEFAULT_FRAMES if plan.decision is not None else 1
    body: dict[str, Any] = {
        "mode": "look",
        "prompt": plan.prompt(instructions),
        "input": "frames" if frames > 1 else "picture",
        "camera": role,
    }
    if frames > 1:
        body["frames"] = frames
    data = {"decision": list(plan.options), "fields": plan.step_fields()}
    step = await checked_step(hass, host, body, data, cameras)
    budget = task_budget(host)
    if budget.remaining() <= 0:
        raise failed("task_over_budget", budget=settings.ai_per_hour)
    looked = await _look(hass, host, caller, step, role, cameras, budget, camera)
    _keep(hass, host, entry.entry_id, context, looked, task_name, plan)
    result = looked.result
    if result.unsure_reason == "llm_down":
        host.model_watch.check_soon()
        raise failed("task_model_down", url=settings.ollama_url, model=result.model or "")
    if result.unsure_reason == "over_budget" and budget.remaining() <= 0:
        raise failed("task_over_budget", budget=settings.ai_per_hour)
    if structure is None:
        return text_answer(result.outcome, result.reason)
    return plan.answer(
        result.outcome,
        result.fields,
        result.reason,
        result.confidence,
        result.unsure_reason,
        looked.run_id,
    )


def task_camera(attachments: list[conversation.Attachment] | None) -> TaskCamera:
    """The one camera entity among the attachments (a camera's media source); anything
    else, none or more than one, is refused with the reason."""
    found: list[TaskCamera] = []
    for attachment in attachments or ():
        media_id = attachment.media_content_id
        if not media_id.startswith(CAMERA_SOURCE):
            raise invalid("task_attachment_not_camera", attachment=media_id)
        found.append(TaskCamera(media_id.removeprefix(CAMERA_SOURCE), attachment.path))
    if not found:
        raise invalid("task_needs_camera")
    if len({c.entity_id for c in found}) > 1:
        raise invalid("task_one_camera", cameras=", ".join(c.entity_id for c in found))
    return found[0]


def task_budget(host: WorkflowHost) -> Budget:
    """The AI Task's hourly allowance of model calls, kept by the engine like a
    workflow's (the model device counts it; a restart counts the hour's calls again)."""
    limiter = host.engine.limiter(AI_TASK_RUNS)
    wanted = LimitSettings(ai_per_hour=host.settings.ai_per_hour)
    if limiter.settings != wanted:
        limiter.reconfigure(wanted)
    return Budget(limiter, host.engine.now_ts)


# ── the Look ────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class _Looked:
    """One Look of a task: what it decided, when, and the last picture it saw."""

    step: AIStep
    camera: TaskCamera
    result: AiResult
    run_id: str
    started_at: float
    ended_at: float
    seconds: float
    evidence: tuple[bytes, str] | None


async def _look(
    hass: HomeAssistant,
    host: WorkflowHost,
    caller: Caller,
    step: AIStep,
    role: str,
    cameras: Mapping[str, int],
    budget: Budget,
    camera: TaskCamera,
) -> _Looked:
    run_id = uuid.uuid4().hex
    model = host.ai.model_for(step)
    context, port = host.ai.step_context(
        budget=budget,
        values={},
        camera=role,
        correlation_id=f"{AI_TASK_RUNS}/{run_id}",
        model=model,
        cameras=cameras,
    )
    attached = _AttachedFirst(port, role, camera.picture, hass.async_add_executor_job)
    context = replace(context, nvr=attached)
    if not caller.is_admin:
        context = replace(context, site=replace(context.site, lists=visible_lists(caller, host)))
    started, t0 = time.time(), time.monotonic()
    out = await run_ai_step(step, context)
    seconds = time.monotonic() - t0
    if isinstance(out, AISuspended):  # a Look has no ask tool: a safety net
        raise failed("ai_failed", error="the model asked for a person")
    return _Looked(
        step,
        camera,
        to_engine_result(out),
        run_id,
        started,
        time.time(),
        seconds,
        attached.last,
    )


def _keep(
    hass: HomeAssistant,
    host: WorkflowHost,
    entry_id: str,
    context: Context | None,
    looked: _Looked,
    task_name: str,
    plan: TaskPlan,
) -> None:
    """What every answer leaves: the run and its trace, the evidence, the latency, the
    AI mark on the caller's context, and a nudge to the model device's sensors."""
    result, camera, spec = looked.result, looked.camera, looked.step.spec
    assert isinstance(spec, LookSpec)
    role = spec.camera or ""
    camera_id = cameras_id(host, role)
    event = NvrEvent(
        kind="ai_task",
        source="action",
        time=datetime.fromtimestamp(looked.started_at, UTC),
        type=AI_TASK_RUNS,
        camera_id=camera_id,
        camera_role=role if role in host.settings.roles else None,
        title=task_name,
        payload={"entity_id": camera.entity_id, "user": context.user_id if context else None},
    )
    record_outside_run(
        host.engine.store,
        OutsideRun(
            run_id=looked.run_id,
            workflow_id=AI_TASK_RUNS,
            event=event,
            result=result,
            started_at=looked.started_at,
            ended_at=looked.ended_at,
            inputs={
                "camera": role,
                "prompt": spec.prompt,
                "decision": list(plan.options),
                "fields": plan.step_fields(),
            },
            limit_key=f"{AI_TASK_RUNS}:{camera_id}",
        ),
    )
    if looked.evidence is not None:
        image, name = looked.evidence
        host.evidence_store.keep(
            AI_TASK_RUNS, Evidence(image, datetime.now(UTC), looked.run_id, name)
        )
    host.model_watch.looks.add(looked.seconds, result.unsure_reason)
    if context is not None:
        context_lineage(hass).mark(context.id)
    async_dispatcher_send(hass, model_stats_signal(entry_id))


def cameras_id(host: WorkflowHost, name: str) -> str | None:
    """The OpenNVR camera id a step's camera name stands for (a role, or ``camera_<id>``)."""
    if name in host.settings.roles:
        return str(host.settings.roles[name])
    return name.removeprefix("camera_") if name.startswith("camera_") else None


class _AttachedFirst:
    """The read port, answering the first picture of the task's camera with the picture
    Home Assistant attached (the one the caller meant, and one fetch fewer); every later
    frame comes from OpenNVR. Remembers the last picture handed out (the evidence)."""

    def __init__(
        self,
        inner: NvrReadPort,
        camera: str,
        picture: Path | None,
        run_blocking: Callable[..., Awaitable[Any]],
    ) -> None:
        self._inner = inner
        self._camera = camera
        self._picture = picture
        self._run_blocking = run_blocking
        self.last: tuple[bytes, str] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def snapshot(self, camera: str) -> bytes:
        picture, self._picture = self._picture, None
        data: bytes | None = None
        if picture is not None and camera == self._camera:
            try:
                data = await self._run_blocking(picture.read_bytes)
            except OSError as err:
                _LOGGER.debug("The attached picture could not be read: %s", err)
        if not data:
            data = await self._inner.snapshot(camera)
        self.last = (data, camera)
        return data
