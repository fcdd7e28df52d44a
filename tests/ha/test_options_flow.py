"""The options flow: every page saves, validates what it must, and reloads the entry."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType, InvalidData
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.ai.tool_policy import IMPLEMENTED_TOOLS
from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_APPROVERS,
    CONF_CAMERA_ROLES,
    CONF_DEFAULT_LIMITS,
    CONF_EMBEDDING_MODEL,
    CONF_HARDWARE,
    CONF_MODEL_ALLOW_LIST,
    CONF_MODEL_APPS,
    CONF_MOVING_WEBHOOKS,
    CONF_MQTT_HOST,
    CONF_MQTT_PASSWORD,
    CONF_MQTT_PORT,
    CONF_MQTT_SITE,
    CONF_MQTT_TLS,
    CONF_MQTT_USE_HA,
    CONF_MQTT_USER,
    CONF_NATS_PASSWORD,
    CONF_NATS_TLS_VERIFY,
    CONF_NATS_TOKEN,
    CONF_NATS_URL,
    CONF_NATS_USER,
    CONF_OLLAMA_URL,
    CONF_SITE_FACTS,
    CONF_SITE_LISTS,
    CONF_TEXT_MODEL,
    CONF_TOOL_POLICY,
    CONF_TRANSPORT,
    CONF_VISION_MODEL,
    CONF_WEBHOOKS,
    TRANSPORT_MQTT,
    TRANSPORT_NATS,
)
from custom_components.opennvr_workflows.flows.options import (
    LIST_NAME_PATTERN,
    ROLE_PATTERN,
    parse_approver_roles,
    parse_site_lists,
)
from custom_components.opennvr_workflows.flows.steps import CONF_SKIP_AI
from tests.fakes.brokers import Mosquitto, NatsServer, running
from tests.fakes.ollama_server import EMBEDDING_MODEL, FakeOllama
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .test_config_flow import sent_to_browser
from .test_entities import wait_for, websocket_connected

STRINGS = Path(__file__).parents[2] / "custom_components/opennvr_workflows/strings.json"


def strings() -> dict[str, Any]:
    return json.loads(STRINGS.read_text())


async def _open(hass: HomeAssistant, entry: MockConfigEntry, page: str) -> dict[str, Any]:
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.MENU
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": page}
    )
    assert result["step_id"] == page
    return result


async def _saved(hass: HomeAssistant, result: dict[str, Any], entry: MockConfigEntry) -> None:
    assert result["type"] is FlowResultType.CREATE_ENTRY, result.get("errors")
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED  # reloaded with the new options


async def test_camera_roles(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await _open(hass, setup_entry, "camera_roles")
    fields = [str(key) for key in result["data_schema"].schema]
    assert fields == ["Front Door (1)", "Driveway (2)", "Back Garden (3)"]

    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"Front Door (1)": "Door, porch", "Driveway (2)": "Door"}
    )
    # Both cameras that claim the role are marked; the third is not.
    assert result["errors"] == {
        "Front Door (1)": "role_duplicate",
        "Driveway (2)": "role_duplicate",
    }

    typed = {"Front Door (1)": "door", "Driveway (2)": "drive way", "Back Garden (3)": "lawn!"}
    result = await hass.config_entries.options.async_configure(result["flow_id"], typed)
    # Each error under its own camera, none under the camera that is fine.
    assert result["errors"] == {"Driveway (2)": "role_invalid", "Back Garden (3)": "role_invalid"}
    # What was typed stays on the form, mistakes included.
    assert suggested_values(result) == typed

    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {"Front Door (1)": "door, porch", "Driveway (2)": "gate", "Back Garden (3)": ""},
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_CAMERA_ROLES] == {"door": "1", "porch": "1", "gate": "2"}
    assert setup_entry.options[CONF_TRANSPORT] == "websocket"  # other options kept


def suggested_values(result: dict[str, Any]) -> dict[str, Any]:
    """What a form shows pre-filled in each field."""
    return {
        str(key): key.description.get("suggested_value")
        for key in result["data_schema"].schema
        if key.description
    }


async def test_camera_roles_offer_the_roles_the_workflows_wait_for(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    """Issue 23, item 14: the page names the roles the home's workflows use (the templates'
    front_door, back_yard, gate), the ones no camera plays yet first; not made-up ones."""
    result = await _open(hass, setup_entry, "camera_roles")
    offered = result["description_placeholders"]["roles"].split(", ")
    assert {"front_door", "back_yard", "gate"} <= set(offered)
    assert "door" not in offered
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"Front Door (1)": "front_door"}
    )
    await _saved(hass, result, setup_entry)
    result = await _open(hass, setup_entry, "camera_roles")
    offered = result["description_placeholders"]["roles"].split(", ")
    assert offered[-1] == "front_door", "a role a camera plays comes after those waiting"


async def test_camera_roles_a_field_cleared_on_error_stays_clear(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        setup_entry, options={**setup_entry.options, CONF_CAMERA_ROLES: {"garden": "3"}}
    )
    result = await _open(hass, setup_entry, "camera_roles")
    assert suggested_values(result)["Back Garden (3)"] == "garden"
    # The garden camera's field is emptied (a blank field is not sent) while another errs.
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"Front Door (1)": "Door!"}
    )
    assert result["errors"] == {"Front Door (1)": "role_invalid"}
    assert suggested_values(result) == {
        "Front Door (1)": "Door!",
        "Driveway (2)": "",
        "Back Garden (3)": "",
    }


async def test_approvers(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    hass_admin_user: Any,
) -> None:
    hass.services.async_register("notify", "mobile_app_pixel", lambda call: None)
    guard = await hass.auth.async_create_user("Gina Guard")
    result = await _open(hass, setup_entry, "approvers")
    selectors = {str(k): v for k, v in result["data_schema"].schema.items()}
    assert selectors["notify"].config["options"] == ["notify.mobile_app_pixel"]
    # Only the companion app's phones are offered; a made-up service is refused.
    with pytest.raises(InvalidData):
        await hass.config_entries.options.async_configure(
            result["flow_id"], {"notify": ["notify.mobile_app_made_up"]}
        )
    typed = {
        "users": [hass_admin_user.id],
        "roles": "guard: gina guard\nowner: Nobody Here",
        "notify": ["notify.mobile_app_pixel"],
    }
    result = await hass.config_entries.options.async_configure(result["flow_id"], typed)
    assert result["errors"] == {"roles": "approver_roles_invalid"}
    assert result["description_placeholders"]["problem"] == (
        "line 2: there is no Home Assistant user named 'Nobody Here'"
    )
    # What was typed stays on the form.
    suggested = suggested_values(result)
    assert suggested["roles"] == typed["roles"]
    assert suggested["users"] == [hass_admin_user.id]
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            "users": [hass_admin_user.id],
            "roles": "role:Guard: Gina Guard",
            "notify": ["notify.mobile_app_pixel"],
        },
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_APPROVERS] == {
        "users": [hass_admin_user.id],
        "notify": ["notify.mobile_app_pixel"],
        "roles": {"guard": [guard.id]},
    }


async def test_site_rules(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await _open(hass, setup_entry, "site_rules")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"facts": "word " * 301, "lists": "family: Ann, Bob\nbad line"}
    )
    assert result["errors"] == {"facts": "facts_too_long", "lists": "lists_invalid"}
    assert result["description_placeholders"]["words"] == "301"
    assert result["description_placeholders"]["problem"].startswith("line 2:")

    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            "facts": "The cleaner comes on Tuesdays at 9.",
            "lists": "family: Ann, Bob\n# couriers we expect\ncouriers: DHL, UPS",
            "model_apps": "scene_describer, plate_llm scene_describer",
        },
    )
    await _saved(hass, result, setup_entry)
    # The apps that run a model: their alerts are AI output to the validator and the engine.
    assert setup_entry.options[CONF_MODEL_APPS] == ["scene_describer", "plate_llm"]
    host = setup_entry.runtime_data.workflows
    assert host is not None
    assert host.site_profile().model_apps == {"scene_describer", "plate_llm"}
    assert host.engine.policy.model_apps == {"scene_describer", "plate_llm"}
    assert setup_entry.options[CONF_SITE_FACTS] == "The cleaner comes on Tuesdays at 9."
    assert setup_entry.options[CONF_SITE_LISTS] == {
        "family": ["Ann", "Bob"],
        "couriers": ["DHL", "UPS"],
    }


async def test_destinations(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await _open(hass, setup_entry, "destinations")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"webhooks": "tickets: https://desk.example/hook\nbad: ftp://x"}
    )
    assert result["errors"] == {"webhooks": "webhooks_invalid"}
    assert result["description_placeholders"]["problem"] == (
        "line 2: the address must start with http:// or https://"
    )
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            "webhooks": "# the helpdesk\nTickets: https://desk.example/hook\n"
            "gate: https://relay.example/open !moves",
            "model_allow_list": "llava:7b, qwen2.5vl:7b\ngemma3:4b",
        },
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_WEBHOOKS] == {
        "tickets": "https://desk.example/hook",
        "gate": "https://relay.example/open",
    }
    # The gate moves things; the helpdesk only informs, as every unmarked destination.
    assert setup_entry.options[CONF_MOVING_WEBHOOKS] == ["gate"]
    host = setup_entry.runtime_data.workflows
    assert host.settings.moving_webhooks == frozenset({"gate"})
    # The page shows the mark again, and an unknown word after an address is refused.
    result = await _open(hass, setup_entry, "destinations")
    suggested = next(
        k.description["suggested_value"] for k in result["data_schema"].schema if k == "webhooks"
    )
    assert suggested.splitlines() == [
        "tickets: https://desk.example/hook",
        "gate: https://relay.example/open !moves",
    ]
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"webhooks": "gate: https://relay.example/open !move"}
    )
    assert result["description_placeholders"]["problem"] == (
        "line 1: after the address, only '!moves' may follow"
    )
    assert setup_entry.options[CONF_MODEL_ALLOW_LIST] == ["llava:7b", "qwen2.5vl:7b", "gemma3:4b"]


RULE = "use lower-case letters, digits, - and _, starting with a letter, no spaces"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("family Ann", "line 1: write it as 'name: item, item' (the colon is missing)"),
        ("a: x\na: y", "line 2: the list 'a' is already defined"),
        (
            "x: 1\nfamily cars: a, b",
            f"line 2: 'family cars' is not a list name (it has a space): {RULE}",
        ),
        ("Bad Name: x", f"line 1: 'Bad Name' is not a list name (it has a space): {RULE}"),
        ("cars.2: x", f"line 1: 'cars.2' is not a list name (it has '.'): {RULE}"),
        (
            "2cars: x",
            f"line 1: '2cars' is not a list name (it does not start with a letter): {RULE}",
        ),
        (": x", f"line 1: '' is not a list name (it is empty): {RULE}"),
        (
            f"{'a' * 33}: x",
            f"line 1: '{'a' * 33}' is not a list name (it is longer than 32 characters): {RULE}",
        ),
        ("Family_Cars: a", None),
    ],
)
def test_site_list_problems_are_located_and_say_what_is_wrong(
    text: str, problem: str | None
) -> None:
    lists, found = parse_site_lists(text)
    assert found == problem
    assert bool(lists) is (problem is None)


async def test_a_list_name_with_a_space_is_refused_with_the_reason(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await _open(hass, setup_entry, "site_rules")
    typed = {"facts": "", "lists": "family cars: a, b"}
    result = await hass.config_entries.options.async_configure(result["flow_id"], typed)
    assert result["errors"] == {"lists": "lists_invalid"}
    assert result["description_placeholders"]["problem"] == (
        f"line 1: 'family cars' is not a list name (it has a space): {RULE}"
    )
    assert suggested_values(result)["lists"] == "family cars: a, b"


def test_approver_role_names_say_what_is_wrong() -> None:
    assert parse_approver_roles("night guard: Ann", {"u1": "Ann"}) == (
        {},
        f"line 1: 'night guard' is not a role name (it has a space): {RULE}",
    )
    assert parse_approver_roles("night-guard: Ann", {"u1": "Ann"}) == (
        {"night-guard": ["u1"]},
        None,
    )


async def test_tool_policy_and_limits(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await _open(hass, setup_entry, "tool_policy")
    defaults = {str(key): key.default() for key in result["data_schema"].schema}
    assert defaults["ask_person"] == "ask"
    assert defaults["recent_events"] == "auto"
    # Only tools this integration can run are offered (faces need a skill it lacks).
    assert "recognize_faces" not in defaults
    assert set(defaults) == set(IMPLEMENTED_TOOLS)
    # Each tool has a name and a line of help of its own, not its key.
    page = strings()["options"]["step"]["tool_policy"]
    for tool in defaults:
        assert page["data"][tool]
        assert page["data"][tool] != tool
        assert page["data_description"][tool]
    assert len(set(page["data"].values())) == len(page["data"])
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**defaults, "search_history": "unavailable"}
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_TOOL_POLICY]["search_history"] == "unavailable"

    result = await _open(hass, setup_entry, "limits")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            "cooldown_seconds": 120,
            "per_hour": 10,
            "ai_per_hour": 20,
            "chain_depth": 2,
            "answer_fresh_minutes": 30,
        },
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_DEFAULT_LIMITS] == {
        "cooldown_seconds": 120,
        "per_hour": 10,
        "ai_per_hour": 20,
        "chain_depth": 2,
        "answer_fresh_minutes": 30,
    }
    # How long an answer clears an action, for the validator and the engine alike.
    host = setup_entry.runtime_data.workflows
    assert host is not None
    assert host.site_profile().answer_fresh_s == 1800
    assert host.engine.policy.answer_fresh_s == 1800
    assert setup_entry.options[CONF_TOOL_POLICY]["search_history"] == "unavailable"


async def test_ollama_pages(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    ollama: FakeOllama,
) -> None:
    result = await _open(hass, setup_entry, "ollama")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_OLLAMA_URL: ollama.url, CONF_SKIP_AI: False}
    )
    assert result["step_id"] == "models"
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {CONF_VISION_MODEL: "qwen2.5vl:3b", CONF_TEXT_MODEL: "qwen2.5vl:3b", CONF_HARDWARE: "cpu"},
    )
    assert result["step_id"] == "evaluate"  # measuring the model is offered, not forced
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"run_evaluation": False}
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_AI_ENABLED] is True
    assert setup_entry.options[CONF_VISION_MODEL] == "qwen2.5vl:3b"

    result = await _open(hass, setup_entry, "ollama")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_OLLAMA_URL: ollama.url, CONF_SKIP_AI: True}
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_AI_ENABLED] is False


async def test_the_embedding_model_is_offered_when_the_server_has_one(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    ollama: FakeOllama,
) -> None:
    """History search by meaning needs an embedding model: offered only when the server
    has one, saved when chosen, removed when cleared."""
    models = {
        CONF_VISION_MODEL: "qwen2.5vl:3b",
        CONF_TEXT_MODEL: "qwen2.5vl:3b",
        CONF_HARDWARE: "cpu",
    }

    async def models_page() -> Any:
        result = await _open(hass, setup_entry, "ollama")
        return await hass.config_entries.options.async_configure(
            result["flow_id"], {CONF_OLLAMA_URL: ollama.url, CONF_SKIP_AI: False}
        )

    async def save(result: Any, choice: dict[str, Any]) -> None:
        result = await hass.config_entries.options.async_configure(
            result["flow_id"], {**models, **choice}
        )
        result = await hass.config_entries.options.async_configure(
            result["flow_id"], {"run_evaluation": False}
        )
        await _saved(hass, result, setup_entry)

    page = await models_page()
    assert CONF_EMBEDDING_MODEL not in {str(k) for k in page["data_schema"].schema}
    ollama.models[EMBEDDING_MODEL] = ("embedding",)
    page = await models_page()
    selectors = {str(k): v for k, v in page["data_schema"].schema.items()}
    assert selectors[CONF_EMBEDDING_MODEL].config["options"] == [EMBEDDING_MODEL]
    await save(page, {CONF_EMBEDDING_MODEL: EMBEDDING_MODEL})
    assert setup_entry.options[CONF_EMBEDDING_MODEL] == EMBEDDING_MODEL
    await save(await models_page(), {})
    assert CONF_EMBEDDING_MODEL not in setup_entry.options


async def test_transport_page_websocket(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await _open(hass, setup_entry, "transport")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_TRANSPORT: "websocket"}
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_TRANSPORT] == "websocket"


async def test_camera_roles_need_the_site_connected(
    hass: HomeAssistant, sim: OpenNVRSimulator, config_entry: MockConfigEntry
) -> None:
    """An entry that could not be set up has no camera list: the page says so."""
    await sim.stop()
    await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.SETUP_RETRY
    result = await hass.config_entries.options.async_init(config_entry.entry_id)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "camera_roles"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "not_loaded"


def _event_source_outages(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the event hub and its transports logged about a lost connection, and any
    warning of theirs."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("custom_components.opennvr_workflows.nvr")
        and (r.levelno >= logging.WARNING or " lost;" in r.getMessage())
    ]


async def test_saving_options_is_no_outage_but_a_dropped_connection_is(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Saving a page reloads the entry, which stops the events websocket on purpose: no
    outage is logged. The site closing the connection is an outage: one line (info)."""
    await websocket_connected(hass, setup_entry)
    result = await _open(hass, setup_entry, "transport")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_TRANSPORT: "websocket"}
    )
    await _saved(hass, result, setup_entry)
    await websocket_connected(hass, setup_entry)
    assert await hass.config_entries.async_reload(setup_entry.entry_id)
    await hass.async_block_till_done()
    await websocket_connected(hass, setup_entry)
    assert _event_source_outages(caplog) == []

    transitions: list[bool] = []
    setup_entry.runtime_data.hub.subscribe_state(lambda _, up: transitions.append(up))
    await sim.drop_websockets()
    await wait_for(hass, lambda: transitions[-2:] == [False, True], within=15)
    assert _event_source_outages(caplog) == [
        "OpenNVR events via websocket lost; its entities are unavailable until it reconnects"
    ]

    assert await hass.config_entries.async_unload(setup_entry.entry_id)
    await hass.async_block_till_done()
    assert len(_event_source_outages(caplog)) == 1


async def _broker_page(
    hass: HomeAssistant, entry: MockConfigEntry, transport: str, step: str
) -> dict[str, Any]:
    result = await _open(hass, entry, "transport")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_TRANSPORT: transport}
    )
    assert result["step_id"] == step
    return result


@pytest.mark.services
async def test_nats_secrets_are_never_shown_and_a_blank_one_keeps_the_stored(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    nats_server: NatsServer,
    tmp_path: Path,
) -> None:
    with running(NatsServer(tmp_path / "login", user="ha", password="nats-pw-1")) as login:
        stored = {
            CONF_TRANSPORT: TRANSPORT_NATS,
            CONF_NATS_URL: login.url,
            CONF_NATS_USER: "ha",
            CONF_NATS_PASSWORD: "nats-pw-1",
            # Left over from a token login: must not come back, nor win over the user.
            CONF_NATS_TOKEN: "nats-token-1",
        }
        hass.config_entries.async_update_entry(
            setup_entry, options={**setup_entry.options, **stored}
        )
        result = await _broker_page(hass, setup_entry, TRANSPORT_NATS, "nats")
        form = sent_to_browser(result)
        assert login.url in form
        assert "nats-pw-1" not in form
        assert "nats-token-1" not in form

        # Blank password: the stored one is kept (the broker accepts only it).
        page = {CONF_NATS_URL: login.url, CONF_NATS_USER: "ha", CONF_NATS_TLS_VERIFY: True}
        result = await hass.config_entries.options.async_configure(result["flow_id"], page)
        await _saved(hass, result, setup_entry)
        assert setup_entry.options[CONF_NATS_PASSWORD] == "nats-pw-1"
        # A user login replaces the token login.
        assert CONF_NATS_TOKEN not in setup_entry.options

        # A wrong password typed is refused and not sent back either.
        result = await _broker_page(hass, setup_entry, TRANSPORT_NATS, "nats")
        result = await hass.config_entries.options.async_configure(
            result["flow_id"], {**page, CONF_NATS_PASSWORD: "typed-wrong"}
        )
        assert result["errors"] == {"base": "nats_auth"}
        assert "typed-wrong" not in sent_to_browser(result)

    # Clearing the user name ends the user login: user and password are removed.
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_NATS_URL: nats_server.url, CONF_NATS_TLS_VERIFY: True}
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_NATS_URL] == nats_server.url
    assert CONF_NATS_USER not in setup_entry.options
    assert CONF_NATS_PASSWORD not in setup_entry.options


@pytest.mark.services
async def test_mqtt_password_is_never_shown_and_a_blank_one_keeps_the_stored(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry, tmp_path: Path
) -> None:
    with running(Mosquitto(tmp_path, user="ha", password="mqtt-pw-1")) as broker:
        stored = {
            CONF_TRANSPORT: TRANSPORT_MQTT,
            CONF_MQTT_USE_HA: False,
            CONF_MQTT_HOST: "127.0.0.1",
            CONF_MQTT_PORT: broker.port,
            CONF_MQTT_USER: "ha",
            CONF_MQTT_PASSWORD: "mqtt-pw-1",
        }
        hass.config_entries.async_update_entry(
            setup_entry, options={**setup_entry.options, **stored}
        )
        result = await _broker_page(hass, setup_entry, TRANSPORT_MQTT, "mqtt_broker")
        form = sent_to_browser(result)
        assert '"ha"' in form
        assert "mqtt-pw-1" not in form

        page = {
            CONF_MQTT_USE_HA: False,
            CONF_MQTT_HOST: "127.0.0.1",
            CONF_MQTT_PORT: broker.port,
            CONF_MQTT_USER: "ha",
            CONF_MQTT_TLS: False,
            CONF_MQTT_SITE: "+",
        }
        result = await hass.config_entries.options.async_configure(result["flow_id"], page)
        await _saved(hass, result, setup_entry)
        assert setup_entry.options[CONF_MQTT_PASSWORD] == "mqtt-pw-1"
        assert setup_entry.options[CONF_TRANSPORT] == TRANSPORT_MQTT


@pytest.mark.parametrize("name", ["door\n", "door ", "door\u200b", "\u0434oor", "door\nx", ""])
def test_role_and_list_names_match_as_a_whole(name: str) -> None:
    assert ROLE_PATTERN.fullmatch("door")
    assert ROLE_PATTERN.fullmatch(name) is None
    assert LIST_NAME_PATTERN.fullmatch(name) is None
    problem = parse_site_lists(f"{name.strip()}x\u200b: a")[1]
    assert problem is not None
    assert problem.startswith("line 1: ")
