"""The Media panel's addresses that lead nowhere: too deep, another site, a workflow with no
picture, a day with none, a picture browsed as a folder. Each is "unknown" (a hidden item
answers the same), and Home Assistant itself (an automation) browses as an admin would."""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant.components import media_source
from homeassistant.components.media_player import BrowseError
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import CONF_CAMERA_ROLES, DOMAIN
from tests.fakes.ollama_server import FakeOllama, FromSchema

from .ai_task_support import set_up
from .conftest import ai_options
from .test_model_device import PORCH_LOOK

ROOT = f"media-source://{DOMAIN}"


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return {**ai_options(ollama), CONF_CAMERA_ROLES: {"front_door": "1", "driveway": "2"}}


async def test_addresses_that_lead_nowhere_are_unknown(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    host = await set_up(hass, config_entry, porch_look=PORCH_LOOK)
    ollama.default = FromSchema({"decision": "visitor", "reason": "a courier", "confidence": 0.9})
    host.engine.run_now("porch_look")
    await host.engine.idle()
    await hass.async_block_till_done()

    # Home Assistant itself browses: one site, so its workflows at the top.
    top = await media_source.async_browse_media(hass, ROOT)
    assert [child.title for child in top.children or []] == ["Porch look"]
    entry = config_entry.entry_id
    site = await media_source.async_browse_media(hass, f"{ROOT}/{entry}")
    assert [child.title for child in site.children or []] == ["Porch look"]

    for nowhere in (
        f"{ROOT}/{entry}/porch_look/2020-01-01/run/extra",
        f"{ROOT}/another-site",
        f"{ROOT}/{entry}/no_such_workflow",
        f"{ROOT}/{entry}/porch_look/2020-01-01",
        f"{ROOT}/{entry}/porch_look/2020-01-01/some-run",
    ):
        with pytest.raises(BrowseError) as caught:
            await media_source.async_browse_media(hass, nowhere)
        assert caught.value.translation_key == "media_unknown", nowhere
