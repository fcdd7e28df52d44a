"""What a Home Assistant action or a webhook really does on this site: inform, or move things.

The contract lets ``notify.*`` through as "telling people", but the name of an action says
nothing about its effect: a notify service may belong to a speaker that talks in the house,
an announcement system, a TV, or a command line. Only this host can see which integration
registered a service, so it decides here, once, for the import check and for every call:

* an action is *informing* only if the integration behind it is on :data:`MESSAGING` (pure
  messaging platforms that put text in front of a person, each listed with its reason) and its
  message and data carry no command (:func:`message_command`);
* anything else, including an integration that cannot be found, moves things, and the safety
  rule for actuators applies to it;
* a webhook destination moves things when an admin marked it so in the options.

Notify services come from two registries: the legacy notify platforms (one
``BaseNotificationService`` per platform, possibly with per-target services such as
``notify.mobile_app_<device>``; read through :mod:`...ha_internals`, Home Assistant keeps no
public record of them) and notify entities (``notify.send_message`` with
``entity_id`` targets, resolved through the entity registry).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er

from ...engine.what_matters import PHONE_COMMANDS
from ...ha_internals import notify_service_integrations
from ...workflow import SiteProfile, validate_workflow
from ...workflow.model import (
    Action,
    ActionStep,
    AIStep,
    AskPersonStep,
    CallStep,
    ForEachStep,
    HomeAssistantAction,
    IfStep,
    Step,
    WebhookAction,
    Workflow,
)
from ...workflow.paths import PathPart, format_path

__all__ = [
    "MESSAGING",
    "ActionJudge",
    "Effect",
    "as_phone_text",
    "cleared_steps",
    "import_hook",
    "message_command",
]

#: Integrations whose notify services only put text in front of a person, and why each is
#: trusted to do no more. Speakers, announcement systems, TVs, displays, command lines, REST
#: calls, notify groups (which may hold anything) and every integration not listed move things.
MESSAGING: Final[Mapping[str, str]] = {
    "mobile_app": "the companion app's push notification (its commands are judged apart)",
    "persistent_notification": "a notification in Home Assistant's own sidebar",
    "html5": "a web push notification in a browser",
    "telegram": "a Telegram chat message",
    "telegram_bot": "a Telegram chat message",
    "signal_messenger": "a Signal chat message",
    "matrix": "a Matrix chat message",
    "discord": "a Discord chat message",
    "slack": "a Slack chat message",
    "smtp": "an e-mail",
    "pushover": "a Pushover push notification",
    "pushbullet": "a Pushbullet push notification",
    "ntfy": "an ntfy push notification",
    "logbook": "a line in Home Assistant's logbook",
    "system_log": "a line in Home Assistant's log",
}

#: Actions outside ``notify`` that only write text in Home Assistant itself, by integration.
_OWN_TEXT: Final[Mapping[str, str]] = {
    "persistent_notification.create": "persistent_notification",
    "persistent_notification.dismiss": "persistent_notification",
    "logbook.log": "logbook",
    "system_log.write": "system_log",
}

#: Companion app messages that are commands to the phone, not text for a person: the
#: engine's list (:data:`...engine.what_matters.PHONE_COMMANDS`), so the run-time monitor and
#: this judge read one list. ``clear_notification`` and ``clear_badge`` only tidy the
#: notification shade, and stay messages.
_COMMAND_PATTERNS: Final = PHONE_COMMANDS
#: Data keys through which the companion app acts rather than shows: text to speak, an intent
#: to launch, a media stream to play on.
_COMMAND_DATA_KEYS: Final = frozenset({"tts_text", "media_stream", "command", "intent_action"})


@dataclass(frozen=True, slots=True)
class Effect:
    """What one action does on this site."""

    moves_things: bool
    #: the integration behind the action, None when none could be found
    integration: str | None
    #: why, in words a person can check ("notify.kitchen belongs to alexa_media, ...")
    reason: str


def message_command(integration: str | None, message: Any, data: Any) -> str | None:
    """The command a notification carries, or None when it is only text for a person.

    Applied to every messaging platform, not only the companion app's: a message that reads
    as a command to a phone is refused as text wherever it goes."""
    del integration  # every platform is judged the same way: the phone decides, not the name
    word = str(message or "").strip().casefold()
    for pattern in _COMMAND_PATTERNS:
        if fnmatch.fnmatchcase(word, pattern):
            return f"the message {str(message).strip()!r} is a command to the phone"
    if isinstance(data, Mapping):
        for key in sorted(_COMMAND_DATA_KEYS & {str(k) for k in data}):
            return f"its data key {key!r} makes the phone act, not show"
    return None


def as_phone_text(text: str) -> tuple[str, str | None]:
    """``text`` as a phone shows it, never as a command: a whole message or title that
    reads as one (:func:`message_command`: ``TTS``, ``command_screen_on``, ...) is put in
    quotes, which the companion app shows as text. A notify step's text may be built from
    an event's or a model's words, and no words may make a notification act on the phone.
    Returns the text and, when it was quoted, why."""
    why = message_command(None, text, None)
    return (text, None) if why is None else (f"\u201c{text.strip()}\u201d", why)


@dataclass(frozen=True, slots=True)
class ActionJudge:
    """This site's notify services and webhook marks, judging actions.

    Two ways to build one, both on the event loop: :meth:`of`, a snapshot, then pure (the
    validator may call it from the executor while it checks a folder), and :meth:`live`,
    which reads Home Assistant's registries at each judgement (for a call about to be
    made, as things are at that moment)."""

    #: notify service name (``mobile_app_alices_phone``) -> integration
    notify_services: Mapping[str, str] = field(default_factory=dict)
    #: notify entity id -> integration
    notify_entities: Mapping[str, str] = field(default_factory=dict)
    #: every ``domain.service`` Home Assistant offers now
    services: Container[str] = frozenset()
    #: webhook destinations an admin marked as moving things
    moving_webhooks: frozenset[str] = frozenset()

    @classmethod
    def of(cls, hass: HomeAssistant, moving_webhooks: Iterable[str] = ()) -> ActionJudge:
        """Read the registries now (on the event loop)."""
        offered = frozenset(
            f"{domain}.{service}"
            for domain, names in hass.services.async_services().items()
            for service in names
        )
        return cls(
            _notify_services(hass),
            dict(_NotifyEntities(er.async_get(hass))),
            offered,
            frozenset(moving_webhooks),
        )

    @classmethod
    def live(cls, hass: HomeAssistant, moving_webhooks: Iterable[str] = ()) -> ActionJudge:
        """A judge for a call about to be made, on the event loop: the notify platforms
        are read now (a few), the entity registry and the services at each lookup.

        A run's every action step is judged, and :meth:`of` walks every entity of the
        registry and copies every service to do it: with a thousand entities that was the
        costliest part of a run. Only use it on the loop, and do not keep it."""
        return cls(
            _notify_services(hass),
            _NotifyEntities(er.async_get(hass)),
            _Offered(hass),
            frozenset(moving_webhooks),
        )

    def judge(self, action: Action) -> Effect | None:
        """The effect of ``action`` on this site, or None when this host has nothing to add
        to the contract (not a Home Assistant action or a webhook)."""
        if isinstance(action, WebhookAction):
            return self.judge_webhook(action.to)
        if isinstance(action, HomeAssistantAction):
            return self.judge_call(action.action, action.data, action.target)
        return None

    def judge_webhook(self, name: str) -> Effect:
        if name in self.moving_webhooks:
            return Effect(
                True, None, f"the webhook destination {name!r} is marked as moving things"
            )
        return Effect(False, None, f"the webhook destination {name!r} informs")

    def judge_call(self, action: str, data: Any, target: Any = None) -> Effect:
        """The effect of calling ``action`` with ``data`` and ``target`` now."""
        data = data if isinstance(data, Mapping) else {}
        if integration := _OWN_TEXT.get(action):
            return Effect(False, integration, f"{action} writes text in Home Assistant")
        domain, _, service = action.partition(".")
        if domain != "notify":
            return Effect(True, domain, f"{action} is not a messaging action")
        if service == "send_message":
            return self._judge_entities(action, data, target)
        integration = self.notify_services.get(service)
        if integration is None:
            return Effect(
                True,
                None,
                f"{action} belongs to no notify platform this site can identify, so it is "
                "treated as moving things",
            )
        return self._judge_platform(action, integration, data.get("message"), data.get("data"))

    def exists(self, action: str) -> bool:
        """Whether Home Assistant offers ``action`` now (the import judges only those)."""
        return action in self.services

    def _judge_entities(self, action: str, data: Mapping[str, Any], target: Any) -> Effect:
        ids = _entity_ids(target) | _entity_ids(data)
        if not ids:
            return Effect(True, None, f"{action} names no notify entity to judge")
        for entity_id in sorted(ids):
            integration = self.notify_entities.get(entity_id)
            if integration is None:
                return Effect(
                    True, None, f"the notify entity {entity_id} belongs to no known integration"
                )
            effect = self._judge_platform(
                f"{action} to {entity_id}", integration, data.get("message"), None
            )
            if effect.moves_things:
                return effect
        return Effect(False, None, f"{action} goes to messaging entities only")

    @staticmethod
    def _judge_platform(what: str, integration: str, message: Any, data: Any) -> Effect:
        if integration not in MESSAGING:
            return Effect(
                True,
                integration,
                f"{what} belongs to the {integration} integration, which is not a messaging "
                "platform",
            )
        if command := message_command(integration, message, data):
            return Effect(True, integration, f"{what} ({integration}): {command}")
        return Effect(False, integration, f"{what} is {MESSAGING[integration]}")


def _notify_services(hass: HomeAssistant) -> dict[str, str]:
    """Each legacy notify service's integration, read now (a few platforms)."""
    services = notify_service_integrations(hass)
    # The notify component registers this one itself, for the sidebar.
    services.setdefault("persistent_notification", "persistent_notification")
    return services


class _NotifyEntities(Mapping[str, str]):
    """The entity registry's notify entities -> their integration, read at each lookup."""

    def __init__(self, registry: er.EntityRegistry) -> None:
        self._registry = registry

    def __getitem__(self, entity_id: str) -> str:
        entry = self._registry.async_get(entity_id)
        if entry is None or entry.domain != "notify":
            raise KeyError(entity_id)
        return entry.platform

    def __iter__(self) -> Iterator[str]:
        return (e.entity_id for e in self._registry.entities.values() if e.domain == "notify")

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Offered(Container[str]):
    """Whether Home Assistant offers a ``domain.service`` now, asked at each lookup."""

    def __init__(self, hass: HomeAssistant) -> None:
        self._hass = hass

    def __contains__(self, action: object) -> bool:
        if not isinstance(action, str):
            return False
        domain, _, service = action.partition(".")
        return self._hass.services.has_service(domain, service)


def _entity_ids(value: Any) -> set[str]:
    if not isinstance(value, Mapping):
        return set()
    ids = value.get("entity_id")
    if isinstance(ids, str):
        return {i.strip() for i in ids.split(",") if i.strip()}
    if isinstance(ids, list | tuple):
        return {str(i) for i in ids}
    return set()


def import_hook(judge: ActionJudge) -> Callable[[Action], str | None]:
    """The validator's site hook: why an action moves things here (None: it informs, or
    this host cannot tell yet because the action is not offered now; the call is judged
    again when it runs)."""

    def moves_things(action: Action) -> str | None:
        if isinstance(action, HomeAssistantAction) and not judge.exists(action.action):
            return None
        effect = judge.judge(action)
        return effect.reason if effect is not None and effect.moves_things else None

    return moves_things


def cleared_steps(workflow: Workflow, site: SiteProfile) -> tuple[re.Pattern[str], ...]:
    """The engine paths of the ``home_assistant`` and ``webhook`` steps that the safety rule
    would let stand if they moved things: the import already checked them as actuators.

    At run time a call this host finds moving things (a service now behind a speaker, a
    message rendered into a phone command) is made only from one of these steps. The check
    is the validator's own: ``workflow`` is validated again with every such action treated
    as moving things, and a step without a ``WF-SAFETY-`` problem is cleared."""
    candidates = {
        vpath: pattern
        for vpath, pattern, step in _action_steps(workflow)
        if isinstance(step.action, HomeAssistantAction | WebhookAction)
    }
    if not candidates:
        return ()
    probe = replace(site, moves_things=_every_call_moves)
    refused = [
        p.path
        for p in validate_workflow(workflow, site=probe).problems
        if p.code.startswith("WF-SAFETY-")
    ]
    return tuple(
        re.compile(pattern)
        for vpath, pattern in candidates.items()
        if not any(path == vpath or path.startswith((f"{vpath}.", f"{vpath}[")) for path in refused)
    )


def _every_call_moves(action: Action) -> str | None:
    if isinstance(action, HomeAssistantAction | WebhookAction):
        return "this action may move things on this site"
    return None


def _action_steps(workflow: Workflow) -> Iterator[tuple[str, str, ActionStep]]:
    """``(validator path, engine path pattern, step)`` for every action step."""
    for top, steps in (("then", workflow.then), ("always", workflow.always)):
        for parts, pattern, step in _walk(steps, (top,), re.escape(top)):
            if isinstance(step, ActionStep):
                yield format_path(parts), f"{pattern}\\Z", step


def _walk(
    steps: tuple[Step, ...], parts: tuple[PathPart, ...], prefix: str
) -> Iterator[tuple[tuple[PathPart, ...], str, Step]]:
    """Mirror of the engine's walk: its paths are ``then.0.<outcome>.1``, with the If's
    outcomes ``true``/``false`` and a for-each item's index in place of ``do``."""
    for i, step in enumerate(steps):
        here, path = (*parts, i), f"{prefix}\\.{i}"
        yield here, path, step
        match step:
            case AIStep(paths=paths):
                for outcome, inner in paths.items():
                    yield from _walk(
                        inner, (*here, "ai", outcome), f"{path}\\.{re.escape(outcome)}"
                    )
            case IfStep(paths=paths):
                for outcome, inner in paths.items():
                    key = "then" if outcome == "true" else "else"
                    yield from _walk(inner, (*here, key), f"{path}\\.{outcome}")
            case AskPersonStep(paths=paths) | CallStep(paths=paths):
                for outcome, inner in paths.items():
                    yield from _walk(inner, (*here, outcome), f"{path}\\.{re.escape(outcome)}")
            case ForEachStep(steps=inner):
                yield from _walk(inner, (*here, "do"), f"{path}\\.[0-9]+")
            case _:
                pass
