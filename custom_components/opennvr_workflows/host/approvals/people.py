"""Who is asked a workflow's question, on which phones, and whether they may answer.

A question names roles (``who: role:owner``). The options map a role to Home Assistant
users; a role with nobody mapped goes to the approvers, and with no approvers at all to the
owner and the other admins, so a question is never addressed to nobody.

A question about a camera is asked only of people who may see that camera (Home
Assistant's read permission on its entity): the card shows what the camera saw, so a
person who may not see it is left out rather than shown it and then refused. Left out,
they count as nobody: a role whose people may none see the camera goes to the approvers
who may, and then to the owner and the other admins (:func:`choose`).

A person's phones are the companion app's registrations made by that person's user
(``notify.mobile_app_<device>``). When the options pick some phones, only those of that
person's registrations are used; a person none of whose phones are picked still gets all
of them, because an approver who is asked must be reachable.

Whether someone may answer is decided here once, for a tap on a phone, a link, the
``answer_approval`` action and the websocket command alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from homeassistant.auth.models import User
from homeassistant.auth.permissions.const import POLICY_READ
from homeassistant.core import HomeAssistant
from homeassistant.util import slugify

from ..settings import HostSettings

MOBILE_APP: Final = "mobile_app"


@dataclass(frozen=True, slots=True)
class Phone:
    """One companion-app registration: its notify service and whether it is an iPhone."""

    service: str  # "notify.mobile_app_alices_pixel"
    ios: bool


@dataclass(frozen=True, slots=True)
class Addressee:
    """A person asked a question."""

    user_id: str
    name: str
    phones: tuple[Phone, ...]


@dataclass(frozen=True, slots=True)
class Choice:
    """Who a question goes to, and who was left out because they may not see its camera."""

    asked: tuple[str, ...]
    hidden: tuple[str, ...]


async def choose(
    hass: HomeAssistant,
    settings: HostSettings,
    roles: Iterable[str],
    camera_entity: str | None,
) -> Choice:
    """The user ids a question to ``roles`` about ``camera_entity`` goes to, in a stable
    order, without repeats (see the module docstring), and those left out."""
    found = await people(hass)
    hidden: list[str] = []

    def seeing(user_ids: Iterable[str]) -> list[str]:
        out: list[str] = []
        for user_id in user_ids:
            if user_id not in found or user_id in out:
                continue
            if may_see(found[user_id], camera_entity):
                out.append(user_id)
            elif user_id not in hidden:
                hidden.append(user_id)
        return out

    asked: list[str] = []
    for role in tuple(roles) or ("",):
        mapped = seeing(settings.approver_roles.get(role, ())) or seeing(settings.approver_users)
        asked.extend(u for u in mapped if u not in asked)
    if not asked:
        asked = seeing(_admins(found))
    return Choice(tuple(asked), tuple(u for u in hidden if u not in asked))


def _admins(found: dict[str, User]) -> list[str]:
    """The last resort of every question: the owner, then the other admins by name."""
    admins = sorted(
        (u for u in found.values() if u.is_admin), key=lambda u: (not u.is_owner, u.name or "")
    )
    return [u.id for u in admins]


async def addressees(
    hass: HomeAssistant, settings: HostSettings, user_ids: Iterable[str]
) -> list[Addressee]:
    """The people ``user_ids`` (a :class:`Choice`'s ``asked``), each with their phones."""
    found = await people(hass)
    return [
        Addressee(user_id, found[user_id].name or user_id, phones_of(hass, user_id, settings))
        for user_id in user_ids
        if user_id in found
    ]


def may_see(user: User, camera_entity: str | None) -> bool:
    """Whether ``user`` may see ``camera_entity`` (anyone may, for a question about no
    camera Home Assistant knows)."""
    return (
        camera_entity is None
        or user.is_admin
        or user.permissions.check_entity(camera_entity, POLICY_READ)
    )


def phones_of(hass: HomeAssistant, user_id: str, settings: HostSettings) -> tuple[Phone, ...]:
    """The companion-app phones registered by ``user_id`` (see the module docstring)."""
    phones: list[Phone] = []
    for entry in hass.config_entries.async_entries(MOBILE_APP):
        if entry.data.get("user_id") != user_id or "device_name" not in entry.data:
            continue
        service = slugify(f"{MOBILE_APP}_{entry.data['device_name']}")
        if not hass.services.has_service("notify", service):
            continue
        ios = str(entry.data.get("os_name", "")).lower() in ("ios", "ipados", "macos") or (
            entry.data.get("manufacturer") == "Apple"
        )
        phones.append(Phone(f"notify.{service}", ios))
    picked = [p for p in phones if p.service in settings.approver_phones]
    return tuple(picked or phones)


async def user_name(hass: HomeAssistant, user_id: str | None) -> str:
    """A user's display name (the id when the user is gone)."""
    if user_id is None:
        return ""
    user = await hass.auth.async_get_user(user_id)
    return (user.name if user is not None else None) or user_id


async def refusal(
    hass: HomeAssistant,
    settings: HostSettings,
    user_id: str | None,
    roles: Sequence[str],
    camera_entity: str | None,
) -> str | None:
    """Why ``user_id`` may not answer a question to ``roles`` about ``camera_entity``, or
    None when they may: a person (not Home Assistant itself), active, allowed to see that
    camera, and still an addressee under the current options. The camera comes first: a
    person left out for it is told so, not that they were not asked."""
    if user_id is None:
        return "no_user"
    user = (await people(hass)).get(user_id)
    if user is None:
        return "unknown_user"
    if not may_see(user, camera_entity):
        return "camera_hidden"
    if user_id not in (await choose(hass, settings, roles, camera_entity)).asked:
        return "not_addressee"
    return None


async def people(hass: HomeAssistant) -> dict[str, User]:
    """Active users that are people (not Home Assistant's own system users), by id."""
    return {
        u.id: u for u in await hass.auth.async_get_users() if u.is_active and not u.system_generated
    }
