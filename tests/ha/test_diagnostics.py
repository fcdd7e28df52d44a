"""Diagnostics carry what support needs and none of the secrets."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service

from custom_components.opennvr_workflows.const import (
    CONF_APPROVERS,
    CONF_NATS_PASSWORD,
    CONF_NATS_URL,
    CONF_SITE_FACTS,
    CONF_SITE_LISTS,
    CONF_WEBHOOKS,
)
from custom_components.opennvr_workflows.diagnostics import async_get_config_entry_diagnostics
from custom_components.opennvr_workflows.engine import NvrEvent
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .test_entities import wait_for
from .test_repairs import BROKEN
from .workflow_files import ASK, REMIND, write_workflow

PHONE = "mobile_app_alices_phone"


async def test_diagnostics_redact_secrets(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        setup_entry,
        options={
            **setup_entry.options,
            CONF_NATS_URL: "nats://nvr:4222",
            CONF_NATS_PASSWORD: "hunter2",
        },
    )
    await hass.async_block_till_done()
    await wait_for(hass, lambda: setup_entry.runtime_data.hub.connected("websocket"))
    await sim.emit_alert(1, "person")
    await wait_for(hass, lambda: setup_entry.runtime_data.hub.stats["websocket"].received >= 1)

    diag = await async_get_config_entry_diagnostics(hass, setup_entry)
    text = json.dumps(diag)
    assert sim.config.token not in text
    assert "hunter2" not in text
    assert sim.config.site_id not in text
    assert diag["entry"]["data"]["token"] == "**REDACTED**"
    assert diag["entry"]["options"][CONF_NATS_URL] == "nats://nvr:4222"
    assert diag["site"]["contract_version"] == sim.config.contract_version
    assert diag["cameras"]["1"] == {
        "name": "Front Door",
        "active": True,
        "online": True,
        "status": "online",
    }
    assert diag["event_sources"]["websocket"]["received"] >= 1
    assert diag["event_sources"]["websocket"]["connected"] is True


async def test_diagnostics_summarise_workflows_and_runs_without_personal_data(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        config_entry,
        options={
            **config_entry.options,
            CONF_APPROVERS: {"notify": [f"notify.{PHONE}"]},
            CONF_WEBHOOKS: {"siren": "https://hooks.example/T0KEN-s3cret"},
            CONF_SITE_LISTS: {"household_plates": ["AB-123-CD"]},
            CONF_SITE_FACTS: "The spare key is under the blue pot.",
        },
    )
    async_mock_service(hass, "notify", PHONE)
    write_workflow(hass, "remind", REMIND)
    write_workflow(hass, "ask", ASK)
    write_workflow(hass, "broken", BROKEN)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = config_entry.runtime_data.workflows
    assert host is not None
    # A message that starts a run carries a person's words and id in its payload.
    host.engine.submit(
        NvrEvent(
            kind="button",
            source="button",
            time=datetime.now(UTC),
            type="remind",
            payload={"user": "user-alice", "message": "the gate code is 4711"},
        )
    )
    host.engine.run_now("ask")
    await host.engine.idle()

    diag = await async_get_config_entry_diagnostics(hass, config_entry)
    text = json.dumps(diag)
    for secret in ("T0KEN-s3cret", "AB-123-CD", "blue pot", "4711", "user-alice"):
        assert secret not in text, secret
    assert diag["entry"]["options"][CONF_WEBHOOKS] == "**REDACTED**"

    workflows = diag["workflows"]
    remind = workflows["workflows"]["remind"]
    assert remind["state"] == "on"
    assert remind["loaded"] is True
    assert remind["file"] == "remind.yaml"
    assert [p["code"] for p in remind["problems"]] == ["WF-STATE-ON"]
    (run,) = remind["recent_runs"]
    assert run["status"] == "waiting"
    assert run["test"] is False
    assert run["steps"] == 2  # the first notify and the wait
    assert run["trigger"] == {"kind": "button", "source": "button", "type": "remind"}
    assert run["id"] in {r.run_id for r in host.engine.active_runs() if r.workflow_id == "remind"}
    assert datetime.fromisoformat(run["started_at"]).tzinfo is not None

    broken = workflows["workflows"]["broken"]
    assert broken["loaded"] is False
    assert broken["state"] is None
    assert broken["problems"][0]["code"] == "WF-STEP-KIND"
    assert broken["problems"][0]["line"] == 8

    engine = workflows["engine"]
    assert engine["runs_waiting"] == 2
    assert engine["approvals_pending"] == 1
    assert workflows["approvals"] == {"questions_waiting": 1, "refused_by_reason": {}}
    assert workflows["assist_citations"] == {"answers": 0, "cited": 0, "stripped": 0}
    assert engine["started"] == 2
    assert workflows["model"]["reachable"] is None  # AI is off in these options
