"""The added site as its owner meets it after setup: its devices and entities in Settings,
a camera's picture, the site mode changed from Home Assistant, an alert arriving on a
camera's event entity, and a log free of stream tokens and stream errors.

Runs on the entry test_01 adds (and test_02 configures). The log test is last: it reads the
log after the camera dialog was opened.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.frontend import Screenshots, assert_translated, call_ws
from tests.browser.services import ROOT, Stack
from tests.browser.test_01_add_integration import DOMAIN

TRANSLATIONS = ROOT / "custom_components" / DOMAIN / "translations" / "en.json"
CAMERA = "Front Door"
WORKFLOW = "Camera offline triage"
#: A workflow's file name (its id) shown where a name belongs: ``gate_concierge``.
RAW_ID = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)+$")
#: A stream URL's token as the simulator hands them out (``?token=...``).
TOKEN_IN_URL = re.compile(r"token=[A-Za-z0-9_\-]{6,}")
#: Home Assistant's stream worker, whose failures were logged every 10 s.
STREAM_ERROR = re.compile(
    r"\bERROR\b.*(?:homeassistant\.components\.stream|stream_worker|Error from stream)"
)


@pytest.fixture
def site(stack: Stack) -> Stack:
    assert stack.ha.entries(DOMAIN), "no OpenNVR Workflows entry: test_01_add_integration adds it"
    return stack


def event_type_names() -> dict[str, str]:
    """The event entity's event types as the frontend names them (the shipped English)."""
    strings = json.loads(TRANSLATIONS.read_text())
    event = strings["entity"]["event"]["camera_events"]
    names: dict[str, str] = event["state_attributes"]["event_type"]["state"]
    return names


def registry(page: Page) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """This integration's devices and entities, from the registries the frontend reads."""
    entry_ids = {e["entry_id"] for e in call_ws(page, {"type": "config_entries/get"})}
    devices = [
        d
        for d in call_ws(page, {"type": "config/device_registry/list"})
        if set(d["config_entries"]) & entry_ids and d["identifiers"][0][0] == DOMAIN
    ]
    entities = [
        e for e in call_ws(page, {"type": "config/entity_registry/list"}) if e["platform"] == DOMAIN
    ]
    return devices, entities


def open_devices(page: Page, stack: Stack) -> Locator:
    """Settings > Devices & services > Devices, filtered to the integration; returns the
    names in the table's Device column."""
    page.goto(f"{stack.ha.url}/config/devices/dashboard?domain={DOMAIN}")
    names = page.get_by_role("rowheader")
    expect(names.filter(has_text=CAMERA)).to_be_visible()
    return names


def open_device(page: Page, stack: Stack, name: str) -> None:
    """A device's page, reached from the devices list by its name."""
    open_devices(page, stack).filter(has_text=re.compile(rf"^\s*{re.escape(name)}\s*$")).click()
    page.wait_for_url(re.compile(r"/config/devices/device/"))
    expect(page.locator("ha-device-entities-card").first).to_be_visible()


def shows(page: Page, *labels: str) -> None:
    """Wait until the page shows each label (its cards render one after another)."""
    for label in labels:
        expect(page.get_by_text(label).filter(visible=True).first).to_be_visible()


def card(page: Page, heading: str) -> Locator:
    """A device page's card of entities under ``heading`` (Controls, Sensors, ...)."""
    cards = page.locator("ha-device-entities-card").filter(
        has=page.get_by_role("heading", name=heading, exact=True)
    )
    expect(cards.first).to_be_visible()
    return cards.first


def test_devices_page_names_every_device(page: Page, site: Stack, shot: Screenshots) -> None:
    rows = open_devices(page, site)
    expect(rows.filter(has_text=WORKFLOW)).to_be_visible()
    assert_translated(page, "the devices page")
    shot(page, "devices")
    shown = [" ".join(name.split()) for name in rows.all_inner_texts()]
    devices, _ = registry(page)
    assert len(shown) == len(devices), f"the page lists {shown}, the registry {len(devices)}"
    for name in (site_title(site), CAMERA, "Driveway", "Back Garden", WORKFLOW):
        assert name in shown, f"{name!r} is not on the devices page: {shown}"
    raw = [name for name in shown if RAW_ID.match(name)]
    assert not raw, f"devices named by a workflow's file name instead of its name: {raw}"


def site_title(stack: Stack) -> str:
    """The site's name as OpenNVR gives it (the entry's title, the site device's name)."""
    return str(stack.ha.entries(DOMAIN)[0]["title"])


def test_site_device_and_disabled_counters(page: Page, site: Stack, shot: Screenshots) -> None:
    open_device(page, site, site_title(site))
    shows(page, "Site mode", "Questions waiting", "Connected devices", CAMERA, WORKFLOW)
    assert_translated(page, "the site device's page")
    # The counters are diagnostic and disabled by default: the frontend hides them behind
    # "+N disabled entities".
    diagnostic = card(page, "Diagnostic")
    expect(diagnostic.get_by_text("Websocket events received")).to_have_count(0)
    more = diagnostic.get_by_role("button", name=re.compile(r"^\+2 disabled entit"))
    expect(more).to_be_visible()
    shot(page, "site-device")
    more.click()
    for name in ("Websocket events received", "Websocket events dropped"):
        expect(diagnostic.get_by_text(name, exact=True)).to_be_visible()
    shot(page, "disabled-counters")
    _, entities = registry(page)
    counters = [e for e in entities if (e["translation_key"] or "").endswith("_events_received")]
    counters += [e for e in entities if (e["translation_key"] or "").endswith("_events_dropped")]
    assert counters, "no event counters in the entity registry"
    assert {e["disabled_by"] for e in counters} == {"integration"}, counters


def test_camera_and_workflow_devices(page: Page, site: Stack, shot: Screenshots) -> None:
    open_device(page, site, CAMERA)
    shows(page, "Events", "Video", "Connected via")
    assert_translated(page, "the camera's device page")
    shot(page, "camera-device")
    open_device(page, site, WORKFLOW)
    shows(page, "State", "Last outcome", "Runs today", "Needs attention", "Last picture")
    assert_translated(page, "the workflow's device page")
    shot(page, "workflow-device")


def test_entities_page(page: Page, site: Stack, shot: Screenshots) -> None:
    page.goto(f"{site.ha.url}/config/entities?domain={DOMAIN}")
    names = page.get_by_role("rowheader")
    expect(names.filter(has_text="Events").first).to_be_visible()
    assert_translated(page, "the entities page")
    shot(page, "entities")
    search = page.get_by_placeholder(re.compile(r"^Search")).filter(visible=True).first
    # The table shows a screenful: each name is looked up as a person would, by searching.
    for name in ("Site mode", "Questions waiting", "Events", "Video", "State", "Last outcome"):
        search.fill(name)
        expect(names.filter(has_text=re.compile(rf"^\s*{name}\s*$")).first).to_be_visible()
    assert_translated(page, "the entities page, searched")
    # The counters are there, disabled by default: their status says so.
    search.fill("Websocket events")
    for name in ("Websocket events received", "Websocket events dropped"):
        row = page.get_by_role("row").filter(has=names.filter(has_text=name))
        expect(row).to_have_count(1)
        expect(row.locator("ha-tooltip")).to_have_text("Disabled")
    shot(page, "entities-disabled-counters")


def test_camera_dialog_shows_the_picture(page: Page, site: Stack, shot: Screenshots) -> None:
    open_device(page, site, CAMERA)
    card(page, "Sensors").get_by_text(CAMERA, exact=True).first.click()
    dialog = page.locator("ha-more-info-dialog")
    picture = dialog.get_by_role("img", name=re.compile(rf"{CAMERA} camera"))
    expect(picture).to_be_visible()
    # The picture is a still image from OpenNVR: wait until the browser has decoded it.
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=picture.element_handle()
    )
    width = picture.evaluate("img => img.naturalWidth")
    shot(page, "camera-dialog")
    assert width > 0, "the camera picture did not load"
    assert_translated(dialog, "the camera dialog")
    # The demo advertises no stream: no video player that never plays.
    players = dialog.locator("video, ha-hls-player, ha-web-rtc-player")
    assert players.count() == 0, (
        "the camera dialog shows a video player for a stream that is not there"
    )
    camera = site.ha.state(camera_entity(page, CAMERA, None))["attributes"]
    assert "frontend_stream_type" not in camera, f"the camera offers a stream: {camera}"
    dialog.get_by_role("button", name="Close").first.click()
    expect(picture).to_be_hidden()


def test_site_mode_select_changes_the_nvr(page: Page, site: Stack, shot: Screenshots) -> None:
    open_device(page, site, site_title(site))
    controls = card(page, "Controls")
    before = nvr_site_mode(site)
    target, label = (
        ("armed_home", "Armed home") if before != "armed_home" else ("disarmed", "Disarmed")
    )
    # The select's label opens it, as a click anywhere on the field does.
    controls.get_by_text("Site mode").filter(visible=True).first.click()
    offered = controls.get_by_role("menuitem").filter(visible=True)
    expect(offered).to_have_count(3)
    assert offered.all_inner_texts() == ["Disarmed", "Armed home", "Armed away"]
    shot(page, "site-mode-menu")
    offered.filter(has_text=label).click()
    deadline = time.monotonic() + 10
    while nvr_site_mode(site) != target and time.monotonic() < deadline:
        time.sleep(0.2)
    assert nvr_site_mode(site) == target, "OpenNVR's site mode did not change"
    expect(controls.get_by_text(label, exact=True).filter(visible=True).first).to_be_visible()
    shot(page, "site-mode-changed")


def nvr_site_mode(stack: Stack) -> str:
    """The site mode as OpenNVR itself reports it (its API, with the demo token)."""
    request = urllib.request.Request(
        f"{stack.sim.url}/api/v1/site-mode", headers={"Authorization": f"Bearer {stack.sim.token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        mode: str = json.load(response)["mode"]
    return mode


def test_an_alert_reaches_the_event_entity(page: Page, site: Stack, shot: Screenshots) -> None:
    names = event_type_names()
    open_device(page, site, CAMERA)
    events = card(page, "Events")
    entity_id = camera_entity(page, CAMERA, "camera_events")
    before = site.ha.state(entity_id)
    shot(page, "events-before")
    # The simulator raises an alert every 2 s, round-robin over three cameras and five
    # kinds: this camera gets one within about 6 s, never of the kind it had last.
    deadline = time.monotonic() + 20
    after = before
    while after["state"] == before["state"] and time.monotonic() < deadline:
        time.sleep(0.3)
        after = site.ha.state(entity_id)
    assert after["state"] != before["state"], f"{entity_id} received no alert in 20 s"
    new_kind = names[after["attributes"]["event_type"]]
    old_kind = names.get(before["attributes"].get("event_type") or "", "")
    # The open page follows by itself (no reload): the row names the new alert's kind.
    expect(events).to_contain_text(new_kind)
    shot(page, "event-received")
    text = assert_translated(events, "the camera's events card")
    if old_kind:
        assert old_kind not in text, f"the row still shows the previous alert: {text}"


def camera_entity(page: Page, camera: str, translation_key: str | None) -> str:
    """The entity id of ``camera``'s entity of this kind (None: the camera itself), from the
    registries."""
    devices, entities = registry(page)
    device = next(d["id"] for d in devices if d["name"] == camera)
    return str(
        next(
            e["entity_id"]
            for e in entities
            if e["device_id"] == device and e["translation_key"] == translation_key
        )
    )


def test_the_log_holds_no_stream_token_or_stream_error(site: Stack) -> None:
    log = site.ha.process.log.read_text(errors="replace")
    assert "OpenNVR advertises no stream; still pictures" in log, (
        "the camera's stream check is not in the log (debug logging off?)"
    )
    tokens = sorted(set(TOKEN_IN_URL.findall(log)))
    assert not tokens, f"stream tokens in Home Assistant's log {site.ha.process.log}: {tokens}"
    assert site.sim.token not in log, "the API token is in Home Assistant's log"
    errors = [line for line in log.splitlines() if STREAM_ERROR.search(line)]
    assert not errors, f"stream errors in Home Assistant's log: {errors[:3]}"
