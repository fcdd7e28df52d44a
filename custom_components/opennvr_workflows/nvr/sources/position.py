"""Where the events websocket resumes after Home Assistant restarts: the server's
``epoch`` and the last ``seq`` whose events are durable.

OpenNVR replays what a client missed when it reconnects with ``since`` and ``epoch``
(within its replay window). In one process the stream remembers them; this keeps them
across restarts. A position is saved only once every event up to it was committed by
the engine, and saves are coalesced (at most one write per :data:`SAVE_DELAY_S`), so a
flood of events is not a disk write each. Stopping the source writes the latest one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Protocol

from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store

from ...const import DOMAIN

#: The longest a durable position waits before it is written.
SAVE_DELAY_S: Final = 1.0
_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class Position:
    """A point in one OpenNVR server process's event sequence."""

    epoch: str
    seq: int

    @classmethod
    def from_data(cls, data: Any) -> Position | None:
        """The stored position, or None for anything unreadable (a fresh start)."""
        if not isinstance(data, dict):
            return None
        epoch, seq = data.get("epoch"), data.get("seq")
        if not isinstance(epoch, str) or not epoch or type(seq) is not int or seq < 0:
            return None
        return cls(epoch, seq)

    def as_data(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "seq": self.seq}


def position_key(entry_id: str) -> str:
    """The storage key of an entry's websocket position (the removal deletes it)."""
    return f"{DOMAIN}.{entry_id}.ws_position"


class PositionStore(Protocol):
    """Keeps one source's durable position between runs."""

    async def load(self) -> Position | None: ...

    def save(self, position: Position) -> None:
        """Remember ``position``; written soon, not necessarily now."""

    async def flush(self) -> None:
        """Write the last position given to :meth:`save` now."""


class MemoryPositionStore:
    """A position kept in memory: for a source nobody restarts, and for tests."""

    def __init__(self, position: Position | None = None) -> None:
        self.position = position
        self.saves = 0

    async def load(self) -> Position | None:
        return self.position

    def save(self, position: Position) -> None:
        self.position = position
        self.saves += 1

    async def flush(self) -> None:
        return None


class HaPositionStore:
    """The position in Home Assistant's storage (``.storage/opennvr_workflows.<entry>.
    ws_position``), written atomically so a power cut leaves the old or the new one."""

    def __init__(self, hass: HomeAssistant, entry_id: str) -> None:
        self._store: Store[dict[str, Any]] = Store(
            hass, _VERSION, position_key(entry_id), atomic_writes=True
        )
        self._latest: Position | None = None

    async def load(self) -> Position | None:
        self._latest = Position.from_data(await self._store.async_load())
        return self._latest

    def save(self, position: Position) -> None:
        self._latest = position
        self._store.async_delay_save(self._data, SAVE_DELAY_S)

    async def flush(self) -> None:
        if self._latest is not None:
            await self._store.async_save(self._data())

    def _data(self) -> dict[str, Any]:
        assert self._latest is not None  # only saved after save() set it
        return self._latest.as_data()
