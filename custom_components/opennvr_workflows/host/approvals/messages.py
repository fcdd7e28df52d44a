"""What a question looks like on a phone, for the companion app on iPhone and Android.

One card per question and phone, named by the question's ``tag`` so every later send
(seen again, answered, cleared) replaces it rather than adding another; cards of one
workflow share a ``group`` (a thread on iOS). The payload differs by platform:

* Android shows at most three action buttons: a question with more replies shows its first
  two and a third button that opens the page listing them all. iOS shows them all.
* Urgent (the answer is needed within :data:`URGENT_WITHIN_S`): ``time-sensitive`` on iOS
  (breaks through Focus), ``ttl: 0`` and ``priority: high`` on Android (delivered at once,
  even in Doze). Updates that only change the count of sightings are ``passive`` on iOS and
  ``alert_once`` on Android, so they do not buzz again.
* Tapping the card opens the question's page in the Workflows panel (``url`` on iOS,
  ``clickAction`` on Android), a path of Home Assistant's that names only the question;
  once it has ended, the run's page. A picture, when there is one, is attached as
  ``image``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

from ...const import DOMAIN
from .tickets import ACTION_PREFIX, Ticket

#: An answer needed within this many seconds makes the card urgent.
URGENT_WITHIN_S: Final = 15 * 60
#: Android's limit of action buttons on one notification.
ANDROID_MAX_ACTIONS: Final = 3
#: The Android notification channel questions arrive on (a sound of their own can be set).
CHANNEL: Final = "opennvr_workflows_questions"
CLEAR: Final = "clear_notification"

#: ``texts(key, placeholders)``: a user-visible text in the user's language.
Texts = Callable[[str, Mapping[str, Any]], str]


def question(
    ticket: Ticket,
    tokens: Mapping[str, str],
    *,
    ios: bool,
    texts: Texts,
    now: float,
    deadline: datetime,
    open_url: str,
    more_url: str | None,
    image: str | None,
    update: bool = False,
    message: str | None = None,
) -> dict[str, Any]:
    """The notify call's ``title``, ``message`` and ``data`` asking one person on one
    phone; ``tokens`` are that person's (reply -> token), one per button; ``message``
    the question's text for this phone, when it differs from the ticket's."""
    lines = [ticket.message if message is None else message]
    if ticket.seen_again:
        lines.append(texts("approval_seen_again", {"count": ticket.seen_again}))
    time = deadline.strftime("%H:%M")
    if ticket.default is not None:
        lines.append(texts("approval_deadline_default", {"time": time, "reply": ticket.default}))
    else:
        lines.append(texts("approval_deadline", {"time": time}))
    urgent = ticket.expires_at - now <= URGENT_WITHIN_S
    data: dict[str, Any] = {
        **_card(ticket),
        "actions": _actions(ticket, tokens, ios=ios, texts=texts, more_url=more_url),
    }
    if image:
        data["image"] = image
    if ios:
        data["url"] = open_url
        level = "passive" if update else "time-sensitive" if urgent else "active"
        data["push"] = {"interruption-level": level}
    else:
        data["clickAction"] = open_url
        data["channel"] = CHANNEL
        data["sticky"] = True
        data["alert_once"] = True
        if urgent:
            data["ttl"] = 0
            data["priority"] = "high"
    return {
        "title": texts("approval_title", {"workflow": ticket.workflow_name}),
        "message": "\n".join(lines),
        "data": data,
    }


def outcome(ticket: Ticket, text: str, *, ios: bool, texts: Texts, open_url: str) -> dict[str, Any]:
    """The same card, without buttons, saying how the question ended; tapping it opens
    ``open_url`` (the run's page)."""
    data: dict[str, Any] = _card(ticket)
    if ios:
        data["url"] = open_url
        data["push"] = {"interruption-level": "passive"}
    else:
        data["clickAction"] = open_url
        data["channel"] = CHANNEL
        data["alert_once"] = True
    return {
        "title": texts("approval_title", {"workflow": ticket.workflow_name}),
        "message": f"{ticket.message}\n{text}",
        "data": data,
    }


def clear(ticket: Ticket) -> dict[str, Any]:
    """Take the card back from the phone."""
    return {"message": CLEAR, "data": {"tag": ticket.tag}}


def _card(ticket: Ticket) -> dict[str, Any]:
    return {"tag": ticket.tag, "group": f"{DOMAIN}_{ticket.workflow_id}"}


def _actions(
    ticket: Ticket, tokens: Mapping[str, str], *, ios: bool, texts: Texts, more_url: str | None
) -> list[dict[str, str]]:
    buttons = [
        {"action": f"{ACTION_PREFIX}{tokens[reply]}", "title": reply} for reply in ticket.replies
    ]
    if ios or len(buttons) <= ANDROID_MAX_ACTIONS:
        return buttons
    more = {"action": "URI", "title": texts("approval_more_replies", {})}
    if more_url:
        more["uri"] = more_url
    return [*buttons[: ANDROID_MAX_ACTIONS - 1], more]
