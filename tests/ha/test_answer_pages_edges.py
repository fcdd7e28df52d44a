"""The pages behind signed links, for what no question matches: a signed link with a token
no desk made, a button whose proof holds for a token no desk knows, a picture of another
site or with a name that is not one of ours, a picture already gone. Each is refused or
not found, in the same small page, and nothing is answered."""

from __future__ import annotations

from homeassistant.core import HomeAssistant

from custom_components.opennvr_workflows.const import DOMAIN
from custom_components.opennvr_workflows.host.approvals import links
from custom_components.opennvr_workflows.host.approvals.views import desk_text
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .approval_support import Home

pytest_plugins = ["tests.ha.phones", "tests.ha.approval_support"]


async def test_a_token_no_desk_made(hass: HomeAssistant, home: Home, sim: OpenNVRSimulator) -> None:
    await home.alert(sim)
    unknown = "made-up-token"
    page = await home.client.get(links.answer_link(hass, unknown, 600))
    assert page.status == 404
    assert desk_text(hass, "approval_link_unknown") in await page.text()

    button = links.button(hass, unknown, 600, "Open")
    confirm = await home.client.post(button["action"], data=button["fields"])
    assert confirm.status == 404
    assert home.desk.pending(), "nothing was answered"


async def test_pictures_that_are_not_there(
    hass: HomeAssistant, home: Home, sim: OpenNVRSimulator
) -> None:
    await home.alert(sim)
    entry_id = home.entry.entry_id
    for entry, name in (
        ("another-site", "question.jpg"),
        (entry_id, "Not-Ours.JPG"),
        (entry_id, ".hidden.jpg"),
        (entry_id, "gone.jpg"),
    ):
        response = await home.client.get(links.picture_link(hass, entry, name, 600))
        assert response.status == 404, (entry, name)
    unsigned = f"/api/{DOMAIN}/picture/{entry_id}/gone.jpg"
    assert (await home.client.get(unsigned)).status == 401
