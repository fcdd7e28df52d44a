"""Forms and checks shared by the config flow and the options flow.

The event transport and the Ollama settings are asked for when a site is added and can be
changed later from the options; both flows use these schemas and validators so the two
never disagree about what is valid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import probatio as vol
from homeassistant.config_entries import ConfigFlowResult
from homeassistant.const import CONF_TOKEN
from homeassistant.core import HomeAssistant
from homeassistant.helpers.selector import (
    BooleanSelector,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
from homeassistant.util.ssl import get_default_context

from ..ai.model_check import check_model
from ..const import (
    CONF_AI_ENABLED,
    CONF_EMBEDDING_MODEL,
    CONF_HARDWARE,
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
    CONF_OLLAMA_ANYWHERE,
    CONF_OLLAMA_URL,
    CONF_TEXT_MODEL,
    CONF_TRANSPORT,
    CONF_VISION_MODEL,
    DEFAULT_OLLAMA_URL,
    HARDWARE_CPU,
    HARDWARE_GPU,
    LOGGER,
    TRANSPORT_MQTT,
    TRANSPORT_NATS,
    TRANSPORT_WEBSOCKET,
    TRANSPORTS,
)
from ..local_network import async_is_local
from ..nvr.sources.factory import TransportTestError, async_test_mqtt, async_test_nats
from .models import async_model_capabilities, embedding_models, vision_models
from .urls import NATS_URL_EXAMPLE, TLS_URL_EXAMPLE, async_speaks_plain_http, web_address_problem

CONF_SKIP_AI = "skip_ai"

_TEXT = TextSelector()
_URL = TextSelector(TextSelectorConfig(type=TextSelectorType.URL))
_SECRET = TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))
_BOOL = BooleanSelector()


def _select(
    options: list[str], key: str | None, *, custom: bool = False, dropdown: bool = False
) -> SelectSelector:
    """A list, or a dropdown (always with ``custom``, which also takes a typed value);
    option labels come from the ``key`` selector translations when there is one."""
    config = SelectSelectorConfig(
        options=options,
        mode=SelectSelectorMode.DROPDOWN if custom or dropdown else SelectSelectorMode.LIST,
        custom_value=custom,
    )
    if key is not None:
        config["translation_key"] = key
    return SelectSelector(config)


#: Fields whose values never go back to the browser, not even as a form's suggested value
#: (anyone who can open the form could read them there). A secret field left blank keeps
#: the stored value: see :func:`submitted` and the config flow's reconfigure step.
SECRET_FIELDS: Final = frozenset(
    {CONF_TOKEN, CONF_NATS_TOKEN, CONF_NATS_PASSWORD, CONF_MQTT_PASSWORD}
)

#: Each secret of a broker login with the user-name field it goes with, and whether it
#: applies with a user name (a password) or without one (NATS's token): a stored secret is
#: kept for a blank field only while the login it belongs to is still the one given.
_LOGIN_SECRETS: Final[Mapping[str, tuple[str, bool]]] = {
    CONF_NATS_TOKEN: (CONF_NATS_USER, False),
    CONF_NATS_PASSWORD: (CONF_NATS_USER, True),
    CONF_MQTT_PASSWORD: (CONF_MQTT_USER, True),
}


def suggestions(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` fit to pre-fill a form with: everything but the secrets."""
    return {key: value for key, value in values.items() if key not in SECRET_FIELDS}


def _opt(key: str, defaults: Mapping[str, Any], fallback: Any = None) -> vol.Optional:
    """An optional field that shows its current value (or nothing) as a suggestion; a
    secret field never shows one."""
    value = suggestions(defaults).get(key, fallback)
    return vol.Optional(key, description={"suggested_value": value} if value else None)


# ── event transport ─────────────────────────────────────────────────────────


def transport_schema(defaults: Mapping[str, Any]) -> vol.Schema:
    return vol.Schema(
        {
            vol.Required(
                CONF_TRANSPORT, default=defaults.get(CONF_TRANSPORT, TRANSPORT_WEBSOCKET)
            ): _select(list(TRANSPORTS), "transport"),
        }
    )


def nats_schema(defaults: Mapping[str, Any]) -> vol.Schema:
    return vol.Schema(
        {
            vol.Required(CONF_NATS_URL, default=defaults.get(CONF_NATS_URL, "nats://")): _TEXT,
            _opt(CONF_NATS_TOKEN, defaults): _SECRET,
            _opt(CONF_NATS_USER, defaults): _TEXT,
            _opt(CONF_NATS_PASSWORD, defaults): _SECRET,
            vol.Required(
                CONF_NATS_TLS_VERIFY, default=defaults.get(CONF_NATS_TLS_VERIFY, True)
            ): _BOOL,
        }
    )


def mqtt_schema(defaults: Mapping[str, Any], ha_mqtt: bool = False) -> vol.Schema:
    """The broker form; "use Home Assistant's MQTT integration" is on by default only when
    that integration is running (``ha_mqtt``), so the defaults can be submitted as they are."""
    return vol.Schema(
        {
            vol.Required(CONF_MQTT_USE_HA, default=defaults.get(CONF_MQTT_USE_HA, ha_mqtt)): _BOOL,
            _opt(CONF_MQTT_HOST, defaults): _TEXT,
            vol.Required(
                CONF_MQTT_PORT, default=defaults.get(CONF_MQTT_PORT, 1883)
            ): NumberSelector(NumberSelectorConfig(min=1, max=65535, mode=NumberSelectorMode.BOX)),
            _opt(CONF_MQTT_USER, defaults): _TEXT,
            _opt(CONF_MQTT_PASSWORD, defaults): _SECRET,
            vol.Required(CONF_MQTT_TLS, default=defaults.get(CONF_MQTT_TLS, False)): _BOOL,
            vol.Required(CONF_MQTT_SITE, default=defaults.get(CONF_MQTT_SITE, "+")): _TEXT,
        }
    )


def clean(user_input: Mapping[str, Any]) -> dict[str, Any]:
    """Strip text, drop empty optional values, make the port an int."""
    out: dict[str, Any] = {}
    for key, raw in user_input.items():
        value = raw.strip() if isinstance(raw, str) else raw
        if value == "":
            continue
        out[key] = value
    if CONF_MQTT_PORT in out:
        out[CONF_MQTT_PORT] = int(out[CONF_MQTT_PORT])
    return out


def submitted(
    schema: vol.Schema, user_input: Mapping[str, Any], stored: Mapping[str, Any]
) -> dict[str, Any]:
    """Every field of a broker form, cleaned: None for one left blank, so that saving it
    removes the stored value (see :func:`merge_options`). A secret is the exception, as
    the form never shows it: left blank, it keeps the stored one while its login still
    applies (a password while a user name is given, NATS's token while none is)."""
    settings = clean(user_input)
    fields: dict[str, Any] = {}
    for key in map(str, schema.schema):
        value = settings.get(key)
        if value is None and key in _LOGIN_SECRETS:
            user_field, with_user = _LOGIN_SECRETS[key]
            if bool(settings.get(user_field)) == with_user:
                value = stored.get(key)
        fields[key] = value
    return fields


def given(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields that have a value (what a connection test is made with)."""
    return {key: value for key, value in fields.items() if value is not None}


def merge_options(stored: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """The options to save: ``stored`` updated with ``changes``, where a None (a field
    the user cleared) removes the stored value."""
    merged = dict(stored)
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


async def async_validate_nats(settings: Mapping[str, Any]) -> dict[str, str]:
    try:
        await async_test_nats(settings)
    except TransportTestError as err:
        LOGGER.debug("NATS check failed: %s", err)
        return {"base": err.key}
    return {}


async def async_validate_mqtt(hass: HomeAssistant, settings: Mapping[str, Any]) -> dict[str, str]:
    if not settings.get(CONF_MQTT_USE_HA) and not settings.get(CONF_MQTT_HOST):
        return {CONF_MQTT_HOST: "mqtt_host_required"}
    try:
        await async_test_mqtt(hass, settings)
    except TransportTestError as err:
        LOGGER.debug("MQTT check failed: %s", err)
        return {"base": err.key}
    return {}


# ── Ollama ──────────────────────────────────────────────────────────────────


#: The form's placeholders for the Ollama step: its example address.
OLLAMA_PLACEHOLDERS: Final = {"url_example": DEFAULT_OLLAMA_URL}
#: The form's placeholders for the NATS step: its example addresses.
NATS_PLACEHOLDERS: Final = {"nats_example": NATS_URL_EXAMPLE, "tls_example": TLS_URL_EXAMPLE}


def ollama_schema(defaults: Mapping[str, Any]) -> vol.Schema:
    return vol.Schema(
        {
            vol.Required(
                CONF_OLLAMA_URL, default=defaults.get(CONF_OLLAMA_URL, DEFAULT_OLLAMA_URL)
            ): _URL,
            vol.Required(
                CONF_OLLAMA_ANYWHERE, default=bool(defaults.get(CONF_OLLAMA_ANYWHERE, False))
            ): _BOOL,
            vol.Required(CONF_SKIP_AI, default=False): _BOOL,
        }
    )


def models_schema(models: Mapping[str, tuple[str, ...]], defaults: Mapping[str, Any]) -> vol.Schema:
    """The vision field offers only the models that can see pictures; the text field any
    model. A default is only ever one of the choices, so the defaults can be submitted."""
    seeing = vision_models(dict(models))
    vision = defaults.get(CONF_VISION_MODEL)
    if vision not in seeing:
        vision = seeing[0] if seeing else ""
    text = defaults.get(CONF_TEXT_MODEL)
    if text not in models:
        text = vision
    fields: dict[Any, Any] = {
        vol.Required(CONF_VISION_MODEL, default=vision): _select(seeing, None, dropdown=True),
        vol.Required(CONF_TEXT_MODEL, default=text): _select(list(models), None, custom=True),
        vol.Required(CONF_HARDWARE, default=defaults.get(CONF_HARDWARE, HARDWARE_CPU)): _select(
            [HARDWARE_CPU, HARDWARE_GPU], "hardware"
        ),
    }
    # History search by meaning: offered only when the server has an embedding model.
    if embedders := embedding_models(dict(models)):
        chosen = defaults.get(CONF_EMBEDDING_MODEL)
        fields[
            vol.Optional(
                CONF_EMBEDDING_MODEL,
                description={"suggested_value": chosen if chosen in embedders else None},
            )
        ] = _select(embedders, None, dropdown=True)
    return vol.Schema(fields)


async def async_validate_models(
    settings: Mapping[str, Any], errors: dict[str, str], placeholders: dict[str, str]
) -> None:
    """The vision model must see pictures; the text model only has to exist."""
    url = settings[CONF_OLLAMA_URL]
    vision = await check_model(
        url, settings[CONF_VISION_MODEL], need_vision=True, ssl_context=get_default_context()
    )
    if vision.error:
        errors[CONF_VISION_MODEL] = f"model_{vision.error}"
        placeholders["model"] = settings[CONF_VISION_MODEL]
        return
    text = await check_model(
        url, settings[CONF_TEXT_MODEL], need_vision=False, ssl_context=get_default_context()
    )
    if text.error:
        errors[CONF_TEXT_MODEL] = f"model_{text.error}"
        placeholders["model"] = settings[CONF_TEXT_MODEL]


def ai_disabled(url: str) -> dict[str, Any]:
    """Options when the user goes on without Ollama: AI steps answer unsure until set."""
    return {CONF_OLLAMA_URL: url, CONF_AI_ENABLED: False}


class TransportAndAISteps:
    """The transport, NATS, MQTT, Ollama and models steps, for a config or options flow.

    The flow using it supplies ``_collected`` (what the steps gathered so far; a None
    there is a field cleared, for :func:`merge_options`), ``_step_defaults()`` (what is
    stored: pre-filled, secrets excepted) and the two continuations: what happens once
    the transport is settled, and once the AI settings are.

    Step names must not be one of Home Assistant's own flow entry points: the MQTT broker
    step is ``mqtt_broker`` because ``async_step_mqtt`` is where MQTT discovery starts a
    config flow.
    """

    hass: HomeAssistant
    _collected: dict[str, Any]
    _models: dict[str, tuple[str, ...]]

    if TYPE_CHECKING:  # provided by the ConfigFlow / OptionsFlow it is mixed into

        def async_show_form(self, **kwargs: Any) -> ConfigFlowResult: ...

    def _step_defaults(self) -> Mapping[str, Any]:
        return {}

    async def _transport_done(self) -> ConfigFlowResult:
        raise NotImplementedError

    async def _ai_done(self) -> ConfigFlowResult:
        raise NotImplementedError

    async def async_step_transport(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """How events arrive: the events websocket (needs nothing more), NATS or MQTT."""
        if user_input is not None:
            self._collected[CONF_TRANSPORT] = user_input[CONF_TRANSPORT]
            if user_input[CONF_TRANSPORT] == TRANSPORT_NATS:
                return await self.async_step_nats()
            if user_input[CONF_TRANSPORT] == TRANSPORT_MQTT:
                return await self.async_step_mqtt_broker()
            return await self._transport_done()
        return self.async_show_form(
            step_id="transport", data_schema=transport_schema(self._step_defaults())
        )

    async def async_step_nats(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """The NATS broker, tested before it is kept."""
        errors: dict[str, str] = {}
        if user_input is not None:
            fields = submitted(nats_schema({}), user_input, self._step_defaults())
            if not (errors := await async_validate_nats(given(fields))):
                self._collected.update(fields)
                return await self._transport_done()
        return self.async_show_form(
            step_id="nats",
            data_schema=nats_schema({**self._step_defaults(), **(user_input or {})}),
            errors=errors,
            description_placeholders=dict(NATS_PLACEHOLDERS),
        )

    async def async_step_mqtt_broker(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Home Assistant's MQTT integration, or a broker of its own, tested before it is
        kept."""
        errors: dict[str, str] = {}
        if user_input is not None:
            fields = submitted(mqtt_schema({}), user_input, self._step_defaults())
            if not (errors := await async_validate_mqtt(self.hass, given(fields))):
                self._collected.update(fields)
                return await self._transport_done()
        ha_mqtt = bool(self.hass.config_entries.async_loaded_entries("mqtt"))
        return self.async_show_form(
            step_id="mqtt_broker",
            data_schema=mqtt_schema({**self._step_defaults(), **(user_input or {})}, ha_mqtt),
            errors=errors,
        )

    async def async_step_ollama(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Where the local models run. Unreachable is an error the user may skip: AI steps
        are then unavailable and rule-based workflows still run. A server outside the
        local network is refused unless the admin ticks that pictures may go there (the
        flows are admins' only)."""
        errors: dict[str, str] = {}
        if user_input is not None:
            url = str(user_input[CONF_OLLAMA_URL]).strip().rstrip("/")
            anywhere = bool(user_input.get(CONF_OLLAMA_ANYWHERE, False))
            # Kept only when given (a None clears an earlier leave, see merge_options).
            self._collected[CONF_OLLAMA_ANYWHERE] = True if anywhere else None
            if user_input.get(CONF_SKIP_AI):
                self._collected.update(ai_disabled(url))
                return await self._ai_done()
            if problem := web_address_problem(url):
                errors[CONF_OLLAMA_URL] = problem
            elif not anywhere and not await async_is_local(url):
                errors[CONF_OLLAMA_URL] = "ollama_not_local"
            elif (models := await async_model_capabilities(url)) is None:
                plain = await async_speaks_plain_http(self.hass, url)
                errors["base"] = "not_tls" if plain else "ollama_cannot_connect"
            elif not models:
                errors["base"] = "ollama_no_models"
            elif not vision_models(models):
                errors["base"] = "ollama_no_vision_models"
            else:
                self._collected[CONF_OLLAMA_URL] = url
                self._models = models
                return await self.async_step_models()
        return self.async_show_form(
            step_id="ollama",
            data_schema=ollama_schema({**self._step_defaults(), **(user_input or {})}),
            errors=errors,
            description_placeholders=dict(OLLAMA_PLACEHOLDERS),
        )

    async def async_step_models(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """The vision model (checked for vision), the text model and the hardware class."""
        errors: dict[str, str] = {}
        placeholders: dict[str, str] = {"vision_models": ", ".join(vision_models(self._models))}
        if user_input is not None:
            settings = {**self._collected, **user_input}
            await async_validate_models(settings, errors, placeholders)
            if not errors:
                self._collected.update(user_input)
                # No embedding model chosen: history search by words only (a None clears it).
                self._collected.setdefault(CONF_EMBEDDING_MODEL, None)
                self._collected[CONF_AI_ENABLED] = True
                return await self._ai_done()
        return self.async_show_form(
            step_id="models",
            data_schema=models_schema(self._models, user_input or self._step_defaults()),
            errors=errors,
            description_placeholders=placeholders,
        )
