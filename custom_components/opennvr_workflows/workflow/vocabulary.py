"""The fixed words of workflow.v1: tools, actuators, allow-lists, events, placeholders, caps.

One place for every list the contract's rules read, so the engine, the AI step and the import
UI ask this module instead of keeping a copy. Each list says why it has the members it has.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from types import MappingProxyType

from .model import (
    Action,
    ActionStep,
    AlertTrigger,
    AppAction,
    ButtonTrigger,
    CameraOfflineTrigger,
    EventTrigger,
    HomeAssistantAction,
    MessageTrigger,
    PersonInZoneTrigger,
    ScheduleTrigger,
    SiteModeAction,
    Trigger,
)

__all__ = [
    "ACTUATOR_TOOL_NAMES",
    "AI_STEP_KEYS",
    "AI_TOOL_NAMES",
    "ANSWER_FRESH_S",
    "ASK_TOOL_NAMES",
    "COMMON_PLACEHOLDERS",
    "CONTRACTED_EVENTS",
    "CORE_SKILLS",
    "DURATION_RANGES",
    "HOME_ASSISTANT_SAFE_ACTIONS",
    "INVESTIGATE_MODEL_SKILL",
    "MAX_NESTING",
    "MAX_STEPS",
    "MAX_TOOLS",
    "READ_TOOLS",
    "RESERVED_FIELD_NAMES",
    "SDK_READ_TOOLS",
    "TOOL_SKILLS",
    "WORKFLOW_ALERT_SOURCE",
    "action_moves_things",
    "is_actuator",
    "is_safe_home_assistant_action",
    "trigger_placeholders",
]

#: The read tools of ``opennvr_app_sdk.agent`` (what the camera agent and the engine both
#: serve), written out rather than imported: the contract package needs only PyYAML and
#: jsonschema, so files can be checked where the SDK (and its network stack) is not installed.
#: tests/workflow/test_standalone.py keeps the copy equal to the SDK's ``READ_TOOL_NAMES``.
SDK_READ_TOOLS: frozenset[str] = frozenset(
    {
        "describe_camera",
        "camera_snapshot",
        "detect_objects",
        "recognize_faces",
        "search_footage",
        "search_history",
        "describe_event",
        "describe_window",
        "recent_events",
        "recent_plates",
    }
)

#: The SDK's read tools plus the read tools the RFC adds in core: ``site_lookup`` (Site rules
#: lists) and ``camera_health`` (online state, last frame, ping).
READ_TOOLS: frozenset[str] = SDK_READ_TOOLS | {"site_lookup", "camera_health"}

#: Tools that pause the step for a person (the SDK's ``ask_person`` effect).
ASK_TOOL_NAMES: frozenset[str] = frozenset({"ask_person"})

#: Everything an Investigate step may list.
AI_TOOL_NAMES: frozenset[str] = READ_TOOLS | ASK_TOOL_NAMES

#: Names that move things (RFC section 4: "not available to AI"), and the words people reach
#: for when they mean one. Listed so the error can say *why* rather than "unknown tool";
#: anything that is not in :data:`AI_TOOL_NAMES` is refused either way.
ACTUATOR_TOOL_NAMES: frozenset[str] = frozenset(
    {
        "open_gate",
        "close_gate",
        "unlock",
        "lock",
        "open_door",
        "set_site_mode",
        "arm",
        "disarm",
        "siren",
        "sound_siren",
        "trigger_alarm",
        "turn_on",
        "turn_off",
        "call_service",
        "home_assistant",
        "app_action",
        "speak",
        "call",
    }
)

#: The cap on an Investigate step's tool list (the AI step schema draft): fewer tools measurably
#: improve small models' choices.
MAX_TOOLS = 5

#: The skill each tool needs from the site, beyond the language model every Investigate uses.
TOOL_SKILLS: Mapping[str, str] = MappingProxyType(
    {
        "describe_camera": "vision_model",
        "describe_event": "vision_model",
        "describe_window": "vision_model",
        "camera_snapshot": "detector",
        "detect_objects": "detector",
        "recognize_faces": "face_recognition",
        "search_footage": "semantic_search",
        "search_history": "semantic_search",
        "recent_plates": "plate_recognition",
    }
)

#: Home Assistant actions that read or tell and never move anything. Everything else on
#: ``home_assistant`` (lights, locks, covers, sirens, scripts, scenes, automations, TTS on a
#: speaker, ...) is treated as an actuator. ``notify.*`` covers every notify service and
#: ``notify.send_message``; patterns use shell-style wildcards on ``domain.service``.
HOME_ASSISTANT_SAFE_ACTIONS: tuple[str, ...] = (
    "notify.*",
    "persistent_notification.create",
    "persistent_notification.dismiss",
    "logbook.log",
    "system_log.write",
)

#: Home Assistant actions whose ``message`` Home Assistant shows as markdown (a notification
#: in its own sidebar): the values rendered into it are escaped, the workflow's text is not.
MARKDOWN_MESSAGE_ACTIONS: frozenset[str] = frozenset(
    {"persistent_notification.create", "notify.persistent_notification"}
)

#: OpenNVR's contracted events (API contract 1.1). Others are accepted with a warning, since
#: apps may publish their own.
CONTRACTED_EVENTS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "plate.recognized.v1": frozenset({"plate", "confidence", "vehicle_label", "event_id"}),
        "access.decided.v1": frozenset({"plate", "access", "reason", "event_id"}),
        "detection.observed.v1": frozenset({"label", "score", "track"}),
        "visit.recorded.v1": frozenset({"label", "plate", "event_id"}),
        "occupancy.changed.v1": frozenset({"label", "count"}),
    }
)

#: Defined on every path of every workflow.
COMMON_PLACEHOLDERS: frozenset[str] = frozenset({"workflow", "time", "date"})

#: Names an AI step defines for its paths; a field may not take one.
RESERVED_FIELD_NAMES: frozenset[str] = frozenset(
    {"decision", "reason", "confidence", "unsure"} | COMMON_PLACEHOLDERS
)

#: The keys of an AI step's mapping that are not outcome paths; an option may not take one.
AI_STEP_KEYS: frozenset[str] = frozenset(
    {
        "mode",
        "prompt",
        "input",
        "frames",
        "text",
        "camera",
        "goal",
        "instructions",
        "tools",
        "memory",
        "decision",
        "fields",
        "rules",
        "reason_as",
        "sure",
        "limits",
    }
)

#: The app and the alert type of every alert a workflow raises (the integration's domain): an
#: ``alert`` trigger that does not filter them out may be started by an AI decision of another
#: workflow, so what it reads is treated as AI output.
WORKFLOW_ALERT_SOURCE = "opennvr_workflows"

#: How long a person's answer clears an action that moves things, by default: an approval
#: is for what happens now, not for what happens after a long ``wait`` (the site may set
#: another bound; past it the engine asks again).
ANSWER_FRESH_S = 600.0

#: Caps that keep a workflow readable and its runs bounded. The RFC's advice is three to seven
#: steps; these are the hard limits.
MAX_STEPS = 64
MAX_NESTING = 8


def is_safe_home_assistant_action(action: str) -> bool:
    """True when ``domain.service`` is on the read/notify allow-list."""
    return any(fnmatch.fnmatchcase(action, pattern) for pattern in HOME_ASSISTANT_SAFE_ACTIONS)


def action_moves_things(action: Action) -> bool:
    """True when the action moves things: a site mode change, any app action, or a Home
    Assistant action outside the allow-list. The safety rule applies to these, and the
    engine runs them at most once."""
    if isinstance(action, SiteModeAction | AppAction):
        return True
    if isinstance(action, HomeAssistantAction):
        return not is_safe_home_assistant_action(action.action)
    return False


def is_actuator(step: ActionStep) -> bool:
    """True when the step's action moves things (see :func:`action_moves_things`)."""
    return action_moves_things(step.action)


def trigger_placeholders(trigger: Trigger) -> frozenset[str]:
    """The placeholders a trigger defines for every step of the run."""
    names: set[str] = set(COMMON_PLACEHOLDERS)
    match trigger:
        case AlertTrigger():
            names |= {
                "camera",
                "title",
                "severity",
                "alert_type",
                "app",
                "alert_id",
                "description",
                "track",
            }
        case EventTrigger(event=event):
            names |= {"camera", "event_type", "event_id", "track"}
            names |= CONTRACTED_EVENTS.get(event, frozenset())
        case CameraOfflineTrigger():
            names |= {"camera", "offline_for"}
        case PersonInZoneTrigger():
            names |= {"camera", "zone", "track", "seconds"}
        case MessageTrigger():
            names |= {"message", "user"}
        case ButtonTrigger():
            names |= {"user"}
        case ScheduleTrigger():
            pass
    return frozenset(names)


#: Allowed ranges, in seconds, of the durations the JSON Schema cannot bound (it sees text).
#: Keyed by what the duration is; the validator reports WF-LIMIT-RANGE outside them.
DURATION_RANGES: Mapping[str, tuple[float, float]] = MappingProxyType(
    {
        "cooldown": (0.0, 86_400.0),
        "camera_offline": (10.0, 86_400.0),
        "schedule_every": (60.0, 7 * 86_400.0),
        "ask_timeout": (10.0, 86_400.0),
        "wait": (1.0, 86_400.0),
        "clip_margin": (0.0, 300.0),
        "events_within": (60.0, 7 * 86_400.0),
    }
)

#: The skills core and this integration provide, by name. ``needs`` may also name an app
#: (the app's name, as in ``alert: {app: ...}`` and ``app_action: {app: ...}``).
CORE_SKILLS: Mapping[str, str] = MappingProxyType(
    {
        "language_model": "a local language model (Ollama) for Investigate and text Look steps",
        "vision_model": "a local vision model for Look steps on pictures and the describe tools",
        "detector": "OpenNVR's object detector (camera_snapshot, detect_objects, "
        "detect.person_in_zone)",
        "face_recognition": "the face gallery (recognize_faces)",
        "plate_recognition": "plate reading (recent_plates)",
        "semantic_search": "semantic search over recordings (search_footage, search_history)",
        "investigate_model": "a model measured fit for Investigate steps (the evaluation's gate)",
    }
)

#: The skill a site has once its model passed the evaluation gate (the look suite's 95 %
#: Wilson lower bound at 0.80 or above, measured from the integration's options). Against a
#: site that knows its skills, an Investigate step without it is refused: an agent that
#: chooses its own tools is trusted only on a model measured on golden cases.
INVESTIGATE_MODEL_SKILL = "investigate_model"
