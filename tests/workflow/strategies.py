"""Hypothesis strategies that build valid workflow models by construction.

The generator tracks what the validator tracks (placeholders defined on the path, whether an
If or a person's answer stands before, whether an AI decision chose the path) and only builds
what the contract accepts there, so every drawn model must validate. Strings include the ones
YAML 1.1 readers misread ("yes", "off", "22:00", "0o17", "1e5"), to exercise the dumper.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, cast

from hypothesis import strategies as st

from custom_components.opennvr_workflows.workflow import model as m
from custom_components.opennvr_workflows.workflow.vocabulary import (
    COMMON_PLACEHOLDERS,
    trigger_placeholders,
)

TRICKY = ["yes", "No", "on", "off", "null", "~", "true", "22:00", "0o17", "1e5", "-1", ".5", "#x"]
_ALPHABET = st.characters(
    min_codepoint=32, max_codepoint=0x2FFF, exclude_characters="{}", exclude_categories=("Cs", "Cc")
)
ROLES = st.sampled_from(["front_door", "driveway", "garden", "back-yard", "gate"])
IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: s not in {"unsure", "decision", "reason", "confidence", "workflow", "time", "date"}
    and s not in {"mode", "prompt", "input", "frames", "text", "camera", "goal", "instructions"}
    and s not in {"tools", "memory", "fields", "rules", "reason_as", "sure", "limits"}
)
WHOLE = st.integers(min_value=0, max_value=3 * 86_400).map(float)


def plain_text(max_size: int = 40) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(TRICKY),
        st.text(_ALPHABET, min_size=1, max_size=max_size).filter(lambda s: s.strip() != ""),
    )


@dataclass(frozen=True)
class Ctx:
    """What holds on the path: ``tainted`` names hold AI output no person approved as shown;
    an If on one of them chooses its path as the AI would (``ai``)."""

    names: frozenset[str]
    gated: bool = False
    ai: bool = False
    depth: int = 0
    tainted: frozenset[str] = frozenset()


def _reads(condition: m.Condition) -> frozenset[str]:
    match condition:
        case m.ValueCondition(name=name) | m.ListCondition(name=name):
            return frozenset({name})
        case m.CameraCondition():
            return frozenset({"camera"})
        case _:
            return frozenset()


def after_conditions(ctx: Ctx, conditions: tuple[m.Condition, ...]) -> Ctx:
    """The path behind conditions: gated when they read no AI output, AI-chosen otherwise."""
    if any(_reads(c) & ctx.tainted for c in conditions):
        return replace(ctx, ai=True)
    return replace(ctx, gated=True)


@st.composite
def text_with(draw: st.DrawFn, ctx: Ctx) -> str:
    parts = draw(st.lists(plain_text(20), min_size=1, max_size=3))
    if draw(st.booleans()):
        parts.insert(
            draw(st.integers(0, len(parts))), "{" + draw(st.sampled_from(sorted(ctx.names))) + "}"
        )
    return " ".join(parts)


def severity(ctx: Ctx) -> st.SearchStrategy[m.Severity]:
    if ctx.ai:
        return st.sampled_from(["low", "medium"])
    return st.sampled_from(
        ["low", "medium", "high", "critical"] if ctx.gated else ["low", "medium", "high"]
    )


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | plain_text(12),
    lambda inner: st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(IDENT, inner, max_size=3).map(MappingProxyType),
    max_leaves=6,
)


@st.composite
def action(draw: st.DrawFn, ctx: Ctx, skills: set[str]) -> m.ActionStep:
    camera = "camera" in ctx.names
    kinds = ["log", "alert", "notify", "wait", "webhook", "ha_notify", "ptz"]
    if camera:
        kinds.append("clip")
    if ctx.gated and not ctx.ai:
        kinds += ["site_mode", "app", "ha_light"]
    kind = draw(st.sampled_from(kinds))
    attach: tuple[m.Attachment, ...] = (
        tuple(
            draw(st.lists(st.sampled_from(["snapshot", "frames", "clip"]), unique=True, max_size=3))
        )
        if camera
        else ()
    )
    match kind:
        case "log":
            return m.ActionStep(m.LogAction(draw(text_with(ctx))))
        case "alert":
            return m.ActionStep(
                m.AlertAction(
                    severity=draw(severity(ctx)),
                    title=draw(text_with(ctx)),
                    message=draw(st.none() | text_with(ctx)),
                    attach=attach,
                )
            )
        case "notify":
            return m.ActionStep(
                m.NotifyAction(
                    roles=tuple(
                        draw(
                            st.lists(
                                st.sampled_from(["owner", "household", "guard"]),
                                min_size=1,
                                max_size=2,
                                unique=True,
                            )
                        )
                    ),
                    message=draw(text_with(ctx)),
                    title=draw(st.none() | text_with(ctx)),
                    severity=draw(severity(ctx)),
                    attach=attach,
                )
            )
        case "wait":
            return m.ActionStep(m.WaitAction(float(draw(st.integers(1, 86_400)))))
        case "webhook":
            data = draw(st.dictionaries(IDENT, JSON, max_size=3))
            return m.ActionStep(m.WebhookAction(to="ticketing", data=MappingProxyType(data)))
        case "ha_notify":
            return m.ActionStep(
                m.HomeAssistantAction(
                    action="notify.mobile_app_phone",
                    data=MappingProxyType({"message": draw(text_with(ctx))}),
                )
            )
        case "ptz":
            return m.ActionStep(m.PtzPresetAction(camera=draw(ROLES), preset=draw(plain_text(10))))
        case "clip":
            return m.ActionStep(
                m.SaveClipAction(
                    camera=draw(st.none() | ROLES),
                    before_s=float(draw(st.integers(0, 300))),
                    after_s=float(draw(st.integers(0, 300))),
                )
            )
        case "site_mode":
            return m.ActionStep(
                m.SiteModeAction(draw(st.sampled_from(["disarmed", "armed_home", "armed_away"])))
            )
        case "app":
            skills.add("gate_controller")
            return m.ActionStep(
                m.AppAction(app="gate_controller", action="open", data=MappingProxyType({}))
            )
        case _:
            return m.ActionStep(
                m.HomeAssistantAction(
                    action="light.turn_on", data=MappingProxyType({"area_id": "outdoor"})
                )
            )


@st.composite
def condition(draw: st.DrawFn, ctx: Ctx) -> m.Condition:
    kinds = ["time", "site_mode", "value", "list"] + (["camera"] if "camera" in ctx.names else [])
    kind = draw(st.sampled_from(kinds))
    name = draw(st.sampled_from(sorted(ctx.names)))
    match kind:
        case "time":
            times = st.builds(dt.time, st.integers(0, 23), st.integers(0, 59))
            days = st.lists(
                st.sampled_from(["mon", "tue", "wed", "thu", "fri", "sat", "sun"]),
                unique=True,
                max_size=7,
            )
            return m.TimeCondition(
                draw(times), draw(times), cast(tuple[m.Weekday, ...], tuple(draw(days)))
            )
        case "site_mode":
            modes = st.lists(
                st.sampled_from(["disarmed", "armed_home", "armed_away"]), min_size=1, unique=True
            )
            return m.SiteModeCondition(cast(tuple[m.SiteMode, ...], tuple(draw(modes))))
        case "camera":
            return m.CameraCondition(
                tuple(draw(st.lists(ROLES, min_size=1, max_size=3, unique=True)))
            )
        case "value":
            values = st.lists(
                plain_text(10).filter(lambda s: len(s) <= 64), max_size=3, unique=True
            ).map(tuple)
            is_in, is_not = draw(values), draw(values)
            above = draw(st.none() | st.integers(-5, 5).map(float))
            if not (is_in or is_not or above is not None):
                above = 0.5
            return m.ValueCondition(
                name, is_in, is_not, above, draw(st.none() | st.floats(-5, 5, allow_nan=False))
            )
        case _:
            return m.ListCondition(name, draw(IDENT), draw(st.booleans()))


@st.composite
def steps(draw: st.DrawFn, ctx: Ctx, skills: set[str], min_size: int = 1) -> tuple[m.Step, ...]:
    """A list of steps: actions, maybe a for_each, and maybe one branching step last."""
    out: list[m.Step] = list(draw(st.lists(action(ctx, skills), min_size=0, max_size=2)))
    if ctx.depth < 3 and draw(st.integers(0, 4)) == 0:
        body_ctx = replace(
            ctx, names=ctx.names | {"camera"}, depth=ctx.depth + 1, tainted=ctx.tainted - {"camera"}
        )
        out.append(
            m.ForEachStep(
                items=m.ForEachCameras(
                    tuple(draw(st.lists(ROLES, min_size=1, max_size=3, unique=True)))
                ),
                steps=draw(steps(body_ctx, skills)),
                as_name="camera",
                max_items=draw(st.integers(1, 50)),
            )
        )
    if ctx.depth < 3 and draw(st.booleans()):
        out.append(draw(branch(replace(ctx, depth=ctx.depth + 1), skills)))
    if len(out) < min_size:
        out.append(draw(action(ctx, skills)))
    return tuple(out)


def _path(draw: st.DrawFn, ctx: Ctx, skills: set[str]) -> tuple[m.Step, ...]:
    return draw(st.just(()) | steps(ctx, skills))


@st.composite
def branch(draw: st.DrawFn, ctx: Ctx, skills: set[str]) -> m.Step:
    kind = draw(st.sampled_from(["if", "ask", "ai"]))
    if kind == "if":
        conditions = tuple(draw(st.lists(condition(ctx), min_size=1, max_size=2)))
        inner = after_conditions(ctx, conditions)
        return m.IfStep(
            conditions=conditions,
            paths=MappingProxyType(
                {"true": _path(draw, inner, skills), "false": _path(draw, inner, skills)}
            ),
        )
    if kind == "ask":
        replies = tuple(
            draw(
                st.lists(
                    st.sampled_from(["Yes", "No", "Let in", "Keep closed", "Later"]),
                    min_size=2,
                    max_size=4,
                    unique=True,
                )
            )
        )
        default = draw(st.none() | st.sampled_from(replies))
        message = draw(text_with(ctx))
        shown = {name for name in ctx.names if "{" + name + "}" in message}
        paths: dict[str, tuple[m.Step, ...]] = {}
        for reply in replies:
            answered = reply != default
            inner = (
                replace(
                    ctx,
                    names=ctx.names | {"answer", "answered_by"},
                    gated=True,
                    ai=False,
                    tainted=ctx.tainted - shown - {"answer", "answered_by"},
                )
                if answered
                else ctx
            )
            paths[reply] = _path(draw, inner, skills)
        if default is None:
            paths["no_answer"] = _path(draw, ctx, skills)
        return m.AskPersonStep(
            roles=("owner",),
            message=message,
            replies=replies,
            timeout_s=float(draw(st.integers(10, 86_400))),
            default=default,
            paths=MappingProxyType(paths),
        )
    options = tuple(draw(st.lists(IDENT, min_size=1, max_size=4, unique=True)))
    fields = draw(
        st.dictionaries(
            IDENT.filter(lambda s: s not in options and s not in ctx.names),
            st.lists(IDENT, min_size=1, max_size=3, unique=True).map(tuple),
            max_size=2,
        )
    )
    rules = []
    for name, values in fields.items():
        rules.append(m.Rule(MappingProxyType({name: values[:1]}), draw(st.sampled_from(options))))
    if draw(st.booleans()):
        rules.append(m.Rule(MappingProxyType({}), draw(st.sampled_from([*options, "unsure"]))))
    spec: m.LookSpec | m.InvestigateSpec
    if draw(st.booleans()):
        camera = "camera" in ctx.names
        kinds: list[m.LookInput] = ["picture", "frames", "text"] if camera else ["text"]
        input_kind = draw(st.sampled_from(kinds))
        skills.add("language_model" if input_kind == "text" else "vision_model")
        spec = m.LookSpec(
            prompt=draw(text_with(ctx)),
            input=input_kind,
            frames=draw(st.integers(2, 10)) if input_kind == "frames" else None,
            text=draw(text_with(ctx)) if input_kind == "text" else None,
        )
    else:
        skills.add("language_model")
        tools = tuple(
            draw(
                st.lists(
                    st.sampled_from(
                        [
                            "recent_events",
                            "site_lookup",
                            "camera_health",
                            "ask_person",
                            "describe_camera",
                        ]
                    ),
                    min_size=1,
                    max_size=5,
                    unique=True,
                )
            )
        )
        if "describe_camera" in tools:
            skills.add("vision_model")
        spec = m.InvestigateSpec(
            goal=draw(text_with(ctx)),
            tools=tools,
            instructions=draw(st.none() | plain_text()),
            memory=draw(st.sampled_from(["run", "camera"])),
            tool_calls=draw(st.none() | st.integers(1, 12)),
        )
    reason_as = draw(st.none() | st.just("kept_reason").filter(lambda s: s not in ctx.names))
    made = {"decision", "reason", "confidence"} | ({reason_as} if reason_as else set())
    paths = {}
    for outcome in (*options, "unsure"):
        out = made | (set(fields) if outcome != "unsure" else set())
        inner = replace(ctx, names=ctx.names | out, ai=True, tainted=ctx.tainted | out)
        paths[outcome] = _path(draw, inner, skills)
    return m.AIStep(
        spec=spec,
        decision=options,
        paths=MappingProxyType(paths),
        fields=MappingProxyType(fields),
        rules=tuple(rules),
        sure=draw(st.none() | st.floats(0, 1, allow_nan=False)),
        seconds=draw(st.none() | st.integers(1, 600).map(float)),
        reason_as=reason_as,
    )


TRIGGERS: list[st.SearchStrategy[Any]] = [
    st.builds(
        m.AlertTrigger,
        cameras=st.lists(ROLES, max_size=2, unique=True).map(tuple),
        min_severity=st.none() | st.sampled_from(["low", "high"]),
    ),
    st.builds(
        m.EventTrigger,
        event=st.just("plate.recognized.v1"),
        match=st.dictionaries(
            IDENT, st.lists(IDENT, min_size=1, max_size=2, unique=True).map(tuple), max_size=2
        ).map(MappingProxyType),
    ),
    st.builds(m.CameraOfflineTrigger, for_s=st.integers(10, 86_400).map(float)),
    st.builds(
        m.ScheduleTrigger,
        at=st.lists(
            st.builds(dt.time, st.integers(0, 23), st.integers(0, 59)),
            min_size=1,
            max_size=3,
            unique=True,
        ).map(tuple),
    ),
    st.builds(m.ScheduleTrigger, every_s=st.integers(60, 86_400).map(float)),
    st.builds(m.ButtonTrigger, label=st.none() | plain_text(20).filter(lambda s: len(s) <= 40)),
    st.builds(m.MessageTrigger),
    st.builds(
        m.PersonInZoneTrigger,
        cameras=st.lists(ROLES, min_size=1, max_size=2, unique=True).map(tuple),
        min_s=st.integers(1, 600).map(float),
        zone=st.none() | IDENT,
    ),
]


@st.composite
def workflows(draw: st.DrawFn) -> m.Workflow:
    trigger = draw(st.one_of(TRIGGERS))
    names = trigger_placeholders(trigger)
    # An alert trigger with no app or alert type also matches the alerts workflows raise from
    # AI decisions: what it reads is AI output.
    tainted = names - COMMON_PLACEHOLDERS if isinstance(trigger, m.AlertTrigger) else frozenset()
    skills: set[str] = {"detector"} if isinstance(trigger, m.PersonInZoneTrigger) else set()
    conditions = tuple(draw(st.lists(condition(Ctx(names)), max_size=2)))
    start = Ctx(names, tainted=tainted)
    ctx = after_conditions(start, conditions) if conditions else start
    then = draw(steps(ctx, skills))
    always = draw(st.just(()) | steps(replace(ctx, depth=1), skills))
    return m.Workflow(
        name=draw(plain_text(40)),
        description=draw(st.none() | plain_text(80)),
        state=draw(st.sampled_from(["off", "test"])),
        needs=tuple(sorted(skills)),
        limits=m.WorkflowLimits(
            cooldown_s=float(draw(st.integers(0, 86_400))),
            one_at_a_time=draw(st.sampled_from(["camera", "track", "plate"])),
            per_hour=draw(st.integers(1, 360)),
            ai_per_hour=draw(st.integers(0, 720)),
        ),
        when=trigger,
        conditions=conditions,
        then=then,
        always=always,
    )
