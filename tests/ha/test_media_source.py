"""The evidence pictures in Home Assistant's Media panel, in a real Home Assistant: listed
by workflow and day, opened through a signed link, and only to people who may see the
camera (and the workflow); a hidden picture answers like one that does not exist."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import pytest
from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import (
    ClientSessionGenerator,
    WebSocketGenerator,
)

from custom_components.opennvr_workflows.const import CONF_CAMERA_ROLES, DOMAIN
from tests.fakes.ollama_server import FakeOllama, FromSchema

from .ai_task_support import camera_entity, driveway_only, generate, set_up
from .approval_support import access_token
from .conftest import ai_options
from .test_model_device import PORCH_LOOK

ROOT = f"media-source://{DOMAIN}"


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return {**ai_options(ollama), CONF_CAMERA_ROLES: {"front_door": "1", "driveway": "2"}}


class Viewer:
    """The Media panel's websocket calls, as one user."""

    def __init__(self, socket: Any) -> None:
        self._socket = socket
        self._id = 0

    async def call(self, type_: str, media_content_id: str) -> dict[str, Any]:
        self._id += 1
        await self._socket.send_json(
            {"id": self._id, "type": type_, "media_content_id": media_content_id}
        )
        answer: dict[str, Any] = await self._socket.receive_json()
        return answer

    async def browse(self, media_content_id: str = ROOT) -> dict[str, Any]:
        answer = await self.call("media_source/browse_media", media_content_id)
        assert answer["success"], answer
        result: dict[str, Any] = answer["result"]
        return result

    async def titles(self, media_content_id: str = ROOT) -> list[str]:
        return [child["title"] for child in (await self.browse(media_content_id))["children"]]

    async def pictures(self) -> dict[str, list[dict[str, Any]]]:
        """Every picture shown, by workflow folder title."""
        out: dict[str, list[dict[str, Any]]] = {}
        for folder in (await self.browse())["children"]:
            for day in (await self.browse(folder["media_content_id"]))["children"]:
                shown = (await self.browse(day["media_content_id"]))["children"]
                out.setdefault(folder["title"], []).extend(shown)
        return out


@pytest.fixture
async def viewer(hass: HomeAssistant, hass_ws_client: WebSocketGenerator) -> Any:
    async def as_user(user: User) -> Viewer:
        return Viewer(await hass_ws_client(hass, access_token=await access_token(hass, user)))

    return as_user


async def test_pictures_are_listed_by_workflow_and_day_to_those_who_may_see_them(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    ollama: FakeOllama,
    hass_admin_user: User,
    hass_read_only_user: User,
    hass_client_no_auth: ClientSessionGenerator,
    viewer: Any,
) -> None:
    host = await set_up(hass, config_entry, porch_look=PORCH_LOOK)
    ollama.default = FromSchema({"decision": "visitor", "reason": "a courier", "confidence": 0.9})
    host.engine.run_now("porch_look")
    await host.engine.idle()
    ollama.default = FromSchema({"decision": "answered", "reason": "a car", "confidence": 0.9})
    front = await generate(
        hass, instructions="Who?", structure=None, cameras=[camera_entity(hass, 1)]
    )
    assert front == "a car"
    await generate(hass, instructions="What car?", cameras=[camera_entity(hass, 2)])
    await hass.async_block_till_done()
    today = dt_util.now().date().isoformat()

    admin = await viewer(hass_admin_user)
    assert await admin.titles() == ["AI Task", "Porch look"]
    first = (await admin.browse())["children"][0]
    assert await admin.titles(first["media_content_id"]) == [today]
    shown = await admin.pictures()
    assert len(shown["AI Task"]) == 2
    assert [p["title"].split(" ", 1)[1] for p in shown["AI Task"]] == ["Driveway", "Front Door"]
    assert len(shown["Porch look"]) == 1
    picture = shown["Porch look"][0]
    assert picture["media_class"] == "image"
    assert picture["can_play"] is True
    assert picture["thumbnail"].startswith(f"/api/{DOMAIN}/thumbnail/")

    # Opening it: a link signed for a few minutes, that serves the frame without a login.
    opened = await admin.call("media_source/resolve_media", picture["media_content_id"])
    assert opened["success"], opened
    client = await hass_client_no_auth()
    response = await client.get(opened["result"]["url"])
    assert response.status == HTTPStatus.OK
    assert (await response.read())[:2] == b"\xff\xd8"

    everyone = await viewer(hass_read_only_user)
    assert {k: len(v) for k, v in (await everyone.pictures()).items()} == {
        "AI Task": 2,
        "Porch look": 1,
    }

    # The driveway only: the driveway's picture; the porch workflow (front door) is hidden.
    some_user = driveway_only(hass)
    some = await viewer(some_user)
    shown = await some.pictures()
    assert list(shown) == ["AI Task"]
    assert [p["title"].split(" ", 1)[1] for p in shown["AI Task"]] == ["Driveway"]
    hidden = await some.call("media_source/resolve_media", picture["media_content_id"])
    assert not hidden["success"]
    # The grid's thumbnails load with the viewer's own login, and follow the same decision.
    client = await hass_client_no_auth()

    async def thumbnail(user: User, path: str) -> int:
        token = await access_token(hass, user)
        got = await client.get(path, headers={"Authorization": f"Bearer {token}"})
        return got.status

    assert await thumbnail(hass_admin_user, picture["thumbnail"]) == HTTPStatus.OK
    assert await thumbnail(some_user, picture["thumbnail"]) == HTTPStatus.NOT_FOUND
    (driveway,) = shown["AI Task"]
    assert await thumbnail(some_user, driveway["thumbnail"]) == HTTPStatus.OK
    assert (await client.get(driveway["thumbnail"])).status == HTTPStatus.UNAUTHORIZED
    porch = f"{ROOT}/{config_entry.entry_id}/porch_look"
    refused = await some.call("media_source/browse_media", porch)
    assert not refused["success"]
    missing = await admin.call("media_source/browse_media", f"{ROOT}/{config_entry.entry_id}/nope")
    assert refused["error"]["code"] == missing["error"]["code"], "hidden reads as missing"
