"""Real legacy notify platforms in a test's Home Assistant, under chosen integration names.

Home Assistant's notify component sets them up the way it sets up any platform (a mocked
integration whose ``notify`` platform returns a ``BaseNotificationService``), so the services
it registers are found in the notify registry as they would be at a real site: the
companion app's per-device services, an announcement speaker's, a Pushover account's.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.notify import BaseNotificationService
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockModule,
    MockPlatform,
    mock_integration,
    mock_platform,
)


class RecordingService(BaseNotificationService):
    """A notify service that keeps what it was asked to send."""

    def __init__(self, targets: dict[str, str] | None) -> None:
        self.sent: list[dict[str, Any]] = []
        self._targets = targets

    @property
    def targets(self) -> dict[str, str] | None:
        return self._targets

    async def async_send_message(self, message: str = "", **kwargs: Any) -> None:
        self.sent.append({"message": message, **kwargs})


async def add_notify_platforms(
    hass: HomeAssistant, platforms: dict[str, dict[str, str] | None]
) -> dict[str, RecordingService]:
    """Set up one notify platform per integration name; ``{name: {target: id}}`` gives a
    platform per-target services (``notify.<name>_<target>``), None a single
    ``notify.<name>`` service."""
    services: dict[str, RecordingService] = {}
    config: list[dict[str, Any]] = []
    for integration, targets in platforms.items():
        service = RecordingService(targets)
        services[integration] = service
        mock_integration(hass, MockModule(integration))

        async def get_service(
            hass: HomeAssistant, config: Any, discovery_info: Any = None, _s: Any = service
        ) -> RecordingService:
            return _s

        platform = MockPlatform()
        platform.async_get_service = get_service  # type: ignore[attr-defined]
        mock_platform(hass, f"{integration}.notify", platform)
        config.append({"platform": integration, "name": integration})
    assert await async_setup_component(hass, "notify", {"notify": config})
    await hass.async_block_till_done()
    return services
