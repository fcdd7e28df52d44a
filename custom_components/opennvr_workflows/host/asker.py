"""Who is asking, and which of the site's cameras they may see.

The history search, the ``search_history`` action and every Assist tool answer as the
person asking (a call's or ``llm_context.context``'s user), decided by the integration's
one rule (:class:`.permissions.Caller`): an administrator, or Home
Assistant itself (no user), sees every camera; anyone else sees the cameras whose camera
entity they may read, the same rule an approval applies before a person may answer a
question about a camera. A camera without an entity is hidden from such a user, and a user
who no longer exists or is deactivated sees none.

A camera the user may not see answers exactly like one that does not exist, so a tool
never reveals what is hidden.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from homeassistant.core import Context, HomeAssistant

from .permissions import Caller, async_caller

if TYPE_CHECKING:
    from .workflows import WorkflowHost

_NUMBERED: Final = re.compile(r"(?:camera[ _]?|cam)?(\d+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Asker:
    """The person asking and the cameras of one site they may see."""

    #: who asks (None: a user who no longer exists or is deactivated, who sees nothing)
    caller: Caller | None
    #: camera id -> its name, for the cameras this person may see
    cameras: Mapping[int, str]
    #: camera role (from the options) -> camera id, for those cameras
    roles: Mapping[str, int]
    #: whether that is every camera of the site
    sees_all: bool

    @property
    def user_id(self) -> str | None:
        return self.caller.user_id if self.caller is not None else None

    @property
    def is_admin(self) -> bool:
        return self.caller is not None and self.caller.is_admin

    def may_see(self, camera_id: int | str | None) -> bool:
        """Whether a row about ``camera_id`` may be shown (a row about no camera: yes)."""
        if camera_id is None:
            return True
        try:
            return int(camera_id) in self.cameras
        except (TypeError, ValueError):
            return self.sees_all

    def camera(self, value: str) -> int | None:
        """The camera ``value`` names (its name, a role, or its number), if visible."""
        text = value.strip()
        folded = text.casefold()
        for camera_id, name in self.cameras.items():
            if name.casefold() == folded:
                return camera_id
        if text in self.roles:
            return self.roles[text]
        match = _NUMBERED.fullmatch(text)
        if match and int(match.group(1)) in self.cameras:
            return int(match.group(1))
        return None

    def names(self) -> list[str]:
        """The visible cameras' names and roles, for a tool's schema and its errors."""
        return sorted({*self.cameras.values(), *self.roles})

    def port_names(self) -> dict[str, int]:
        """Names for the NVR read port: roles first, then names (a name wins for display)."""
        return {**self.roles, **{name: cid for cid, name in self.cameras.items()}}


async def async_asker(hass: HomeAssistant, host: WorkflowHost, context: Context | None) -> Asker:
    """The asker of ``context`` on ``host``'s site (see the module docstring)."""
    site_cameras = {
        cid: camera.name or f"camera {cid}" for cid, camera in sorted(host.site_cameras().items())
    }
    caller = await async_caller(hass, context)
    if caller is None:
        visible: dict[int, str] = {}
    elif caller.is_admin:
        visible = site_cameras
    else:
        visible = {
            cid: name
            for cid, name in site_cameras.items()
            if caller.may_see(host.camera_entity(str(cid)))
        }
    roles = host.settings.roles
    return Asker(
        caller=caller,
        cameras=visible,
        roles={role: cid for role, cid in roles.items() if cid in visible},
        sees_all=len(visible) == len(site_cameras),
    )
