"""The Workflows panel and the questions card as Home Assistant serves them: the sidebar
entry, the bundles from the integration's static path, the card loaded on dashboards, and
a translation for every text the panel's sources ask for."""

from __future__ import annotations

import re
from http import HTTPStatus
from pathlib import Path

from homeassistant.components.frontend import DATA_EXTRA_MODULE_URL
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.opennvr_workflows.panel.register import (
    CARD_BUNDLE,
    PANEL_BUNDLE,
    PANEL_ELEMENT,
    PANEL_PATH,
    STATIC_URL,
)
from custom_components.opennvr_workflows.panel.todos import KINDS as TODO_KINDS

from .test_strings_rules import strings

SOURCES = Path(__file__).parents[2] / "frontend" / "src"
#: The limits the engine names when it holds a workflow's events back (engine/admission.py).
HELD_LIMITS = ("one_at_a_time", "cooldown", "per_hour", "chain_depth")


async def test_the_panel_and_the_card_are_served(
    hass: HomeAssistant,
    setup_entry: MockConfigEntry,
    hass_client: ClientSessionGenerator,
) -> None:
    panel = hass.data["frontend_panels"][PANEL_PATH]
    assert panel.sidebar_title == "Workflows"
    assert panel.sidebar_icon.startswith("mdi:")
    assert panel.require_admin is False
    custom = panel.config["_panel_custom"]
    assert custom["name"] == PANEL_ELEMENT
    module = custom["module_url"]
    assert module.startswith(f"{STATIC_URL}/{PANEL_BUNDLE}?v=")
    (card,) = [u for u in hass.data[DATA_EXTRA_MODULE_URL].urls if CARD_BUNDLE in u]
    client = await hass_client()
    for url, element in ((module, PANEL_ELEMENT), (card, "opennvr-approvals-card")):
        served = await client.get(url)
        assert served.status == HTTPStatus.OK, url
        assert f'"{element}"' in await served.text()


def test_every_text_the_panel_asks_for_is_translated() -> None:
    asked: set[str] = set()
    for source in SOURCES.glob("*.ts"):
        text = source.read_text(encoding="utf-8")
        asked |= set(re.findall(r'\bt\("([a-z_]+)"\)', text))
        asked |= {f"state_{s}" for s in ("off", "test", "on")} if "state_${s}" in text else set()
        asked |= set(re.findall(r'"(marked_(?:right|wrong))"', text))
        # A key chosen between two: t(cond ? "one" : "other").
        for call in re.findall(r"\bt\(([^()]*\?[^()]*)\)", text):
            asked |= set(re.findall(r'[?:]\s*"([a-z_]+)"', call))
    # Each to-do kind the list sends is worded by the panel as t(`todo_${kind}`).
    asked |= {f"todo_{kind}" for kind in TODO_KINDS}
    # And each limit that holds events back as t(`held_${limit}`).
    asked |= {f"held_{limit}" for limit in HELD_LIMITS}
    assert len(asked) > 40
    exceptions = strings()["exceptions"]
    missing = sorted(k for k in asked if f"panel_{k}" not in exceptions)
    assert missing == []
