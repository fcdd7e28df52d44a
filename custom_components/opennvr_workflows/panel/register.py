"""The sidebar panel, the dashboard card and the static path serving their bundles.

The bundles are built from ``frontend/`` at the repository's root and shipped in the
integration's ``frontend`` folder, so an install from HACS needs no build. Their URLs
carry a hash of the file, so a browser never keeps an old bundle after an update.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

from homeassistant.components import frontend, panel_custom
from homeassistant.components.http import StaticPathConfig
from homeassistant.core import HomeAssistant

from ..const import DOMAIN
from ..host.pages import PANEL_PATH
from ..host.texts import Texts

FRONTEND_DIR: Final = Path(__file__).parent.parent / "frontend"
STATIC_URL: Final = f"/{DOMAIN}_frontend"
PANEL_BUNDLE: Final = "opennvr-workflows-panel.js"
CARD_BUNDLE: Final = "opennvr-workflows-card.js"
PANEL_ELEMENT: Final = "opennvr-workflows-panel"
PANEL_ICON: Final = "mdi:state-machine"


async def async_register_panel(hass: HomeAssistant) -> None:
    """Serve the bundles, add the Workflows panel to the sidebar (every user sees it;
    the commands refuse changes from non-admins) and load the card on dashboards."""
    await hass.http.async_register_static_paths(
        [StaticPathConfig(STATIC_URL, str(FRONTEND_DIR), cache_headers=False)]
    )
    versions = await hass.async_add_executor_job(_hashes, (PANEL_BUNDLE, CARD_BUNDLE))
    texts = Texts(hass)
    await texts.async_load()
    await panel_custom.async_register_panel(
        hass,
        frontend_url_path=PANEL_PATH,
        webcomponent_name=PANEL_ELEMENT,
        sidebar_title=texts("panel_title", {}),
        sidebar_icon=PANEL_ICON,
        module_url=f"{STATIC_URL}/{PANEL_BUNDLE}?v={versions[PANEL_BUNDLE]}",
        require_admin=False,
        config={"domain": DOMAIN},
    )
    frontend.add_extra_js_url(hass, f"{STATIC_URL}/{CARD_BUNDLE}?v={versions[CARD_BUNDLE]}")


def _hashes(names: tuple[str, ...]) -> dict[str, str]:
    """A short content hash per bundle ("missing" when a bundle is not there: the panel
    then fails to load in the browser, which says so, rather than setup failing)."""
    out = {}
    for name in names:
        try:
            out[name] = hashlib.sha256((FRONTEND_DIR / name).read_bytes()).hexdigest()[:12]
        except OSError:
            out[name] = "missing"
    return out
