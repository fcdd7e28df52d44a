"""The model -> the canonical workflow.v1 data and YAML text.

Export, the import preview and any builder write workflows through here, so they all agree:
reading the output back gives an equal model (file -> model -> YAML -> model is the identity).
The canonical form is the file a careful person would write: keys in the contract's order,
defaults of steps left out, limits always spelled out (a shared file says how often it runs),
durations in their shortest form, short lists of plain values on one line (how values are
spelled in YAML is :mod:`.yaml_writer`'s part).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from .durations import format_duration
from .model import (
    CONTRACT,
    ActionStep,
    AIStep,
    AlertAction,
    AlertTrigger,
    AppAction,
    AskPersonStep,
    ButtonTrigger,
    CallStep,
    CameraCondition,
    CameraOfflineTrigger,
    Condition,
    EventTrigger,
    ForEachCameras,
    ForEachList,
    ForEachStep,
    HomeAssistantAction,
    IfStep,
    InvestigateSpec,
    JsonValue,
    ListCondition,
    LogAction,
    LookSpec,
    MessageTrigger,
    NotifyAction,
    PersonInZoneTrigger,
    PtzPresetAction,
    ReplyAction,
    SaveClipAction,
    ScheduleTrigger,
    SiteModeAction,
    SiteModeCondition,
    Step,
    TimeCondition,
    Trigger,
    ValueCondition,
    WaitAction,
    WebhookAction,
    Workflow,
)
from .parse import FOR_EACH_DEFAULT_NAMES
from .yaml_writer import canonical_yaml

__all__ = ["dump_workflow", "workflow_to_data"]

type Data = dict[str, Any]


def _time(value: dt.time) -> str:
    return f"{value.hour:02d}:{value.minute:02d}"


def _number(value: float) -> int | float:
    """3.0 -> 3, so a file reads ``seconds: 45`` rather than ``45.0``."""
    return int(value) if value == int(value) else value


def _json(value: JsonValue) -> Any:
    if isinstance(value, Mapping):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    return value


def _put(data: Data, key: str, value: Any) -> None:
    """Set ``key`` unless ``value`` is empty (None, or an empty tuple or mapping)."""
    if value is None or (isinstance(value, tuple | list | Mapping) and not value):
        return
    data[key] = list(value) if isinstance(value, tuple) else value


def _who(roles: tuple[str, ...]) -> str | list[str]:
    who = [f"role:{r}" for r in roles]
    return who[0] if len(who) == 1 else who


def _trigger(trigger: Trigger) -> Data:
    body: Data = {}
    match trigger:
        case AlertTrigger():
            _put(body, "app", trigger.app)
            _put(body, "alert_type", trigger.alert_type)
            _put(body, "cameras", trigger.cameras)
            _put(body, "min_severity", trigger.min_severity)
            return {"alert": body}
        case EventTrigger():
            body["type"] = trigger.event
            _put(body, "cameras", trigger.cameras)
            _put(body, "match", {k: list(v) for k, v in trigger.match.items()})
            return {"event": body}
        case CameraOfflineTrigger():
            body["for"] = format_duration(trigger.for_s)
            _put(body, "cameras", trigger.cameras)
            return {"camera_offline": body}
        case ScheduleTrigger():
            _put(body, "at", tuple(_time(t) for t in trigger.at))
            if trigger.every_s is not None:
                body["every"] = format_duration(trigger.every_s)
            _put(body, "days", trigger.days)
            return {"schedule": body}
        case ButtonTrigger():
            _put(body, "label", trigger.label)
            return {"button": body}
        case MessageTrigger():
            _put(body, "contains", trigger.contains)
            return {"message": body}
        case PersonInZoneTrigger():
            body["cameras"] = list(trigger.cameras)
            body["min_seconds"] = _number(trigger.min_s)
            _put(body, "zone", trigger.zone)
            return {"detect.person_in_zone": body}


def _condition(condition: Condition) -> Data:
    match condition:
        case TimeCondition():
            body: Data = {"from": _time(condition.start), "to": _time(condition.end)}
            _put(body, "days", condition.days)
            return {"time": body}
        case SiteModeCondition():
            return {"site_mode": list(condition.modes)}
        case CameraCondition():
            return {"camera": list(condition.roles)}
        case ValueCondition():
            body = {"of": f"{{{condition.name}}}"}
            _put(body, "is", condition.is_in)
            _put(body, "is_not", condition.is_not_in)
            _put(body, "above", None if condition.above is None else _number(condition.above))
            _put(body, "below", None if condition.below is None else _number(condition.below))
            return {"value": body}
        case ListCondition():
            key = "not_in" if condition.negate else "in"
            return {"list": {"value": f"{{{condition.name}}}", key: condition.list_name}}


def _steps(steps: tuple[Step, ...]) -> list[Data]:
    return [_step(s) for s in steps]


def _paths(paths: Mapping[str, tuple[Step, ...]], order: tuple[str, ...]) -> Data:
    """Paths in the order of the outcomes, then any others (a model a validator will refuse)."""
    keys = [k for k in order if k in paths] + [k for k in paths if k not in order]
    return {k: _steps(paths[k]) for k in keys}


def _ai(step: AIStep) -> Data:
    spec = step.spec
    body: Data = {"mode": step.mode}
    limits: Data = {}
    if isinstance(spec, LookSpec):
        body["prompt"] = spec.prompt
        body["input"] = spec.input
        _put(body, "frames", spec.frames)
        _put(body, "text", spec.text)
        _put(body, "camera", spec.camera)
    elif isinstance(spec, InvestigateSpec):
        body["goal"] = spec.goal
        _put(body, "instructions", spec.instructions)
        body["tools"] = list(spec.tools)
        if spec.memory != "run":
            body["memory"] = spec.memory
        _put(limits, "tool_calls", spec.tool_calls)
    body["decision"] = list(step.decision)
    _put(body, "fields", {k: list(v) for k, v in step.fields.items()})
    _put(
        body,
        "rules",
        [
            ({"when": {k: list(v) for k, v in r.when.items()}} if r.when else {}) | {"then": r.then}
            for r in step.rules
        ],
    )
    _put(body, "reason_as", step.reason_as)
    _put(body, "sure", step.sure)
    _put(limits, "seconds", None if step.seconds is None else _number(step.seconds))
    _put(body, "limits", limits)
    body.update(_paths(step.paths, step.outcomes))
    return {"ai": body}


def _for_each(step: ForEachStep) -> Data:
    body: Data = {}
    items = step.items
    if isinstance(items, ForEachCameras):
        body["cameras"], kind = list(items.cameras), "cameras"
    elif isinstance(items, ForEachList):
        body["list"], kind = items.list_name, "list"
    else:
        events: Data = {"within": format_duration(items.within_s)}
        _put(events, "cameras", items.cameras)
        body["events"], kind = events, "events"
    if step.as_name != FOR_EACH_DEFAULT_NAMES[kind]:
        body["as"] = step.as_name
    if step.max_items != 20:
        body["max"] = step.max_items
    _put(body, "collect", step.collect)
    return {"for_each": body, "do": _steps(step.steps)}


def _action(step: ActionStep) -> Data:
    action = step.action
    body: Data = {}
    match action:
        case AlertAction():
            body = {"severity": action.severity, "title": action.title}
            _put(body, "message", action.message)
            _put(body, "attach", action.attach)
            return {"alert": body}
        case NotifyAction():
            body = {"who": _who(action.roles), "message": action.message}
            _put(body, "title", action.title)
            body["severity"] = action.severity
            _put(body, "attach", action.attach)
            return {"notify": body}
        case LogAction():
            return {"log": action.message}
        case SaveClipAction():
            _put(body, "camera", action.camera)
            body["before"] = format_duration(action.before_s)
            body["after"] = format_duration(action.after_s)
            return {"save_clip": body}
        case PtzPresetAction():
            return {"ptz_preset": {"camera": action.camera, "preset": action.preset}}
        case WebhookAction():
            body = {"to": action.to}
            _put(body, "data", _json(action.data))
            return {"webhook": body}
        case HomeAssistantAction():
            body = {"action": action.action}
            _put(body, "data", _json(action.data))
            _put(body, "target", _json(action.target))
            return {"home_assistant": body}
        case SiteModeAction():
            return {"site_mode": action.mode}
        case AppAction():
            body = {"app": action.app, "action": action.action}
            _put(body, "data", _json(action.data))
            return {"app_action": body}
        case WaitAction():
            return {"wait": format_duration(action.seconds)}
        case ReplyAction():
            return {"reply": action.message}


def _step(step: Step) -> Data:
    match step:
        case AIStep():
            return _ai(step)
        case IfStep():
            data: Data = {"if": [_condition(c) for c in step.conditions]}
            data["then"] = _steps(step.paths.get("true", ()))
            _put(data, "else", _steps(step.paths.get("false", ())))
            extra = {k: v for k, v in step.paths.items() if k not in ("true", "false")}
            data.update(_paths(extra, ()))
            return data
        case ForEachStep():
            return _for_each(step)
        case AskPersonStep():
            body: Data = {
                "who": _who(step.roles),
                "message": step.message,
                "replies": list(step.replies),
                "timeout": format_duration(step.timeout_s),
            }
            _put(body, "default", step.default)
            return {"ask_person": body} | _paths(step.paths, step.outcomes)
        case CallStep():
            body = {"who": _who(step.roles), "goal": step.goal}
            _put(body, "script", step.script)
            body["outcomes"] = list(step.outcome_names)
            return {"call": body} | _paths(step.paths, step.outcomes)
        case ActionStep():
            return _action(step)


def workflow_to_data(workflow: Workflow) -> dict[str, Any]:
    """The canonical data of ``workflow`` (plain dicts, lists and scalars; JSON-ready)."""
    data: Data = {"contract": CONTRACT, "name": workflow.name}
    _put(data, "description", workflow.description)
    data["state"] = workflow.state
    _put(data, "needs", workflow.needs)
    limits = workflow.limits
    data["limits"] = {
        "cooldown": format_duration(limits.cooldown_s),
        "one_at_a_time": limits.one_at_a_time,
        "per_hour": limits.per_hour,
        "ai_per_hour": limits.ai_per_hour,
    }
    data["when"] = _trigger(workflow.when)
    _put(data, "if", [_condition(c) for c in workflow.conditions])
    data["then"] = _steps(workflow.then)
    _put(data, "always", _steps(workflow.always))
    return data


def dump_workflow(workflow: Workflow) -> str:
    """The canonical YAML text of ``workflow``."""
    return canonical_yaml(workflow_to_data(workflow))
