"""The Workflows panel: the sidebar page, its dashboard card and the websocket commands
they read and change workflows through.

:mod:`.api` holds the commands (each with a schema and a permission check), :mod:`.listing`
and :mod:`.run_detail` the shapes they answer with, :mod:`.evidence` the signed picture
of a run (:mod:`.thumbnail` its small copy for the Media panel), :mod:`.live` the
subscription that keeps the panel current and :mod:`.register` the panel, the card and
the static path that serves their bundles.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant

from .api import async_register_websocket
from .evidence import async_register_evidence_view
from .register import async_register_panel
from .thumbnail import async_register_thumbnail_view


async def async_setup_panel(hass: HomeAssistant) -> None:
    """Everything the panel needs, once for the domain (from ``async_setup``)."""
    async_register_websocket(hass)
    async_register_evidence_view(hass)
    async_register_thumbnail_view(hass)
    await async_register_panel(hass)


__all__ = ["async_setup_panel"]
