"""The Home Assistant Effects against the simulator and a real hass: what a run does to
the world, attributed to the run, sent once, and fenced."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import web
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
    async_mock_service,
)

from custom_components.opennvr_workflows.const import (
    CONF_APPROVERS,
    CONF_CAMERA_ROLES,
    CONF_WEBHOOKS,
    DOMAIN,
)
from custom_components.opennvr_workflows.engine import (
    ActionRequest,
    AlertRequest,
    NvrEvent,
    ProviderUnavailable,
    RunContext,
)
from custom_components.opennvr_workflows.host.effects.port import EVENT_ALERT, HaEffects
from custom_components.opennvr_workflows.host.runs.context import EVENT_RUN, SentLedger
from tests.fakes.opennvr_sim import ALL_SCOPES, OpenNVRSimulator, SimConfig

from .conftest import WEBSOCKET_OPTIONS

PHONE = "mobile_app_alices_phone"


@pytest.fixture
def entry_options() -> dict[str, Any]:
    return {
        **WEBSOCKET_OPTIONS,
        CONF_CAMERA_ROLES: {"front_door": "1", "drive": "2"},
        CONF_APPROVERS: {"users": [], "notify": [f"notify.{PHONE}"]},
    }


def effects_of(entry: MockConfigEntry) -> HaEffects:
    host = entry.runtime_data.workflows
    assert host is not None
    return host.effects


def run_ctx(step: str = "then.0", run_id: str = "run1", test: bool = False) -> RunContext:
    return RunContext(
        workflow_id="door",
        workflow_name="Visitor at the door",
        version="v1",
        run_id=run_id,
        correlation_id=f"door/{run_id}",
        chain=(f"door/{run_id}",),
        step_path=step,
        test=test,
        trigger=NvrEvent(
            kind="alert",
            source="websocket",
            time=datetime.now(UTC),
            camera_id="1",
            camera_role="front_door",
        ),
    )


def notify(who: str = "role:household") -> ActionRequest:
    return ActionRequest(
        kind="notify",
        params={"roles": [who], "message": "Hello", "title": "Door"},
        camera="front_door",
        camera_id="1",
    )


async def test_notify_goes_to_the_phones_once_per_step_even_after_a_restart(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    calls = async_mock_service(hass, "notify", PHONE)
    fx = effects_of(setup_entry)
    ctx = run_ctx()
    assert await fx.notify(ctx, notify()) == {"sent_to": [f"notify.{PHONE}"]}
    assert await fx.notify(ctx, notify()) == {"repeat": True}
    assert len(calls) == 1
    assert calls[0].data["data"]["group"] == "door"
    tag = calls[0].data["data"]["tag"]
    # The ledger is durable: a fresh one (Home Assistant restarted) still knows the key.
    await fx.ledger.async_flush()
    fresh = SentLedger(hass, setup_entry.entry_id)
    await fresh.async_load()
    assert fresh.seen(ctx.key)
    # Another step of the same run is another notification, with its own tag.
    await fx.notify(run_ctx("then.1"), notify())
    assert len(calls) == 2
    assert calls[1].data["data"]["tag"] != tag


async def test_notify_without_phones_lands_in_home_assistant(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    fx = effects_of(setup_entry)  # the approver's phone service does not exist here
    result = await fx.notify(run_ctx(), notify())
    assert result == {"sent_to": ["persistent_notification"]}
    notes = hass.data["persistent_notification"]
    assert any(n["message"] == "Hello" for n in notes.values())


async def test_alert_is_fired_noted_sent_to_phones_and_comes_back_as_an_event(
    hass: HomeAssistant, setup_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    calls = async_mock_service(hass, "notify", PHONE)
    fired = async_capture_events(hass, EVENT_ALERT)
    runs = async_capture_events(hass, EVENT_RUN)
    published: list[NvrEvent] = []
    setup_entry.runtime_data.hub.subscribe(published.append)
    fx = effects_of(setup_entry)
    ctx = run_ctx()
    request = AlertRequest(
        severity="high",
        requested="critical",
        title="Intruder",
        message="At the door",
        camera="front_door",
        camera_id="1",
        attach=("snapshot",),
        capped_by="trust",
    )
    result = await fx.alert(ctx, request)
    await hass.async_block_till_done()
    assert fired[0].data["severity"] == "high"
    assert fired[0].data["capped_by"] == "trust"
    assert fired[0].context.id == runs[0].context.id  # attributed to the run
    assert result["phones"] == [f"notify.{PHONE}"]
    camera = er.async_get(hass).async_get_entity_id(
        "camera", DOMAIN, f"{sim.config.site_id}_1_camera"
    )
    assert calls[0].data["data"]["entity_id"] == camera
    # OpenNVR's timeline gets the alert (the token has events.create), with the run's id.
    assert result["opennvr_event"] is not None
    assert ("POST", "/api/v1/events", ctx.correlation_id) in sim.correlated
    # The alert comes back as an event carrying the run in its chain (loops are cut),
    # once: the run's chain already ends with the run.
    back = [e for e in published if e.source == "engine"]
    assert len(back) == 1
    assert back[0].chain == ctx.chain == (ctx.correlation_id,)
    # Sent again after a restart: nothing new.
    assert await fx.alert(ctx, request) == {"repeat": True}
    assert len(calls) == 1


async def test_low_alert_stays_in_home_assistant(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    calls = async_mock_service(hass, "notify", PHONE)
    fx = effects_of(setup_entry)
    request = AlertRequest(severity="low", requested="low", title="Parcel")
    result = await fx.alert(run_ctx(), request)
    assert result["phones"] == []
    assert calls == []


async def test_home_assistant_actions_run_in_the_runs_context(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    calls = async_mock_service(hass, "light", "turn_on")
    runs = async_capture_events(hass, EVENT_RUN)
    fx = effects_of(setup_entry)
    request = ActionRequest(
        kind="home_assistant",
        params={
            "action": "light.turn_on",
            "data": {"brightness": 10},
            "target": {"entity_id": "light.porch"},
        },
        moves_things=True,
    )
    await fx.call_action(run_ctx(), request)
    await fx.call_action(run_ctx("then.1"), request)
    await hass.async_block_till_done()
    assert len(runs) == 1
    assert runs[0].data["workflow_id"] == "door"
    assert calls[0].context.id == calls[1].context.id == runs[0].context.id
    assert calls[0].data["entity_id"] == "light.porch"
    assert calls[0].data["brightness"] == 10
    missing = ActionRequest(kind="home_assistant", params={"action": "lock.unlock"})
    with pytest.raises(ProviderUnavailable, match=r"lock\.unlock"):
        await fx.call_action(run_ctx("then.2"), missing)


async def test_log_names_the_workflow_in_the_logbook(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    entries = async_capture_events(hass, "logbook_entry")
    await effects_of(setup_entry).log(run_ctx(), "Nobody there")
    await hass.async_block_till_done()
    assert entries[0].data["name"] == "Visitor at the door"
    assert entries[0].data["message"] == "Nobody there"
    assert entries[0].data["domain"] == DOMAIN


async def test_opennvr_actions_carry_the_correlation_id(
    hass: HomeAssistant, setup_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    fx = effects_of(setup_entry)
    ctx = run_ctx()
    await fx.ptz_preset(
        ctx, ActionRequest(kind="ptz_preset", params={"preset": "gate"}, camera="drive")
    )
    assert sim.ptz_calls == [(2, "gate")]
    clip = await fx.save_clip(
        ctx,
        ActionRequest(
            kind="save_clip",
            params={"before_s": 30, "after_s": 10},
            camera="front_door",
            camera_id="1",
        ),
    )
    assert clip["before_s"] == 30
    assert sim.protected
    mode = await fx.set_site_mode(
        ctx, ActionRequest(kind="site_mode", params={"mode": "armed_away"})
    )
    assert mode == {"mode": "armed_away"}
    assert sim.site_mode["mode"] == "armed_away"
    opened = await fx.app_action(
        ctx,
        ActionRequest(
            kind="app_action",
            params={"app": "gate_controller", "action": "open", "data": {"for": 5}},
        ),
    )
    assert opened["key"] == "gate_controller.open"
    assert sim.commands == [("gate_controller.open", {"for": 5}, ctx.correlation_id)]
    with pytest.raises(ProviderUnavailable, match="no action 'fly'"):
        await fx.app_action(
            ctx,
            ActionRequest(kind="app_action", params={"app": "gate_controller", "action": "fly"}),
        )
    paths = {path for _, path, cid in sim.correlated if cid == ctx.correlation_id}
    assert {"/api/v1/site-mode", "/api/v1/cameras/2/ptz/presets/gate/goto"} <= paths


@pytest.mark.parametrize(
    "sim_config", [SimConfig(scopes=tuple(s for s in ALL_SCOPES if s != "apps.actions"))]
)
async def test_a_missing_scope_is_a_lost_provider(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    fx = effects_of(setup_entry)
    with pytest.raises(ProviderUnavailable, match=r"apps\.actions"):
        await fx.app_action(
            run_ctx(),
            ActionRequest(kind="app_action", params={"app": "gate_controller", "action": "open"}),
        )


@pytest.fixture
async def hook_server(socket_enabled: None) -> AsyncGenerator[tuple[int, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []

    async def hook(request: web.Request) -> web.Response:
        received.append(
            {"json": await request.json(), "cid": request.headers.get("X-Correlation-Id")}
        )
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield port, received
    await runner.cleanup()


async def test_webhooks_go_only_to_approved_destinations(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hook_server: tuple[int, list[dict[str, Any]]],
) -> None:
    port, received = hook_server
    options = dict(config_entry.options)
    options[CONF_WEBHOOKS] = {"tickets": f"http://127.0.0.1:{port}/hook"}
    hass.config_entries.async_update_entry(config_entry, options=options)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    fx = effects_of(config_entry)
    ctx = run_ctx()
    result = await fx.webhook(
        ctx,
        ActionRequest(kind="webhook", params={"to": "tickets", "data": {"camera": "front_door"}}),
    )
    assert result == {"to": "tickets", "status": 200}
    assert received == [{"json": {"camera": "front_door"}, "cid": ctx.correlation_id}]
    with pytest.raises(ProviderUnavailable, match="'pager' is not approved"):
        await fx.webhook(ctx, ActionRequest(kind="webhook", params={"to": "pager", "data": {}}))
    assert len(received) == 1
