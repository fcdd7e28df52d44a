"""The taint of AI output: which values on a path came from an AI, and which a person approved.

"AI informs, people and plain rules move things" is about values as much as paths: an AI
step's ``{decision}`` written into a gate's data, or an ``if`` on an AI field, moves things on
the AI's word as surely as an actuator on the path it chose. So the walk carries, in its
:class:`.scope.Scope`, the names whose value is AI output (*tainted*):

* what an AI step defines on its paths: ``{decision}``, ``{reason}``, ``{confidence}``, its
  fields and its ``reason_as``, whatever they held before (a later AI step re-decides them);
* a for_each's ``collect`` (the reasons of the AI step inside it), and the item of a for_each
  over events (OpenNVR's timeline also holds the alerts workflows raise from AI decisions);
* what a trigger reads when it may match the alerts workflows raise (an ``alert`` trigger whose
  ``app`` or ``alert_type`` does not exclude them), or the alerts of an OpenNVR app that runs
  a model itself (the site's ``model_apps``: an ``alert`` trigger naming one, or naming no
  app where the site has one).

A person's reply (a reply path that is not the question's ``default``, never ``no_answer``) to a
question whose message shows ``{name}`` approves that value as shown: it is no longer tainted on
that path, until an AI step defines the name again. A step that defines a name from something
else (a for_each item, the person's ``{answer}``) replaces the tainted value.

What taint changes is judged elsewhere: an If that reads a tainted value is not a plain rule but
chooses its path as an AI decision would (:func:`if_scope`), and so does a for_each over items
AI output may be among (whether its steps run at all is decided by them: :func:`for_each_body`);
an actuator whose parameters carry a tainted value is refused, and a severity on a path such a
decision chose is capped (:mod:`.safety`). An AI step may not reuse a name the trigger
or an earlier step defines (:func:`check_shadowing`): a value's name must tell where it came
from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from types import MappingProxyType

from ..model import (
    AIStep,
    AlertTrigger,
    AskPersonStep,
    CameraCondition,
    Condition,
    ForEachCameras,
    ForEachEvents,
    ForEachStep,
    ListCondition,
    Trigger,
    ValueCondition,
)
from ..paths import PathPart, format_path
from ..vocabulary import (
    COMMON_PLACEHOLDERS,
    RESERVED_FIELD_NAMES,
    WORKFLOW_ALERT_SOURCE,
    trigger_placeholders,
)
from .context import CheckContext
from .placeholders import placeholders_in
from .scope import Branch, Scope

__all__ = [
    "after_ai",
    "after_answer",
    "after_collect",
    "base_scope",
    "check_collect_shadowing",
    "check_shadowing",
    "check_trigger_taint",
    "condition_reads",
    "for_each_body",
    "if_scope",
    "matches_model_alerts",
    "matches_workflow_alerts",
]

#: What every AI step defines on every one of its paths.
AI_NAMES = frozenset({"decision", "reason", "confidence"})

#: What a person's answer defines on its reply path.
ANSWER_NAMES = frozenset({"answer", "answered_by"})

_TRIGGER = "the trigger"
_TAINTED_TRIGGER = "the trigger, which may match alerts that workflows raise from AI decisions"
_MODEL_TRIGGER = (
    "the trigger, which may match the alerts of an OpenNVR app that runs a language or vision "
    "model itself"
)


def _frozen(mapping: dict[str, str]) -> MappingProxyType[str, str]:
    return MappingProxyType(mapping)


def matches_workflow_alerts(trigger: Trigger) -> bool:
    """True when ``trigger`` may start on an alert a workflow raised (from an AI decision).

    Workflows raise their alerts with app and alert type :data:`WORKFLOW_ALERT_SOURCE`; an
    alert trigger excludes them only by naming another app or another alert type.
    """
    if not isinstance(trigger, AlertTrigger):
        return False
    other_app = trigger.app is not None and trigger.app != WORKFLOW_ALERT_SOURCE
    other_type = trigger.alert_type is not None and trigger.alert_type != WORKFLOW_ALERT_SOURCE
    return not (other_app or other_type)


def matches_model_alerts(trigger: Trigger, model_apps: frozenset[str] | None) -> bool:
    """True when ``trigger`` may start on an alert of an OpenNVR app that runs a model
    (``model_apps``, the site's; None: not known here, so not judged): one it names, or any
    when it names no app and the site has such an app."""
    if not isinstance(trigger, AlertTrigger) or not model_apps:
        return False
    return trigger.app in model_apps if trigger.app is not None else True


def base_scope(trigger: Trigger, model_apps: frozenset[str] | None = None) -> Scope:
    """What holds at the start of every path: the trigger's names, tainted when the trigger
    may match AI-raised alerts or the alerts of an app that runs a model."""
    names = trigger_placeholders(trigger)
    read = sorted(names - COMMON_PLACEHOLDERS)
    tainted: dict[str, str] = {}
    if matches_workflow_alerts(trigger):
        tainted = dict.fromkeys(read, _TAINTED_TRIGGER)
    elif matches_model_alerts(trigger, model_apps):
        tainted = dict.fromkeys(read, _MODEL_TRIGGER)
    origins = dict.fromkeys(sorted(COMMON_PLACEHOLDERS), "every workflow")
    origins |= dict.fromkeys(read, _TRIGGER)
    return Scope(names=names, tainted=_frozen(tainted), origins=_frozen(origins))


def check_trigger_taint(ctx: CheckContext) -> None:
    """Warn when the trigger may match alerts workflows raise from AI decisions, or the
    alerts of an app that runs a model."""
    trigger = ctx.workflow.when
    if not matches_workflow_alerts(trigger):
        if matches_model_alerts(trigger, ctx.site.model_apps):
            _warn_model_apps(ctx, trigger)
        return
    read = ", ".join(
        f"{{{name}}}" for name in sorted(trigger_placeholders(trigger) - COMMON_PLACEHOLDERS)
    )
    if isinstance(trigger, AlertTrigger) and WORKFLOW_ALERT_SOURCE in (
        trigger.app,
        trigger.alert_type,
    ):
        said = "this trigger starts on the alerts workflows raise, which AI decisions may raise"
    else:
        said = (
            "this alert trigger names no app and no alert type, so it also starts on the "
            f"alerts workflows raise (app {WORKFLOW_ALERT_SOURCE}), which AI decisions may raise"
        )
    ctx.report(
        "WF-TRIGGER-AI-ALERTS",
        f"{said}; what it reads ({read}) is treated as AI output: an `if` on it is not a plain "
        "rule, an action that moves things needs a person's reply to a question that shows "
        "such a value, and a run an AI-raised alert starts moves nothing without a person's "
        "reply. To start only on an app's own alerts, add `app: <the app's name>` to the "
        "trigger",
        ("when", "alert"),
        key=True,
        severity="warning",
    )


def _warn_model_apps(ctx: CheckContext, trigger: Trigger) -> None:
    assert isinstance(trigger, AlertTrigger)
    apps = ", ".join(sorted(ctx.site.model_apps or ()))
    said = (
        f"the app {trigger.app} runs a language or vision model itself"
        if trigger.app is not None
        else f"this alert trigger names no app, and this site's apps {apps} run a model"
    )
    ctx.report(
        "WF-TRIGGER-AI-ALERTS",
        f"{said} (the options' Site rules page lists such apps), so its alerts are AI output: "
        "an `if` on what this trigger reads is not a plain rule, and an action that moves "
        "things needs a person's reply to a question that shows such a value",
        ("when", "alert"),
        key=True,
        severity="warning",
    )


def condition_reads(condition: Condition) -> frozenset[str]:
    """The names a condition reads (a camera condition reads the current ``{camera}``)."""
    match condition:
        case ValueCondition(name=name) | ListCondition(name=name):
            return frozenset({name})
        case CameraCondition():
            return frozenset({"camera"})
        case _:
            return frozenset()


def if_scope(conditions: Iterable[Condition], scope: Scope, parts: tuple[PathPart, ...]) -> Scope:
    """The scope on the paths of an If at ``parts`` (the workflow's ``if``: ``("if",)``).

    An If that reads only untainted values is a plain rule and gates its paths. One that reads
    AI output chooses its path as the AI would: it gates nothing, and the path counts as
    AI-chosen until a person answers.
    """
    read = [
        name
        for condition in conditions
        for name in sorted(condition_reads(condition))
        if name in scope.tainted
    ]
    if not read:
        return replace(scope, gated=True)
    name = read[0]
    what = f"the `if` at {format_path(parts)}, which reads {{{name}}} from {scope.tainted[name]}"
    return replace(scope, ai_if=what, choosers=(*scope.choosers, what))


def defined(scope: Scope, names: Iterable[str], origin: str, ai: str | None = None) -> Scope:
    """``scope`` once the step at ``origin`` has defined ``names``: AI output from ``ai``, or
    (None) values of other provenance, which replace any AI output of the same name."""
    names = sorted(set(names))
    tainted = {n: why for n, why in scope.tainted.items() if n not in names}
    if ai is not None:
        tainted |= dict.fromkeys(names, ai)
    return replace(
        scope,
        names=scope.names | frozenset(names),
        tainted=_frozen(tainted),
        origins=_frozen({**scope.origins, **dict.fromkeys(names, origin)}),
    )


def check_shadowing(
    ctx: CheckContext, step: AIStep, scope: Scope, parts: tuple[PathPart, ...]
) -> None:
    """Refuse an AI field or ``reason_as`` that reuses a name defined before it on the path.

    The value would silently replace the other one: an ``if`` that looks like a rule on the
    trigger's ``{plate}`` would read the AI's, or a person would approve one value and another
    of the same name would be used. The names every AI step defines, and the reserved ones,
    are the AI step checks' to refuse.
    """
    body = (*parts, "ai")
    taken = scope.names - RESERVED_FIELD_NAMES
    for name in step.fields:
        if name in taken:
            _shadows(ctx, f"the field {name!r}", name, scope, (*body, "fields", name), key=True)
    if step.reason_as is not None and step.reason_as in taken:
        _shadows(ctx, f"reason_as {step.reason_as!r}", step.reason_as, scope, (*body, "reason_as"))


def _shadows(
    ctx: CheckContext,
    what: str,
    name: str,
    scope: Scope,
    parts: tuple[PathPart, ...],
    *,
    key: bool = False,
    whose: str = "this AI step",
) -> None:
    origin = scope.origins.get(name, "an earlier step")
    ctx.report(
        "WF-AI-NAME-SHADOWS",
        f"{what} of {whose} reuses {{{name}}}, which {origin} defines on this path; "
        f"the AI's value would replace it, and later steps that read {{{name}}} would get the "
        f"AI's choice under the other's name. Rename it (for example `ai_{name}`)",
        parts,
        key=key,
    )


def after_ai(branch: Branch, step: AIStep, parts: tuple[PathPart, ...]) -> Branch:
    """An AI step's path at ``parts``: everything the step defines there is AI output."""
    outcome = branch.parts[-1]
    names = set(AI_NAMES)
    if step.reason_as is not None:
        names.add(step.reason_as)
    if outcome != "unsure":
        names |= set(step.fields)
    origin = f"the AI step at {format_path((*parts, 'ai'))}"
    return replace(branch, scope=defined(branch.scope, names, origin, ai=origin))


def after_answer(branch: Branch, step: AskPersonStep, parts: tuple[PathPart, ...]) -> Branch:
    """A question's path at ``parts``: a person's reply approves the values its message shows,
    and clears an If on AI output as it clears an AI decision."""
    outcome = branch.parts[-1]
    if outcome not in step.replies or outcome == step.default:
        return branch
    shown, _ = placeholders_in(step.message)
    origin = f"the ask_person at {format_path(parts)}"
    scope = defined(branch.scope, ANSWER_NAMES, origin)
    approved = {n: why for n, why in scope.tainted.items() if n not in shown}
    return replace(branch, scope=replace(scope, tainted=_frozen(approved), ai_if=None))


def for_each_body(branch: Branch, step: ForEachStep, parts: tuple[PathPart, ...]) -> Branch:
    """A for_each's body: the item (and the current camera) replace any value of that name.

    An event's item may be an alert a workflow raised from an AI decision, so it is tainted;
    and since the events decide whether the body runs at all (and how often), iterating over
    them is a decision on AI output: the body stands on a path that decision chose, as after
    an ``if`` that reads it, until a person answers.
    """
    names = {step.as_name}
    if isinstance(step.items, ForEachCameras):
        names.add("camera")
    elif isinstance(step.items, ForEachEvents):
        names |= {"camera", "event_type", "event_id"}
    origin = f"the for_each at {format_path(parts)}"
    if not isinstance(step.items, ForEachEvents):
        return replace(branch, scope=defined(branch.scope, names, origin))
    ai = f"{origin}, whose events include the alerts workflows raise from AI decisions"
    scope = defined(branch.scope, names, origin, ai)
    what = (
        f"the for_each at {format_path(parts)}, which runs its steps once per event, and the "
        "events include the alerts workflows raise from AI decisions"
    )
    return replace(branch, scope=replace(scope, ai_if=what, choosers=(*scope.choosers, what)))


def check_collect_shadowing(
    ctx: CheckContext, step: ForEachStep, scope: Scope, parts: tuple[PathPart, ...]
) -> None:
    """Refuse a ``collect`` that reuses a name defined before it on the path: what it holds
    is AI output (the reasons of the AI step inside), and it would replace the other value
    under that value's name, as an AI step's field would."""
    if step.collect is not None and step.collect in scope.names:
        _shadows(
            ctx,
            f"collect {step.collect!r}",
            step.collect,
            scope,
            (*parts, "for_each", "collect"),
            whose="this for_each",
        )


def after_collect(scope: Scope, step: ForEachStep, parts: tuple[PathPart, ...]) -> Scope:
    """The scope after a for_each: what it collects are the reasons of an AI step."""
    if step.collect is None:
        return scope
    origin = f"the for_each at {format_path(parts)}"
    return defined(scope, (step.collect,), origin, f"{origin}, which collects an AI's reasons")
