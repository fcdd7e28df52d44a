"""The engine's update feed: what a host subscribes to in order to refresh its views.

A listener that raises is logged and skipped, so one broken view (a sensor, a
panel) can never stop a run or the other listeners.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from .records import EngineUpdate

_LOGGER = logging.getLogger(__name__)


class Updates:
    """Listeners of :class:`EngineUpdate` and the one place that calls them."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[EngineUpdate], None]] = []

    def subscribe(self, listener: Callable[[EngineUpdate], None]) -> Callable[[], None]:
        """Call ``listener`` on every :class:`EngineUpdate`; returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def emit(self, update: EngineUpdate) -> None:
        for listener in self._listeners:
            try:
                listener(update)
            except Exception:
                _LOGGER.exception("engine listener failed")
