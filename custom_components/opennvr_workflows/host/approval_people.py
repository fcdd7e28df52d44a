"""Who is asked a workflow's question, on which phones, and whether they may answer.

A question names roles (``who: role:owner``). The options map a role to Home Assistant
users; a role with nobody mapped goes to the approvers, and with no approvers at all to the
owner and the other admins, so a question is never addressed to nobody.

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

from .settings import HostSettings

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


async def addressee_ids(
    hass: HomeAssistant, settings: HostSettings, roles: Iterable[str]
) -> list[str]:
    """The user ids a question to ``roles`` goes to, in a stable order, without repeats."""
    found = await people(hass)
    out: list[str] = []
    for role in tuple(roles) or ("",):
        mapped = settings.approver_roles.get(role) or settings.approver_users
        out.extend(u for u in mapped if u not in out and u in found)
    if out:
        return out
    admins = sorted(
        (u for u in found.values() if u.is_admin), key=lambda u: (not u.is_owner, u.name or "")
    )
    return [u.id for u in admins]


async def addressees(
    hass: HomeAssistant, settings: HostSettings, roles: Iterable[str]
) -> list[Addressee]:
    """The people a question to ``roles`` goes to, each with their phones."""
    found = await people(hass)
    return [
        Addressee(user_id, found[user_id].name or user_id, phones_of(hass, user_id, settings))
        for user_id in await addressee_ids(hass, settings, roles)
    ]


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
    None when they may: a person (not Home Assistant itself), active, still an addressee
    under the current options, and allowed to see that camera."""
    if user_id is None:
        return "no_user"
    user = (await people(hass)).get(user_id)
    if user is None:
        return "unknown_user"
    if user_id not in await addressee_ids(hass, settings, roles):
        return "not_addressee"
    if (
        camera_entity is not None
        and not user.is_admin
        and not user.permissions.check_entity(camera_entity, POLICY_READ)
    ):
        return "camera_hidden"
    return None


async def people(hass: HomeAssistant) -> dict[str, User]:
    """Active users that are people (not Home Assistant's own system users), by id."""
    return {
        u.id: u for u in await hass.auth.async_get_users() if u.is_active and not u.system_generated
    }
