"""The site's AI Task entity and its evidence in Chromium, as a homeowner meets them: the
entity is offered in the action form of Home Assistant's tools for ``ai_task.generate_data``
and answers it there with a typed decision about a camera, and the picture that Look saw
is in the Media panel under *OpenNVR Workflows* > *AI Task* > today.

Self-sufficient: the site is added here when test_01 did not run first in the session.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from typing import Any, Final

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.frontend import Screenshots, assert_translated, call_ws, visible_text
from tests.browser.services import Stack
from tests.browser.test_01_add_integration import DOMAIN
from tests.browser.test_read_only_user import add_the_site, wait_for

#: What the task asks, and the structure it asks it with.
INSTRUCTIONS: Final = "Is there a parcel on the doorstep?"
TASK_YAML: Final = """action: ai_task.generate_data
data:
  task_name: parcel check
  entity_id: {entity}
  instructions: {instructions}
  attachments:
    - media_content_id: media-source://camera/{camera}
      media_content_type: image/jpeg
  structure:
    decision:
      required: true
      selector:
        select:
          options: [parcel, no_parcel]
"""


def registry(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = call_ws(page, {"type": "config/entity_registry/list"})
    return found


@pytest.fixture(scope="module")
def owner(logged_in: BrowserContext, stack: Stack) -> Iterator[Page]:
    """A tab of the owner's browser, with the site added."""
    add_the_site(stack)
    tab = logged_in.new_page()
    tab.goto(f"{stack.ha.url}/config/integrations/integration/{DOMAIN}")
    expect(tab.locator("home-assistant-main")).to_be_attached()
    yield tab
    tab.close()


@pytest.fixture(scope="module")
def entities(owner: Page) -> dict[str, str]:
    """The AI Task entity and the front door camera, as the registry names them."""

    def probe() -> dict[str, str] | None:
        rows = [r for r in registry(owner) if r["platform"] == DOMAIN]
        task = next((r for r in rows if str(r["entity_id"]).startswith("ai_task.")), None)
        camera = next((r for r in rows if str(r["unique_id"]).endswith("_1_camera")), None)
        if task is None or camera is None:
            return None
        return {"task": str(task["entity_id"]), "camera": str(camera["entity_id"])}

    return wait_for("the AI Task entity and the front door camera", probe)


def test_the_action_form_offers_the_ai_task_and_it_answers_with_a_decision(
    owner: Page, stack: Stack, entities: dict[str, str], shot: Screenshots
) -> None:
    page = owner
    page.goto(f"{stack.ha.url}/config/tools/action?service=ai_task.generate_data")
    expect(page.get_by_text("ai_task.generate_data").first).to_be_visible()
    # UI mode: the form's entity picker offers the site's AI Task entity.
    row = page.locator("ha-settings-row").filter(has_text="Entity ID").first
    row.locator("ha-checkbox").first.click()  # an optional field is taken in by its box
    row.get_by_text("Select an entity").first.click()
    offered = (
        page.locator("ha-combo-box-item")
        .filter(has_text="OpenNVR Demo vision model")
        .filter(has_text="Look")
    )
    expect(offered.first).to_be_visible()
    shot(page, "entity-offered")
    assert_translated(page, "the action form")
    page.keyboard.press("Escape")
    page.get_by_role("button", name="YAML mode").click()
    editor = page.locator(".cm-content").first
    expect(editor).to_be_visible()
    editor.fill(
        TASK_YAML.format(
            entity=entities["task"], camera=entities["camera"], instructions=INSTRUCTIONS
        )
    )
    shot(page, "yaml")
    page.get_by_role("button", name="Perform action").click()
    expect(page.get_by_text("decision: parcel").first).to_be_visible(timeout=60_000)
    shot(page, "answered")
    answer = visible_text(page).split("Response", 1)[1]
    assert "decision\n:\nparcel" in answer, answer
    assert "run_id" in answer, answer
    assert_translated(page, "the action's response")


def test_the_media_panel_shows_what_the_ai_task_looked_at(
    owner: Page, stack: Stack, entities: dict[str, str], shot: Screenshots
) -> None:
    page = owner
    # A task of its own, so this test needs no other (the same call as the action form's).
    answered = stack.ha.request(
        "POST",
        "/api/services/ai_task/generate_data?return_response",
        {
            "task_name": "what is there",
            "entity_id": entities["task"],
            "instructions": "What is at the front door?",
            "attachments": [
                {
                    "media_content_id": f"media-source://camera/{entities['camera']}",
                    "media_content_type": "image/jpeg",
                }
            ],
        },
    )
    assert isinstance(answered["service_response"]["data"], str), answered
    page.goto(f"{stack.ha.url}/media-browser/browser")

    def open_folder(title: str) -> None:
        page.get_by_text(title, exact=True).filter(visible=True).first.click()

    open_folder("OpenNVR Workflows")
    open_folder("AI Task")
    open_folder(date.today().isoformat())
    picture = page.get_by_text(re.compile(r"\d\d:\d\d:\d\d Front Door"))
    expect(picture.filter(visible=True).first).to_be_visible()
    # Each picture's thumbnail loaded (the grid fetches it with the owner's login).
    expect(page.locator("div.image[style*='data:image/jpeg']").first).to_be_attached()
    shot(page, "ai-task-pictures")
    assert_translated(page, "the Media panel")
    # Opening one shows the frame the Look saw.
    picture.filter(visible=True).first.click()
    frame = page.locator("img[src*='/api/opennvr_workflows/evidence/']").filter(visible=True)
    expect(frame.first).to_be_visible()
    shot(page, "ai-task-picture-open")
