"""Every options page of the added site, as its owner opens them: Settings > Devices &
services > OpenNVR Workflows > Configure. Forms keep what was typed when they refuse it, and
say on the right field what is wrong."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.frontend import (
    Screenshots,
    assert_translated,
    choices,
    field_error,
    open_options,
    submit,
    visible_text,
)
from tests.browser.services import Stack
from tests.browser.test_01_add_integration import DOMAIN, close

MENU = {
    "camera_roles": "Camera roles",
    "approvers": "Approvers",
    "site_rules": "Site rules",
    "tool_policy": "AI tool policy",
    "limits": "Default limits",
    "transport": "Event transport",
    "ollama": "Local AI (Ollama)",
    "destinations": "Webhooks and models",
}


@pytest.fixture
def site(stack: Stack) -> Stack:
    """The site added by test_01 (which must have run: options need a loaded entry)."""
    entries = stack.ha.entries(DOMAIN)
    assert entries, "no OpenNVR Workflows entry: test_01_add_integration adds it"
    return stack


def open_page(page: Page, stack: Stack, item: str) -> Locator:
    dialog = open_options(page, stack.ha.url, DOMAIN)
    expect(dialog.get_by_text(MENU[item], exact=True)).to_be_visible()
    dialog.get_by_text(MENU[item], exact=True).click()
    return dialog


def textbox(dialog: Locator, name: str) -> Locator:
    return dialog.get_by_role("textbox", name=re.compile(re.escape(name)))


def saved(dialog: Locator) -> None:
    """Submit; the options are saved (the dialog says so) and the dialog is finished."""
    submit(dialog)
    expect(dialog.get_by_text("Options successfully saved", exact=False)).to_be_visible()
    dialog.get_by_role("button", name="Finish").click()
    expect(dialog).to_be_hidden()


def test_menu_lists_every_page(page: Page, site: Stack, shot: Screenshots) -> None:
    dialog = open_options(page, site.ha.url, DOMAIN)
    expect(dialog.get_by_text(MENU["camera_roles"], exact=True)).to_be_visible()
    text = assert_translated(dialog, "the options menu")
    shot(page, "menu")
    for label in MENU.values():
        assert label in text, f"the menu lacks {label!r}"


def test_camera_roles_error_on_its_own_field_and_input_kept(
    page: Page, site: Stack, shot: Screenshots
) -> None:
    dialog = open_page(page, site, "camera_roles")
    door, drive, garden = (textbox(dialog, n) for n in ("Front Door", "Driveway", "Back Garden"))
    expect(drive).to_be_visible()
    assert_translated(dialog, "the camera roles page")
    shot(page, "camera-roles")
    door.fill("door")
    drive.fill("Drive Way!")
    garden.fill("garden")
    submit(dialog)
    expect(dialog.locator("ha-alert[alert-type='error']").first).to_be_visible()
    assert_translated(dialog, "the camera roles page with an error")
    shot(page, "camera-roles-error")
    assert field_error(drive), "the invalid role is reported on the Driveway field"
    assert field_error(door) is None, "no error on Front Door, whose role is fine"
    assert field_error(garden) is None, "no error on Back Garden, whose role is fine"
    typed = [box.input_value() for box in (door, drive, garden)]
    assert typed == ["door", "Drive Way!", "garden"], f"typed values kept: {typed}"
    drive.fill("driveway")
    saved(dialog)


def test_approvers_keep_input_and_offer_only_real_phones(
    page: Page, site: Stack, shot: Screenshots
) -> None:
    dialog = open_page(page, site, "approvers")
    expect(dialog.get_by_text("People who answer any role", exact=False)).to_be_visible()
    text = assert_translated(dialog, "the approvers page")
    shot(page, "approvers")
    # No companion app is set up here: the page says how to add a phone.
    assert "companion app" in text, text
    # The owner is the only person here, so the only checkbox (it has no accessible name).
    person = dialog.get_by_role("checkbox")
    expect(person).to_have_count(1)
    dialog.get_by_text("Dana Owner", exact=True).click()
    expect(person).to_be_checked()
    roles = textbox(dialog, "People per role")
    roles.fill("guard: Nobody Here")
    submit(dialog)
    expect(dialog.locator("ha-alert[alert-type='error']").first).to_be_visible()
    errors = visible_text(dialog.locator("ha-alert[alert-type='error']").first)
    shot(page, "approvers-error")
    assert "Nobody Here" in errors, errors
    expect(person).to_be_checked()
    assert roles.input_value() == "guard: Nobody Here", "the typed roles are kept"
    # Only existing mobile_app notify targets may be picked: there are none here.
    phones = dialog.get_by_text(re.compile(r"^Phones for alerts"))
    if phones.count():
        offered = choices(dialog, "Phones for alerts")
        assert all(o.startswith("notify.mobile_app_") for o in offered), offered
    roles.fill("guard: Dana Owner")
    saved(dialog)


def test_site_list_error_names_the_real_reason(page: Page, site: Stack, shot: Screenshots) -> None:
    dialog = open_page(page, site, "site_rules")
    lists = textbox(dialog, "Lists")
    expect(lists).to_be_visible()
    assert_translated(dialog, "the site rules page")
    shot(page, "site-rules")
    lists.fill("family cars: a, b")
    submit(dialog)
    alert = dialog.locator("ha-alert[alert-type='error']").first
    expect(alert).to_be_visible()
    message = visible_text(alert)
    shot(page, "site-rules-error")
    assert "space" in message.lower(), f"the error should name the space in the name: {message}"
    assert "write it as" not in message, message
    assert lists.input_value() == "family cars: a, b"
    lists.fill("family_cars: a, b")
    saved(dialog)


def test_tool_policy_names_each_tool(page: Page, site: Stack, shot: Screenshots) -> None:
    dialog = open_page(page, site, "tool_policy")
    expect(dialog.get_by_text(re.compile(r"^Recent plates")).first).to_be_attached()
    text = assert_translated(dialog, "the tool policy page")
    shot(page, "tool-policy")
    for raw in ("ask_person", "recent_plates", "describe_camera", "site_lookup"):
        assert not re.search(rf"(^|\n){raw}\*?($|\n)", text), f"raw tool key {raw} as a label"
    assert "Ask a person" in text
    assert "personal data" in text, "each tool has a description"
    saved(dialog)


@pytest.mark.parametrize("item", ["limits", "destinations", "transport"])
def test_plain_pages_render(page: Page, site: Stack, shot: Screenshots, item: str) -> None:
    dialog = open_page(page, site, item)
    expect(dialog.get_by_role("button", name="Submit")).to_be_visible()
    assert_translated(dialog, f"the {item} page")
    shot(page, item)
    close(page, dialog, options=True)


def test_models_page_offers_only_vision_models(page: Page, site: Stack, shot: Screenshots) -> None:
    dialog = open_page(page, site, "ollama")
    url = textbox(dialog, "Ollama URL")
    expect(url).to_be_visible()
    assert_translated(dialog, "the options' Ollama page")
    shot(page, "ollama")
    url.fill(site.ollama.url)
    submit(dialog)
    expect(dialog.get_by_text("Models", exact=True)).to_be_visible()
    text = assert_translated(dialog, "the options' models page")
    assert "qwen2.5vl:3b" in text
    offered = choices(dialog, "Vision model")
    shot(page, "vision-model-chosen")
    assert offered == ["qwen2.5vl:3b"], f"only vision models are offered, got {offered}"
    close(page, dialog, options=True)
