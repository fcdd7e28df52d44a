"""What the AI Task, model device and media browser tests share: the entry with AI on the
Ollama fake, the entities' ids, a user who may see only the driveway, and a task call."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from homeassistant.auth.models import User
from homeassistant.const import Platform
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.opennvr_workflows.ai import executor
from custom_components.opennvr_workflows.const import DOMAIN
from custom_components.opennvr_workflows.devices import MODEL_DEVICE
from custom_components.opennvr_workflows.host.ids import camera_unique_id
from custom_components.opennvr_workflows.host.workflows import WorkflowHost

from .test_services import set_up as set_up_with_files

SITE_ID = "0755a940-1ff5-4861-ac08-1f57bb29a180"


@pytest.fixture
def no_frame_wait(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Several frames are taken a second apart; here at once (the same code otherwise)."""
    original = executor.gather_pictures

    async def at_once(ctx: Any, camera: Any, count: int, **kwargs: Any) -> Any:
        return await original(
            dataclasses.replace(ctx, frame_interval_s=0.0), camera, count, **kwargs
        )

    monkeypatch.setattr(executor, "gather_pictures", at_once)
    return


async def set_up(hass: HomeAssistant, entry: MockConfigEntry, **files: str) -> WorkflowHost:
    """The entry set up with exactly these workflow files (no templates), in a Home
    Assistant running its core integration (the AI Task's ``conversation`` needs it)."""
    assert await async_setup_component(hass, "homeassistant", {})
    return await set_up_with_files(hass, entry, **files)


def model_entity(hass: HomeAssistant, platform: str, key: str) -> str:
    """The entity id of one of the vision model device's entities."""
    entity_id = er.async_get(hass).async_get_entity_id(
        platform, DOMAIN, f"{SITE_ID}_{MODEL_DEVICE}_{key}"
    )
    assert entity_id is not None, (platform, key)
    return entity_id


def camera_entity(hass: HomeAssistant, camera_id: int) -> str:
    entity_id = er.async_get(hass).async_get_entity_id(
        Platform.CAMERA, DOMAIN, camera_unique_id(SITE_ID, camera_id)
    )
    assert entity_id is not None
    return entity_id


def driveway_only(hass: HomeAssistant) -> MockUser:
    """A user whose entity permissions let them read the driveway camera only."""
    user = MockUser(name="Driveway only").add_to_hass(hass)
    user.mock_policy({"entities": {"entity_ids": {camera_entity(hass, 2): True}}})
    return user


def camera_attachment(entity_id: str) -> dict[str, str]:
    return {"media_content_id": f"media-source://camera/{entity_id}", "media_content_type": ""}


async def generate(
    hass: HomeAssistant,
    *,
    instructions: str = "Is there a parcel on the doorstep?",
    structure: dict[str, Any] | None = None,
    cameras: list[str] | None = None,
    user: User | None = None,
) -> Any:
    """``ai_task.generate_data`` on the site's AI Task entity, as ``user``; its data."""
    data: dict[str, Any] = {
        "task_name": "door check",
        "entity_id": model_entity(hass, "ai_task", "ai_task"),
        "instructions": instructions,
    }
    if structure is not None:
        data["structure"] = structure
    if cameras:
        data["attachments"] = [camera_attachment(c) for c in cameras]
    response = await hass.services.async_call(
        "ai_task",
        "generate_data",
        data,
        blocking=True,
        return_response=True,
        context=Context(user_id=user.id if user is not None else None),
    )
    assert response is not None
    return response["data"]
