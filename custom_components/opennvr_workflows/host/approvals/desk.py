"""The approvals desk: a workflow's question goes to the right people's phones, and only
their answer, once, moves the run on.

Asking (the engine's ``ask_person`` effect): the addressees are found
(:mod:`.people`; people who may not see the question's camera are left out, and
the run's trace says so), a one-time token is made per person and reply, the ticket is
saved (:mod:`.tickets`), and only then is the card sent to each of their phones
(:mod:`.messages`). A persistent notification in Home Assistant says that a
question waits and who is asked; every user can read it, so it never carries a token or
an answer link: a person without the app answers in the Workflows panel, logged in as
themselves; it links to the question's page there (:mod:`..pages`), as tapping a phone's
card does. An answer link (:mod:`.links`) goes only on its person's own phone.

Answering: a tap (``mobile_app_notification_action``), a link's button, the
``answer_approval`` action or the websocket command all come to :meth:`ApprovalDesk.answer`
or :meth:`ApprovalDesk.answer_token`. The token must be one this desk made, for the user
who tapped, of a question still open and not past its deadline (an answer after it is
refused even before the timeout has been taken); the user must still be an addressee and
may see the camera. The engine decides the race: the first answer it takes wins, every
other is refused. Every answer and refusal is logged with who and when (the logbook, the
run's trace, a counter for diagnostics).

Closing (answered, timed out, withdrawn): every phone's card is replaced by one that says
how it ended, and cleared :data:`CLEAR_AFTER_S` later; a restart in between finishes
the clearing.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from homeassistant.components import persistent_notification
from homeassistant.core import CALLBACK_TYPE, Context, Event, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.event import async_call_later
from homeassistant.util import dt as dt_util
from pyopennvr import OpenNVRClient, OpenNVRError

from ...const import DOMAIN
from ...engine import ApprovalRequest, Engine, EngineUpdate, RunContext, UnknownApprovalError
from ...engine.render import escape_markdown
from ..effects.judge import ActionJudge
from ..effects.privacy import leaves_the_house, outside_text, private_values
from ..pages import question_page, run_page
from ..runs.context import short_key
from ..settings import HostSettings
from ..texts import Texts
from . import messages as cards
from .links import answer_link, button, picture_link
from .people import Addressee, addressees, choose, refusal, user_name
from .plans import moving_replies, plan_lines
from .tickets import ClearTokens, Ticket, Tickets, as_mapping, token_of_action

_LOGGER = logging.getLogger(__name__)

EVENT_ACTION: Final = "mobile_app_notification_action"
#: How long the "answered by" card stays on the other phones before it is cleared.
CLEAR_AFTER_S: Final = 60.0
#: "Seen again" updates to a card come at most this often.
SEEN_AGAIN_EVERY_S: Final = 30.0

#: The picture the run's AI step looked at: (workflow_id, run_id) -> JPEG, or None.
PictureOf = Callable[[str, str], Awaitable[bytes | None]]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of an answer: taken, or refused and why (a translation key)."""

    ok: bool
    reason: str
    approval_id: str | None = None
    reply: str | None = None
    #: the refusal in the user's words
    text: str = ""


class ApprovalDesk:
    """The questions of one config entry (see the module docstring)."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry_id: str,
        client: OpenNVRClient,
        *,
        settings: Callable[[], HostSettings],
        camera_entity: Callable[[str | None], str | None],
        workflow_entity: Callable[[str], str | None],
        picture_of: PictureOf,
        scopes: frozenset[str] | None,
    ) -> None:
        self.hass = hass
        self.entry_id = entry_id
        self._client = client
        self._settings = settings
        self._camera_entity = camera_entity
        self._workflow_entity = workflow_entity
        self._picture_of = picture_of
        self._scopes = scopes
        self.tickets = Tickets(hass, entry_id)
        self.texts = Texts(hass)
        self.pictures = pictures_folder(hass, entry_id)
        self.engine: Engine | None = None
        #: refusals by reason, for diagnostics
        self.refused: Counter[str] = Counter()
        self._timers: dict[str, CALLBACK_TYPE] = {}
        self._seen_sent: dict[str, float] = {}
        self._unsub: list[CALLBACK_TYPE] = []
        self._listeners: list[Callable[[], None]] = []

    # ── lifecycle ──────────────────────────────────────────────────────

    async def async_load(self) -> None:
        """Before the engine starts: its start may close questions (timeouts that fell
        while Home Assistant was down), and closing needs the tickets."""
        await self.texts.async_load()
        await self.tickets.async_load(_now())
        # A picture lives while its question's cards show: one left by a stop between
        # the clearing and the file's removal goes now.
        showing = {
            t.picture
            for t in self.tickets.by_id.values()
            if t.picture and (t.status == "pending" or t.to_clear)
        }
        await self.hass.async_add_executor_job(_sweep, self.pictures, showing)

    async def async_start(self, engine: Engine) -> None:
        """After the engine started: take taps, finish what a stop interrupted."""
        self.engine = engine
        self._unsub.append(self.hass.bus.async_listen(EVENT_ACTION, self._on_action))
        self._unsub.append(engine.subscribe(self._on_update))
        open_ids = {a.approval_id for a, _ in engine.pending_approvals()}
        for ticket in list(self.tickets.by_id.values()):
            if ticket.status == "pending" and ticket.approval_id not in open_ids:
                # Its run is gone (ended while the host was not listening): withdraw it.
                await self.closed(ticket.approval_id, "cancelled", None, None)
            elif ticket.status == "pending":
                self._show_in_home_assistant(ticket, await self._people_of(ticket))
            elif ticket.to_clear:
                self._clear_later(ticket, 0)

    async def async_stop(self) -> None:
        for unsub in self._unsub:
            unsub()
        self._unsub.clear()
        for cancel in self._timers.values():
            cancel()
        self._timers.clear()
        await self.tickets.async_save()

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` when a question is asked, updated or closed."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self) -> None:
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:
                _LOGGER.exception("Approvals listener failed")

    # ── asking ─────────────────────────────────────────────────────────

    async def ask(self, ctx: RunContext, request: ApprovalRequest) -> None:
        """Deliver a question. Asked again for the same approval (a restart came before
        the engine noted the delivery), the same cards are sent again with the same tag,
        so the phone replaces the card; after a restart they carry fresh tokens (the
        old ones are not kept in clear), and an earlier card's tap still counts."""
        ticket = self.tickets.by_id.get(request.approval_id)
        if ticket is None or ticket.status != "pending":
            ticket = await self._new_ticket(ctx, request)
        people = await self._people_of(ticket)
        sent = await self._send_cards(ticket, people)
        self._show_in_home_assistant(ticket, people)
        names = ", ".join(p.name for p in people)
        self._note(ticket, "delivered", None, f"{names}; {sent} phone(s)")
        self._logbook(ticket, self.texts("approval_log_asked", {"people": names}))
        self._changed()

    async def _new_ticket(self, ctx: RunContext, request: ApprovalRequest) -> Ticket:
        settings = self._settings()
        camera_entity = self._camera_entity(request.camera_id)
        choice = await choose(self.hass, settings, request.who, camera_entity)
        people = await addressees(self.hass, settings, choice.asked)
        plans = plan_lines(request.plans, self.texts, self._entity_name)
        ticket = Ticket(
            approval_id=request.approval_id,
            run_id=ctx.run_id,
            workflow_id=ctx.workflow_id,
            workflow_name=ctx.workflow_name,
            # What each reply does comes first, the workflow's text (and the AI's words
            # in it) after (:mod:`.plans`).
            message="\n".join([*plans, request.message]),
            outside_message=outside_text(
                plans,
                request.message,
                hidden=private_values(ctx.trigger),
                ai_text=ctx.ai_derived,
                withheld=self.texts("approval_details_in_home_assistant", {}),
            ),
            replies=list(request.replies),
            default=request.default,
            roles=list(request.who),
            camera_id=request.camera_id,
            expires_at=request.expires_at.timestamp(),
            tag=notification_id(request.approval_id),
            seen_again=request.seen_again,
            moving_replies=moving_replies(request.plans),
        )
        self.tickets.new(ticket, [p.user_id for p in people])
        ticket.phones = {p.user_id: [phone.service for phone in p.phones] for p in people}
        ticket.ios = [phone.service for p in people for phone in p.phones if phone.ios]
        await self._attach_picture(ticket)
        await self.tickets.async_save()
        await self._note_hidden(ticket, choice.hidden, camera_entity)
        self._changed()
        return ticket

    def _entity_name(self, entity_id: str) -> str | None:
        """An entity's name as Home Assistant shows it (None: no such entity)."""
        state = self.hass.states.get(entity_id)
        return state.name if state is not None else None

    async def _note_hidden(
        self, ticket: Ticket, hidden: tuple[str, ...], camera_entity: str | None
    ) -> None:
        """Say who was not asked because they may not see the camera: a warning for the
        admin, and a line per person in the run's trace."""
        if not hidden:
            return
        names = [await user_name(self.hass, user_id) for user_id in hidden]
        _LOGGER.warning(
            "Workflow %s: not asking %s: they may not see %s",
            ticket.workflow_name,
            ", ".join(names),
            camera_entity,
        )
        for user_id, name in zip(hidden, names, strict=True):
            self._note(ticket, "not_asked", user_id, f"{name}: camera_hidden ({camera_entity})")

    async def _attach_picture(self, ticket: Ticket) -> None:
        """The frame the run's AI step looked at, kept on disk for the question's life;
        else OpenNVR's own signed link to the alert's evidence."""
        frame = await self._picture_of(ticket.workflow_id, ticket.run_id)
        if frame is not None:
            name = f"{short_key(ticket.approval_id)}.jpg"
            await self.hass.async_add_executor_job(_write, self.pictures / name, frame)
            ticket.picture = name
            return
        camera = _number(ticket.camera_id)
        if camera is None or (self._scopes is not None and "recordings.view" not in self._scopes):
            return
        try:
            signed = await self._client.sign_media(
                "alert_image", camera_id=camera, ttl_s=int(max(60, ticket.expires_at - _now()))
            )
        except OpenNVRError as err:
            _LOGGER.debug("No picture for the question %s: %s", ticket.approval_id, err)
            return
        ticket.image_url = signed.url

    async def _send_cards(
        self, ticket: Ticket, people: list[Addressee], *, update: bool = False
    ) -> int:
        sent = 0
        now = _now()
        deadline = datetime.fromtimestamp(ticket.expires_at, dt_util.get_default_time_zone())
        image = self._image(ticket)
        open_url = self._open_url(ticket)
        tokens = await self._tokens(ticket)
        settings = self._settings()
        judge = ActionJudge.of(self.hass, settings.moving_webhooks)
        for person in people:
            mine = tokens[person.user_id]
            for service in ticket.phones.get(person.user_id, []):
                more = answer_link(self.hass, mine[ticket.replies[0]], _left(ticket))
                outside = leaves_the_house(judge, service) and service not in settings.full_text_to
                payload = cards.question(
                    ticket,
                    mine,
                    ios=service in ticket.ios,
                    texts=self.texts,
                    now=now,
                    deadline=deadline,
                    open_url=open_url,
                    more_url=more,
                    image=image,
                    update=update,
                    message=ticket.outside_message if outside else None,
                )
                sent += await self._notify(ticket, service, payload)
        return sent

    async def _tokens(self, ticket: Ticket) -> ClearTokens:
        """The tokens to put on cards: this process's, else (after a restart, when only
        their hashes were kept) a fresh set, saved before any card carries it."""
        tokens = self.tickets.tokens_of(ticket)
        if tokens is None:
            tokens = self.tickets.mint(ticket)
            await self.tickets.async_save()
        return tokens

    async def _notify(self, ticket: Ticket, service: str, payload: Mapping[str, Any]) -> int:
        domain, _, name = service.partition(".")
        if not self.hass.services.has_service(domain, name):
            _LOGGER.warning(
                "Workflow %s: the phone %s is gone; its person can still answer in the "
                "Workflows panel",
                ticket.workflow_name,
                service,
            )
            return 0
        try:
            await self.hass.services.async_call(domain, name, dict(payload), blocking=True)
        except HomeAssistantError as err:
            _LOGGER.warning(
                "Workflow %s: could not reach %s: %s", ticket.workflow_name, service, err
            )
            return 0
        return 1

    def _show_in_home_assistant(self, ticket: Ticket, people: list[Addressee]) -> None:
        """The question in Home Assistant's notifications: that it waits and who is
        asked, where, and a link to its page in the Workflows panel. Every user reads
        these, so never a token or an answer link: the page answers only for the person
        logged in, and a person with no phone answers there as themselves."""
        lines = [escape_markdown(ticket.message)]
        if ticket.seen_again:
            lines.append(self.texts("approval_seen_again", {"count": ticket.seen_again}))
        for person in people:
            name = escape_markdown(person.name)
            if ticket.phones.get(person.user_id):
                lines.append(self.texts("approval_on_phone", {"name": name}))
            else:
                lines.append(self.texts("approval_in_panel", {"name": name}))
        page = question_page(ticket.approval_id)
        lines.append(f"[{self.texts('approval_open_page', {})}]({page})")
        persistent_notification.async_create(
            self.hass,
            "\n\n".join(lines),
            title=self.texts("approval_title", {"workflow": ticket.workflow_name}),
            notification_id=notification_id(ticket.approval_id),
        )

    # ── answering ──────────────────────────────────────────────────────

    @callback
    def _on_action(self, event: Event) -> None:
        token = token_of_action(event.data.get("action"))
        if token is None or not self._answers(token):
            return
        self.hass.async_create_task(
            self.answer_token(token, event.context.user_id, "phone"), eager_start=True
        )

    def knows(self, token: str) -> bool:
        return self.tickets.find(token) is not None

    @property
    def serving(self) -> bool:
        """Whether the desk takes answers (started and not stopped)."""
        return bool(self._unsub)

    def _answers(self, token: str) -> bool:
        """Whether this desk handles a tap with ``token``: the desk that made it, or for a
        token no desk made (a forgery, refused and logged once), the first desk."""
        if self.knows(token):
            return True
        desks = serving_desks(self.hass)
        return not any(d.knows(token) for d in desks) and bool(desks) and desks[0] is self

    async def answer_token(self, token: str, user_id: str | None, via: str) -> Outcome:
        """A tap or a link's button: the token says which question and reply, and whose.

        A tap counts only from the phone of the person the token was made for
        (``user_id``, the phone's user). A link's button answers as the token's person
        when it comes with no login (the view checked its proof first), and is refused
        when it comes logged in as another person."""
        hit = self.tickets.find(token)
        if hit is None:
            return await self._refuse(None, user_id, "approval_refused_forged", via)
        if via == "link" and user_id is None:
            user_id = hit.user_id
        if user_id != hit.user_id:
            return await self._refuse(hit.ticket, user_id, "approval_refused_wrong_user", via)
        return await self._answer(hit.ticket, hit.reply, user_id, via)

    async def answer(self, approval_id: str, reply: str, user_id: str | None, via: str) -> Outcome:
        """The ``answer_approval`` action and the websocket command, from ``user_id``."""
        ticket = self.tickets.by_id.get(approval_id)
        if ticket is None:
            return await self._refuse(None, user_id, "approval_refused_unknown", via)
        if reply not in ticket.replies:
            return await self._refuse(ticket, user_id, "approval_refused_reply", via)
        return await self._answer(ticket, reply, user_id, via)

    async def _answer(self, ticket: Ticket, reply: str, user_id: str | None, via: str) -> Outcome:
        if ticket.status != "pending":
            return await self._refuse(ticket, user_id, "approval_refused_closed", via)
        reason = await refusal(
            self.hass,
            self._settings(),
            user_id,
            ticket.roles,
            self._camera_entity(ticket.camera_id),
        )
        if reason is not None:
            return await self._refuse(ticket, user_id, f"approval_refused_{reason}", via)
        assert self.engine is not None
        name = await user_name(self.hass, user_id)
        # The deadline, at the moment of the answer (nothing awaited in between): the
        # timeout may not have been taken yet, but the question is over.
        if self._past_deadline(ticket):
            return await self._refuse(ticket, user_id, "approval_refused_expired", via)
        try:
            # The run's {answered_by} is the person's name; the trace keeps their id.
            await self.engine.answer_approval(ticket.approval_id, reply, name)
        except UnknownApprovalError:
            # Someone else's answer (or the timeout) came first.
            return await self._refuse(ticket, user_id, "approval_refused_closed", via)
        self._note(ticket, "answered", user_id, f"{reply} ({via})")
        self._logbook(
            ticket,
            self.texts("approval_log_answered", {"name": name, "reply": reply, "via": via}),
            user_id,
        )
        return Outcome(True, "approval_answered", ticket.approval_id, reply)

    async def _refuse(
        self, ticket: Ticket | None, user_id: str | None, reason: str, via: str
    ) -> Outcome:
        """Refuse and say so: a warning, the counter, and (for a known question) the
        logbook and the run's trace."""
        short = reason.removeprefix("approval_refused_")
        self.refused[short] += 1
        name = await user_name(self.hass, user_id) if user_id else ""
        placeholders = {
            "name": name or "?",
            "by": (ticket.answered_by or "") if ticket else "",
            "replies": ", ".join(ticket.replies) if ticket else "",
        }
        text = self.texts(reason, placeholders)
        _LOGGER.warning(
            "Refused an answer (%s) by %s through the %s%s: %s",
            short,
            name or "no user",
            via,
            f" to {ticket.approval_id}" if ticket else "",
            text,
        )
        if ticket is not None:
            self._note(
                ticket, "refused", user_id, f"{reason.removeprefix('approval_refused_')} ({via})"
            )
            self._logbook(ticket, self.texts("approval_log_refused", {"why": text}), user_id)
        return Outcome(False, reason, ticket.approval_id if ticket else None, text=text)

    # ── closing ────────────────────────────────────────────────────────

    async def closed(
        self, approval_id: str, status: str, reply: str | None, by: str | None
    ) -> None:
        """The engine closed the question: say how on every card, then clear them."""
        ticket = self.tickets.by_id.get(approval_id)
        persistent_notification.async_dismiss(self.hass, notification_id(approval_id))
        if ticket is None or ticket.status != "pending":
            return
        ticket.status, ticket.reply, ticket.answered_by = status, reply, by
        ticket.closed_at = _now()
        ticket.to_clear = True
        text = await self._ending(ticket)
        if status == "timed_out":
            self._note(ticket, "timed_out", None, reply or "")
            self._logbook(ticket, text)
        await self.tickets.async_save()
        self._changed()
        for services in ticket.phones.values():
            for service in services:
                payload = cards.outcome(
                    ticket,
                    text,
                    ios=service in ticket.ios,
                    texts=self.texts,
                    open_url=run_page(ticket.run_id),
                )
                await self._notify(ticket, service, payload)
        self._clear_later(ticket, CLEAR_AFTER_S)

    async def _ending(self, ticket: Ticket) -> str:
        if ticket.status == "answered":
            name = ticket.answered_by or ""
            return self.texts("approval_answered_by", {"name": name, "reply": ticket.reply})
        if ticket.status == "timed_out" and ticket.reply is not None:
            return self.texts("approval_timed_out", {"reply": ticket.reply})
        if ticket.status == "timed_out":
            return self.texts("approval_timed_out_no_default", {})
        return self.texts("approval_withdrawn", {})

    def _clear_later(self, ticket: Ticket, delay: float) -> None:
        if (cancel := self._timers.pop(ticket.approval_id, None)) is not None:
            cancel()

        @callback
        def fire(_now: Any) -> None:
            self._timers.pop(ticket.approval_id, None)
            self.hass.async_create_task(self._clear(ticket), eager_start=True)

        self._timers[ticket.approval_id] = async_call_later(self.hass, delay, fire)

    async def _clear(self, ticket: Ticket) -> None:
        for services in ticket.phones.values():
            for service in services:
                await self._notify(ticket, service, cards.clear(ticket))
        ticket.to_clear = False
        if ticket.picture:
            await self.hass.async_add_executor_job(_remove, self.pictures / ticket.picture)
        self.tickets.prune(_now())
        await self.tickets.async_save()

    # ── seen again ─────────────────────────────────────────────────────

    @callback
    def _on_update(self, update: EngineUpdate) -> None:
        if update.kind != "seen_again":
            return
        count = int((update.detail or {}).get("seen_again") or 0)
        for ticket in self.tickets.by_id.values():
            if ticket.run_id == update.run_id and ticket.status == "pending":
                ticket.seen_again = max(ticket.seen_again, count)
                self._update_soon(ticket)

    def _update_soon(self, ticket: Ticket) -> None:
        """Show the new count on the same cards: at once, then at most every
        :data:`SEEN_AGAIN_EVERY_S` (the last count always arrives)."""
        if ticket.approval_id in self._timers:
            return
        wait = self._seen_sent.get(ticket.approval_id, 0) + SEEN_AGAIN_EVERY_S - _monotonic()

        @callback
        def fire(_now: Any = None) -> None:
            self._timers.pop(ticket.approval_id, None)
            self._seen_sent[ticket.approval_id] = _monotonic()
            self.hass.async_create_task(self._resend(ticket), eager_start=True)

        if wait <= 0:
            fire()
        else:
            self._timers[ticket.approval_id] = async_call_later(self.hass, wait, fire)

    async def _resend(self, ticket: Ticket) -> None:
        if ticket.status != "pending":
            return
        people = await self._people_of(ticket)
        await self._send_cards(ticket, people, update=True)
        self._show_in_home_assistant(ticket, people)
        await self.tickets.async_save()
        self._changed()

    # ── reading ────────────────────────────────────────────────────────

    async def pending_for(self, user_id: str | None, is_admin: bool) -> list[dict[str, Any]]:
        """The open questions ``user_id`` is asked (an admin sees all, marked whether
        they may answer), newest first, without tokens; ``picture`` is a link a browser
        can load (:meth:`_image`), not the stored file's name."""
        out = []
        for ticket in self.tickets.by_id.values():
            if ticket.status != "pending":
                continue
            asked = user_id in ticket.token_hashes
            if not (asked or is_admin):
                continue
            row = dict(as_mapping(ticket))
            row["may_answer"] = asked
            row["asked"] = [await user_name(self.hass, u) for u in ticket.asked]
            row["picture"] = self._image(ticket)
            out.append(row)
        out.sort(key=lambda r: r["expires_at"], reverse=True)
        return out

    def pending(self) -> list[Ticket]:
        """The open questions, soonest deadline first."""
        return sorted(
            (t for t in self.tickets.by_id.values() if t.status == "pending"),
            key=lambda t: t.expires_at,
        )

    async def answer_page(self, token: str, real_user: str | None) -> dict[str, Any] | None:
        """The page behind an answer link: the question and a button per reply (each a
        ``POST`` to that reply's own link); None when the token is not this desk's."""
        hit = self.tickets.find(token)
        if hit is None:
            return None
        ticket = hit.ticket
        title = self.texts("approval_title", {"workflow": ticket.workflow_name})
        if ticket.status != "pending":
            return {"title": title, "lines": [ticket.message, await self._ending(ticket)]}
        if real_user is not None and real_user != hit.user_id:
            text = self.texts("approval_refused_wrong_user", {})
            return {"title": title, "lines": [ticket.message, text]}
        if self._past_deadline(ticket):
            return {
                "title": title,
                "lines": [ticket.message, self.texts("approval_refused_expired", {})],
            }
        name = await user_name(self.hass, hit.user_id)
        left = _left(ticket)
        replies = [hit.reply, *(r for r in ticket.replies if r != hit.reply)]
        tokens = {**(await self._tokens(ticket))[hit.user_id], hit.reply: token}
        return {
            "title": title,
            "lines": [ticket.message, self.texts("approval_page_asks", {"name": name})],
            "picture": self._image(ticket),
            "buttons": [
                button(
                    self.hass,
                    tokens[r],
                    left,
                    self.texts("approval_page_answer", {"reply": r, "name": name}),
                )
                for r in replies
            ],
        }

    async def answer_link(self, token: str, real_user: str | None) -> dict[str, Any]:
        """A link page's button was pressed."""
        hit = self.tickets.find(token)
        title = self.texts("approval_title", {"workflow": hit.ticket.workflow_name}) if hit else ""
        done = await self.answer_token(token, real_user, "link")
        text = self.texts("approval_page_done", {"reply": done.reply}) if done.ok else done.text
        return {"ok": done.ok, "title": title, "lines": [text]}

    # ── helpers ────────────────────────────────────────────────────────

    async def _people_of(self, ticket: Ticket) -> list[Addressee]:
        return [
            Addressee(user_id, await user_name(self.hass, user_id), ()) for user_id in ticket.asked
        ]

    def _past_deadline(self, ticket: Ticket) -> bool:
        """Whether the question's time is up, by the engine's clock (the one that set the
        deadline and takes the timeout)."""
        now = self.engine.clock.now_ts() if self.engine is not None else _now()
        return now >= ticket.expires_at

    def _image(self, ticket: Ticket) -> str | None:
        if ticket.picture:
            return picture_link(self.hass, self.entry_id, ticket.picture, _left(ticket))
        return ticket.image_url

    def _open_url(self, ticket: Ticket) -> str:
        """Where tapping the card leads: the question's page in the Workflows panel (a
        path of Home Assistant's, so it opens away from home too; it names only the
        question, and the page shows it to the people asked and admins)."""
        return question_page(ticket.approval_id)

    def _note(self, ticket: Ticket, event: str, user_id: str | None, detail: str) -> None:
        if self.engine is not None:
            self.engine.note_approval(ticket.approval_id, event, user_id, detail)

    def _logbook(self, ticket: Ticket, message: str, user_id: str | None = None) -> None:
        data: dict[str, Any] = {
            "name": ticket.workflow_name,
            "message": message,
            "domain": DOMAIN,
        }
        if entity_id := self._workflow_entity(ticket.workflow_id):
            data["entity_id"] = entity_id
        self.hass.bus.async_fire("logbook_entry", data, context=Context(user_id=user_id))


def pictures_folder(hass: HomeAssistant, entry_id: str) -> Path:
    """Where the questions' pictures are kept while their cards show (the removal
    deletes it)."""
    return Path(hass.config.path(".storage", f"{DOMAIN}.{entry_id}.pictures"))


def notification_id(approval_id: str) -> str:
    """The id of a question's notification in Home Assistant (and its cards' tag)."""
    return f"{DOMAIN}_ask_{short_key(approval_id)}"


def _left(ticket: Ticket) -> float:
    return ticket.expires_at - _now()


def _now() -> float:
    return time.time()


def _monotonic() -> float:
    return time.monotonic()


def _number(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


def _sweep(folder: Path, keep: set[str]) -> None:
    """Delete the pictures of ``folder`` that no open question shows (blocking)."""
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        if path.is_file() and path.name not in keep:
            path.unlink(missing_ok=True)


def serving_desks(hass: HomeAssistant) -> list[ApprovalDesk]:
    """The desks taking answers now, one per loaded entry, in the entries' order.

    Each entry's workflow host holds its desk in the entry's runtime data; it is read
    here by name rather than through the entry's type, which would make this module (and
    so the workflow host) depend on the runtime that holds them."""
    desks: list[ApprovalDesk] = []
    for entry in hass.config_entries.async_entries(DOMAIN):
        host = getattr(getattr(entry, "runtime_data", None), "workflows", None)
        desk = getattr(host, "desk", None)
        if isinstance(desk, ApprovalDesk) and desk.serving:
            desks.append(desk)
    return desks
