"""Builds and checks the OpenNVR client, shared by the config flow and entry setup.

One place decides what "this site is usable" means: the server answers, speaks contract
1.x, and the token carries the scopes we need. The config flow turns the outcome into
form errors; entry setup turns it into ConfigEntryNotReady / ConfigEntryAuthFailed.
"""

from __future__ import annotations

from dataclasses import dataclass

from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from pyopennvr import (
    OpenNVRAuthError,
    OpenNVRClient,
    OpenNVRConnectionError,
    OpenNVRContractError,
    OpenNVRError,
    OpenNVRSSLError,
    SystemInfo,
    check_contract,
)

from .const import REQUEST_TIMEOUT_SECONDS, REQUIRED_SCOPES


class SiteCheckError(Exception):
    """Why a site cannot be used; ``key`` is the translation key of the form error."""

    def __init__(self, key: str, detail: str = "", placeholders: dict[str, str] | None = None):
        super().__init__(detail or key)
        self.key = key
        self.placeholders = placeholders or {}


@dataclass(frozen=True, slots=True)
class CheckedSite:
    client: OpenNVRClient
    info: SystemInfo


def build_client(hass: HomeAssistant, url: str, token: str, verify_ssl: bool) -> OpenNVRClient:
    """A client on Home Assistant's shared aiohttp session (never a session of our own)."""
    session = async_get_clientsession(hass, verify_ssl=verify_ssl)
    return OpenNVRClient(
        url, token, session, verify_ssl=verify_ssl, request_timeout=REQUEST_TIMEOUT_SECONDS
    )


async def async_check_site(
    hass: HomeAssistant, url: str, token: str, verify_ssl: bool
) -> CheckedSite:
    """Connect, read the site's info and check contract and scopes, or raise SiteCheckError."""
    client = build_client(hass, url, token, verify_ssl)
    try:
        info = await client.get_system_info()
        check_contract(info)
    except OpenNVRSSLError as err:
        raise SiteCheckError("ssl_error", str(err)) from err
    except OpenNVRConnectionError as err:
        raise SiteCheckError("cannot_connect", str(err)) from err
    except OpenNVRAuthError as err:
        raise SiteCheckError("invalid_auth", str(err)) from err
    except OpenNVRContractError as err:
        raise SiteCheckError(
            "unsupported_contract",
            str(err),
            {"version": str(err.server_version or "unknown")},
        ) from err
    except (OpenNVRError, KeyError, ValueError, TypeError) as err:
        # A server that answers but not like OpenNVR (wrong URL, a proxy's page).
        raise SiteCheckError("not_opennvr", str(err)) from err
    scopes = info.scopes
    if scopes is not None and (missing := REQUIRED_SCOPES - scopes):
        raise SiteCheckError(
            "missing_scopes",
            ", ".join(sorted(missing)),
            {"scopes": ", ".join(sorted(missing))},
        )
    return CheckedSite(client, info)
