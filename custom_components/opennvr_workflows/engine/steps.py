"""What every step executor shares: who decided a path, the two ways a run
stops early, and the placeholders its trigger defines.

The decider travels down the path walk because the trust rules need it: an
alert on a path an AI step chose is capped by that step's marked accuracy,
while one on a path the world, a rule or a person chose is not.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from .events import NvrEvent

Decider = tuple[Literal["world", "ai", "person", "rule"], str | None]
WORLD: Final[Decider] = ("world", None)
RULE: Final[Decider] = ("rule", None)
PERSON: Final[Decider] = ("person", None)


class Waiting(Exception):
    """The run cannot go on until a person answers or a due time passes."""


class ProviderLost(Exception):
    """A step lost its provider; the workflow needs attention."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def event_values(event: NvrEvent) -> dict[str, Any]:
    """The placeholders a trigger defines."""
    values: dict[str, Any] = {}
    for name, value in event.payload.items():
        if isinstance(value, str | int | float | bool):
            values[name] = value
    values.update(
        camera=event.camera_role or event.camera_id,
        camera_id=event.camera_id,
        title=event.title,
        severity=event.severity,
        alert_type=event.type if event.kind == "alert" else None,
        event_type=event.type if event.kind == "event" else None,
        app=event.app,
        alert_id=event.alert_id,
        track=event.track_id,
        plate=event.plate if event.plate is not None else values.get("plate"),
        labels=", ".join(sorted(event.labels)),
        time=event.time.isoformat(timespec="seconds"),
    )
    if "description" not in values:
        values["description"] = event.payload.get("description")
    if event.kind == "message":
        values["message"] = event.payload.get("message")
        values["user"] = event.payload.get("user")
    return values
