"""The config flow against the OpenNVR simulator over a real loopback socket."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import probatio
import pytest
from homeassistant.config_entries import (
    SOURCE_MQTT,
    SOURCE_USER,
    ConfigEntryState,
    ConfigFlow,
    OptionsFlow,
)
from homeassistant.const import CONF_TOKEN, CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType, InvalidData
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.service_info.mqtt import MqttServiceInfo
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_HARDWARE,
    CONF_MQTT_USE_HA,
    CONF_OLLAMA_URL,
    CONF_TEXT_MODEL,
    CONF_TRANSPORT,
    CONF_VERIFY_SSL,
    CONF_VISION_MODEL,
    DOMAIN,
    TRANSPORT_MQTT,
    TRANSPORT_WEBSOCKET,
)
from custom_components.opennvr_workflows.flows.steps import CONF_SKIP_AI, TransportAndAISteps
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.fakes.tls import self_signed_context

from .conftest import entry_data


def defaults(result: Any) -> dict[str, Any]:
    """The values a form submits when the person changes nothing."""
    return {
        str(key): key.default()
        for key in result["data_schema"].schema
        if not isinstance(key.default, probatio.Undefined)
    }


def options_of(result: Any, field: str) -> list[str]:
    """The choices a form's select field offers."""
    selector = next(v for k, v in result["data_schema"].schema.items() if k == field)
    return list(selector.config["options"])


def sent_to_browser(result: Any) -> str:
    """A form as Home Assistant sends it to the frontend (its own serializer), as text."""
    fields = probatio.to_field_list(result["data_schema"], custom_serializer=cv.custom_serializer)
    return json.dumps(fields)


async def _start_flow(hass: HomeAssistant) -> str:
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    return result["flow_id"]


async def _site_step(hass: HomeAssistant, sim: OpenNVRSimulator) -> dict:
    """Start a flow and pass the site step; returns the next step (transport)."""
    flow_id = await _start_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        flow_id,
        {CONF_URL: sim.url + "/", CONF_TOKEN: f" {sim.config.token} ", CONF_VERIFY_SSL: True},
    )
    assert result["step_id"] == "transport"
    return result


async def _skip_ai(hass: HomeAssistant, flow_id: str) -> dict:
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_OLLAMA_URL: "http://127.0.0.1:9", CONF_SKIP_AI: True}
    )
    await hass.async_block_till_done()
    return result


async def test_full_flow_websocket_and_ollama(
    hass: HomeAssistant, sim: OpenNVRSimulator, ollama: FakeOllama
) -> None:
    result = await _site_step(hass, sim)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_TRANSPORT: TRANSPORT_WEBSOCKET}
    )
    assert result["step_id"] == "ollama"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_OLLAMA_URL: ollama.url + "/", CONF_SKIP_AI: False}
    )
    assert result["step_id"] == "models"
    # The model lists come from the server: any model may write, only one that can see
    # pictures is offered for the pictures, and the page says which those are.
    assert set(options_of(result, CONF_TEXT_MODEL)) == set(ollama.models)
    assert options_of(result, CONF_VISION_MODEL) == ["qwen2.5vl:3b"]
    assert result["description_placeholders"]["vision_models"] == "qwen2.5vl:3b"

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_VISION_MODEL: "qwen2.5vl:3b", CONF_TEXT_MODEL: "qwen3:1.7b", CONF_HARDWARE: "gpu"},
    )
    await hass.async_block_till_done()

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == sim.config.name
    assert result["data"] == entry_data(sim)  # URL and token normalised
    assert result["result"].unique_id == sim.config.site_id
    assert result["options"] == {
        CONF_TRANSPORT: TRANSPORT_WEBSOCKET,
        CONF_OLLAMA_URL: ollama.url,
        CONF_VISION_MODEL: "qwen2.5vl:3b",
        CONF_TEXT_MODEL: "qwen3:1.7b",
        CONF_HARDWARE: "gpu",
        CONF_AI_ENABLED: True,
    }
    # The entry was set up: one camera entity per simulated camera.
    cams = hass.states.async_entity_ids("camera")
    assert len(cams) == len(sim.config.cameras)


async def test_model_without_vision_is_refused(
    hass: HomeAssistant, sim: OpenNVRSimulator, ollama: FakeOllama
) -> None:
    result = await _site_step(hass, sim)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_TRANSPORT: TRANSPORT_WEBSOCKET}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_OLLAMA_URL: ollama.url, CONF_SKIP_AI: False}
    )
    # A model that cannot see pictures is not one of the vision field's choices.
    for model in ("gemma3:1b", "llava:7b"):
        with pytest.raises(InvalidData):
            await hass.config_entries.flow.async_configure(
                result["flow_id"],
                {CONF_VISION_MODEL: model, CONF_TEXT_MODEL: "qwen3:1.7b", CONF_HARDWARE: "cpu"},
            )
    # The server changed since the list was read: the check on saving still refuses.
    ollama.models["qwen2.5vl:3b"] = ("completion",)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_VISION_MODEL: "qwen2.5vl:3b", CONF_TEXT_MODEL: "qwen3:1.7b", CONF_HARDWARE: "cpu"},
    )
    assert result["errors"] == {CONF_VISION_MODEL: "model_no_vision"}
    assert result["description_placeholders"]["model"] == "qwen2.5vl:3b"

    del ollama.models["qwen2.5vl:3b"]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_VISION_MODEL: "qwen2.5vl:3b", CONF_TEXT_MODEL: "qwen3:1.7b", CONF_HARDWARE: "cpu"},
    )
    assert result["errors"] == {CONF_VISION_MODEL: "model_model_not_found"}


async def _models_page(hass: HomeAssistant, sim: OpenNVRSimulator, url: str) -> dict:
    result = await _site_step(hass, sim)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_TRANSPORT: TRANSPORT_WEBSOCKET}
    )
    return await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_OLLAMA_URL: url, CONF_SKIP_AI: False}
    )


async def test_the_models_page_defaults_can_be_submitted(
    hass: HomeAssistant, sim: OpenNVRSimulator, ollama: FakeOllama
) -> None:
    """The text-only model sorts first; the vision field's default is still one that sees."""
    assert sorted(ollama.models)[0] == "gemma3:1b"
    result = await _models_page(hass, sim, ollama.url)
    assert defaults(result)[CONF_VISION_MODEL] == "qwen2.5vl:3b"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], defaults(result))
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["options"][CONF_VISION_MODEL] == "qwen2.5vl:3b"


async def test_a_server_with_no_model_that_sees_is_named_on_the_ollama_page(
    hass: HomeAssistant, sim: OpenNVRSimulator, socket_enabled: None
) -> None:
    async with FakeOllama(models={"gemma3:1b": ("completion",)}) as text_only:
        result = await _models_page(hass, sim, text_only.url)
    assert result["step_id"] == "ollama"
    assert result["errors"] == {"base": "ollama_no_vision_models"}


@pytest.mark.parametrize("url", ["ollama.local:11434", "http//127.0.0.1:11434", "http://", "x y"])
async def test_an_ollama_address_that_is_not_one_says_so(
    hass: HomeAssistant, sim: OpenNVRSimulator, url: str
) -> None:
    result = await _models_page(hass, sim, url)
    assert result["errors"] == {CONF_OLLAMA_URL: "invalid_url"}
    assert result["description_placeholders"]["url_example"].startswith("http")


async def test_https_to_a_plain_ollama_says_so(
    hass: HomeAssistant, sim: OpenNVRSimulator, ollama: FakeOllama
) -> None:
    result = await _models_page(hass, sim, ollama.url.replace("http://", "https://"))
    assert result["errors"] == {"base": "not_tls"}


async def test_unreachable_ollama_can_be_skipped(
    hass: HomeAssistant, sim: OpenNVRSimulator, ollama: FakeOllama
) -> None:
    url = ollama.url
    await ollama.stop()
    result = await _site_step(hass, sim)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_TRANSPORT: TRANSPORT_WEBSOCKET}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_OLLAMA_URL: url, CONF_SKIP_AI: False}
    )
    assert result["errors"] == {"base": "ollama_cannot_connect"}

    result = await _skip_ai(hass, result["flow_id"])
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["options"] == {
        CONF_TRANSPORT: TRANSPORT_WEBSOCKET,
        CONF_OLLAMA_URL: "http://127.0.0.1:9",
        CONF_AI_ENABLED: False,
    }


@pytest.mark.parametrize(
    ("change", "error", "placeholder"),
    [
        ({"token": "onvr_wrong000_secret"}, "invalid_auth", None),
        ({"scopes": ("cameras.view", "alerts.view")}, "missing_scopes", "live.view"),
        ({"scopes": ("cameras.view",)}, "missing_scopes", "alerts.view, live.view"),
        ({"contract_version": "2.0.0"}, "unsupported_contract", "2.0.0"),
    ],
)
async def test_user_flow_errors_from_the_site(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    change: dict,
    error: str,
    placeholder: str | None,
) -> None:
    token = sim.config.token
    sim.config = replace(sim.config, **{k: v for k, v in change.items() if k != "token"})
    flow_id = await _start_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: change.get("token", token), CONF_VERIFY_SSL: True}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": error}
    if placeholder is not None:
        assert placeholder in result["description_placeholders"].values()


async def test_user_flow_cannot_connect_then_recovers(
    hass: HomeAssistant, sim: OpenNVRSimulator
) -> None:
    url = sim.url
    await sim.stop()
    flow_id = await _start_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: url, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: True}
    )
    assert result["errors"] == {"base": "cannot_connect"}

    await sim.start()  # a new port: the user corrects the URL on the same form
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: True}
    )
    assert result["step_id"] == "transport"


async def test_user_flow_not_opennvr(hass: HomeAssistant, sim: OpenNVRSimulator) -> None:
    flow_id = await _start_flow(hass)
    # /health answers JSON, but nothing under it is OpenNVR's API.
    result = await hass.config_entries.flow.async_configure(
        flow_id,
        {CONF_URL: sim.url + "/health", CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: True},
    )
    assert result["errors"] == {"base": "not_opennvr"}


@pytest.mark.parametrize(
    "url", ["nvr.local", "nvr.local:8080", "https//nvr.local", "https://", "a b"]
)
async def test_an_address_that_is_not_one_says_so(
    hass: HomeAssistant, sim: OpenNVRSimulator, url: str
) -> None:
    flow_id = await _start_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: url, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: True}
    )
    assert result["errors"] == {CONF_URL: "invalid_url"}
    assert result["description_placeholders"]["url_example"] == "https://nvr.local"


@pytest.mark.parametrize("verify", [True, False])
async def test_https_to_a_plain_http_server_says_so(
    hass: HomeAssistant, sim: OpenNVRSimulator, verify: bool
) -> None:
    """Not a certificate problem, and turning verification off would not help."""
    assert sim.url.startswith("http://")
    flow_id = await _start_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        flow_id,
        {
            CONF_URL: sim.url.replace("http://", "https://"),
            CONF_TOKEN: sim.config.token,
            CONF_VERIFY_SSL: verify,
        },
    )
    assert result["errors"] == {"base": "not_tls"}


async def test_a_handshake_that_fails_without_verifying_is_not_a_certificate_problem(
    hass: HomeAssistant, socket_enabled: None
) -> None:
    """A server that speaks neither TLS nor HTTP: with verification on it is the
    certificate error (it might be one); with it off, the handshake itself failed."""

    async def babble(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SSH-2.0-not-a-web-server\r\n" * 4)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(babble, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        for verify, error in ((True, "ssl_error"), (False, "tls_failed")):
            flow_id = await _start_flow(hass)
            result = await hass.config_entries.flow.async_configure(
                flow_id,
                {
                    CONF_URL: f"https://127.0.0.1:{port}",
                    CONF_TOKEN: "onvr_any00000_x",
                    CONF_VERIFY_SSL: verify,
                },
            )
            assert result["errors"] == {"base": error}
    finally:
        server.close()
        await server.wait_closed()


async def _broker_page(hass: HomeAssistant, sim: OpenNVRSimulator) -> dict:
    result = await _site_step(hass, sim)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_TRANSPORT: TRANSPORT_MQTT}
    )
    assert result["step_id"] == "mqtt_broker"
    return result


async def test_home_assistants_mqtt_is_the_default_only_when_it_is_set_up(
    hass: HomeAssistant, sim: OpenNVRSimulator
) -> None:
    result = await _broker_page(hass, sim)
    assert defaults(result)[CONF_MQTT_USE_HA] is False
    # Submitting the defaults asks for the broker, not for an integration that is not there.
    result = await hass.config_entries.flow.async_configure(result["flow_id"], defaults(result))
    assert result["errors"] == {"mqtt_host": "mqtt_host_required"}
    hass.config_entries.flow.async_abort(result["flow_id"])

    mqtt_entry = MockConfigEntry(domain="mqtt", state=ConfigEntryState.LOADED)
    mqtt_entry.add_to_hass(hass)
    result = await _broker_page(hass, sim)
    assert defaults(result)[CONF_MQTT_USE_HA] is True
    # Only a running integration counts: one that failed to start is not "there".
    hass.config_entries.flow.async_abort(result["flow_id"])
    mqtt_entry.mock_state(hass, ConfigEntryState.SETUP_ERROR)
    result = await _broker_page(hass, sim)
    assert defaults(result)[CONF_MQTT_USE_HA] is False


async def test_self_signed_certificate(hass: HomeAssistant, sim: OpenNVRSimulator) -> None:
    """A self-signed certificate is a named error while verifying, and fine when not."""
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()

    def ignore_refused_handshake(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        # The simulator's side of the handshake our client rightly refused.
        if not str(context.get("message", "")).startswith("Error on transport creation"):
            (previous or asyncio.AbstractEventLoop.default_exception_handler)(loop, context)

    loop.set_exception_handler(ignore_refused_handshake)
    await sim.stop()
    await sim.start(ssl_context=self_signed_context())
    assert sim.url.startswith("https://")
    flow_id = await _start_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: True}
    )
    assert result["errors"] == {"base": "ssl_error"}

    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: False}
    )
    assert result["step_id"] == "transport"
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_TRANSPORT: TRANSPORT_WEBSOCKET}
    )
    result = await _skip_ai(hass, flow_id)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_VERIFY_SSL] is False
    loop.set_exception_handler(previous)


async def test_duplicate_site_aborts(
    hass: HomeAssistant, sim: OpenNVRSimulator, config_entry: MockConfigEntry
) -> None:
    flow_id = await _start_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: True}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


async def test_reauth_replaces_token(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    sim.config = replace(sim.config, token="onvr_new00000_rotatedsecret")
    result = await setup_entry.start_reauth_flow(hass)
    assert result["step_id"] == "reauth_confirm"
    assert result["description_placeholders"]["url"] == sim.url

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_TOKEN: "onvr_still000_wrong"}
    )
    assert result["errors"] == {"base": "invalid_auth"}

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_TOKEN: sim.config.token}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert setup_entry.data[CONF_TOKEN] == sim.config.token


async def test_reauth_refuses_another_site(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    sim.config = replace(sim.config, site_id="another-site")
    result = await setup_entry.start_reauth_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_TOKEN: sim.config.token}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "wrong_site"


async def test_reconfigure_changes_url(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await setup_entry.start_reconfigure_flow(hass)
    assert result["step_id"] == "reconfigure"

    # The same site on another address (a new port stands in for a new host name).
    await sim.stop()
    await sim.start()
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: False}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert setup_entry.data[CONF_URL] == sim.url
    assert setup_entry.data[CONF_VERIFY_SSL] is False


async def test_reconfigure_error_then_wrong_site(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await setup_entry.start_reconfigure_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_TOKEN: "onvr_bad00000_x", CONF_VERIFY_SSL: True}
    )
    assert result["errors"] == {"base": "invalid_auth"}

    sim.config = replace(sim.config, site_id="another-site")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: True}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "wrong_site"


def test_no_step_takes_the_name_of_a_home_assistant_entry_point() -> None:
    """``async_step_mqtt``, ``async_step_zeroconf``... are where Home Assistant starts a
    flow for a discovery; a shared step with such a name would receive it."""
    steps = [name for name in vars(TransportAndAISteps) if name.startswith("async_step_")]
    assert "async_step_mqtt_broker" in steps
    for name in steps:
        assert not hasattr(ConfigFlow, name), name
        assert not hasattr(OptionsFlow, name), name


async def test_mqtt_discovery_does_not_land_in_the_broker_step(
    hass: HomeAssistant, sim: OpenNVRSimulator
) -> None:
    discovery = MqttServiceInfo(
        topic="opennvr/alerts",
        payload="{}",
        qos=0,
        retain=False,
        subscribed_topic="opennvr/#",
        timestamp=0.0,
    )
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": SOURCE_MQTT}, data=discovery
    )
    # Home Assistant's own discovery handling: the site form, as for a user.
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"


async def test_a_refused_token_is_not_sent_back_to_the_browser(
    hass: HomeAssistant, sim: OpenNVRSimulator
) -> None:
    flow_id = await _start_flow(hass)
    wrong = "onvr_wrong000_typedsecret"
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: wrong, CONF_VERIFY_SSL: True}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    form = sent_to_browser(result)
    assert sim.url in form  # the URL is kept for the user to correct
    assert wrong not in form


def suggested(result: Any, field: str) -> Any:
    """The value a form shows in ``field`` when it opens (None when it shows none)."""
    key = next(k for k in result["data_schema"].schema if k == field)
    return (key.description or {}).get("suggested_value")


@pytest.mark.parametrize(
    ("url", "error"),
    [("nvr at home", {CONF_URL: "invalid_url"}), ("/health", {"base": "not_opennvr"})],
)
async def test_an_address_error_keeps_the_typed_token(
    hass: HomeAssistant, sim: OpenNVRSimulator, url: str, error: dict[str, str]
) -> None:
    """The user corrects the address only: the token they typed is still in the form."""
    flow_id = await _start_flow(hass)
    typed = sim.url + url if url.startswith("/") else url
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: typed, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: False}
    )
    assert result["errors"] == error
    assert suggested(result, CONF_TOKEN) == sim.config.token
    assert suggested(result, CONF_URL) == typed
    assert suggested(result, CONF_VERIFY_SSL) is False

    # Submitted as the form now stands (the URL corrected), the site is added.
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: suggested(result, CONF_TOKEN)}
    )
    assert result["step_id"] == "transport"


async def test_reconfigure_never_shows_the_token_and_a_blank_one_keeps_it(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await setup_entry.start_reconfigure_flow(hass)
    form = sent_to_browser(result)
    assert sim.url in form
    assert sim.config.token not in form

    await sim.stop()
    await sim.start()  # a new port: only the URL changes
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_VERIFY_SSL: True}
    )
    await hass.async_block_till_done()
    assert result["reason"] == "reconfigure_successful"
    assert setup_entry.data[CONF_URL] == sim.url
    assert setup_entry.data[CONF_TOKEN] == sim.config.token

    # A token given replaces it (and is checked like any other).
    result = await setup_entry.start_reconfigure_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_TOKEN: "onvr_bad00000_x", CONF_VERIFY_SSL: True}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    assert "onvr_bad00000_x" not in sent_to_browser(result)
