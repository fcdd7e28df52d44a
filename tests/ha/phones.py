"""Real phones for tests that run Home Assistant: companion-app registrations made the way
the apps make them, pushing to a local push gateway.

A :class:`Phone` is registered through ``POST /api/mobile_app/registrations`` with its
user's bearer token, so Home Assistant's own ``mobile_app`` creates the config entry, the
device, the webhook and the ``notify.mobile_app_<device>`` action. What that action sends
arrives at :class:`~tests.fakes.push_gateway.PushGateway` as the push service would get it;
a tap on a notification button is the app's webhook ``fire_event``, so the
``mobile_app_notification_action`` event carries the phone's user in ``context.user_id``
exactly as at a real site.

Use the fixtures in a test module with ``pytest_plugins = ["tests.ha.phones"]``::

    async def test_x(hass: HomeAssistant, phones: Phones) -> None:
        alice = await phones.user("Alice")
        pixel = await phones.register(alice, "Alice's Pixel")  # notify.mobile_app_alice_s_pixel
        await hass.services.async_call("notify", pixel.notify_service, {...}, blocking=True)
        assert pixel.received()[-1]["data"]["tag"] == ...
        await pixel.tap("APPROVE_...", tag=...)

After a restart (a second Home Assistant on the same config folder), ``await
phones_for(second, push_gateway, aiohttp_client)`` gives the second one's :class:`Phones`, and
``await its.restore(pixel)`` the same phone there: the same user id and registration, as
Home Assistant would have loaded them from storage.

(PYTEST_DONT_REWRITE: test modules import this module before ``pytest_plugins`` names it.)
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Literal

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from homeassistant.auth.const import GROUP_ID_ADMIN, GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr
from homeassistant.setup import async_setup_component
from homeassistant.util import slugify
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from tests.fakes.push_gateway import Push, PushGateway

MOBILE_APP = "mobile_app"
#: The event the companion apps fire when a notification's action button is tapped.
EVENT_NOTIFICATION_ACTION = "mobile_app_notification_action"

type OS = Literal["android", "ios"]


@dataclass(frozen=True)
class App:
    """What a companion app says about itself when it registers."""

    app_id: str
    os_name: str
    manufacturer: str
    model: str
    app_version: str
    os_version: str
    #: The OAuth client id the app logs in with (its refresh token's client).
    client_id: str
    #: Path of the push service's endpoint for this platform.
    push_path: str


APPS: Mapping[OS, App] = {
    "android": App(
        app_id="io.homeassistant.companion.android",
        os_name="Android",
        manufacturer="Google",
        model="Pixel 8",
        app_version="2026.10.1-full (1021)",
        os_version="16",
        client_id="https://home-assistant.io/android",
        push_path="/api/sendPush/android/v1",
    ),
    "ios": App(
        app_id="io.robbie.HomeAssistant",
        os_name="iOS",
        manufacturer="Apple",
        model="iPhone16,2",
        app_version="2026.10.1 (2026.1021)",
        os_version="26.0",
        client_id="https://home-assistant.io/iOS",
        push_path="/api/sendPushNotification",
    ),
}


@dataclass
class Phone:
    """One registered companion app: what to address it by, what it received, and its
    hand (:meth:`tap`)."""

    hass: HomeAssistant
    user: User
    os: OS
    device_name: str
    webhook_id: str
    push_token: str
    #: The notify action's name in the ``notify`` domain: ``mobile_app_<device slug>``.
    notify_service: str
    #: Home Assistant's device registry id of the phone.
    device_id: str
    #: The mobile_app config entry (its data is the registration).
    entry_id: str
    registration: dict[str, Any] = field(repr=False)
    _client: TestClient[web.Request, web.Application] = field(repr=False)
    _gateway: PushGateway = field(repr=False)

    @property
    def notify_action(self) -> str:
        """``notify.mobile_app_<device slug>``, as options and scripts name it."""
        return f"notify.{self.notify_service}"

    def received(self) -> list[Push]:
        """Every push the gateway accepted for this phone, oldest first."""
        return self._gateway.to(self.push_token)

    async def wait_for(self, predicate: Callable[[Push], bool], within: float = 5) -> Push:
        """The first push to this phone that ``predicate`` accepts (see
        :meth:`PushGateway.wait_for`)."""
        return await self._gateway.wait_for(
            lambda push: push.get("push_token") == self.push_token and predicate(push), within
        )

    async def tap(
        self, action: str, tag: str | None = None, extra: Mapping[str, Any] | None = None
    ) -> None:
        """Tap the notification button ``action`` (of the notification ``tag``): the app's
        ``fire_event`` webhook, unauthenticated like the app's; returns once the event's
        listeners have run."""
        event_data: dict[str, Any] = {"action": action, **(extra or {})}
        if tag is not None:
            event_data["tag"] = tag
        await self.fire_event(EVENT_NOTIFICATION_ACTION, event_data)

    async def fire_event(self, event_type: str, event_data: Mapping[str, Any]) -> None:
        """Any event the app may fire through its webhook (context user: this phone's)."""
        await self.webhook(
            {"type": "fire_event", "data": {"event_type": event_type, "event_data": event_data}}
        )

    async def webhook(self, payload: Mapping[str, Any]) -> Any:
        """POST ``payload`` to the registration's webhook; its JSON answer."""
        response = await self._client.post(f"/api/webhook/{self.webhook_id}", json=payload)
        if response.status != HTTPStatus.OK:
            raise AssertionError(
                f"webhook of {self.device_name} answered {response.status}: {await response.text()}"
            )
        body = await response.json()
        await self.hass.async_block_till_done()
        return body


class Phones:
    """Makes users and registers their phones on one Home Assistant, pushing to one
    gateway. Build it with :func:`phones_for` (or the ``phones`` fixture)."""

    def __init__(
        self,
        hass: HomeAssistant,
        gateway: PushGateway,
        client: TestClient[web.Request, web.Application],
    ) -> None:
        self.hass = hass
        self.gateway = gateway
        self._client = client

    async def user(self, name: str, *, admin: bool = False) -> User:
        """A new Home Assistant user, an administrator or a plain user, never the owner.

        Home Assistant makes the first user it creates the owner (onboarding), and an owner
        may do anything; so when there is no user yet, a site owner ("Owner") is created
        first, as every real site has one."""
        if not any(not u.system_generated for u in await self.hass.auth.async_get_users()):
            await self.hass.auth.async_create_user("Owner", group_ids=[GROUP_ID_ADMIN])
        user = await self.hass.auth.async_create_user(
            name, group_ids=[GROUP_ID_ADMIN if admin else GROUP_ID_USER]
        )
        assert not user.is_owner
        return user

    async def register(
        self,
        user: User,
        device_name: str,
        *,
        os: OS = "android",
        model: str | None = None,
        push_token: str | None = None,
    ) -> Phone:
        """Register ``user``'s phone as the app does (logged in as ``user``), and wait for
        its ``notify.mobile_app_<slug of device_name>`` action."""
        app = APPS[os]
        refresh_token = await self.hass.auth.async_create_refresh_token(user, app.client_id)
        access_token = self.hass.auth.async_create_access_token(refresh_token)
        token = push_token or f"{os}-push-{secrets.token_hex(8)}"
        body = {
            "device_id": secrets.token_hex(8),
            "device_name": device_name,
            "app_id": app.app_id,
            "app_name": "Home Assistant",
            "app_version": app.app_version,
            "os_name": app.os_name,
            "os_version": app.os_version,
            "manufacturer": app.manufacturer,
            "model": model or app.model,
            "supports_encryption": False,
            "app_data": {"push_url": self.gateway.url + app.push_path, "push_token": token},
        }
        response = await self._client.post(
            "/api/mobile_app/registrations",
            json=body,
            headers={"Authorization": f"Bearer {access_token}"},
        )
        if response.status != HTTPStatus.CREATED:
            raise AssertionError(
                f"registration of {device_name} answered {response.status}: {await response.text()}"
            )
        webhook_id = (await response.json())["webhook_id"]
        entry = await self._entry_of(webhook_id)
        return await self._phone(user, os, entry)

    async def restore(self, phone: Phone) -> Phone:
        """``phone`` on this Home Assistant as a restart leaves it: its user (same id and
        groups) and its registration (same config entry, webhook and push token), loaded
        rather than made again."""
        user = await self.hass.auth.async_get_user(phone.user.id)
        if user is None:
            user = await self._restored_user(phone.user)
        if self.hass.config_entries.async_get_entry(phone.entry_id) is None:
            entry = MockConfigEntry(
                domain=MOBILE_APP,
                entry_id=phone.entry_id,
                title=phone.device_name,
                data=dict(phone.registration),
                unique_id=f"{phone.registration['app_id']}-{phone.registration['device_id']}",
            )
            entry.add_to_hass(self.hass)
            assert await self.hass.config_entries.async_setup(entry.entry_id)
        return await self._phone(user, phone.os, await self._entry_of(phone.webhook_id))

    async def _restored_user(self, old: User) -> User:
        groups = []
        for group in old.groups:
            found = await self.hass.auth.async_get_group(group.id)
            assert found is not None, group.id
            groups.append(found)
        store = self.hass.auth._store
        user = User(
            id=old.id,
            name=old.name,
            is_owner=old.is_owner,
            is_active=old.is_active,
            system_generated=old.system_generated,
            local_only=old.local_only,
            groups=groups,
            perm_lookup=store._perm_lookup,
        )
        assert store._users is not None
        store._users[user.id] = user
        return user

    async def _entry_of(self, webhook_id: str) -> Any:
        """The registration's config entry, once set up, with its notify action there."""
        async with asyncio.timeout(5):
            while True:
                await self.hass.async_block_till_done()
                for entry in self.hass.config_entries.async_entries(MOBILE_APP):
                    if entry.data["webhook_id"] == webhook_id:
                        service = notify_service_of(entry.data["device_name"])
                        if self.hass.services.has_service("notify", service):
                            return entry
                await asyncio.sleep(0.01)

    async def _phone(self, user: User, os: OS, entry: Any) -> Phone:
        data: dict[str, Any] = dict(entry.data)
        [device] = dr.async_entries_for_config_entry(dr.async_get(self.hass), entry.entry_id)
        return Phone(
            hass=self.hass,
            user=user,
            os=os,
            device_name=data["device_name"],
            webhook_id=data["webhook_id"],
            push_token=data["app_data"]["push_token"],
            notify_service=notify_service_of(data["device_name"]),
            device_id=device.id,
            entry_id=entry.entry_id,
            registration=data,
            _client=self._client,
            _gateway=self.gateway,
        )


def notify_service_of(device_name: str) -> str:
    """The name mobile_app's notify platform gives a device's action (``notify`` domain)."""
    return slugify(f"{MOBILE_APP}_{device_name}")


async def phones_for(
    hass: HomeAssistant, gateway: PushGateway, aiohttp_client: ClientSessionGenerator
) -> Phones:
    """Set up ``http`` and ``mobile_app`` on ``hass`` (mobile_app brings webhook, person,
    notify and the rest it needs; cloud stays off, so no cloudhooks) and a client of its
    HTTP app. The app takes views after it started serving, as Home Assistant's own server
    does once started (integrations set up after the phones register theirs)."""
    assert await async_setup_component(hass, "http", {})
    hass.http.app._router.freeze = lambda: None  # what HomeAssistantHTTP.start does
    assert await async_setup_component(hass, MOBILE_APP, {})
    await hass.async_block_till_done()
    return Phones(hass, gateway, await aiohttp_client(hass.http.app))


@pytest.fixture
async def push_gateway(socket_enabled: None) -> AsyncGenerator[PushGateway]:
    """The push service stand-in on a free loopback port, stopped after the test."""
    async with PushGateway() as gateway:
        yield gateway


@pytest.fixture
async def phones(
    hass: HomeAssistant, push_gateway: PushGateway, aiohttp_client: ClientSessionGenerator
) -> Phones:
    """Registers users' phones on the test's Home Assistant (``mobile_app`` set up)."""
    return await phones_for(hass, push_gateway, aiohttp_client)
