"""Action steps: build the request, act once, record what happened.

Which actions may be repeated after a crash is decided here: an action that
moves things (or POSTs a webhook) writes an *intent* first and is never done
twice; a replay that finds an intent without a result marks the step
``unknown`` and raises an alert instead (RFC section 8, point 5). Other
effects are sent again with the same idempotency key. In Test, nothing is
performed: the step records what it *would have* done.

Whether an effect carries AI output is decided here too (:mod:`.taint`): such an
effect is labelled ``ai_derived`` for the host, its run is remembered as one that
emitted AI output, and in a run an AI-derived event started, an action that moves
things without a person's reply on its path is refused.

Before an effect that matters acts (or, in Test, is noted), the run-time monitor checks
the safety rule on the run's own path and values (:mod:`.monitor`): after the answer it
rests on was found fresh (or asked again), before anything is written or sent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

from ..workflow import model
from ..workflow.vocabulary import MARKDOWN_MESSAGE_ACTIONS
from .due import DueRows
from .freshness import Freshness
from .monitor import Monitor
from .moving import moves_here, moves_things
from .ports import (
    SEVERITIES,
    ActionRequest,
    AlertRequest,
    Effects,
    JsonMap,
    ProviderUnavailable,
    RunContext,
    Severity,
    SiteClock,
)
from .recorder import StepRecorder, run_context
from .records import SETTLED, ActiveRun, EngineStats, StepRecord
from .render import render, render_json, render_markdown
from .steps import WORLD, Declined, Lineage, ProviderLost, Refused, Waiting
from .store import StoreSlot
from .taint import AiRuns, placeholders
from .trust import AI_CAP, Marks, ai_severity_limit, lower_severity

_LOGGER = logging.getLogger(__name__)


#: Why an actuator is refused in a run whose trigger is not the world's.
_AI_TRIGGER: Final = (
    "this run was started by an event that carries an AI's output (an alert or event a "
    "workflow raised from an AI decision), with no person's reply on this step's path; AI "
    "informs, people and plain rules move things. Put an ask_person before it in this "
    "workflow and place it on a reply path"
)
#: The same, by how the host found the mark on a start by name (``NvrEvent.ai_origin``).
_AI_ORIGIN: Final = {
    "lineage": (
        "this run was started from Home Assistant by something that descends from AI output "
        "(an automation, script or helper set off by a workflow's AI-derived alert, entity "
        "or notification, or by the look or investigate action), with no person's reply on "
        "this step's path; AI informs, people and plain rules move things. Put an "
        "ask_person before it in this workflow and place it on a reply path"
    ),
    "untraced": (
        "this run was started by an automation or script whose start Home Assistant does "
        "not record (a time, sun, template or notification trigger), so it may carry AI "
        "output, with no person's reply on this step's path. Put an ask_person before it "
        "in this workflow and place it on a reply path, or, if only trusted triggers start "
        "this workflow, mark it so in the integration's options (Started only by trusted "
        "triggers)"
    ),
}
_SUPPLIED_TRIGGER: Final = (
    "this run was started by name by a person who is not an admin, with values of their "
    "own: those values are theirs, not the world's, so the run moves nothing without a "
    "person's reply on this step's path. Put an ask_person before it in this workflow and "
    "place it on a reply path, or have an admin start it"
)


def at_most_once(action: model.Action) -> bool:
    """Actions never repeated after a crash: actuators, and webhooks (a second
    POST opens a second ticket)."""
    return moves_things(action) or isinstance(action, model.WebhookAction)


def action_kind(action: model.Action) -> str:
    return _KINDS[type(action)]


_KINDS: Final[dict[type, str]] = {
    model.AlertAction: "alert",
    model.NotifyAction: "notify",
    model.LogAction: "log",
    model.SaveClipAction: "save_clip",
    model.PtzPresetAction: "ptz_preset",
    model.WebhookAction: "webhook",
    model.HomeAssistantAction: "home_assistant",
    model.SiteModeAction: "site_mode",
    model.AppAction: "app_action",
    model.WaitAction: "wait",
    model.ReplyAction: "reply",
}


class ActionSteps:
    """Runs action steps (and ``wait``, which is an action that only waits)."""

    def __init__(
        self,
        recorder: StepRecorder,
        db: StoreSlot,
        clock: SiteClock,
        effects: Effects,
        due: DueRows,
        marks: Marks,
        ai_runs: AiRuns,
        stats: EngineStats,
        freshness: Freshness,
        monitor: Monitor,
    ) -> None:
        self._recorder = recorder
        self._db = db
        self._clock = clock
        self._effects = effects
        self._due = due
        self._marks = marks
        self._ai_runs = ai_runs
        self._stats = stats
        self._freshness = freshness
        self._monitor = monitor

    async def run(
        self,
        run: ActiveRun,
        action: model.Action,
        path: str,
        values: dict[str, Any],
        lineage: Lineage,
    ) -> None:
        """Act once (recorded before and after), or note what Test would have done."""
        kind = action_kind(action)
        rec = run.steps.get(path)
        if rec is not None and rec.status in SETTLED:
            if rec.outcome == "declined":
                raise Declined(path, str((rec.result or {}).get("error", "declined")))
            return
        if isinstance(action, model.WaitAction):
            await self._wait(run, action, path, rec)
            return
        derived = ai_derived(run, action, values, lineage)
        request = self._request(run, action, values, lineage, derived)
        summary = request_summary(request)
        self._held_by_trigger(run, action, path, kind, summary, lineage)
        if not run.test and moves_here(action, self._ai_runs.policy):
            # An answer clears an action for a bounded time; past it, ask again.
            await self._freshness.check(run, action, path, kind, values, lineage)
            rec = run.steps.get(path)
        once = at_most_once(action)
        if rec is None or rec.status != "intent" or not once:
            # The second lock: the rule on this run's path and values, before it acts.
            self._monitor.check(run, action, path, kind, values, request, summary)
        if derived and not run.test:
            self._ai_runs.add(run.correlation_id)
        if run.test:
            self._recorder.record(run, path, kind, "would_have", outcome="done", inputs=summary)
            return
        if rec is not None and rec.status == "intent" and once:
            # Tell people first, then record: a crash in between raises the alert again
            # (the effects answer a repeat by its key) rather than never.
            await alert_unknown(self._effects, run, path, kind)
            self._recorder.record(
                run,
                path,
                kind,
                "unknown",
                outcome="done",
                result={"error": "interrupted between intent and result"},
            )
            run.unknown_steps += 1
            self._stats.unknown_steps += 1
            return
        # An intent must survive a power cut before the world is touched: lost, a
        # restart would not know the action may have happened, and would do it again.
        # A repeatable effect's "running" stays in memory: a restart that finds no row
        # for the step sends it again with the same key, as it would after "running".
        self._recorder.record(
            run, path, kind, "intent" if once else "running", inputs=summary, write=once
        )
        # Before the world is touched, what led here (the run's row, the records
        # that chose this path) is committed, and an intent synced.
        await self._db.store.flush(durable=once)
        ctx = run_context(
            run, path, ai_derived=derived, needs_person=run.ai_derived and lineage.person is None
        )
        try:
            result = await self._perform(ctx, action, request)
        except ProviderUnavailable as err:
            self._recorder.record(
                run, path, kind, "failed", outcome="done", result={"error": str(err)}
            )
            raise ProviderLost(path, str(err) or f"{kind} is not available") from err
        except Exception as err:  # the host failed this action; the run goes on
            _LOGGER.warning("%s %s: %s failed: %s", run.workflow_id, path, kind, err)
            self._recorder.record(
                run, path, kind, "failed", outcome="done", result={"error": str(err)}
            )
            return
        self._recorder.record(
            run, path, kind, "done", outcome="done", result=dict(result) if result else {}
        )

    def _held_by_trigger(
        self,
        run: ActiveRun,
        action: model.Action,
        path: str,
        kind: str,
        summary: dict[str, Any],
        lineage: Lineage,
    ) -> None:
        """Refuse an actuator in a run AI output or a person's own values started, with no
        person's reply on its path (what the run-time monitor checks too, apart)."""
        if not moves_things(action) or lineage.person is not None:
            return
        if run.ai_derived:
            why = _AI_ORIGIN.get(run.event.ai_origin or "", _AI_TRIGGER)
            self._refuse(run, path, kind, summary, why)
        if run.supplied_by is not None:
            self._refuse(run, path, kind, summary, _SUPPLIED_TRIGGER)

    def _refuse(
        self, run: ActiveRun, path: str, kind: str, summary: dict[str, Any], why: str
    ) -> None:
        """Trace the refused actuator and stop the run; its workflow needs attention."""
        reason = f"{kind} moves things, and {why}"
        self._recorder.record(
            run,
            path,
            kind,
            "refused",
            outcome="done",
            inputs=summary,
            result={
                "error": reason,
                **({"ai_derived_trigger": True} if run.ai_derived else {}),
                **({"ai_origin": run.event.ai_origin} if run.event.ai_origin else {}),
                **({"supplied_by": run.supplied_by} if run.supplied_by else {}),
            },
        )
        raise Refused(path, reason)

    def _request(
        self,
        run: ActiveRun,
        action: model.Action,
        values: Mapping[str, Any],
        lineage: Lineage,
        derived: bool = False,
    ) -> AlertRequest | ActionRequest:
        camera = values.get("camera")
        role = str(camera) if camera is not None else None
        trigger_role = run.event.camera_role or run.event.camera_id
        camera_id = run.event.camera_id if role == trigger_role else None
        limit, why = self._severity_limit(run, lineage)
        markdown: str | None = None
        match action:
            case model.AlertAction(severity=severity, title=title, message=message):
                allowed, capped_by = lower_severity(severity, limit, why)
                return AlertRequest(
                    severity=allowed,
                    requested=severity,
                    title=render(title, values),
                    message=render(message or "", values),
                    camera=role,
                    camera_id=camera_id,
                    attach=tuple(action.attach),
                    capped_by=capped_by,
                    ai_derived=derived,
                    markdown=render_markdown(message or "", values),
                )
            case model.NotifyAction():
                allowed, capped_by = lower_severity(action.severity, limit, why)
                params: dict[str, Any] = {
                    "roles": list(action.roles),
                    "message": render(action.message, values),
                    "title": render(action.title, values) if action.title else None,
                    "severity": allowed,
                    "attach": list(action.attach),
                    **({"capped_by": capped_by} if capped_by else {}),
                }
                markdown = render_markdown(action.message, values)
            case model.LogAction(message=message):
                params = {"message": render(message, values)}
            case model.SaveClipAction():
                role = action.camera or role
                params = {"camera": role, "before_s": action.before_s, "after_s": action.after_s}
            case model.PtzPresetAction():
                role = action.camera
                params = {"camera": action.camera, "preset": action.preset}
            case model.WebhookAction():
                params = {"to": action.to, "data": render_json(action.data, values)}
            case model.HomeAssistantAction():
                params = {
                    "action": action.action,
                    "data": _render_data(action, values),
                    "target": render_json(action.target, values),
                    # A notification's own urgency (its data) is held to this by the host.
                    "max_severity": limit,
                    **({"capped_by": why} if why else {}),
                }
            case model.SiteModeAction(mode=mode):
                params = {"mode": mode}
            case model.AppAction():
                params = {
                    "app": action.app,
                    "action": action.action,
                    "data": render_json(action.data, values),
                }
            case model.ReplyAction(message=message):
                params = {"message": render(message, values)}
            case _:
                params = {}
        camera_id = run.event.camera_id if role == trigger_role else None
        return ActionRequest(
            kind=action_kind(action),
            params=params,
            camera=role,
            camera_id=camera_id,
            moves_things=moves_things(action),
            markdown=markdown,
        )

    async def _perform(
        self, ctx: RunContext, action: model.Action, request: AlertRequest | ActionRequest
    ) -> JsonMap | None:
        fx = self._effects
        if isinstance(request, AlertRequest):
            return await fx.alert(ctx, request)
        match action:
            case model.NotifyAction():
                return await fx.notify(ctx, request)
            case model.LogAction():
                await fx.log(ctx, str(request.params["message"]))
                return None
            case model.SaveClipAction():
                return await fx.save_clip(ctx, request)
            case model.PtzPresetAction():
                return await fx.ptz_preset(ctx, request)
            case model.WebhookAction():
                return await fx.webhook(ctx, request)
            case model.HomeAssistantAction():
                return await fx.call_action(ctx, request)
            case model.SiteModeAction():
                return await fx.set_site_mode(ctx, request)
            case model.AppAction():
                return await fx.app_action(ctx, request)
            case model.ReplyAction():
                await fx.reply(ctx, str(request.params["message"]))
                return None
        return None

    def _severity_limit(self, run: ActiveRun, lineage: Lineage) -> tuple[Severity, str | None]:
        """The most urgent an alert or a notification may be on this path, and why.

        After an AI decision with no person's answer since (whatever chose the branches
        in between: an ``if``, a question nobody answered), the AI cap: medium, high once
        the step has earned trust. Critical (it phones people) needs a plain rule or a
        person: on a path nothing chose, in a workflow without conditions, at most high.

        In a run AI output started (its trigger is AI-derived), every value it reads may be
        the model's, whatever chose the path: the AI cap (medium; no step of this run
        earned trust for what started it) until a person's reply in this run. Otherwise a
        chain of workflows, each started by the last one's alert, would turn a model's
        medium into a critical alarm."""
        if run.ai_derived and lineage.person is None:
            return AI_CAP, "ai_derived_trigger"
        if lineage.ai is not None:
            return ai_severity_limit(self._marks.accuracy_of(lineage.ai_key))
        if lineage.decider == WORLD and not run.workflow.conditions:
            return "high", "critical_ungated"
        return "critical", None

    async def _wait(
        self, run: ActiveRun, action: model.WaitAction, path: str, rec: StepRecord | None
    ) -> None:
        if run.trial:
            # A trial answers while the person waits, and never goes on later: its wait
            # is skipped, and its trace says how long the run would have waited.
            self._recorder.record(
                run,
                path,
                "wait",
                "skipped",
                outcome="done",
                result={"skipped": "trial", "would_have_waited_s": action.seconds},
            )
            return
        now = self._clock.now_ts()
        if rec is not None and rec.status == "waiting" and rec.result is not None:
            due_at = float(rec.result["due_at"])
            if now >= due_at:
                self._recorder.record(run, path, "wait", "done", outcome="done")
                self._due.drop(f"wait:{run.run_id}:{path}")
                return
            raise Waiting
        due_at = now + action.seconds
        self._recorder.record(run, path, "wait", "waiting", result={"due_at": due_at})
        self._due.add(
            f"wait:{run.run_id}:{path}", "wait", run.workflow_id, run.run_id, due_at, {"path": path}
        )
        raise Waiting


def _render_data(action: model.HomeAssistantAction, values: Mapping[str, Any]) -> Any:
    """A Home Assistant action's data with its placeholders filled; the ``message`` of an
    action Home Assistant shows as markdown gets its values escaped."""
    data = render_json(action.data, values)
    message = action.data.get("message")
    if action.action in MARKDOWN_MESSAGE_ACTIONS and isinstance(message, str):
        data["message"] = render_markdown(message, values)
    return data


async def alert_unknown(effects: Effects, run: ActiveRun, path: str, kind: str) -> None:
    """Tell people an action may or may not have happened (never retried); a failure
    to tell them is logged, and the run goes on."""
    request = AlertRequest(
        severity="high",
        requested="high",
        title=f"{run.workflow.name}: unknown result of {kind}",
        message=(
            f"The run was interrupted while step {path} ({kind}) was acting. It was not "
            "repeated; check whether it happened."
        ),
        camera_id=run.event.camera_id,
    )
    try:
        await effects.alert(run_context(run, path), request)
    except Exception:
        _LOGGER.exception("could not raise the unknown-result alert for %s", run.run_id)


def ai_derived(
    run: ActiveRun, action: model.Action, values: Mapping[str, Any], lineage: Lineage
) -> bool:
    """Whether the action carries AI output: its run is AI-derived, an AI step chose its
    path with no person's answer since, or its text or data reads a value an AI step
    defined."""
    if run.ai_derived or lineage.ai is not None:
        return True
    names = run.ai_names
    if not names:
        return False
    return any(name in values for name in placeholders(action) & names)


def request_summary(request: AlertRequest | ActionRequest) -> dict[str, Any]:
    if isinstance(request, AlertRequest):
        return {
            "severity": request.severity,
            "requested": request.requested,
            "title": request.title,
            "message": request.message,
            "camera": request.camera,
            "attach": list(request.attach),
            "capped_by": request.capped_by,
            **({"ai_derived": True} if request.ai_derived else {}),
        }
    return {"kind": request.kind, "camera": request.camera, **dict(request.params)}


def severity_index(severity: Severity) -> int:
    return SEVERITIES.index(severity)
