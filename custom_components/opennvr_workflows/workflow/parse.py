"""Plain data that fits the JSON Schema -> the typed model.

Every shorthand the file format allows is normalised here, once: a single value where a list
is allowed becomes a one-item tuple, ``role:`` prefixes are dropped, durations become seconds,
times become :class:`datetime.time`, defaults are filled in. So two files that mean the same
build equal models, and :mod:`.dump` writes one canonical form back.

The input must already fit the schema (:func:`.schema.schema_problems` is empty); this module
does not re-check structure, and a :class:`KeyError` or :class:`TypeError` from it is a bug.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, cast

from .durations import parse_duration
from .model import (
    ActionStep,
    AIStep,
    AlertAction,
    AlertTrigger,
    AppAction,
    AskPersonStep,
    Attachment,
    ButtonTrigger,
    CallStep,
    CameraCondition,
    CameraOfflineTrigger,
    Condition,
    EventTrigger,
    ForEachCameras,
    ForEachEvents,
    ForEachList,
    ForEachStep,
    HomeAssistantAction,
    IfStep,
    InvestigateSpec,
    ListCondition,
    LogAction,
    LookSpec,
    MessageTrigger,
    NotifyAction,
    PersonInZoneTrigger,
    PtzPresetAction,
    ReplyAction,
    Rule,
    SaveClipAction,
    ScheduleTrigger,
    SiteMode,
    SiteModeAction,
    SiteModeCondition,
    Step,
    TimeCondition,
    Trigger,
    ValueCondition,
    WaitAction,
    WebhookAction,
    Weekday,
    Workflow,
    WorkflowLimits,
    frozen_json,
)
from .vocabulary import AI_STEP_KEYS

__all__ = ["parse_workflow"]

type Data = Mapping[str, Any]

#: Default item names inside for_each, by what it iterates.
FOR_EACH_DEFAULT_NAMES = {"cameras": "camera", "list": "item", "events": "event"}


def _tuple(value: Any) -> tuple[Any, ...]:
    """One value or a list of them -> a tuple."""
    if value is None:
        return ()
    return tuple(value) if isinstance(value, list | tuple) else (value,)


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in _tuple(value))


def _roles(value: Any) -> tuple[str, ...]:
    return tuple(str(v).removeprefix("role:") for v in _tuple(value))


def _time(text: str) -> dt.time:
    hours, minutes = text.split(":")
    return dt.time(int(hours), int(minutes))


def _duration(value: Any) -> float | None:
    return None if value is None else parse_duration(str(value))


def _duration_or(value: Any, default: float) -> float:
    return default if value is None else parse_duration(str(value))


def _seconds(value: Any) -> float:
    return parse_duration(str(value))


def _days(value: Any) -> tuple[Weekday, ...]:
    return cast(tuple[Weekday, ...], _strs(value))


def _json_map(value: Any) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], frozen_json(value or {}))


def _values_map(value: Any) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({str(k): _strs(v) for k, v in (value or {}).items()})


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def parse_trigger(data: Data) -> Trigger:
    """The one trigger in ``when``."""
    ((kind, body),) = data.items()
    body = body or {}
    match kind:
        case "alert":
            return AlertTrigger(
                app=_opt_str(body.get("app")),
                alert_type=_opt_str(body.get("alert_type")),
                cameras=_strs(body.get("cameras")),
                min_severity=body.get("min_severity"),
            )
        case "event":
            return EventTrigger(
                event=str(body["type"]),
                cameras=_strs(body.get("cameras")),
                match=_values_map(body.get("match")),
            )
        case "camera_offline":
            return CameraOfflineTrigger(
                for_s=_seconds(body["for"]), cameras=_strs(body.get("cameras"))
            )
        case "schedule":
            return ScheduleTrigger(
                at=tuple(_time(t) for t in _strs(body.get("at"))),
                every_s=_duration(body.get("every")),
                days=_days(body.get("days")),
            )
        case "button":
            return ButtonTrigger(label=_opt_str(body.get("label")))
        case "message":
            return MessageTrigger(contains=_strs(body.get("contains")))
        case "detect.person_in_zone":
            return PersonInZoneTrigger(
                cameras=_strs(body["cameras"]),
                min_s=float(body["min_seconds"]),
                zone=_opt_str(body.get("zone")),
            )
    raise ValueError(f"unknown trigger {kind!r}")


def parse_condition(data: Data) -> Condition:
    """One condition of an ``if`` list."""
    ((kind, body),) = data.items()
    match kind:
        case "time":
            return TimeCondition(
                start=_time(body["from"]), end=_time(body["to"]), days=_days(body.get("days"))
            )
        case "site_mode":
            return SiteModeCondition(modes=cast(tuple[SiteMode, ...], _strs(body)))
        case "camera":
            return CameraCondition(roles=_strs(body))
        case "value":
            return ValueCondition(
                name=str(body["of"]).strip("{}"),
                is_in=_strs(body.get("is")),
                is_not_in=_strs(body.get("is_not")),
                above=None if body.get("above") is None else float(body["above"]),
                below=None if body.get("below") is None else float(body["below"]),
            )
        case "list":
            negate = "not_in" in body
            return ListCondition(
                name=str(body["value"]).strip("{}"),
                list_name=str(body["not_in"] if negate else body["in"]),
                negate=negate,
            )
    raise ValueError(f"unknown condition {kind!r}")


def _conditions(value: Any) -> tuple[Condition, ...]:
    return tuple(parse_condition(c) for c in _tuple(value))


def parse_steps(value: Any) -> tuple[Step, ...]:
    """A list of steps (``then``, ``always``, a path, a for_each body)."""
    return tuple(parse_step(s) for s in _tuple(value))


def _paths(data: Data, skip: frozenset[str]) -> Mapping[str, tuple[Step, ...]]:
    return MappingProxyType({str(k): parse_steps(v) for k, v in data.items() if k not in skip})


def _parse_ai(body: Data) -> AIStep:
    limits = body.get("limits") or {}
    spec: LookSpec | InvestigateSpec
    if body["mode"] == "look":
        spec = LookSpec(
            prompt=str(body["prompt"]),
            input=body.get("input", "picture"),
            frames=body.get("frames", 3 if body.get("input") == "frames" else None),
            text=_opt_str(body.get("text")),
            camera=_opt_str(body.get("camera")),
        )
    else:
        spec = InvestigateSpec(
            goal=str(body["goal"]),
            tools=_strs(body.get("tools")),
            instructions=_opt_str(body.get("instructions")),
            memory=body.get("memory", "run"),
            tool_calls=limits.get("tool_calls"),
        )
    return AIStep(
        spec=spec,
        decision=_strs(body["decision"]),
        paths=_paths(body, AI_STEP_KEYS),
        fields=_values_map(body.get("fields")),
        rules=tuple(
            Rule(when=_values_map(r.get("when")), then=str(r["then"]))
            for r in body.get("rules") or ()
        ),
        sure=None if body.get("sure") is None else float(body["sure"]),
        seconds=None if limits.get("seconds") is None else float(limits["seconds"]),
        reason_as=_opt_str(body.get("reason_as")),
    )


def _parse_for_each(data: Data) -> ForEachStep:
    body = data["for_each"]
    items: ForEachCameras | ForEachList | ForEachEvents
    if "cameras" in body:
        items, kind = ForEachCameras(cameras=_strs(body["cameras"])), "cameras"
    elif "list" in body:
        items, kind = ForEachList(list_name=str(body["list"])), "list"
    else:
        events = body["events"]
        items = ForEachEvents(
            within_s=_seconds(events["within"]), cameras=_strs(events.get("cameras"))
        )
        kind = "events"
    return ForEachStep(
        items=items,
        steps=parse_steps(data["do"]),
        as_name=str(body.get("as", FOR_EACH_DEFAULT_NAMES[kind])),
        max_items=int(body.get("max", 20)),
        collect=_opt_str(body.get("collect")),
    )


def _attach(value: Any) -> tuple[Attachment, ...]:
    return cast(tuple[Attachment, ...], _strs(value))


def _parse_action(kind: str, body: Any) -> ActionStep | None:
    match kind:
        case "alert":
            return ActionStep(
                AlertAction(
                    severity=body["severity"],
                    title=str(body["title"]),
                    message=_opt_str(body.get("message")),
                    attach=_attach(body.get("attach")),
                )
            )
        case "notify":
            return ActionStep(
                NotifyAction(
                    roles=_roles(body["who"]),
                    message=str(body["message"]),
                    title=_opt_str(body.get("title")),
                    severity=body.get("severity", "low"),
                    attach=_attach(body.get("attach")),
                )
            )
        case "log":
            return ActionStep(LogAction(message=str(body)))
        case "save_clip":
            body = body or {}
            return ActionStep(
                SaveClipAction(
                    camera=_opt_str(body.get("camera")),
                    before_s=_duration_or(body.get("before"), 10.0),
                    after_s=_duration_or(body.get("after"), 20.0),
                )
            )
        case "ptz_preset":
            return ActionStep(
                PtzPresetAction(camera=str(body["camera"]), preset=str(body["preset"]))
            )
        case "webhook":
            return ActionStep(WebhookAction(to=str(body["to"]), data=_json_map(body.get("data"))))
        case "home_assistant":
            return ActionStep(
                HomeAssistantAction(
                    action=str(body["action"]),
                    data=_json_map(body.get("data")),
                    target=_json_map(body.get("target")),
                )
            )
        case "site_mode":
            return ActionStep(SiteModeAction(mode=body))
        case "app_action":
            return ActionStep(
                AppAction(
                    app=str(body["app"]),
                    action=str(body["action"]),
                    data=_json_map(body.get("data")),
                )
            )
        case "wait":
            return ActionStep(WaitAction(seconds=_seconds(body)))
        case "reply":
            return ActionStep(ReplyAction(message=str(body)))
    return None


def parse_step(data: Data) -> Step:
    """One step; its kind is the one kind key it holds."""
    if "ai" in data:
        return _parse_ai(data["ai"])
    if "if" in data:
        return IfStep(
            conditions=_conditions(data["if"]),
            paths=MappingProxyType(
                {"true": parse_steps(data.get("then")), "false": parse_steps(data.get("else"))}
            ),
        )
    if "for_each" in data:
        return _parse_for_each(data)
    if "ask_person" in data:
        body = data["ask_person"]
        return AskPersonStep(
            roles=_roles(body["who"]),
            message=str(body["message"]),
            replies=_strs(body["replies"]),
            timeout_s=_duration_or(body.get("timeout"), 300.0),
            default=_opt_str(body.get("default")),
            paths=_paths(data, frozenset({"ask_person"})),
        )
    if "call" in data:
        body = data["call"]
        return CallStep(
            roles=_roles(body["who"]),
            goal=str(body["goal"]),
            outcome_names=_strs(body["outcomes"]),
            script=_opt_str(body.get("script")),
            paths=_paths(data, frozenset({"call"})),
        )
    ((kind, body),) = data.items()
    action = _parse_action(kind, body)
    if action is None:
        raise ValueError(f"unknown step {kind!r}")
    return action


def parse_workflow(data: Data) -> Workflow:
    """The model of a workflow whose data fits the schema."""
    limits = data.get("limits") or {}
    defaults = WorkflowLimits()
    return Workflow(
        name=str(data["name"]),
        description=_opt_str(data.get("description")),
        state=data.get("state", "test"),
        needs=_strs(data.get("needs")),
        limits=WorkflowLimits(
            cooldown_s=_duration_or(limits.get("cooldown"), defaults.cooldown_s),
            one_at_a_time=limits.get("one_at_a_time", defaults.one_at_a_time),
            per_hour=int(limits.get("per_hour", defaults.per_hour)),
            ai_per_hour=int(limits.get("ai_per_hour", defaults.ai_per_hour)),
        ),
        when=parse_trigger(data["when"]),
        conditions=_conditions(data.get("if")),
        then=parse_steps(data["then"]),
        always=parse_steps(data.get("always")),
    )
