"""Config flow: add an OpenNVR site by URL and API token; reauth and reconfigure.

Every step checks the site the same way (``nvr_client.async_check_site``) and turns what is
wrong into a form error that names it: not a web address, unreachable, ``https`` to a
server without it, certificate, bad token, which scopes the token lacks, a contract this
version does not speak.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import probatio as vol
from homeassistant.config_entries import ConfigEntry, ConfigFlow, ConfigFlowResult
from homeassistant.const import CONF_TOKEN, CONF_URL
from homeassistant.core import callback
from homeassistant.helpers.selector import (
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)

from .const import CONF_VERIFY_SSL, DOMAIN, LOGGER, TITLE
from .flows.options import OpenNVRWorkflowsOptionsFlow
from .flows.steps import TransportAndAISteps, merge_options, suggestions
from .flows.urls import URL_EXAMPLE, async_speaks_plain_http, web_address_problem
from .nvr_client import CheckedSite, SiteCheckError, async_check_site

_URL = TextSelector(TextSelectorConfig(type=TextSelectorType.URL))
_TOKEN = TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))


USER_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_URL): _URL,
        vol.Required(CONF_TOKEN): _TOKEN,
        vol.Required(CONF_VERIFY_SSL, default=True): bool,
    }
)
#: As USER_SCHEMA, but the stored token is never shown: a blank token keeps it.
RECONFIGURE_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_URL): _URL,
        vol.Optional(CONF_TOKEN): _TOKEN,
        vol.Required(CONF_VERIFY_SSL, default=True): bool,
    }
)


#: Form errors that refuse the token itself: the form does not send that token back.
TOKEN_REFUSED: Final = frozenset({"invalid_auth", "missing_scopes"})


def _normalise(user_input: Mapping[str, Any]) -> dict[str, Any]:
    return {
        CONF_URL: str(user_input[CONF_URL]).strip().rstrip("/"),
        CONF_TOKEN: str(user_input[CONF_TOKEN]).strip(),
        CONF_VERIFY_SSL: bool(user_input.get(CONF_VERIFY_SSL, True)),
    }


def _kept_input(user_input: Mapping[str, Any], errors: Mapping[str, str]) -> dict[str, Any]:
    """What the form shows again after an error: everything typed, the token included
    when the error is about the address (the user corrects only that), but not a token
    the site refused."""
    kept = suggestions(user_input)
    if CONF_TOKEN in user_input and not TOKEN_REFUSED.intersection(errors.values()):
        kept[CONF_TOKEN] = user_input[CONF_TOKEN]
    return kept


class OpenNVRWorkflowsConfigFlow(TransportAndAISteps, ConfigFlow, domain=DOMAIN):
    """Add one OpenNVR site; its ``site_id`` is the entry's unique id."""

    VERSION = 1
    MINOR_VERSION = 1

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self._collected: dict[str, Any] = {}
        self._title = TITLE
        self._models: dict[str, tuple[str, ...]] = {}

    @staticmethod
    @callback
    def async_get_options_flow(config_entry: ConfigEntry) -> OpenNVRWorkflowsOptionsFlow:
        return OpenNVRWorkflowsOptionsFlow()

    async def _check(
        self, data: Mapping[str, Any], errors: dict[str, str], placeholders: dict[str, str]
    ) -> CheckedSite | None:
        if problem := web_address_problem(data[CONF_URL]):
            errors[CONF_URL] = problem
            placeholders.setdefault("url_example", URL_EXAMPLE)
            return None
        try:
            return await async_check_site(
                self.hass, data[CONF_URL], data[CONF_TOKEN], data[CONF_VERIFY_SSL]
            )
        except SiteCheckError as err:
            LOGGER.debug("OpenNVR site check failed (%s): %s", err.key, err)
            errors["base"] = await self._tls_reason(err.key, data)
            placeholders.update(err.placeholders)
            return None

    async def _tls_reason(self, key: str, data: Mapping[str, Any]) -> str:
        """A failed TLS handshake is a certificate problem only when the certificate was
        checked and the server speaks TLS at all: ``https`` to a plain-HTTP server is
        ``not_tls``, and a handshake that fails without checking is ``tls_failed``."""
        if key != "ssl_error":
            return key
        if await async_speaks_plain_http(self.hass, data[CONF_URL]):
            return "not_tls"
        return key if data[CONF_VERIFY_SSL] else "tls_failed"

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        errors: dict[str, str] = {}
        placeholders: dict[str, str] = {"url_example": URL_EXAMPLE}
        kept: dict[str, Any] = {}
        if user_input is not None:
            data = _normalise(user_input)
            if site := await self._check(data, errors, placeholders):
                await self.async_set_unique_id(site.info.site_id)
                self._abort_if_unique_id_configured(updates={CONF_URL: data[CONF_URL]})
                self._data = data
                self._title = site.info.name or TITLE
                return await self.async_step_transport()
            kept = _kept_input(user_input, errors)
        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(USER_SCHEMA, kept),
            errors=errors,
            description_placeholders=placeholders,
        )

    # ── after the site: event transport, then Ollama (TransportAndAISteps) ──

    async def _transport_done(self) -> ConfigFlowResult:
        return await self.async_step_ollama()

    async def _ai_done(self) -> ConfigFlowResult:
        return self._create()

    def _create(self) -> ConfigFlowResult:
        return self.async_create_entry(
            title=self._title, data=self._data, options=merge_options({}, self._collected)
        )

    async def async_step_reauth(self, entry_data: Mapping[str, Any]) -> ConfigFlowResult:
        return await self.async_step_reauth_confirm()

    async def async_step_reauth_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask only for a new token; the URL and site stay as they were."""
        entry = self._get_reauth_entry()
        errors: dict[str, str] = {}
        placeholders: dict[str, str] = {"url": entry.data[CONF_URL]}
        if user_input is not None:
            data = {**entry.data, CONF_TOKEN: str(user_input[CONF_TOKEN]).strip()}
            if site := await self._check(data, errors, placeholders):
                await self.async_set_unique_id(site.info.site_id)
                self._abort_if_unique_id_mismatch(reason="wrong_site")
                return self.async_update_reload_and_abort(entry, data=data)
        return self.async_show_form(
            step_id="reauth_confirm",
            data_schema=vol.Schema({vol.Required(CONF_TOKEN): _TOKEN}),
            errors=errors,
            description_placeholders=placeholders,
        )

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Change URL, token or certificate checking of the same site. The stored token
        is not shown; left blank, it is kept."""
        entry = self._get_reconfigure_entry()
        errors: dict[str, str] = {}
        placeholders: dict[str, str] = {"url_example": URL_EXAMPLE}
        if user_input is not None:
            token = str(user_input.get(CONF_TOKEN) or "").strip() or entry.data[CONF_TOKEN]
            data = _normalise({**user_input, CONF_TOKEN: token})
            if site := await self._check(data, errors, placeholders):
                await self.async_set_unique_id(site.info.site_id)
                self._abort_if_unique_id_mismatch(reason="wrong_site")
                return self.async_update_reload_and_abort(entry, data=data)
        return self.async_show_form(
            step_id="reconfigure",
            data_schema=self.add_suggested_values_to_schema(
                RECONFIGURE_SCHEMA, suggestions(user_input or entry.data)
            ),
            errors=errors,
            description_placeholders=placeholders,
        )
