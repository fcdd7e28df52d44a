"""Brand images: Home Assistant serves the integration's own ``brand/`` folder, and the
images keep to the brands repository's sizes."""

from __future__ import annotations

from io import BytesIO
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from PIL import Image
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.opennvr_workflows.const import DOMAIN

BRAND = Path(__file__).resolve().parents[2] / "custom_components" / DOMAIN / "brand"


@pytest.mark.parametrize(("name", "size"), [("icon.png", (256, 256)), ("icon@2x.png", (512, 512))])
async def test_home_assistant_serves_the_icon_from_the_integration(
    hass: HomeAssistant, hass_client: ClientSessionGenerator, name: str, size: tuple[int, int]
) -> None:
    """What the "name and assign" dialog and the integrations page ask for."""
    assert await async_setup_component(hass, "brands", {})
    client = await hass_client()
    response = await client.get(f"/api/brands/integration/{DOMAIN}/{name}")
    assert response.status == 200
    assert response.content_type == "image/png"
    body = await response.read()
    assert body == (BRAND / name).read_bytes()  # ours, not a placeholder from the CDN
    assert Image.open(BytesIO(body)).size == size


async def test_dark_icon_falls_back_to_ours(
    hass: HomeAssistant, hass_client: ClientSessionGenerator
) -> None:
    assert await async_setup_component(hass, "brands", {})
    client = await hass_client()
    response = await client.get(f"/api/brands/integration/{DOMAIN}/dark_icon.png")
    assert response.status == 200
    assert await response.read() == (BRAND / "icon.png").read_bytes()


def test_images_keep_the_brand_rules() -> None:
    """Icons square at 256 (512 for @2x); logos landscape with their shortest side 128 to
    256 (256 to 512 for @2x); all transparent PNGs with a drawing in them."""
    names = sorted(p.name for p in BRAND.iterdir())
    assert {"icon.png", "icon@2x.png", "logo.png", "logo@2x.png"} <= set(names)
    for name in names:
        image = Image.open(BRAND / name)
        assert image.format == "PNG", name
        assert image.mode == "RGBA", name
        hdpi = "@2x" in name
        if "icon" in name:
            assert image.size == ((512, 512) if hdpi else (256, 256)), name
        else:
            low, high = (256, 512) if hdpi else (128, 256)
            assert low <= min(image.size) <= high, name
            assert image.width > image.height, name
        alpha = image.getchannel("A")
        assert alpha.getextrema() == (0, 255), name  # transparent corners, opaque drawing
        assert alpha.getbbox() == (0, 0, *image.size), name  # trimmed to the drawing
