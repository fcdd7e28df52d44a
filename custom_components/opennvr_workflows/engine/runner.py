"""The run state machine: walk a workflow's steps, recording each one.

A run is executed by replay. :meth:`Runner.execute` walks the workflow from the
top every time it is called (a new run, a person's answer, a due wait, a
restart); a step that already has a settled record is not run again, its
recorded outcome picks the path. Only the first unsettled step does work. So
resuming needs no program counter, and a run's history is exactly its rows.

Order of writes, which is what the restart guarantees rest on:

* a step's record is queued before its work and its result after; before any
  effect on the world the queue is flushed, so the database never lags what
  was done;
* an action that moves things (or POSTs a webhook) writes an *intent* first.
  A replay that finds an intent without a result cannot know whether the act
  happened, so it marks the step ``unknown`` and raises an alert, and never
  acts again (RFC section 8, point 5). Other effects (a notification, a log
  line, an alert) are sent again with the same idempotency key;
* an Ask a person step stores its approval and timeout before delivering the
  question, then the run ends its task as ``waiting``; the answer, the
  timeout or a restart resumes it.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Literal

from ..workflow import model
from ..workflow.vocabulary import action_moves_things
from .events import NvrEvent
from .limits import Budget
from .ports import (
    SEVERITIES,
    ActionRequest,
    AiContext,
    AiResult,
    AiSuspended,
    AlertRequest,
    ApprovalRequest,
    JsonMap,
    ProviderUnavailable,
    RunContext,
    Severity,
)
from .records import SETTLED, ActiveRun, ApprovalRecord, StepRecord
from .render import render, render_json
from .schedule import in_window
from .trust import cap_severity
from .versions import step_hash

if TYPE_CHECKING:
    from .engine import Engine

_LOGGER = logging.getLogger(__name__)

Decider = tuple[Literal["world", "ai", "person", "rule"], str | None]
WORLD: Final[Decider] = ("world", None)
RULE: Final[Decider] = ("rule", None)
PERSON: Final[Decider] = ("person", None)

#: Default time a person has to answer an ask tool an AI step raised.
AI_ASK_TIMEOUT_S: Final = 300.0
NO_ANSWER: Final = "no_answer"


class Waiting(Exception):
    """The run cannot go on until a person answers or a due time passes."""


class ProviderLost(Exception):
    """A step lost its provider; the workflow needs attention."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def moves_things(action: model.Action) -> bool:
    """Whether an action moves things (the contract decides): such actions run at most once."""
    return action_moves_things(action)


def at_most_once(action: model.Action) -> bool:
    """Actions never repeated after a crash: actuators, and webhooks (a second
    POST opens a second ticket)."""
    return moves_things(action) or isinstance(action, model.WebhookAction)


def action_kind(action: model.Action) -> str:
    return {
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
    }[type(action)]


def event_values(event: NvrEvent) -> dict[str, Any]:
    """The placeholders a trigger defines."""
    values: dict[str, Any] = {}
    for name, value in event.payload.items():
        if isinstance(value, str | int | float | bool):
            values[name] = value
    values.update(
        camera=event.camera_role or event.camera_id,
        camera_id=event.camera_id,
        title=event.title,
        severity=event.severity,
        alert_type=event.type if event.kind == "alert" else None,
        event_type=event.type if event.kind == "event" else None,
        app=event.app,
        alert_id=event.alert_id,
        track=event.track_id,
        plate=event.plate if event.plate is not None else values.get("plate"),
        labels=", ".join(sorted(event.labels)),
        time=event.time.isoformat(timespec="seconds"),
    )
    if "description" not in values:
        values["description"] = event.payload.get("description")
    if event.kind == "message":
        values["message"] = event.payload.get("message")
        values["user"] = event.payload.get("user")
    return values


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, default=str, separators=(",", ":"))


class Runner:
    """Executes runs for an :class:`~.engine.Engine`."""

    def __init__(self, engine: Engine) -> None:
        self.e = engine

    # ── the run ────────────────────────────────────────────────────────

    async def execute(self, run: ActiveRun) -> None:
        """Advance ``run`` as far as it can go. Raises :class:`Waiting` or
        :class:`ProviderLost`; returns when the run is complete."""
        wf = run.workflow
        values = event_values(run.event)
        ok = True
        if wf.conditions:
            ok = await self._gate(run, "if", wf.conditions, values)
        if ok:
            await self._walk(run, wf.then, "then", values, WORLD)
            await self._walk(run, wf.always, "always", values, WORLD)
        run.status = "done"

    async def _walk(
        self,
        run: ActiveRun,
        steps: Sequence[model.Step],
        prefix: str,
        values: dict[str, Any],
        decider: Decider,
    ) -> None:
        for i, step in enumerate(steps):
            path = f"{prefix}.{i}"
            outcome, branch = await self._step(run, step, path, values, decider)
            paths: Mapping[str, tuple[model.Step, ...]] | None = getattr(step, "paths", None)
            if paths is not None and outcome is not None and outcome in paths:
                await self._walk(run, paths[outcome], f"{path}.{outcome}", values, branch)

    async def _step(
        self,
        run: ActiveRun,
        step: model.Step,
        path: str,
        values: dict[str, Any],
        decider: Decider,
    ) -> tuple[str | None, Decider]:
        if run.first_step_at is None:
            run.first_step_at = self.e.clock.monotonic()
        match step:
            case model.ActionStep(action=action):
                await self._action(run, action, path, values, decider)
                return "done", decider
            case model.IfStep(conditions=conditions):
                ok = await self._gate(run, path, conditions, values)
                return ("true" if ok else "false"), RULE
            case model.AIStep():
                return await self._ai(run, step, path, values)
            case model.AskPersonStep():
                return await self._ask(run, step, path, values), PERSON
            case model.ForEachStep():
                await self._for_each(run, step, path, values, decider)
                return "done", decider
            case model.CallStep():
                raise ProviderLost(path, "call steps are not available in this integration yet")
        raise ProviderLost(path, f"unknown step {type(step).__name__}")

    # ── records ────────────────────────────────────────────────────────

    def record(
        self,
        run: ActiveRun,
        path: str,
        kind: str,
        status: str,
        *,
        outcome: str | None = None,
        inputs: dict[str, Any] | None = None,
        result: dict[str, Any] | None = None,
        state: dict[str, Any] | None = None,
        ai: AiResult | None = None,
    ) -> StepRecord:
        """Update the step's record in memory and queue its row."""
        now = self.e.now_ts()
        rec = run.steps.get(path)
        if rec is None:
            run.seq += 1
            rec = StepRecord(path=path, kind=kind, status=status, seq=run.seq, started_at=now)
            run.steps[path] = rec
        rec.status = status
        rec.outcome = outcome if outcome is not None else rec.outcome
        if inputs is not None:
            rec.inputs = inputs
        if result is not None:
            rec.result = result
        rec.state = state
        if status in SETTLED:
            rec.ended_at = now
        ms = None if rec.ended_at is None else int((rec.ended_at - rec.started_at) * 1000)
        params: tuple[Any, ...] = (
            run.run_id,
            path,
            rec.seq,
            kind,
            status,
            _dumps(rec.inputs),
            _dumps(rec.result),
            rec.outcome,
            rec.started_at,
            rec.ended_at,
            ms,
        )
        if ai is not None:
            params += (
                _dumps(dict(ai.fields)),
                ai.reason,
                ai.confidence,
                ai.confidence_source,
                ai.self_reported,
                ai.unsure_reason,
                ai.rule,
                ai.model,
                _dumps(dict(ai.usage)),
                _dumps(state),
            )
        else:
            params += (None, None, None, None, None, None, None, None, None, _dumps(state))
        self.e.store.execute_nowait(_STEP_SQL, params)
        return rec

    def context(self, run: ActiveRun, path: str) -> RunContext:
        return RunContext(
            workflow_id=run.workflow_id,
            workflow_name=run.workflow.name,
            version=run.version,
            run_id=run.run_id,
            correlation_id=run.correlation_id,
            chain=run.chain,
            step_path=path,
            test=run.test,
            trigger=run.event,
        )

    # ── conditions ─────────────────────────────────────────────────────

    async def _gate(
        self,
        run: ActiveRun,
        path: str,
        conditions: Sequence[model.Condition],
        values: dict[str, Any],
    ) -> bool:
        rec = run.steps.get(path)
        if rec is not None and rec.status in SETTLED:
            return rec.outcome == "true"
        results = [await self._condition(c, values) for c in conditions]
        ok = all(results)
        self.record(
            run,
            path,
            "if",
            "done",
            outcome="true" if ok else "false",
            result={"conditions": results},
        )
        return ok

    async def _condition(self, cond: model.Condition, values: Mapping[str, Any]) -> bool:
        match cond:
            case model.TimeCondition():
                return in_window(cond, self.e.local_now())
            case model.SiteModeCondition(modes=modes):
                return (await self.e.effects.site_mode()) in modes
            case model.CameraCondition(roles=roles):
                return values.get("camera") in roles
            case model.ValueCondition():
                return _value_ok(cond, values.get(cond.name))
            case model.ListCondition(name=name, list_name=list_name, negate=negate):
                entries = {str(v).casefold() for v in await self.e.effects.site_list(list_name)}
                value = values.get(name)
                found = value is not None and str(value).casefold() in entries
                return found != negate
        return False

    # ── actions ────────────────────────────────────────────────────────

    async def _action(
        self,
        run: ActiveRun,
        action: model.Action,
        path: str,
        values: dict[str, Any],
        decider: Decider,
    ) -> None:
        kind = action_kind(action)
        rec = run.steps.get(path)
        if rec is not None and rec.status in SETTLED:
            return
        if isinstance(action, model.WaitAction):
            await self._wait(run, action, path, rec)
            return
        request = self._request(run, action, values, decider)
        summary = _request_summary(request)
        if run.test:
            self.record(run, path, kind, "would_have", outcome="done", inputs=summary)
            return
        once = at_most_once(action)
        if rec is not None and rec.status == "intent" and once:
            self.record(
                run,
                path,
                kind,
                "unknown",
                outcome="done",
                result={"error": "interrupted between intent and result"},
            )
            run.unknown_steps += 1
            self.e.stats.unknown_steps += 1
            await self.e.alert_unknown(run, path, kind)
            return
        self.record(run, path, kind, "intent" if once else "running", inputs=summary)
        await self.e.store.flush()
        ctx = self.context(run, path)
        try:
            result = await self._perform(ctx, action, request)
        except ProviderUnavailable as err:
            self.record(run, path, kind, "failed", outcome="done", result={"error": str(err)})
            raise ProviderLost(path, str(err) or f"{kind} is not available") from err
        except Exception as err:  # the host failed this action; the run goes on
            _LOGGER.warning("%s %s: %s failed: %s", run.workflow_id, path, kind, err)
            self.record(run, path, kind, "failed", outcome="done", result={"error": str(err)})
            return
        self.record(run, path, kind, "done", outcome="done", result=dict(result) if result else {})

    def _request(
        self,
        run: ActiveRun,
        action: model.Action,
        values: Mapping[str, Any],
        decider: Decider,
    ) -> AlertRequest | ActionRequest:
        camera = values.get("camera")
        role = str(camera) if camera is not None else None
        trigger_role = run.event.camera_role or run.event.camera_id
        camera_id = run.event.camera_id if role == trigger_role else None
        match action:
            case model.AlertAction(severity=severity, title=title, message=message):
                allowed: Severity = severity
                capped_by: str | None = None
                if decider[0] == "ai":
                    allowed, capped_by = cap_severity(severity, self.e.accuracy_of(decider[1]))
                return AlertRequest(
                    severity=allowed,
                    requested=severity,
                    title=render(title, values),
                    message=render(message or "", values),
                    camera=role,
                    camera_id=camera_id,
                    attach=tuple(action.attach),
                    capped_by=capped_by,
                )
            case model.NotifyAction():
                params: dict[str, Any] = {
                    "roles": list(action.roles),
                    "message": render(action.message, values),
                    "title": render(action.title, values) if action.title else None,
                    "severity": action.severity,
                    "attach": list(action.attach),
                }
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
                    "data": render_json(action.data, values),
                    "target": render_json(action.target, values),
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
        )

    async def _perform(
        self, ctx: RunContext, action: model.Action, request: AlertRequest | ActionRequest
    ) -> JsonMap | None:
        fx = self.e.effects
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

    async def _wait(
        self, run: ActiveRun, action: model.WaitAction, path: str, rec: StepRecord | None
    ) -> None:
        now = self.e.now_ts()
        if rec is not None and rec.status == "waiting" and rec.result is not None:
            due_at = float(rec.result["due_at"])
            if now >= due_at:
                self.record(run, path, "wait", "done", outcome="done")
                self.e.drop_due(f"wait:{run.run_id}:{path}")
                return
            raise Waiting
        due_at = now + action.seconds
        self.record(run, path, "wait", "waiting", result={"due_at": due_at})
        self.e.add_due(
            f"wait:{run.run_id}:{path}", "wait", run.workflow_id, run.run_id, due_at, {"path": path}
        )
        raise Waiting

    # ── ask a person ───────────────────────────────────────────────────

    async def _ask(
        self, run: ActiveRun, step: model.AskPersonStep, path: str, values: dict[str, Any]
    ) -> str:
        rec = run.steps.get(path)
        if rec is not None and rec.status in SETTLED:
            _answer_values(values, rec.result)
            return rec.outcome or NO_ANSWER
        fallback = step.default if step.default is not None else NO_ANSWER
        message = render(step.message, values)
        if run.test:
            approval = self._approval(
                run,
                f"{run.run_id}:{path}",
                path,
                step.roles,
                message,
                step.replies,
                step.default,
                step.timeout_s,
                "would_have",
            )
            result = {
                "would_have_asked": message,
                "approval_id": approval.approval_id,
                "answer": step.default,
            }
            self.record(run, path, "ask_person", "would_have", outcome=fallback, result=result)
            _answer_values(values, result)
            return fallback
        if rec is None:
            approval = self._approval(
                run,
                f"{run.run_id}:{path}",
                path,
                step.roles,
                message,
                step.replies,
                step.default,
                step.timeout_s,
                "pending",
            )
            self.record(
                run, path, "ask_person", "waiting", result={"approval_id": approval.approval_id}
            )
            await self._deliver(run, path, approval)
            raise Waiting
        approval_id = str((rec.result or {}).get("approval_id"))
        found = self.e.approvals.get(approval_id)
        if found is None:
            raise ProviderLost(path, f"approval {approval_id} is missing")
        approval = found
        if approval.status == "pending":
            if not approval.asked:
                await self._deliver(run, path, approval)
            raise Waiting
        outcome = approval.reply if approval.status == "answered" else fallback
        result = {
            "approval_id": approval_id,
            "answer": approval.reply,
            "answered_by": approval.answered_by,
            "status": approval.status,
        }
        self.record(run, path, "ask_person", "done", outcome=outcome or NO_ANSWER, result=result)
        _answer_values(values, result)
        return outcome or NO_ANSWER

    def _approval(
        self,
        run: ActiveRun,
        approval_id: str,
        path: str,
        roles: Sequence[str],
        message: str,
        replies: Sequence[str],
        default: str | None,
        timeout_s: float,
        status: str,
    ) -> ApprovalRecord:
        now = self.e.now_ts()
        approval = ApprovalRecord(
            approval_id=approval_id,
            run_id=run.run_id,
            step_path=path,
            workflow_id=run.workflow_id,
            who=tuple(roles),
            message=message,
            replies=tuple(replies),
            default=default,
            camera_id=run.event.camera_id,
            status=status,
            created_at=now,
            expires_at=now + timeout_s,
        )
        self.e.open_approval(approval)
        return approval

    async def _deliver(self, run: ActiveRun, path: str, approval: ApprovalRecord) -> None:
        """Make the approval durable, then hand it to the host."""
        await self.e.store.flush()
        request = ApprovalRequest(
            approval_id=approval.approval_id,
            who=approval.who,
            message=approval.message,
            replies=approval.replies,
            expires_at=datetime.fromtimestamp(approval.expires_at, self.e.tz),
            default=approval.default,
            camera_id=approval.camera_id,
            seen_again=run.seen_again,
        )
        try:
            await self.e.effects.ask_person(self.context(run, path), request)
        except ProviderUnavailable as err:
            raise ProviderLost(path, str(err) or "nobody can be asked") from err
        approval.asked = True
        self.e.store.execute_nowait(
            "UPDATE workflow_approvals SET asked=1 WHERE id=?", (approval.approval_id,)
        )

    # ── AI ─────────────────────────────────────────────────────────────

    async def _ai(
        self, run: ActiveRun, step: model.AIStep, path: str, values: dict[str, Any]
    ) -> tuple[str, Decider]:
        key = f"{run.workflow_id}/{path}@{step_hash(step)}"
        decider: Decider = ("ai", key)
        rec = run.steps.get(path)
        if rec is not None and rec.status in SETTLED:
            _ai_values(values, rec.result)
            return rec.outcome or "unsure", decider
        limiter = self.e.limiter(run.workflow_id, run.workflow)
        budget = Budget(limiter, self.e.now_ts)
        actx = AiContext(run=self.context(run, path), inputs=dict(values), budget=budget)
        asks = 0
        out: AiResult | AiSuspended
        try:
            if rec is not None and rec.status == "waiting" and rec.state is not None:
                asks = int(rec.state.get("asks", 1))
                approval = self.e.approvals.get(str(rec.state.get("approval_id")))
                if approval is None:
                    raise ProviderLost(path, "the AI step's approval is missing")
                if approval.status == "pending":
                    if not approval.asked:
                        await self._deliver(run, path, approval)
                    raise Waiting
                answer = approval.reply if approval.status == "answered" else None
                out = await self.e.ai.resume(step, rec.state["ai"], _ai_answer(answer), actx)
            elif budget.remaining() <= 0:
                out = AiResult(
                    outcome="unsure",
                    unsure_reason="over_budget",
                    reason="the workflow's hourly AI allowance is spent",
                )
            else:
                self.record(run, path, "ai", "running", inputs={"key": key})
                out = await self.e.ai.run(step, actx)
            while isinstance(out, AiSuspended):
                asks += 1
                out = await self._ai_suspended(run, step, path, key, out, asks, actx)
        except ProviderUnavailable as err:
            self.record(run, path, "ai", "failed", outcome="unsure", result={"error": str(err)})
            raise ProviderLost(path, str(err) or "the AI model is not available") from err
        self._trace(run, path, out.trace)
        result = {
            "key": key,
            "decision": out.outcome,
            "fields": dict(out.fields),
            "reason": out.reason,
            "confidence": out.confidence,
            "evidence": list(out.evidence),
        }
        self.record(run, path, "ai", "done", outcome=out.outcome, result=result, ai=out)
        _ai_values(values, result)
        return out.outcome, decider

    async def _ai_suspended(
        self,
        run: ActiveRun,
        step: model.AIStep,
        path: str,
        key: str,
        out: AiSuspended,
        asks: int,
        actx: AiContext,
    ) -> AiResult | AiSuspended:
        """An AI step's ask tool: in Test take the default at once; otherwise
        store the step's state and the approval, ask, and wait."""
        self._trace(run, path, out.trace)
        args = out.pending.get("arguments") or {}
        if not isinstance(args, Mapping):
            args = {}
        message = str(args.get("message") or args.get("question") or "The AI step asks.")
        replies = tuple(str(r) for r in args.get("replies") or ("Yes", "No"))
        who = args.get("who") or args.get("roles") or ()
        roles = (who,) if isinstance(who, str) else tuple(str(w) for w in who)
        approval_id = f"{run.run_id}:{path}#{asks}"
        status = "would_have" if run.test else "pending"
        approval = self._approval(
            run, approval_id, path, roles, message, replies, None, AI_ASK_TIMEOUT_S, status
        )
        if run.test:
            return await self.e.ai.resume(step, out.state, _ai_answer(None), actx)
        state = {"ai": dict(out.state), "approval_id": approval_id, "asks": asks, "key": key}
        self.record(run, path, "ai", "waiting", state=state, inputs={"key": key})
        await self._deliver(run, path, approval)
        raise Waiting

    def _trace(self, run: ActiveRun, path: str, rows: Sequence[JsonMap]) -> None:
        if not rows:
            return
        params = [
            (
                str(r.get("id")),
                run.run_id,
                path,
                run.workflow_id,
                str(r.get("kind", "tool")),
                str(r.get("name", "")),
                _dumps(r.get("args_asked")),
                str(r.get("result", "")),
                str(r.get("status", "ok")),
                r.get("mode"),
                float(r.get("started_at") or 0.0),
                int(r.get("ms") or 0),
                r.get("tokens_in"),
                r.get("tokens_out"),
            )
            for r in rows
        ]

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(_TRACE_SQL, params)

        self.e.store.submit_nowait(write)

    # ── for each ───────────────────────────────────────────────────────

    async def _for_each(
        self,
        run: ActiveRun,
        step: model.ForEachStep,
        path: str,
        values: dict[str, Any],
        decider: Decider,
    ) -> None:
        rec = run.steps.get(path)
        if rec is not None and rec.status in SETTLED:
            if step.collect and rec.result is not None:
                values[step.collect] = rec.result.get("collected", "")
            return
        if rec is not None and rec.result is not None and "items" in rec.result:
            items = list(rec.result["items"])
        else:
            items = (await self._items(step))[: step.max_items]
            self.record(run, path, "for_each", "running", result={"items": items})
        lines: list[str] = []
        for j, item in enumerate(items):
            scope = dict(values)
            scope.pop("reason", None)
            scope[step.as_name] = item if not isinstance(item, Mapping) else _label(item)
            if isinstance(step.items, model.ForEachCameras):
                scope["camera"] = item
            elif isinstance(item, Mapping):
                scope["camera"] = item.get("camera", scope.get("camera"))
                scope["event_type"] = item.get("event_type")
            await self._walk(run, step.steps, f"{path}.{j}", scope, decider)
            if step.collect:
                label = scope[step.as_name]
                reason = scope.get("reason")
                lines.append(f"{label}: {reason}" if reason else str(label))
        result: dict[str, Any] = {"items": items}
        if step.collect:
            result["collected"] = "\n".join(lines)
            values[step.collect] = result["collected"]
        self.record(run, path, "for_each", "done", outcome="done", result=result)

    async def _items(self, step: model.ForEachStep) -> list[Any]:
        match step.items:
            case model.ForEachCameras(cameras=cameras):
                return list(cameras)
            case model.ForEachList(list_name=name):
                return [str(v) for v in await self.e.effects.site_list(name)]
            case model.ForEachEvents(within_s=within_s, cameras=cameras):
                events = await self.e.effects.recent_events(cameras, within_s)
                return [json.loads(json.dumps(dict(ev), default=str)) for ev in events]
        return []


def _label(item: Mapping[str, Any]) -> str:
    parts = [str(item.get(k)) for k in ("time", "camera", "event_type") if item.get(k)]
    return " ".join(parts) or json.dumps(item, default=str)


def _value_ok(cond: model.ValueCondition, value: Any) -> bool:
    text = None if value is None else str(value)
    if cond.is_in and text not in cond.is_in:
        return False
    if cond.is_not_in and text in cond.is_not_in:
        return False
    if cond.above is not None or cond.below is not None:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return False
        if cond.above is not None and not number > cond.above:
            return False
        if cond.below is not None and not number < cond.below:
            return False
    return True


def _answer_values(values: dict[str, Any], result: Mapping[str, Any] | None) -> None:
    if result:
        values["answer"] = result.get("answer")
        values["answered_by"] = result.get("answered_by")


def _ai_values(values: dict[str, Any], result: Mapping[str, Any] | None) -> None:
    if not result:
        return
    values["decision"] = result.get("decision")
    values["reason"] = result.get("reason")
    values["confidence"] = result.get("confidence")
    for name, value in (result.get("fields") or {}).items():
        values[name] = value


def _ai_answer(reply: str | None) -> str:
    return reply if reply is not None else "No answer (the person did not reply in time)."


def _request_summary(request: AlertRequest | ActionRequest) -> dict[str, Any]:
    if isinstance(request, AlertRequest):
        return {
            "severity": request.severity,
            "requested": request.requested,
            "title": request.title,
            "message": request.message,
            "camera": request.camera,
            "attach": list(request.attach),
            "capped_by": request.capped_by,
        }
    return {"kind": request.kind, "camera": request.camera, **dict(request.params)}


def severity_index(severity: Severity) -> int:
    return SEVERITIES.index(severity)


_STEP_SQL: Final = (
    "INSERT OR REPLACE INTO workflow_run_steps (run_id, path, seq, kind, status, inputs, "
    "result, outcome, started_at, ended_at, ms, fields, reason, confidence, "
    "confidence_source, self_reported, unsure_reason, rule, model, usage, state) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_TRACE_SQL: Final = (
    "INSERT OR IGNORE INTO workflow_tool_calls (id, run_id, step_path, workflow_id, kind, "
    "name, args_asked, result, status, mode, started_at, ms, tokens_in, tokens_out) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
