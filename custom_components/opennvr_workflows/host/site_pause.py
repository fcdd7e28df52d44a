"""The site's pause switch, kept across restarts.

The engine does the pausing (:mod:`..engine.pause`); this keeps the choice in Home
Assistant's storage (written before the switch says it is done, so a crash right after
cannot lose it), hands it to the engine before the engine starts (the runs a restart
resumes stay held too), and leaves a logbook line with who paused or resumed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from ..const import DOMAIN
from ..engine import Engine
from .texts import Texts

_LOGGER = logging.getLogger(__name__)
_VERSION: Final = 1


def pause_key(entry_id: str) -> str:
    """The storage key of an entry's pause (the removal deletes it)."""
    return f"{DOMAIN}.{entry_id}.pause"


class SitePause:
    """Whether one entry's workflows are paused, since when and by whom."""

    def __init__(self, hass: HomeAssistant, entry_id: str, engine: Engine, texts: Texts) -> None:
        self._hass = hass
        self._engine = engine
        self._texts = texts
        self._store: Store[dict[str, Any]] = Store(hass, _VERSION, pause_key(entry_id))
        self.since: str | None = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def paused(self) -> bool:
        return self._engine.paused

    @property
    def not_run(self) -> int:
        """Triggers counted and not run since the pause began (this process's)."""
        return self._engine.not_run

    async def async_load(self) -> None:
        """Before the engine starts: a pause that was on stays on."""
        data = await self._store.async_load() or {}
        if data.get("paused"):
            self.since = str(data.get("since") or "") or None
            self._engine.pause()
            _LOGGER.warning("Every workflow is paused (since %s)", self.since or "a restart")

    async def async_set(self, paused: bool, context: Context | None) -> None:
        """Pause or resume every workflow; stored first, then done, then logged."""
        if paused == self.paused:
            return
        since = dt_util.utcnow().isoformat() if paused else None
        await self._store.async_save({"paused": paused, "since": since})
        self.since = since
        if paused:
            self._engine.pause()
        else:
            self._engine.resume()
        self._hass.bus.async_fire(
            "logbook_entry",
            {
                "name": self._texts("site_pause_name", {}),
                "message": self._texts("site_paused" if paused else "site_resumed", {}),
                "domain": DOMAIN,
            },
            context=context,
        )
        self.changed()

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` when the pause changes or a trigger is counted."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def changed(self) -> None:
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:
                _LOGGER.exception("Pause listener failed")
