"""Random workflows for the engine's run-time monitor: safe and unsafe, never validated.

The generator puts AI steps, ifs, questions, loops, actions that move things (an app action,
a lock, a speaker, a site mode), Home Assistant notifications that may be a phone command,
and alerts and notifications of every severity anywhere, each reading whatever the path
defines (some behind escaped braces). It does not ask the validator: most of what it draws
is refused there, which is the point (the monitor must hold on its own).

Values stay told apart: each loop's items differ from every value before it (a loop's
cameras and events are named after its depth), so what a question showed and what runs
differ exactly when a value was defined again after the question.
"""

from __future__ import annotations

import datetime as dt
from types import MappingProxyType
from typing import Any

from hypothesis import strategies as st

from custom_components.opennvr_workflows.workflow import model as m

from ..workflow.test_taint_property import _text

#: What each trigger defines, as the engine fills it (see engine/steps.py).
TRIGGERS: dict[str, tuple[m.Trigger, frozenset[str]]] = {
    "button": (m.ButtonTrigger(), frozenset({"user"})),
    "plate": (
        m.EventTrigger("plate.recognized.v1", cameras=("yard",)),
        frozenset({"camera", "event_type", "event_id", "track", "plate", "confidence"}),
    ),
    "alert": (
        m.AlertTrigger(cameras=("yard",)),
        frozenset({"camera", "title", "severity", "alert_type", "app", "alert_id", "track"}),
    ),
}
COMMON = frozenset({"workflow", "time", "date"})
FIELDS = ("kind", "gate", "who")
ROLES = (("owner",), ("owner",), ("guard",))
#: A loop's events, per depth: ``within`` tells the fake which ones to return.
EVENTS_WITHIN = (600.0, 1200.0, 1800.0, 2400.0)


@st.composite
def action(draw: st.DrawFn, names: frozenset[str]) -> m.ActionStep:
    kind = draw(
        st.sampled_from(["log", "app", "lock", "speak", "site_mode", "alert", "notify", "phone"])
    )
    text = _text(draw, names, "v")
    level = draw(st.sampled_from(["low", "medium", "high", "critical"]))
    match kind:
        case "app":
            data = MappingProxyType({"k": text, "more": (text, "x")})
            return m.ActionStep(m.AppAction(app="gate_controller", action="open", data=data))
        case "lock":
            target = MappingProxyType({"entity_id": "lock." + text.replace(" ", "_")})
            return m.ActionStep(m.HomeAssistantAction(action="lock.unlock", target=target))
        case "speak":
            data = MappingProxyType({"message": text})
            return m.ActionStep(m.HomeAssistantAction(action="tts.speak", data=data))
        case "site_mode":
            return m.ActionStep(m.SiteModeAction("armed_away"))
        case "alert":
            return m.ActionStep(m.AlertAction(severity=level, title=text))  # type: ignore[arg-type]
        case "notify":
            return m.ActionStep(
                m.NotifyAction(roles=("owner",), message=text, severity=level)  # type: ignore[arg-type]
            )
        case "phone":
            # A message the phone may take as a command: written, or an AI's words.
            said = draw(st.sampled_from(["TTS", "command_screen_on", "hello", text]))
            data = MappingProxyType({"message": said})
            return m.ActionStep(m.HomeAssistantAction(action="notify.mobile_app_phone", data=data))
        case _:
            return m.ActionStep(m.LogAction(text))


@st.composite
def condition(draw: st.DrawFn, names: frozenset[str]) -> m.Condition:
    kind = draw(st.sampled_from(["time", "value", "list", "camera"]))
    if kind == "camera" and "camera" in names:
        return m.CameraCondition(("yard", "cam0"))
    if kind in ("value", "list"):
        name = draw(st.sampled_from(sorted(names)))
        if kind == "list":
            return m.ListCondition(name, "plates", negate=draw(st.booleans()))
        return m.ValueCondition(name, is_not_in=("nothing",))
    return m.TimeCondition(dt.time(0, 0), dt.time(0, 0))  # holds all day


@st.composite
def steps(
    draw: st.DrawFn, names: frozenset[str], depth: int, min_size: int = 0
) -> tuple[m.Step, ...]:
    out: list[m.Step] = list(draw(st.lists(action(names), min_size=min_size, max_size=2)))
    if depth < 3 and draw(st.integers(0, 3)) == 0:
        events = draw(st.booleans())
        inner = names | {"camera", "event" if events else "item"}
        if events:
            inner |= {"event_type", "event_id"}
        collect = draw(st.none() | st.just(f"notes{depth}"))
        items: m.ForEachEvents | m.ForEachCameras = (
            m.ForEachEvents(EVENTS_WITHIN[depth]) if events else m.ForEachCameras((f"cam{depth}",))
        )
        out.append(
            m.ForEachStep(
                items=items,
                steps=draw(steps(inner, depth + 1, min_size=1)),
                as_name="event" if events else "item",
                collect=collect,
            )
        )
        if collect:
            names = names | {collect}
        out.extend(draw(st.lists(action(names), max_size=1)))
    if depth < 3 and draw(st.booleans()):
        out.append(draw(branch(names, depth + 1)))
    return tuple(out)


@st.composite
def branch(draw: st.DrawFn, names: frozenset[str], depth: int) -> m.Step:
    kind = draw(st.sampled_from(["ai", "if", "ask"]))
    if kind == "if":
        conditions = tuple(draw(st.lists(condition(names), min_size=1, max_size=2)))
        return m.IfStep(
            conditions,
            MappingProxyType(
                {"true": draw(steps(names, depth)), "false": draw(steps(names, depth))}
            ),
        )
    if kind == "ask":
        default = draw(st.none() | st.sampled_from(["Yes", "No"]))
        answered = names | {"answer", "answered_by"}
        paths = {reply: draw(steps(answered, depth)) for reply in ("Yes", "No")}
        if default is None:
            paths["no_answer"] = draw(steps(answered, depth))
        return m.AskPersonStep(
            roles=draw(st.sampled_from(ROLES)),
            message=_text(draw, names, "Go on?"),
            replies=("Yes", "No"),
            timeout_s=60.0,
            default=default,
            paths=MappingProxyType(paths),
        )
    fields = draw(st.lists(st.sampled_from(FIELDS), max_size=2, unique=True))
    reason_as = draw(st.none() | st.just("why"))
    made = {"decision", "reason", "confidence"} | ({reason_as} if reason_as else set())
    paths = {}
    for outcome in ("a", "b", "unsure"):
        defined = names | made | (set(fields) if outcome != "unsure" else set())
        paths[outcome] = draw(steps(frozenset(defined), depth))
    return m.AIStep(
        spec=m.LookSpec(prompt="p", input="text", text=_text(draw, names, "t")),
        decision=("a", "b"),
        paths=MappingProxyType(paths),
        fields=MappingProxyType(dict.fromkeys(fields, ("x", "y"))),
        reason_as=reason_as,
    )


@st.composite
def asked_after_ai(draw: st.DrawFn, names: frozenset[str]) -> m.Step:
    """The shape most holes live in, drawn often: an AI decision whose every outcome asks
    (people drawn per outcome), each reply leading to an effect that reads drawn values."""
    made = names | {"decision", "reason", "confidence", "kind"}
    answered = made | {"answer", "answered_by"}
    paths: dict[str, tuple[m.Step, ...]] = {}
    for outcome in ("a", "b", "unsure"):
        level = draw(st.sampled_from(["medium", "high", "critical"]))
        gate = m.AppAction(
            "gate_controller", "open", MappingProxyType({"k": _text(draw, made, "v")})
        )
        first = [m.ActionStep(gate)]
        if draw(st.booleans()):  # a message the card cannot list: a command only once filled
            said = MappingProxyType({"message": draw(st.sampled_from(["TTS", "{reason}"]))})
            first.append(
                m.ActionStep(m.HomeAssistantAction(action="notify.mobile_app_phone", data=said))
            )
        paths[outcome] = (
            m.ActionStep(m.AlertAction(severity=level, title="Seen")),  # type: ignore[arg-type]
            m.AskPersonStep(
                roles=draw(st.sampled_from(ROLES)),
                message=_text(draw, made, "Go on?"),
                replies=("Yes", "No"),
                timeout_s=60.0,
                default=draw(st.none() | st.just("No")),
                paths=MappingProxyType(
                    {
                        "Yes": (*draw(st.permutations(first)), *draw(steps(answered, 2))),
                        "No": (),
                        "no_answer": (),
                    }
                ),
            ),
        )
    return m.AIStep(
        spec=m.LookSpec(prompt="p", input="text", text="t"),
        decision=("a", "b"),
        paths=MappingProxyType(paths),
        fields=MappingProxyType({"kind": ("x", "y")}),
    )


@st.composite
def workflows(draw: st.DrawFn) -> tuple[str, m.Workflow]:
    """A trigger's key and a workflow on it, On, with limits that never hold a run back."""
    key = draw(st.sampled_from(sorted(TRIGGERS)))
    trigger, defined = TRIGGERS[key]
    names = COMMON | defined
    focused = draw(st.integers(0, 2)) == 0
    then = (draw(asked_after_ai(names)),) if focused else draw(steps(names, 0, min_size=1))
    return key, m.Workflow(
        name="Random",
        when=trigger,
        state="on",
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1000, ai_per_hour=1000),
        conditions=tuple(draw(st.lists(condition(names), max_size=1))),
        then=then,
        always=draw(steps(names, 1)),
    )


def loop_events(within_s: float) -> list[dict[str, Any]]:
    """The events a loop of ``within_s`` reads: told apart from every other loop's."""
    tag = int(within_s)
    return [{"camera": f"garden{tag}", "event_type": f"person{tag}", "id": tag}]
