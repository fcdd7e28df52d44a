"""How urgent a notification really is, read from its data, and how to lower it.

A workflow's ``severity`` is not the only way to wake someone: the ``data`` of a notify call
can ask a phone for a critical alert of its own. The severity cap (an AI-decided message is at
most medium until the step has earned trust; critical needs a person or a plain rule) must hold
for what the phone will actually do, so this module reads the *effective* severity of a
notify call's ``data`` and lowers what asks for more than a step may have.

The shapes read (the ``data`` mapping inside a notify call's service data):

* iOS companion app: ``push: {interruption-level: passive|active|time-sensitive|critical}``
  (critical rings through silent mode and Focus; time-sensitive breaks through Focus), and
  ``push: {sound: {name, critical: 1, volume}}`` (a critical sound, same effect).
* Android companion app: ``channel: alarm_stream`` (plays as an alarm, through Do Not
  Disturb), ``media_stream: alarm_stream | alarm_stream_max`` (text-to-speech on the alarm
  stream), ``importance: high | max`` (heads-up), ``priority: high`` and ``ttl: 0`` (delivered
  at once, waking the phone).
* Pushover: ``priority: 2`` (emergency: repeats until someone acknowledges, with ``retry`` and
  ``expire``) and ``priority: 1`` (high: bypasses quiet hours).
* ntfy and web push: ``priority: 4 | 5 | high | max | urgent`` and ``urgency: high``.

A value this module cannot read (a ``push`` that is not a mapping, a priority that is not a
number or a known word) counts as the highest severity its key can express: unknown urgency is
treated as urgent, never as quiet.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ...engine.ports import SEVERITIES, Severity

__all__ = ["Capped", "NotificationTooUrgent", "cap_urgency", "effective_severity"]

_LOW: Final[Severity] = "low"
#: Word priorities (Android, ntfy, web push) and the severity each amounts to.
_PRIORITY_WORDS: Final[Mapping[str, Severity]] = {
    "min": "low",
    "low": "low",
    "very-low": "low",
    "default": "low",
    "normal": "low",
    "high": "high",
    "max": "high",
    "urgent": "high",
}
#: Numeric priorities by integration: Pushover counts -2..2 (2 = emergency), ntfy 1..5.
_PUSHOVER_PRIORITY: Final[Mapping[int, Severity]] = {2: "critical", 1: "high"}
_NTFY_PRIORITY: Final[Mapping[int, Severity]] = {5: "high", 4: "high"}
#: Android streams that play as an alarm.
_ALARM_STREAMS: Final = frozenset({"alarm_stream", "alarm_stream_max"})


class NotificationTooUrgent(Exception):
    """The data asks for more urgency than allowed, in a way that cannot be lowered."""


@dataclass(frozen=True, slots=True)
class Capped:
    """A notify call's data after the cap: what it asked for, what it may have, what changed."""

    data: dict[str, Any]
    requested: Severity
    allowed: Severity
    #: the keys lowered or removed, as dotted paths (``push.interruption-level``)
    lowered: tuple[str, ...]


def _rank(severity: Severity) -> int:
    return SEVERITIES.index(severity)


def _max(*severities: Severity) -> Severity:
    return max(severities, key=_rank, default=_LOW)


def _word(value: Any) -> str:
    return str(value).strip().casefold()


def _number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _priority(value: Any, integration: str | None) -> Severity:
    if (number := _number(value)) is not None:
        if integration == "pushover":
            return _PUSHOVER_PRIORITY.get(number, _LOW)
        if integration == "ntfy":
            return _NTFY_PRIORITY.get(number, _LOW)
        # Unknown scale: the highest reading of the number among the scales known.
        return _max(_PUSHOVER_PRIORITY.get(number, _LOW), _NTFY_PRIORITY.get(number, _LOW))
    return _PRIORITY_WORDS.get(_word(value), "critical" if value is not None else _LOW)


def _interruption(value: Any) -> Severity:
    word = _word(value)
    if word in ("passive", "active"):
        return _LOW
    return "high" if word == "time-sensitive" else "critical"


def _critical_sound(sound: Any) -> bool:
    if not isinstance(sound, Mapping):
        return False
    flag = sound.get("critical")
    return flag not in (None, 0, False, "0", "", "false", "False")


def _ttl(value: Any) -> Severity:
    number = _number(value)
    return "high" if number is None or number <= 0 else _LOW


def _push(value: Any) -> Severity:
    if not isinstance(value, Mapping):
        return "critical"
    out: Severity = _LOW
    if "interruption-level" in value:
        out = _interruption(value["interruption-level"])
    if _critical_sound(value.get("sound")):
        out = "critical"
    return out


#: Each key of ``data`` that can express urgency, and how to read it.
_READERS: Final[Mapping[str, Callable[[Any, str | None], Severity]]] = {
    "push": lambda v, _i: _push(v),
    "channel": lambda v, _i: "critical" if _word(v) in _ALARM_STREAMS else _LOW,
    "media_stream": lambda v, _i: "critical" if _word(v) in _ALARM_STREAMS else _LOW,
    "importance": lambda v, _i: _PRIORITY_WORDS.get(_word(v), "critical"),
    "priority": _priority,
    "urgency": lambda v, _i: _PRIORITY_WORDS.get(_word(v), "critical"),
    "ttl": lambda v, _i: _ttl(v),
}


def effective_severity(data: Any, integration: str | None = None) -> Severity:
    """The severity a notify call's ``data`` asks the device for (``low`` when it asks for
    nothing special); ``integration`` picks the scale of numeric priorities."""
    if data is None:
        return _LOW
    if not isinstance(data, Mapping):
        return "critical"
    return _max(*(read(data[key], integration) for key, read in _READERS.items() if key in data))


def cap_urgency(data: Any, allowed: Severity, integration: str | None = None) -> Capped:
    """``data`` lowered so that it asks for at most ``allowed``; raises
    :class:`NotificationTooUrgent` when it cannot be (data that is not a mapping)."""
    requested = effective_severity(data, integration)
    if data is None:
        return Capped({}, requested, allowed, ())
    if not isinstance(data, Mapping):
        raise NotificationTooUrgent(
            f"the notification's data is not a mapping ({type(data).__name__}), so its "
            "urgency cannot be read or lowered"
        )
    out = dict(data)
    if _rank(requested) <= _rank(allowed):
        return Capped(out, requested, allowed, ())
    lowered: list[str] = []
    for key, read in _READERS.items():
        if key in out and _rank(read(out[key], integration)) > _rank(allowed):
            _lower(out, key, allowed, integration, lowered)
    if _rank(effective_severity(out, integration)) > _rank(allowed):
        raise NotificationTooUrgent("the notification's urgency could not be lowered")
    return Capped(out, requested, allowed, tuple(lowered))


def _lower(
    data: dict[str, Any], key: str, allowed: Severity, integration: str | None, lowered: list[str]
) -> None:
    """Lower one key of ``data`` to ``allowed``: to the strongest value still allowed where
    the key has a scale, otherwise remove it (the device's default is the quiet one)."""
    high_ok = _rank(allowed) >= _rank("high")
    match key:
        case "push" if isinstance(data[key], Mapping):
            push = dict(data[key])
            if (
                "interruption-level" in push
                and _interruption(push["interruption-level"])
                not in SEVERITIES[: _rank(allowed) + 1]
            ):
                push["interruption-level"] = "time-sensitive" if high_ok else "active"
                lowered.append("push.interruption-level")
            if _critical_sound(push.get("sound")):
                sound = {
                    k: v for k, v in dict(push["sound"]).items() if k not in ("critical", "volume")
                }
                push["sound"] = sound or "default"
                lowered.append("push.sound.critical")
            data[key] = push
            return
        case "priority" if integration == "pushover" and high_ok and _number(data[key]) == 2:
            data[key] = 1
            data.pop("retry", None)
            data.pop("expire", None)
            lowered.append("priority")
            return
        case "importance" | "priority" | "urgency" if high_ok:
            data[key] = "high"
            lowered.append(key)
            return
        case _:
            pass
    del data[key]
    if key == "priority" and integration == "pushover":
        data.pop("retry", None)
        data.pop("expire", None)
    lowered.append(key)
