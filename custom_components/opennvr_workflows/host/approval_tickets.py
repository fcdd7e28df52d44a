"""What the host keeps about each question it delivered: the one-time tokens, who was asked
on which phones, and what is left to clear. Saved before anything is sent.

The engine keeps the approval itself (question, replies, timeout, answer). The host keeps
what only it knows: a token per addressee and reply (the phone's action id and the link
carry it), the phones each person was sent to (to update and clear the same cards), and
for a while after the answer, the answer itself, so a late or replayed tap is refused
with the reason ("already answered by Alice") rather than as unknown.

Tokens are 144 random bits, one per person and reply, bound to that person: a tap is
accepted only from the user the token was made for, once, while the approval is open.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store

from ..const import DOMAIN

STORE_VERSION: Final = 1
#: A token in a phone's action id: ``OPENNVR_WF_<token>``.
ACTION_PREFIX: Final = "OPENNVR_WF_"
#: How long a closed question is remembered, so a late tap is told why it is refused.
REMEMBER_CLOSED_S: Final = 7 * 24 * 3600.0


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
    #: user id -> reply -> token
    tokens: dict[str, dict[str, str]] = field(default_factory=dict)
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

    def token_of(self, user_id: str, reply: str) -> str:
        return self.tokens[user_id][reply]


@dataclass(frozen=True, slots=True)
class TokenHit:
    """What a token stands for."""

    ticket: Ticket
    user_id: str
    reply: str


class Tickets:
    """The tickets of one config entry, in a Store, with a token index in memory."""

    def __init__(self, hass: HomeAssistant, entry_id: str) -> None:
        self._store: Store[dict[str, Any]] = Store(
            hass, STORE_VERSION, f"{DOMAIN}.{entry_id}.approvals"
        )
        self.by_id: dict[str, Ticket] = {}
        self._by_token: dict[str, tuple[str, str, str]] = {}

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

    def new(self, ticket: Ticket, people: Iterable[str]) -> Ticket:
        """Mint a token for each person and reply and keep the ticket (not yet saved)."""
        for user_id in people:
            ticket.tokens[user_id] = {r: secrets.token_urlsafe(18) for r in ticket.replies}
        self._index(ticket)
        return ticket

    def find(self, token: str) -> TokenHit | None:
        found = self._by_token.get(token)
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
        """Write now: a question is saved before it is delivered, an answer before it is
        acted on."""
        await self._store.async_save({"tickets": [asdict(t) for t in self.by_id.values()]})

    def _index(self, ticket: Ticket) -> None:
        self.by_id[ticket.approval_id] = ticket
        for user_id, replies in ticket.tokens.items():
            for reply, token in replies.items():
                self._by_token[token] = (ticket.approval_id, user_id, reply)

    def _forget(self, ticket: Ticket) -> None:
        self.by_id.pop(ticket.approval_id, None)
        for replies in ticket.tokens.values():
            for token in replies.values():
                self._by_token.pop(token, None)


def token_of_action(action: Any) -> str | None:
    """The token in a phone's action id, or None when the action is not ours."""
    if isinstance(action, str) and action.startswith(ACTION_PREFIX):
        return action[len(ACTION_PREFIX) :]
    return None


def as_mapping(ticket: Ticket) -> Mapping[str, Any]:
    """A ticket without its tokens (for the list of pending questions)."""
    data = asdict(ticket)
    data.pop("tokens")
    return data
