"""Adding "OpenNVR Workflows" as a homeowner does: Settings > Devices & services > Add
integration, every step of the config flow, its mistakes and what the forms say about them.

The last test adds the site for real (events websocket, AI on the Ollama fake); the options,
devices and entities tests run on that entry.
"""

from __future__ import annotations

import re

from playwright.sync_api import Locator, Page, expect

from tests.browser.frontend import (
    Screenshots,
    assert_translated,
    choices,
    field,
    start_adding,
    submit,
    toggle,
    visible_text,
)
from tests.browser.services import Stack

DOMAIN = "opennvr_workflows"
NAME = "OpenNVR Workflows"


def open_user_step(page: Page, stack: Stack) -> Locator:
    dialog = start_adding(page, stack.ha.url, "OpenNVR", NAME)
    # The description arrives with the translations: wait for it before reading the page.
    expect(dialog.get_by_text("Connect to your OpenNVR server", exact=False)).to_be_visible()
    return dialog


def connect(dialog: Locator, url: str, token: str) -> None:
    field(dialog, "OpenNVR URL").fill(url)
    field(dialog, "API token").fill(token)
    submit(dialog)


def to_transport_step(page: Page, stack: Stack) -> Locator:
    dialog = open_user_step(page, stack)
    connect(dialog, stack.sim.url, stack.sim.token)
    expect(dialog.get_by_text("How events reach Home Assistant", exact=True)).to_be_visible()
    return dialog


def close(page: Page, dialog: Locator, *, options: bool = False) -> None:
    """Close the dialog half-way, as a person who changes their mind. The frontend then
    deletes the flow; wait for that, or closing the tab would cancel it and the next test
    would find the site "already being configured"."""
    kind = "options/flow" if options else "flow"
    with page.expect_response(
        lambda r: r.request.method == "DELETE" and f"/config_entries/{kind}/" in r.url
    ) as deleted:
        dialog.get_by_role("button", name="Close").first.click()
    assert deleted.value.ok, f"deleting the flow: HTTP {deleted.value.status}"
    expect(dialog).to_be_hidden()


def error_text(dialog: Locator) -> str:
    """The error alerts the form shows, one a line."""
    alerts = dialog.locator("ha-alert[alert-type='error']")
    expect(alerts.first).to_be_visible()
    return "\n".join(visible_text(alert) for alert in alerts.all())


def test_user_step_says_what_is_wrong_with_the_url(
    page: Page, stack: Stack, shot: Screenshots
) -> None:
    dialog = open_user_step(page, stack)
    text = assert_translated(dialog, "the user step")
    shot(page, "user-step")
    assert "API token" in text
    assert "https://nvr.local" in text, "the URL field's example is shown"

    connect(dialog, "nvr at home", stack.sim.token)
    errors = error_text(dialog)
    shot(page, "not-a-url")
    assert "not a web address" in errors, errors
    assert "Cannot reach" not in errors, "a URL that is not one is not 'cannot reach'"
    assert field(dialog, "OpenNVR URL").input_value() == "nvr at home", "the typed URL is kept"

    # https:// to the plain-HTTP simulator: the real reason, not a certificate hint.
    connect(dialog, stack.sim.url.replace("http://", "https://"), stack.sim.token)
    expect(dialog.get_by_text("does not use HTTPS", exact=False)).to_be_visible()
    errors = error_text(dialog)
    shot(page, "https-to-http")
    assert "plain HTTP" in errors, errors
    assert "certificate" not in errors.lower(), "no advice to turn certificate checks off"
    assert_translated(dialog, "the user step with errors")
    close(page, dialog)


def test_mqtt_page(page: Page, stack: Stack, shot: Screenshots) -> None:
    dialog = to_transport_step(page, stack)
    text = assert_translated(dialog, "the transport step")
    for option in ("OpenNVR events websocket", "NATS", "MQTT"):
        assert option in text
    shot(page, "transport")
    dialog.get_by_role("radio", name="MQTT").check()
    submit(dialog)
    expect(dialog.get_by_text("MQTT broker", exact=True)).to_be_visible()
    text = assert_translated(dialog, "the MQTT step")
    shot(page, "mqtt")
    # The topic pattern in words (no markup the frontend would parse) and the "+" hint
    # with its plus sign (not turned into a bullet).
    assert "opennvr/alerts" in text, text
    assert "<site>" not in text, text
    assert "<key>" not in text, text
    assert re.search(r"\+\)? (?:matches|takes)", text) or "(+)" in text, text
    assert not dialog.locator("li").filter(has_text="matches any site").count(), (
        "the + hint is rendered as a list item"
    )
    # Home Assistant's MQTT integration is not set up here: the toggle starts off.
    use_ha = toggle(dialog, "Use Home Assistant's MQTT integration")
    expect(use_ha).not_to_be_checked()
    close(page, dialog)


def test_nats_page(page: Page, stack: Stack, shot: Screenshots) -> None:
    dialog = to_transport_step(page, stack)
    dialog.get_by_role("radio", name="NATS").check()
    submit(dialog)
    expect(dialog.get_by_text("NATS broker", exact=True)).to_be_visible()
    text = assert_translated(dialog, "the NATS step")
    shot(page, "nats")
    assert "NATS" in text
    close(page, dialog)


def test_add_the_site_with_local_ai(page: Page, stack: Stack, shot: Screenshots) -> None:
    dialog = to_transport_step(page, stack)
    dialog.get_by_role("radio", name="OpenNVR events websocket").check()
    submit(dialog)

    expect(dialog.get_by_text("Local AI (Ollama)", exact=True)).to_be_visible()
    text = assert_translated(dialog, "the Ollama step")
    shot(page, "ollama")
    assert "Continue without AI" in text
    assert not re.search(r"\btick", text, re.IGNORECASE), "a toggle is turned on, not ticked"
    field(dialog, "Ollama URL").fill(stack.ollama.url)
    submit(dialog)

    expect(dialog.get_by_text("Models", exact=True)).to_be_visible()
    text = assert_translated(dialog, "the models step")
    shot(page, "models")
    assert "qwen2.5vl:3b" in text, "the models step names the models that can see pictures"
    offered = choices(dialog, "Vision model")
    shot(page, "vision-model-chosen")
    assert offered == ["qwen2.5vl:3b"], f"only vision models are offered, got {offered}"
    submit(dialog)

    # The entry is made: the "name and assign" dialog, with the integration's brand image.
    expect(dialog.get_by_text("Name and assign", exact=True).first).to_be_visible()
    assert_translated(dialog, "the success dialog")
    brand = dialog.locator("img").first
    expect(brand).to_be_visible()
    loaded = brand.evaluate("img => img.complete && img.naturalWidth > 0")
    shot(page, "created")
    assert loaded, f"the brand image did not load: {brand.get_attribute('src')}"
    dialog.get_by_role("button", name="Finish").click()
    expect(dialog).to_be_hidden()

    entries = stack.ha.entries(DOMAIN)
    assert [e["state"] for e in entries] == ["loaded"], entries
