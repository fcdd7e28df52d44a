"""Where a workflow's notification goes, and what text may leave the house with it.

**Who.** A ``notify`` step's ``who: role:X`` goes to X's people (the options' *Approvers*
page, people per role), each on their own companion-app phones, as a question does
(:mod:`..approvals.people`); people who may not see the step's camera are left out. A role
with nobody of its own goes to the people who answer any role, and with nobody there
either to the *Phones for alerts* list. ``notify.x`` entries go to that service as
written.

**What leaves the house.** Most notify services carry their text out of the house: the
companion app through its push relay (unless the phone is on local push), web push
through the browser's push service, chat, e-mail and push services through their clouds.
Only Home Assistant's own notifications, logbook and log stay inside. So by default
(privacy mode) a destination that may leave the house gets:

* the text without the trigger's plate, and, for an event or alert about a person or a
  plate (``plate.recognized.v1``, ``access.decided.v1``, a ``plate`` or ``face`` alert),
  without its title and the names in it;
* no text of the step at all when the step carries AI output (the model's reason and
  fields may be anywhere in it): a line saying that the details are in Home Assistant.

A question's card (:mod:`..approvals.desk`) follows the same rule: what each reply does, then
the question, with the trigger's plate or person hidden, and the AI's words left for Home
Assistant (the card's tap opens it). The full text always reaches Home Assistant's own
notifications. An admin lets a
destination carry the full text on the options' *What leaves the house* page.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from homeassistant.core import HomeAssistant

from ...engine import NvrEvent
from ..approvals.people import may_see, people, phones_of
from ..permissions import PERSONAL_DATA_EVENTS
from ..settings import HostSettings
from .judge import ActionJudge

#: Integrations whose notifications never leave Home Assistant.
STAYS_IN: Final = frozenset({"persistent_notification", "logbook", "system_log"})
#: What stands in the text for a value that may not leave the house.
HIDDEN: Final = "•••"
#: Alert kinds (an app's ``alert_type``) whose title and payload name a car or a person.
PERSONAL_ALERTS: Final = frozenset({"plate", "face"})
#: Values shorter than this are not hidden (a one-letter plate part would blank the text).
_SHORTEST: Final = 3


async def notify_services(
    hass: HomeAssistant,
    settings: HostSettings,
    who: str | Iterable[str] | None,
    camera_entity: str | None,
) -> tuple[str, ...]:
    """The notify services a step's ``who`` reaches (see the module docstring)."""
    entries = (who,) if isinstance(who, str) else tuple(str(w) for w in who or ())
    found = await people(hass)
    out: list[str] = []

    def add(services: Iterable[str]) -> None:
        out.extend(s for s in services if s not in out)

    def phones(user_ids: Iterable[str]) -> list[str]:
        return [
            phone.service
            for user_id in user_ids
            if user_id in found and may_see(found[user_id], camera_entity)
            for phone in phones_of(hass, user_id, settings)
        ]

    for entry in entries:
        if entry.startswith("notify."):
            add((entry,))
            continue
        role = entry.removeprefix("role:")
        mapped = settings.approver_roles.get(role, ())
        add(
            (phones(mapped) if mapped else None)
            or (phones(settings.approver_users) if settings.approver_users else None)
            or settings.approver_phones
        )
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A notification's title and text for one destination, and whether any was held
    back (the full text then goes to Home Assistant's own notifications too)."""

    title: str
    message: str
    held_back: bool


def leaves_the_house(judge: ActionJudge, service: str) -> bool:
    """Whether ``notify.<service>``'s text may leave the house: every integration but
    Home Assistant's own notifications, logbook and log (an unknown one may)."""
    name = service.removeprefix("notify.")
    return judge.notify_services.get(name) not in STAYS_IN


def private_values(trigger: NvrEvent) -> tuple[str, ...]:
    """The trigger's values that name a car or a person, longest first."""
    values: list[str] = []
    if trigger.plate:
        values.append(trigger.plate)
    event_type = trigger.type or ""
    if event_type in PERSONAL_DATA_EVENTS or event_type in PERSONAL_ALERTS:
        if trigger.title:
            values.append(trigger.title)
        values.extend(str(v) for v in trigger.payload.values() if isinstance(v, str))
    return tuple(sorted({v for v in values if len(v.strip()) >= _SHORTEST}, key=len, reverse=True))


def outgoing(
    service: str,
    title: str,
    message: str,
    *,
    judge: ActionJudge,
    settings: HostSettings,
    trigger: NvrEvent,
    ai_derived: bool,
    withheld: Callable[[], tuple[str, str]],
) -> Outgoing:
    """What ``service`` may be sent of a notification titled ``title`` saying ``message``
    (``withheld``: the title and line that stand in for a text held back whole)."""
    if not leaves_the_house(judge, service) or service in settings.full_text_to:
        return Outgoing(title, message, False)
    if ai_derived:
        shown_title, line = withheld()
        return Outgoing(shown_title, line, True)
    values = private_values(trigger)
    shown_title, shown_message = _hide(title, values), _hide(message, values)
    return Outgoing(shown_title, shown_message, (shown_title, shown_message) != (title, message))


def outside_text(
    lines: Sequence[str], message: str, *, hidden: Iterable[str], ai_text: bool, withheld: str
) -> str | None:
    """A question's text for a phone whose push leaves the house: what each reply does
    (``lines``), then the workflow's ``message``, each with the trigger's ``hidden``
    values hidden; when the message carries the AI's words (``ai_text``), ``withheld``
    stands in for it. None when that is the full text anyway."""
    values = tuple(hidden)
    shown = [_hide(line, values) for line in lines]
    shown.append(withheld if ai_text else _hide(message, values))
    text = "\n".join(shown)
    return None if text == "\n".join([*lines, message]) else text


def _hide(text: str, values: Iterable[str]) -> str:
    for value in values:
        text = re.sub(re.escape(value), HIDDEN, text, flags=re.IGNORECASE)
    return text
