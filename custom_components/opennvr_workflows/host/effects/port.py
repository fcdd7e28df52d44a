"""The engine's Effects port in Home Assistant: what a run does to the world.

Every method is one kind of effect (see :class:`~...engine.ports.Effects`). The rules that
hold across them live here, once:

* idempotent per step: a key the engine sends again after a restart (``RunContext.key``)
  is answered from the :class:`SentLedger` and not sent twice; notifications carry the key
  as their tag, so the phone replaces rather than repeats;
* attributed: Home Assistant actions run with the run's ``Context``, logbook lines name the
  workflow, and every OpenNVR call a run makes carries its correlation id;
* fenced: a webhook goes only to a destination an admin approved in the options, and the
  OpenNVR calls that need a token scope the site did not grant fail with that reason;
* judged by effect, not by name: a ``home_assistant`` action or a webhook this host finds
  moving things (:mod:`.judge`) is made only from a step the import checked as an
  actuator, and a notification's own urgency (:mod:`.urgency`) is held to the severity
  the step may have.

A lost provider (a Home Assistant action that no longer exists, a webhook destination
removed from the options, a token that lacks the scope) raises ``ProviderUnavailable`` so
the workflow is parked in *needs attention*; anything else that fails raises and fails
the step only.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import aiohttp
from aiohttp import hdrs
from homeassistant.components import persistent_notification
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceNotFound
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from pyopennvr import OpenNVRAuthError, OpenNVRClient, OpenNVRError
from yarl import URL

from ...const import DOMAIN
from ...engine import (
    ActionRequest,
    AlertRequest,
    ApprovalRequest,
    NvrEvent,
    ProviderUnavailable,
    RunContext,
)
from ...engine.ports import JsonMap, Severity
from ...engine.render import escape_markdown
from ...redact import strip_userinfo
from ..approvals.desk import ApprovalDesk
from ..errors import failed
from ..runs.context import RunContexts, SentLedger, short_key
from ..settings import HostSettings
from .judge import ActionJudge, Effect, as_phone_text
from .privacy import notify_services, outgoing
from .urgency import NotificationTooUrgent, cap_urgency

_LOGGER = logging.getLogger(__name__)

EVENT_ALERT: Final = f"{DOMAIN}_alert"
EVENT_REPLY: Final = f"{DOMAIN}_reply"
#: Severities that also reach the approvers' phones (low and medium stay in Home Assistant).
PHONE_SEVERITIES: Final = frozenset({"high", "critical"})
WEBHOOK_TIMEOUT_S: Final = 10.0
_REPEAT: Final[JsonMap] = {"repeat": True}
#: The notify services that show their message as markdown (Home Assistant's own
#: notifications); a phone's (mobile_app) shows it as plain text and gets it as written.
MARKDOWN_NOTIFY: Final = frozenset({"notify.persistent_notification"})
#: What a notification may ask a phone for when the engine names no limit: the AI cap on a
#: step that carries AI output, and no limit otherwise (the engine gives one where it caps).
AI_NOTIFY_CAP: Final[Severity] = "medium"
#: How Home Assistant's own notifications of AI output say so to the person reading them.
AI_MARK: Final = "AI"
#: The notification id of Home Assistant's own notifications that carry AI output starts
#: with this, so an automation on them can tell (a ``persistent_notification`` trigger
#: carries no context).
AI_NOTIFICATION_PREFIX: Final = f"{DOMAIN}_ai_"


class HaEffects:
    """:class:`~...engine.ports.Effects` for one config entry."""

    def __init__(
        self,
        hass: HomeAssistant,
        client: OpenNVRClient,
        settings: HostSettings,
        *,
        ledger: SentLedger,
        scopes: frozenset[str] | None,
        site_mode: Callable[[], str | None],
        camera_entity: Callable[[str | None], str | None],
        workflow_entity: Callable[[str], str | None],
        publish: Callable[[NvrEvent], object],
    ) -> None:
        self._hass = hass
        self._client = client
        self.settings = settings
        self.ledger = ledger
        self._scopes = scopes
        self._site_mode = site_mode
        self._camera_entity = camera_entity
        self._workflow_entity = workflow_entity
        self._publish = publish
        self.contexts = RunContexts(hass)
        #: workflow id -> the engine paths of its steps the import cleared as actuators
        #: (:func:`.judge.cleared_steps`); set by the host on every folder load.
        self.cleared: Mapping[str, Sequence[re.Pattern[str]]] = {}
        #: where questions go (set by the host once the desk exists)
        self.desk: ApprovalDesk | None = None
        #: webhook answers that were redirects (refused, not followed), for diagnostics
        self.webhook_redirects = 0

    # ── telling people ─────────────────────────────────────────────────

    async def alert(self, ctx: RunContext, request: AlertRequest) -> JsonMap | None:
        if self.ledger.seen(ctx.key):
            return _REPEAT
        context = self.contexts.of(ctx)
        ai_derived = ctx.ai_derived or request.ai_derived
        data = {
            "workflow_id": ctx.workflow_id,
            "workflow": ctx.workflow_name,
            "run_id": ctx.run_id,
            "correlation_id": ctx.correlation_id,
            "severity": request.severity,
            "requested_severity": request.requested,
            "capped_by": request.capped_by,
            "title": request.title,
            "message": request.message,
            "camera": request.camera,
            "camera_id": request.camera_id,
            "ai_derived": ai_derived,
        }
        self._hass.bus.async_fire(EVENT_ALERT, data, context=context)
        markdown = shown_as_markdown(request.message or request.title, request.markdown)
        severity = f"{request.severity}, {AI_MARK}" if ai_derived else request.severity
        persistent_notification.async_create(
            self._hass,
            markdown,
            title=f"{request.title} ({severity})",
            notification_id=notification_id(ctx, ai_derived),
        )
        result: dict[str, Any] = {"severity": request.severity, "phones": []}
        if request.severity in PHONE_SEVERITIES:
            title, message, quoted = phone_texts(request.title, request.message)
            result["phones"] = await self._to_phones(
                ctx,
                self.settings.approver_phones,
                title,
                (message, markdown),
                request.camera_id,
                request.attach,
                ai_derived=ai_derived,
                kept_in_house=True,  # the alert's own notification above holds it all
            )
            result.update(quoted)
        result["opennvr_event"] = await self._opennvr_event(ctx, request)
        # The alert comes back as an event other workflows may start on; its chain carries
        # this run, so the engine can stop loops and see that it was raised by a workflow.
        self._publish(
            NvrEvent(
                kind="alert",
                source="engine",
                time=datetime.now(UTC),
                type=DOMAIN,
                camera_id=request.camera_id,
                alert_id=f"wf_{short_key(ctx.key)}",
                app=DOMAIN,
                severity=request.severity,
                title=request.title,
                correlation_id=ctx.correlation_id,
                chain=run_chain(ctx),
                payload={"message": request.message, "workflow_id": ctx.workflow_id},
                ai_derived=ai_derived,
            )
        )
        self.ledger.add(ctx.key)
        return result

    async def notify(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        if self.ledger.seen(ctx.key):
            return _REPEAT
        params = request.params
        message = str(params.get("message") or "")
        title = str(params.get("title") or ctx.workflow_name)
        services = await notify_services(
            self._hass, self.settings, params.get("roles"), self._camera_entity(request.camera_id)
        )
        markdown = shown_as_markdown(message, request.markdown)
        # Whatever the step's text became, a phone shows it: it is never a command to it.
        phone_title, phone_message, quoted = phone_texts(title, message)
        sent = await self._to_phones(
            ctx,
            services,
            phone_title,
            (phone_message, markdown),
            request.camera_id,
            tuple(params.get("attach") or ()),
            ai_derived=ctx.ai_derived,
        )
        if not sent:
            # Nobody's phone is set up yet: the message still reaches Home Assistant.
            persistent_notification.async_create(
                self._hass,
                markdown,
                title=f"{title} ({AI_MARK})" if ctx.ai_derived else title,
                notification_id=notification_id(ctx, ctx.ai_derived),
            )
        self.ledger.add(ctx.key)
        return {"sent_to": sent or ["persistent_notification"], **quoted}

    async def log(self, ctx: RunContext, message: str) -> None:
        data: dict[str, Any] = {"name": ctx.workflow_name, "message": message, "domain": DOMAIN}
        if entity_id := self._workflow_entity(ctx.workflow_id):
            data["entity_id"] = entity_id
        if ctx.ai_derived:
            data["ai_derived"] = True
        self._hass.bus.async_fire("logbook_entry", data, context=self.contexts.of(ctx))

    async def reply(self, ctx: RunContext, message: str) -> None:
        if self.ledger.seen(ctx.key):
            return
        self._hass.bus.async_fire(
            EVENT_REPLY,
            {
                "workflow_id": ctx.workflow_id,
                "run_id": ctx.run_id,
                "message": message,
                "to": ctx.trigger.payload.get("user"),
                "conversation_id": ctx.trigger.payload.get("conversation_id"),
                "ai_derived": ctx.ai_derived,
            },
            context=self.contexts.of(ctx),
        )
        self.ledger.add(ctx.key)

    async def ask_person(self, ctx: RunContext, request: ApprovalRequest) -> None:
        """The question on the addressees' phones and in Home Assistant
        (:mod:`..approvals.desk`)."""
        if self.desk is None:
            raise ProviderUnavailable("the approvals desk is not running")
        await self.desk.ask(ctx, request)

    async def approval_closed(
        self, approval_id: str, status: str, reply: str | None, by: str | None
    ) -> None:
        if self.desk is not None:
            await self.desk.closed(approval_id, status, reply, by)

    # ── acting ─────────────────────────────────────────────────────────

    async def save_clip(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        camera_id = self._camera_of(request)
        if camera_id is None:
            raise ValueError(f"save_clip: no OpenNVR camera for {request.camera!r}")
        self._need_scope("events.create", "save a clip")
        before = int(float(request.params.get("before_s", 10)))
        after = int(float(request.params.get("after_s", 20)))
        event_id = ctx.trigger.payload.get("event_id")
        cid = ctx.correlation_id
        async with self._nvr("save a clip", lambda err: failed("effect_nvr_save_clip", error=err)):
            if event_id is None:
                created = await self._client.create_event(
                    camera_id,
                    label="workflow",
                    note=ctx.workflow_name,
                    duration_s=before + after,
                    correlation_id=cid,
                )
                event_id = created.get("id")
            if event_id is None:
                raise failed("effect_clip_no_event")
            await self._client.protect_event(
                int(event_id), pre_s=before, post_s=after, correlation_id=cid
            )
        return {"event_id": event_id, "before_s": before, "after_s": after}

    async def ptz_preset(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        camera_id = self._camera_of(request)
        if camera_id is None:
            raise ValueError(f"ptz_preset: no OpenNVR camera for {request.camera!r}")
        self._need_scope("ptz.control", "move a camera to a preset")
        wanted = str(request.params.get("preset", ""))
        async with self._nvr(
            "move the camera", lambda err: failed("effect_nvr_move_camera", error=err)
        ):
            presets = await self._client.ptz_presets(camera_id)
            token = next(
                (
                    str(p.get("token"))
                    for p in presets
                    if wanted in (str(p.get("token")), str(p.get("name")))
                ),
                None,
            )
            if token is None:
                raise ProviderUnavailable(f"camera {camera_id} has no PTZ preset {wanted!r}")
            await self._client.ptz_goto_preset(camera_id, token, correlation_id=ctx.correlation_id)
        return {"camera_id": camera_id, "preset": token}

    async def webhook(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        name = str(request.params.get("to", ""))
        url = self.settings.webhooks.get(name)
        if url is None:
            raise ProviderUnavailable(
                f"webhook destination {name!r} is not approved in the integration's options"
            )
        self._fence(ctx, request, self._judge().judge_webhook(name))
        session = async_get_clientsession(self._hass)
        try:
            # Never followed: a redirect would carry the body (the run's data, its
            # correlation id) to an address no admin approved.
            async with session.post(
                url,
                json=dict(request.params.get("data") or {}),
                headers={"X-Correlation-Id": ctx.correlation_id},
                timeout=aiohttp.ClientTimeout(total=WEBHOOK_TIMEOUT_S),
                allow_redirects=False,
            ) as response:
                if 300 <= response.status < 400:
                    raise self._redirected(ctx, name, response)
                if response.status >= 400:
                    raise failed("effect_webhook_status", name=name, status=response.status)
                return {"to": name, "status": response.status}
        except (aiohttp.ClientError, TimeoutError) as err:
            raise failed("effect_webhook_failed", name=name, error=err) from err

    def _redirected(
        self, ctx: RunContext, name: str, response: aiohttp.ClientResponse
    ) -> HomeAssistantError:
        """A webhook destination that answered with a redirect: counted, logged, and the
        step's error says where it pointed (without any password in that address), so
        the admin can approve the final address instead."""
        self.webhook_redirects += 1
        where = redirect_target(response)
        _LOGGER.warning(
            "Workflow %s: the webhook destination %r redirected (HTTP %s) to %s; "
            "redirects are not followed, nothing was sent there",
            ctx.workflow_name,
            name,
            response.status,
            where,
        )
        return failed("effect_webhook_redirected", name=name, status=response.status, where=where)

    async def call_action(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        action = str(request.params.get("action", ""))
        domain, _, service = action.partition(".")
        if not self._hass.services.has_service(domain, service):
            raise ProviderUnavailable(f"Home Assistant has no action {action!r}")
        if domain == "notify" and self.ledger.seen(ctx.key):
            return _REPEAT
        data = dict(request.params.get("data") or {})
        target = dict(request.params.get("target") or {})
        effect = self._judge().judge_call(action, data, target)
        self._fence(ctx, request, effect)
        capped: dict[str, Any] = {}
        if domain == "notify" and "data" in data:
            capped = self._cap(ctx, request, action, effect, data)
        try:
            response = await self._hass.services.async_call(
                domain,
                service,
                data,
                blocking=True,
                context=self.contexts.of(ctx),
                target=target or None,
                return_response=_returns_response(self._hass, domain, service),
            )
        except ServiceNotFound as err:
            raise ProviderUnavailable(f"Home Assistant has no action {action!r}") from err
        if domain == "notify":
            self.ledger.add(ctx.key)
        result: dict[str, Any] = {"action": action, **capped}
        if effect.integration is not None:
            result["integration"] = effect.integration
        if response:
            result["response"] = response
        return result

    async def set_site_mode(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        mode = str(request.params.get("mode", ""))
        self._need_scope("alerts.manage", "change the site mode")
        async with self._nvr(
            "change the site mode", lambda err: failed("effect_nvr_site_mode", error=err)
        ):
            result = await self._client.set_site_mode(
                mode, reason=f"workflow {ctx.workflow_name}", correlation_id=ctx.correlation_id
            )
        return {"mode": result.mode}

    async def app_action(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        app = str(request.params.get("app", ""))
        action = str(request.params.get("action", ""))
        self._need_scope("apps.actions", f"run {app}.{action}")
        async with self._nvr(
            f"run {app}.{action}",
            lambda err: failed("effect_nvr_app_action", app=app, action=action, error=err),
        ):
            catalog = await self._client.get_entities()
            key = _app_action_key(catalog.descriptors if catalog else (), app, action)
            if key is None:
                raise ProviderUnavailable(f"the OpenNVR app {app!r} offers no action {action!r}")
            result = await self._client.command_entity(
                key,
                args=dict(request.params.get("data") or {}),
                correlation_id=ctx.correlation_id,
            )
        return {"app": app, "action": action, "key": key, "result": result}

    # ── reading ────────────────────────────────────────────────────────

    async def snapshot(self, camera_id: str) -> bytes | None:
        number = _camera_number(camera_id)
        if number is None:
            return None
        try:
            return await self._client.get_snapshot(number)
        except OpenNVRError as err:
            _LOGGER.debug("Snapshot of camera %s failed: %s", camera_id, err)
            return None

    async def frames(self, camera_id: str, count: int, interval_s: float) -> Sequence[bytes]:
        out: list[bytes] = []
        for i in range(max(0, count)):
            if i:
                await asyncio.sleep(interval_s)
            if (frame := await self.snapshot(camera_id)) is not None:
                out.append(frame)
        return out

    async def site_mode(self) -> str | None:
        return self._site_mode()

    def mapped_camera_roles(self) -> frozenset[str]:
        """The camera roles mapped in the options: a condition or ``for_each`` on another
        stops its run instead of reading as no camera (the engine's ``SiteCameras``)."""
        return frozenset(self.settings.roles)

    async def site_list(self, name: str) -> Sequence[str]:
        try:
            return list(self.settings.site.lists[name])
        except KeyError:
            raise ProviderUnavailable(
                f"the site list {name!r} is not set in the integration's options (site rules)"
            ) from None

    async def recent_events(
        self, cameras: Sequence[str], within_s: float
    ) -> Sequence[Mapping[str, Any]]:
        since = (datetime.now(UTC) - timedelta(seconds=within_s)).isoformat()
        roles = self.settings.roles
        wanted: list[tuple[str | None, int | None]] = (
            [(role, roles[role]) for role in cameras if role in roles]
            if cameras
            else [(None, None)]
        )
        names = {cid: role for role, cid in roles.items()}
        out: list[Mapping[str, Any]] = []
        async with self._nvr(
            "read recent events", lambda err: failed("effect_nvr_recent_events", error=err)
        ):
            for role, camera_id in wanted:
                data = await self._client.get_events(camera_id=camera_id, from_=since, limit=100)
                for row in data.get("events") or ():
                    if not isinstance(row, Mapping):
                        continue
                    cid = _camera_number(row.get("camera_id"))
                    out.append(
                        {
                            **row,
                            "camera": role or names.get(cid or -1) or str(row.get("camera_id")),
                            "event_type": row.get("event_type") or row.get("label"),
                        }
                    )
        return out

    # ── judged by effect ───────────────────────────────────────────────

    def _judge(self) -> ActionJudge:
        """This site's notify services and webhook marks as they are now."""
        return ActionJudge.live(self._hass, self.settings.moving_webhooks)

    def _fence(self, ctx: RunContext, request: ActionRequest, effect: Effect) -> None:
        """Refuse, before the call, an action that moves things on this site (the contract
        thought it only informs) from a step the import did not check as an actuator, or
        from any step of a run AI output started that no person's reply in it clears."""
        if effect.moves_things and ctx.needs_person:
            raise ProviderUnavailable(
                f"{effect.reason}, so it moves things, and this run was started by AI output "
                "(an alert or event a workflow raised from an AI decision, or what it set off "
                "in Home Assistant; see the trigger's ai_origin): it acts only on the reply "
                "path of a person's answer in this run"
            )
        if not effect.moves_things or request.moves_things:
            return
        cleared = self.cleared.get(ctx.workflow_id, ())
        if any(pattern.match(ctx.step_path) for pattern in cleared):
            return
        raise ProviderUnavailable(
            f"{effect.reason}, so it moves things; this step is not placed as the safety rule "
            "requires for an action that moves things (after a plain `if`, or on a person's "
            "reply path). Move it there, or send the message to a messaging service"
        )

    def _cap(
        self,
        ctx: RunContext,
        request: ActionRequest,
        action: str,
        effect: Effect,
        data: dict[str, Any],
    ) -> dict[str, Any]:
        """Hold a notification's own urgency (``data.data``) to the severity the step may
        have: lowered in place where it asks for more, refused where it cannot be lowered.
        Returns what the step's record should say about it."""
        limit = request.params.get("max_severity")
        allowed: Severity = (
            limit
            if limit in ("low", "medium", "high", "critical")
            else AI_NOTIFY_CAP
            if ctx.ai_derived
            else "critical"
        )
        try:
            capped = cap_urgency(data["data"], allowed, effect.integration)
        except NotificationTooUrgent as err:
            raise failed("effect_too_urgent", action=action, error=err) from err
        if not capped.lowered:
            return {}
        data["data"] = capped.data
        _LOGGER.info(
            "Workflow %s: %s asked for a %s notification; sent as %s (%s lowered)",
            ctx.workflow_name,
            action,
            capped.requested,
            allowed,
            ", ".join(capped.lowered),
        )
        return {
            "severity": allowed,
            "requested_severity": capped.requested,
            "capped_by": request.params.get("capped_by")
            or ("ai_untrusted" if ctx.ai_derived else "severity_limit"),
            "lowered": list(capped.lowered),
        }

    # ── helpers ────────────────────────────────────────────────────────

    async def _to_phones(
        self,
        ctx: RunContext,
        services: Sequence[str],
        title: str,
        message: tuple[str, str],
        camera_id: str | None,
        attach: Sequence[Any],
        *,
        ai_derived: bool = False,
        kept_in_house: bool = False,
    ) -> list[str]:
        """Send to each notify service: ``message`` is the plain text and the text for
        Home Assistant's own notifications (markdown), as :data:`MARKDOWN_NOTIFY` needs.
        A notification that carries AI output says so in its data (``ai_derived``). A
        service that may leave the house gets only what may leave (:mod:`.privacy`);
        when something was held back, the full text goes to Home Assistant's own
        notifications too."""
        plain, markdown = message
        data: dict[str, Any] = {"tag": f"{DOMAIN}_{short_key(ctx.key)}", "group": ctx.workflow_id}
        if ai_derived:
            data["ai_derived"] = True
        if attach and (entity_id := self._camera_entity(camera_id)):
            data["entity_id"] = entity_id  # the app shows the camera's picture
        sent: list[str] = []
        judge = self._judge()
        held_back = False
        for target in services:
            domain, _, service = target.partition(".")
            if not self._hass.services.has_service(domain, service):
                _LOGGER.warning(
                    "Workflow %s: notify target %s does not exist", ctx.workflow_name, target
                )
                continue
            if target in MARKDOWN_NOTIFY:
                text = markdown or escape_markdown(title)
            else:
                text = plain or title
            shown = outgoing(
                target,
                title,
                text,
                judge=judge,
                settings=self.settings,
                trigger=ctx.trigger,
                ai_derived=ai_derived,
                withheld=lambda: self._withheld(ctx),
            )
            held_back = held_back or shown.held_back
            await self._hass.services.async_call(
                domain,
                service,
                {"title": shown.title, "message": shown.message, "data": data},
                blocking=True,
                context=self.contexts.of(ctx),
            )
            sent.append(target)
        if held_back and not kept_in_house:
            # What the phones were not sent stays in the house, in full.
            persistent_notification.async_create(
                self._hass,
                markdown or escape_markdown(title),
                title=f"{title} ({AI_MARK})" if ai_derived else title,
                notification_id=notification_id(ctx, ai_derived),
            )
        return sent

    def _withheld(self, ctx: RunContext) -> tuple[str, str]:
        """The title and line a destination outside the house gets instead of a text that
        carries AI output."""
        if self.desk is None:
            return ctx.workflow_name, f"{ctx.workflow_name}: see Home Assistant for the details"
        return ctx.workflow_name, self.desk.texts(
            "notify_withheld", {"workflow": ctx.workflow_name}
        )

    async def _opennvr_event(self, ctx: RunContext, request: AlertRequest) -> Any:
        """Mark the alert in OpenNVR's timeline when the token may create events."""
        camera_id = _camera_number(request.camera_id)
        if camera_id is None or not self._has_scope("events.create"):
            return None
        try:
            created = await self._client.create_event(
                camera_id,
                label="workflow_alert",
                note=request.title,
                correlation_id=ctx.correlation_id,
            )
        except OpenNVRError as err:
            _LOGGER.warning(
                "Workflow %s: OpenNVR did not record the alert: %s", ctx.workflow_name, err
            )
            return None
        return created.get("id")

    def _camera_of(self, request: ActionRequest) -> int | None:
        """The OpenNVR camera an action is about: the trigger's, or its role's mapping."""
        number = _camera_number(request.camera_id)
        if number is None and request.camera is not None:
            number = self.settings.roles.get(request.camera)
        return number

    def _has_scope(self, scope: str) -> bool:
        return self._scopes is None or scope in self._scopes

    def _need_scope(self, scope: str, what: str) -> None:
        if not self._has_scope(scope):
            raise ProviderUnavailable(
                f"the OpenNVR token lacks the scope {scope!r} needed to {what}"
            )

    def _nvr(self, what: str, failure: Callable[[OpenNVRError], HomeAssistantError]) -> _NvrCall:
        return _NvrCall(what, failure)


class _NvrCall:
    """Turns pyopennvr's errors into the engine's: a refused token is a lost provider (its
    reason, ``what`` was refused, goes to the workflow's *needs attention*); any other
    failure is the step's translated error, which ``failure`` makes."""

    def __init__(self, what: str, failure: Callable[[OpenNVRError], HomeAssistantError]) -> None:
        self._what = what
        self._failure = failure

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, OpenNVRAuthError):
            raise ProviderUnavailable(f"OpenNVR refused to {self._what}: {exc}") from exc
        if isinstance(exc, OpenNVRError):
            raise self._failure(exc) from exc


def shown_as_markdown(plain: str, markdown: str | None) -> str:
    """The text for a surface that renders markdown: the engine's rendering (the
    workflow's own markdown, its values escaped), else the plain text escaped whole."""
    return markdown if markdown else escape_markdown(plain)


def redirect_target(response: aiohttp.ClientResponse) -> str:
    """Where a redirect answer pointed, as an absolute address without its user-info;
    ``nowhere`` when it named no (readable) place."""
    location = response.headers.get(hdrs.LOCATION)
    if not location:
        return "nowhere (no Location header)"
    try:
        target = response.url.join(URL(location))
    except ValueError:
        return strip_userinfo(location)
    return strip_userinfo(str(target))


def _camera_number(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _returns_response(hass: HomeAssistant, domain: str, service: str) -> bool:
    from homeassistant.core import SupportsResponse

    supports = hass.services.supports_response(domain, service)
    return supports is SupportsResponse.ONLY


def _app_action_key(descriptors: Sequence[Any], app: str, action: str) -> str | None:
    """The OpenNVR entity key of an app's action (a button or command the app declared)."""
    for d in descriptors:
        origin = str(getattr(d, "origin", ""))
        if app not in (origin, origin.removeprefix("app:")):
            continue
        key = str(d.key)
        if action in (key, key.rsplit(".", 1)[-1], str(d.name).casefold()):
            return key
    return None


def notification_id(ctx: RunContext, ai_derived: bool) -> str:
    """The id of the Home Assistant notification of one step of a run (stable, so a step
    sent again replaces it); AI output's starts with :data:`AI_NOTIFICATION_PREFIX`."""
    prefix = AI_NOTIFICATION_PREFIX if ai_derived else f"{DOMAIN}_"
    return f"{prefix}{short_key(ctx.key)}"


def run_chain(ctx: RunContext) -> tuple[str, ...]:
    """The runs that led to what ``ctx``'s step emits, its own run last, once: the engine's
    run chain already ends with the run."""
    if ctx.chain[-1:] == (ctx.correlation_id,):
        return ctx.chain
    return (*ctx.chain, ctx.correlation_id)


def phone_texts(title: str, message: str) -> tuple[str, str, dict[str, Any]]:
    """The title and message as a phone shows them (:func:`.judge.as_phone_text`),
    and what the step's record says when one was quoted (``shown_as_text``)."""
    shown_title, why_title = as_phone_text(title)
    shown_message, why_message = as_phone_text(message)
    reasons = [why for why in (why_title, why_message) if why]
    return shown_title, shown_message, {"shown_as_text": reasons} if reasons else {}
