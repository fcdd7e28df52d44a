"""The ``look`` and ``investigate`` actions: one AI step, asked from any automation.

The action's data becomes an AI step exactly as a workflow file would spell it, checked by
the contract's own validator against this site (so the options, fields and tools follow
the same rules and get the same messages), and runs through the ``ai`` package with the
entry's Ollama settings: the same executor, read tools, agreement draws and trace as a
workflow's step, never a copy. Each call gets a fresh allowance of model calls, the size
of one step's cap, so an action neither spends a workflow's hourly budget nor runs the
model without bound.

Response (both)::

    {decision, fields, reason, confidence, unsure_reason, model}

and ``investigate`` adds ``tool_calls``: ``[{name, arguments, status, result, ms}]``,
the tools the model ran, in order.

Both answer as the person calling (:mod:`..read_scope`): a camera they may not see is refused
exactly like a camera that does not exist, and an Investigate's tools read only the cameras
they may see (events and search results of the others are left out, an event's picture is
given only for an event the tools showed). Outside workflows, the tools and site lists that
read plates or faces are an administrator's.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse
from homeassistant.helpers import entity_registry as er

from ...ai import (
    READ_TOOLS,
    AISuspended,
    FixedBudget,
    PyOpenNvrReadPort,
    UnlimitedBudget,
    max_model_calls,
    resume_ai_step,
    run_ai_step,
    step_limits,
)
from ...ai.result import AIStepResult
from ...ai.visible_port import VisiblePort
from ...const import DOMAIN
from ...workflow import CONTRACT, validate_data
from ...workflow.model import AIStep
from ..action_support import entry_of, host_of
from ..errors import failed, invalid, listed, problem_text
from ..ids import camera_unique_id
from ..permissions import PERSONAL_DATA_TOOLS, Caller
from ..read_scope import action_caller, visible_camera_ids, visible_lists
from ..workflows import WorkflowHost

if TYPE_CHECKING:
    from ...coordinator import OpenNVRConfigEntry

#: What an action's Investigate hears when the model wants to ask someone: nobody can be
#: asked from an action (its tools are read tools only, so this is a safety net).
_NOBODY: Final = "Nobody can be asked from an action; decide from what the tools showed."
_MAX_ASKS: Final = 3


async def async_look(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Look at a camera's picture (or a few frames) and decide."""
    host = host_of(hass, call)
    caller = await action_caller(hass, call)
    _require_ai(host)
    data = call.data
    role, cameras = camera_name(hass, entry_of(hass, call), host, data["camera"], caller)
    frames = int(data.get("frames", 1))
    body: dict[str, Any] = {
        "mode": "look",
        "prompt": data["prompt"],
        "input": "frames" if frames > 1 else "picture",
        "camera": role,
    }
    if frames > 1:
        body["frames"] = frames
    step = await checked_step(hass, host, body, data, cameras)
    result = await _run(hass, call, host, caller, step, role, cameras)
    return decision_response(result)


async def async_investigate(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Work toward a goal with read tools and decide."""
    host = host_of(hass, call)
    caller = await action_caller(hass, call)
    _require_ai(host)
    data = call.data
    tools = list(data["tools"])
    for tool in tools:
        if tool not in READ_TOOLS:
            raise invalid("tool_not_allowed", tool=tool, tools=listed(READ_TOOLS))
        if tool in PERSONAL_DATA_TOOLS and not caller.is_admin:
            raise invalid("tool_needs_admin", tool=tool)
    role: str | None = None
    cameras: dict[str, int] = {}
    if data.get("camera"):
        role, cameras = camera_name(hass, entry_of(hass, call), host, data["camera"], caller)
    body: dict[str, Any] = {"mode": "investigate", "goal": data["goal"], "tools": tools}
    if data.get("instructions"):
        body["instructions"] = data["instructions"]
    step = await checked_step(hass, host, body, data, cameras)
    result = await _run(hass, call, host, caller, step, role, cameras)
    response = decision_response(result)
    response["tool_calls"] = [
        {
            "name": row.name,
            "arguments": row.args_asked,
            "status": row.status,
            "result": row.result,
            "ms": row.ms,
        }
        for row in result.decision.trace
        if row.kind == "tool"
    ]
    return response


def decision_response(result: AIStepResult) -> dict[str, Any]:
    """The documented shape of a decision."""
    d = result.decision
    return {
        "decision": d.decision,
        "fields": dict(d.fields),
        "reason": result.reason,  # the decision's words when the model gave none
        "confidence": d.confidence,
        "unsure_reason": d.unsure_reason,
        "model": result.model,
    }


# ── the camera ──────────────────────────────────────────────────────────────────────────


def camera_name(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    host: WorkflowHost,
    value: str,
    caller: Caller,
) -> tuple[str, dict[str, int]]:
    """The name the step uses for ``value`` (a camera entity of this entry, or a camera
    role), and the extra names the read port needs: a camera that plays no role is
    called ``camera_<id>`` for this call. A camera ``caller`` may not see is refused
    exactly like an unknown one (the roles listed are the ones they may see)."""
    roles = host.settings.roles
    visible = visible_camera_ids(caller, host)

    def sees(camera_id: int) -> bool:
        return caller.is_admin or camera_id in visible

    if value in roles and sees(roles[value]):
        return value, {}
    if value.startswith(f"{Platform.CAMERA}."):
        camera_id = camera_id_of_entity(hass, entry, value)
        if camera_id is not None and sees(camera_id):
            played = host.settings.roles_of_camera.get(camera_id)
            if played:
                return played[0], {}
            name = f"camera_{camera_id}"
            return name, {name: camera_id}
    shown = [role for role, camera_id in roles.items() if sees(camera_id)]
    raise invalid("unknown_camera", camera=value, roles=listed(shown))


def camera_id_of_entity(
    hass: HomeAssistant, entry: OpenNVRConfigEntry, entity_id: str
) -> int | None:
    """The OpenNVR camera id behind one of ``entry``'s camera entities (None: not one)."""
    registered = er.async_get(hass).async_get(entity_id)
    if (
        registered is None
        or registered.platform != DOMAIN
        or registered.config_entry_id != entry.entry_id
    ):
        return None
    site_id = entry.runtime_data.info.site_id
    prefix, suffix = camera_unique_id(site_id, "|").split("|")
    unique_id = registered.unique_id
    if not (unique_id.startswith(prefix) and unique_id.endswith(suffix)):
        return None
    try:
        return int(unique_id[len(prefix) : len(unique_id) - len(suffix)])
    except ValueError:
        return None


# ── the step ────────────────────────────────────────────────────────────────────────────


async def checked_step(
    hass: HomeAssistant,
    host: WorkflowHost,
    body: dict[str, Any],
    data: Mapping[str, Any],
    cameras: Mapping[str, int],
) -> AIStep:
    """The AI step the data spells, checked by the contract's validator against this site
    (the step inside a one-step workflow, every outcome with an empty path), in the
    executor (the contract's schema is a disk read on first use)."""
    options = [str(o) for o in data["decision"]]
    body["decision"] = options
    if data.get("fields"):
        body["fields"] = data["fields"]
    for outcome in (*options, "unsure"):  # an option named like a setting is refused below
        body.setdefault(outcome, [])
    site = host.site_profile()
    if site.camera_roles is not None and cameras:
        site = replace(site, camera_roles=site.camera_roles | frozenset(cameras))
    wrapped = {
        "contract": CONTRACT,
        "name": f"{body['mode']} action",
        "state": "test",
        "when": {"button": {}},
        "then": [{"ai": body}],
    }
    report = await hass.async_add_executor_job(partial(validate_data, wrapped, site=site))
    if report.workflow is None or not report.ok:
        first = report.errors[0]
        raise invalid("invalid_request", mode=body["mode"], problem=problem_text(first))
    step = report.workflow.then[0]
    assert isinstance(step, AIStep)
    return step


def _require_ai(host: WorkflowHost) -> None:
    """AI on, with a model chosen in the options (checked before the step, whose
    validation would otherwise report the missing model as a missing skill)."""
    settings = host.settings
    if not settings.ai_enabled or not (settings.vision_model or settings.text_model):
        raise invalid("ai_off")


async def chosen_model(
    hass: HomeAssistant, call: ServiceCall, host: WorkflowHost, step: AIStep, caller: Caller
) -> str:
    """The model to ask: the one named (admins only, from the options' allow-list or the
    configured models), else the one a workflow's step of this kind would use."""
    settings = host.settings
    default = host.ai.model_for(step)
    if not settings.ai_enabled or not default:
        raise invalid("ai_off")
    if not host.ai.may_send():
        raise failed("ollama_not_local", url=settings.ollama_url)
    named = call.data.get("model")
    if not named:
        return default
    if not caller.is_admin:
        raise invalid("model_needs_admin")
    allowed = {*settings.model_allow_list, settings.vision_model, settings.text_model} - {""}
    if named not in allowed:
        raise invalid("model_not_allowed", model=named, models=listed(allowed))
    return str(named)


async def _run(
    hass: HomeAssistant,
    call: ServiceCall,
    host: WorkflowHost,
    caller: Caller,
    step: AIStep,
    camera: str | None,
    cameras: Mapping[str, int],
) -> AIStepResult:
    model = await chosen_model(hass, call, host, step, caller)
    correlation_id = f"action/{uuid.uuid4().hex}"
    context, _ = host.ai.step_context(
        budget=UnlimitedBudget(),
        values={},
        camera=camera,
        correlation_id=correlation_id,
        model=model,
        cameras=cameras,
    )
    if not caller.is_admin:
        # The tools read only the caller's cameras, and the lists they may read.
        names = _visible_names(host, caller, cameras)
        port = PyOpenNvrReadPort(host.client, names, correlation_id=correlation_id)
        site = replace(context.site, lists=visible_lists(caller, host))
        context = replace(context, nvr=VisiblePort(port), site=site)
    allowance = max_model_calls(step_limits(step, context), context.samples)
    context = replace(context, budget=FixedBudget(allowance))
    out = await run_ai_step(step, context)
    asks = 0
    while isinstance(out, AISuspended) and asks < _MAX_ASKS:
        asks += 1
        out = await resume_ai_step(step, context, out, _NOBODY)
    if isinstance(out, AISuspended):
        raise failed("ai_failed", error="the model kept asking for a person")
    # The caller (an automation, a script) now holds the model's answer: what it starts
    # or sets from here on descends from AI output (:mod:`..runs.lineage`).
    host.effects.contexts.lineage.mark(call.context.id)
    return out


def _visible_names(
    host: WorkflowHost, caller: Caller, cameras: Mapping[str, int]
) -> dict[str, int]:
    """The camera names a person's tools may use: the roles of the cameras they may see,
    ``camera_<id>`` for those of them that play no role, and this call's own names."""
    visible = visible_camera_ids(caller, host)
    played = host.settings.roles_of_camera
    names = {role: cid for role, cid in host.settings.roles.items() if cid in visible}
    names.update({f"camera_{cid}": cid for cid in sorted(visible) if not played.get(cid)})
    names.update(cameras)
    return names
