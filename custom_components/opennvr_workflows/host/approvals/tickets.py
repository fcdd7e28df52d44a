"""What the host keeps about each question it delivered: the one-time tokens' hashes, who
was asked on which phones, and what is left to clear. Saved before anything is sent.

The engine keeps the approval itself (question, replies, timeout, answer). The host keeps
what only it knows: a token per addressee and reply (the phone's action id and the link
carry it), the phones each person was sent to (to update and clear the same cards), and
for a while after the answer, the answer itself, so a late or replayed tap is refused
with the reason ("already answered by Alice") rather than as unknown.

Tokens are 144 random bits, one per person and reply, bound to that person: a tap is
accepted only from the user the token was made for, once, while the approval is open.

A token is a bearer credential, so only its SHA-256 is saved (144 random bits need no salt
or slow hash: nothing can be guessed from the hash). The tokens themselves live in memory,
for the process that made them; a card sent again after a restart carries a fresh set
(:meth:`Tickets.mint`), whose hashes are added to the old ones, so the card it replaces
still answers if it is tapped first. A store written by an older version, with the tokens
in clear, is hashed when it is read (:func:`migrate`).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store

from ...const import DOMAIN

#: 2: tokens are kept as hashes (``token_hashes``); 1 kept them in clear (``tokens``).
STORE_VERSION: Final = 2
#: A token in a phone's action id: ``OPENNVR_WF_<token>``.
ACTION_PREFIX: Final = "OPENNVR_WF_"
#: How long a closed question is remembered, so a late tap is told why it is refused.
REMEMBER_CLOSED_S: Final = 7 * 24 * 3600.0

#: user id -> reply -> token (in memory only)
type ClearTokens = dict[str, dict[str, str]]


@dataclass(slots=True)
class Ticket:
    """One delivered question."""

    approval_id: str
    run_id: str
    workflow_id: str
    workflow_name: str
    message: str
    replies: list[str]
    default: str | None
    roles: list[str]
    camera_id: str | None
    expires_at: float
    tag: str
    #: user id -> reply -> the hashes of every token sent for it (:func:`token_hash`);
    #: its keys are the people asked
    token_hashes: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    #: user id -> the notify services the question went to
    phones: dict[str, list[str]] = field(default_factory=dict)
    #: notify services that were iPhones (their payloads differ)
    ios: list[str] = field(default_factory=list)
    #: the stored picture's file name, if the run captured one
    picture: str | None = None
    #: OpenNVR's signed URL for its evidence (short-lived), when there is no stored picture
    image_url: str | None = None
    seen_again: int = 0
    #: pending | answered | timed_out | cancelled
    status: str = "pending"
    reply: str | None = None
    answered_by: str | None = None
    closed_at: float | None = None
    #: the cards still to clear (a restart before the clear finishes them)
    to_clear: bool = False
    #: the replies whose path moves something (the engine's plans): voice "deny" never
    #: picks one of them (empty: none moves anything, or a question from before plans)
    moving_replies: list[str] = field(default_factory=list)
    #: the question as a card may carry it to a phone whose push leaves the house (the
    #: trigger's plate or person hidden, the AI's words left out: :mod:`..effects.privacy`);
    #: None: the same as ``message``
    outside_message: str | None = None

    @property
    def asked(self) -> list[str]:
        """The user ids of the people asked, in the order they were chosen."""
        return list(self.token_hashes)


@dataclass(frozen=True, slots=True)
class TokenHit:
    """What a token stands for."""

    ticket: Ticket
    user_id: str
    reply: str


def tickets_key(entry_id: str) -> str:
    """The storage key of an entry's tickets (the removal deletes it)."""
    return f"{DOMAIN}.{entry_id}.approvals"


class _TicketStore(Store[dict[str, Any]]):
    """The Store, with the migration of older versions (:func:`migrate`)."""

    async def _async_migrate_func(
        self, old_major_version: int, old_minor_version: int, old_data: dict[str, Any]
    ) -> dict[str, Any]:
        return migrate(old_major_version, old_data)


class Tickets:
    """The tickets of one config entry, in a Store, with an index of token hashes and this
    process's tokens in memory."""

    def __init__(self, hass: HomeAssistant, entry_id: str) -> None:
        self._hass = hass
        self._store = _TicketStore(hass, STORE_VERSION, tickets_key(entry_id))
        #: Whether a write runs now, and the callers waiting for the next one (one future).
        self._writing = False
        self._pending: asyncio.Future[None] | None = None
        #: How many writes reached the Store (read by tests: saves coalesce).
        self.writes = 0
        self.by_id: dict[str, Ticket] = {}
        #: token hash -> (approval id, user id, reply)
        self._by_hash: dict[str, tuple[str, str, str]] = {}
        #: approval id -> the tokens this process minted (never saved)
        self._clear: dict[str, ClearTokens] = {}

    async def async_load(self, now: float) -> None:
        """Read the tickets back; forget closed ones older than :data:`REMEMBER_CLOSED_S`."""
        data = await self._store.async_load() or {}
        for raw in data.get("tickets", []):
            try:
                ticket = Ticket(**raw)
            except TypeError:
                continue
            if ticket.closed_at is not None and now - ticket.closed_at > REMEMBER_CLOSED_S:
                continue
            self._index(ticket)

    def new(self, ticket: Ticket, people: Iterable[str]) -> ClearTokens:
        """Keep a new ticket for ``people`` (not yet saved) and mint their tokens."""
        ticket.token_hashes = {user_id: {} for user_id in people}
        self._index(ticket)
        return self.mint(ticket)

    def mint(self, ticket: Ticket) -> ClearTokens:
        """A fresh token for each person asked and reply, remembered here in clear and
        added to the ticket as hashes (the earlier ones stay valid); save before sending."""
        tokens: ClearTokens = {}
        for user_id, replies in ticket.token_hashes.items():
            tokens[user_id] = {}
            for reply in ticket.replies:
                token = secrets.token_urlsafe(18)
                digest = token_hash(token)
                replies.setdefault(reply, []).append(digest)
                self._by_hash[digest] = (ticket.approval_id, user_id, reply)
                tokens[user_id][reply] = token
        self._clear[ticket.approval_id] = tokens
        return tokens

    def tokens_of(self, ticket: Ticket) -> ClearTokens | None:
        """The tokens this process minted for ``ticket``; None after a restart."""
        return self._clear.get(ticket.approval_id)

    def find(self, token: str) -> TokenHit | None:
        """What ``token`` answers: looked up by its hash, never compared in clear."""
        found = self._by_hash.get(token_hash(token))
        if found is None:
            return None
        approval_id, user_id, reply = found
        ticket = self.by_id.get(approval_id)
        return TokenHit(ticket, user_id, reply) if ticket is not None else None

    def prune(self, now: float) -> None:
        for ticket in list(self.by_id.values()):
            if ticket.closed_at is not None and now - ticket.closed_at > REMEMBER_CLOSED_S:
                self._forget(ticket)

    async def async_save(self) -> None:
        """Return once what changed before the call is on disk: a question is saved before
        it is delivered, an answer before it is acted on.

        Saves coalesce: one write at a time, its data copied when it starts. With no write
        running, the caller writes itself; a caller that comes while one runs waits for the
        next, which takes everyone who came meanwhile. Each caller copying the whole store
        and queueing its own write made a burst of questions cost memory and CPU with the
        square of their number (a copy per waiting caller, of every ticket)."""
        if self._writing:
            if self._pending is None:
                self._pending = self._hass.loop.create_future()
            await asyncio.shield(self._pending)
            return
        self._writing = True
        try:
            await self._write()
        finally:
            self._writing = False
            self._hand_on()

    async def _write(self) -> None:
        data = {"tickets": [asdict(t) for t in self.by_id.values()]}
        self.writes += 1
        await self._store.async_save(data)

    def _hand_on(self) -> None:
        """The callers who came during a write get the next one, in a task of its own."""
        waiter, self._pending = self._pending, None
        if waiter is not None:
            self._writing = True
            self._hass.async_create_task(
                self._write_for(waiter), f"{DOMAIN} tickets save", eager_start=True
            )

    async def _write_for(self, waiter: asyncio.Future[None]) -> None:
        try:
            await self._write()
        except asyncio.CancelledError:
            # Home Assistant is stopping: nobody is left waiting for a write that will not come.
            waiter.cancel()
            if self._pending is not None:
                self._pending.cancel()
                self._pending = None
            self._writing = False
            raise
        except Exception as err:  # every waiter gets the failure
            waiter.set_exception(err)
            waiter.exception()  # retrieved here too: a caller may have gone
        else:
            waiter.set_result(None)
        self._writing = False
        self._hand_on()

    def _index(self, ticket: Ticket) -> None:
        self.by_id[ticket.approval_id] = ticket
        for user_id, replies in ticket.token_hashes.items():
            for reply, digests in replies.items():
                for digest in digests:
                    self._by_hash[digest] = (ticket.approval_id, user_id, reply)

    def _forget(self, ticket: Ticket) -> None:
        self.by_id.pop(ticket.approval_id, None)
        self._clear.pop(ticket.approval_id, None)
        for replies in ticket.token_hashes.values():
            for digests in replies.values():
                for digest in digests:
                    self._by_hash.pop(digest, None)


def token_hash(token: str) -> str:
    """What is kept of a token: its SHA-256, in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def migrate(old_version: int, data: dict[str, Any]) -> dict[str, Any]:
    """A store of ``old_version`` in today's shape: version 1's clear tokens become their
    hashes, so no token stays on disk once Home Assistant has read the store."""
    if old_version < 2:
        for raw in data.get("tickets", []):
            tokens = raw.pop("tokens", None)
            raw["token_hashes"] = {
                str(user_id): {
                    str(reply): [token_hash(str(token))] for reply, token in replies.items()
                }
                for user_id, replies in (tokens or {}).items()
                if isinstance(replies, Mapping)
            }
    return data


def token_of_action(action: Any) -> str | None:
    """The token in a phone's action id, or None when the action is not ours."""
    if isinstance(action, str) and action.startswith(ACTION_PREFIX):
        return action[len(ACTION_PREFIX) :]
    return None


def as_mapping(ticket: Ticket) -> Mapping[str, Any]:
    """A ticket without its token hashes (for the list of pending questions)."""
    data = asdict(ticket)
    data.pop("token_hashes")
    return data
