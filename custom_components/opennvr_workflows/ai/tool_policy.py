"""Which tools an AI step may have, and how each may run.

RFC section 4: a tool's mode is a site policy an admin sets once (auto, ask, or not
available); a workflow may make a tool stricter for one step but never looser. The SDK's
``effective_mode`` is the strictest-of rule; this module adds the site's defaults and the
list of tools this host implements.

Nothing that moves things is here, and nothing here can make it a tool: the SDK's ``Tool``
has no "act" effect, and :func:`tool_kind` answers None for any name not listed below, so
an actuator named on a step is refused before any handler exists for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, cast

from opennvr_app_sdk.agent import effective_mode

Mode = Literal["auto", "ask", "unavailable"]
MODES: tuple[Mode, ...] = ("auto", "ask", "unavailable")

#: The read tools this integration implements over OpenNVR: the SDK's ten but two, plus
#: the two RFC tools that are core's (camera_health and site_lookup). Not here, because
#: OpenNVR's API offers an integration nothing to build them on: ``recognize_faces`` (no
#: face gallery to match against) and ``describe_window`` (no frames from recordings).
READ_TOOLS: tuple[str, ...] = (
    "describe_camera",
    "camera_snapshot",
    "detect_objects",
    "recent_events",
    "recent_plates",
    "search_footage",
    "search_history",
    "describe_event",
    "camera_health",
    "site_lookup",
)
#: Tools that ask a person and wait; the step suspends on them.
ASK_TOOLS: tuple[str, ...] = ("ask_person",)
#: Every tool an AI step of this host can be given: what the host hands the workflow
#: validator, so a workflow naming any other tool is refused when it is imported, with
#: the tool's name, instead of failing when it runs.
IMPLEMENTED_TOOLS: tuple[str, ...] = READ_TOOLS + ASK_TOOLS

#: RFC section 4's default modes: read tools run, asking a person waits for the person.
DEFAULT_SITE_POLICY: Mapping[str, Mode] = {
    **dict.fromkeys(READ_TOOLS, "auto"),
    "ask_person": "ask",
}


def tool_kind(name: str) -> Literal["read", "ask_person"] | None:
    """``read`` or ``ask_person`` for a tool this host can hand a model; None otherwise."""
    if name in READ_TOOLS:
        return "read"
    if name in ASK_TOOLS:
        return "ask_person"
    return None


def site_policy(admin: Mapping[str, str] | None = None) -> dict[str, Mode]:
    """The site's mode per tool: the defaults, then what the admin set. An unknown mode
    reads as ``unavailable``, the safe side. An admin can loosen ``ask_person`` no
    further than ``ask``: asking a person always waits for the person."""
    policy: dict[str, Mode] = dict(DEFAULT_SITE_POLICY)
    for name, mode in (admin or {}).items():
        chosen: Mode = cast(Mode, mode) if mode in MODES else "unavailable"
        policy[name] = effective_mode("ask", chosen) if name in ASK_TOOLS else chosen
    return policy


def step_mode(site: Mapping[str, Mode], name: str, step: str | None = None) -> Mode:
    """How ``name`` runs on one step: the stricter of the site's mode and the step's
    override. A tool the site policy does not mention is ``unavailable``."""
    site_mode: Mode = site.get(name, "unavailable")
    override: Mode | None = None
    if step is not None:
        override = cast(Mode, step) if step in MODES else "unavailable"
    return effective_mode(site_mode, override)
