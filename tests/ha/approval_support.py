"""The household the approvals tests ask: a gate workflow, Alice (Android) and Bob (iPhone)
answering for the owners, Carol with a phone but not asked, all in a real Home Assistant
with real companion-app registrations (:mod:`tests.ha.phones`).

Shared by the approvals test modules: ``pytest_plugins = ["tests.ha.phones",
"tests.ha.approval_support"]`` brings the fixtures (``home``, ``clock``, and the phones'),
and the helpers are imported by name.

(PYTEST_DONT_REWRITE: test modules import this module before ``pytest_plugins`` names it.)
"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from functools import partial
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from homeassistant import loader
from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.opennvr_workflows.const import CONF_APPROVERS
from custom_components.opennvr_workflows.engine import Engine
from custom_components.opennvr_workflows.engine.testing import ManualClock
from custom_components.opennvr_workflows.host import workflows as workflows_module
from custom_components.opennvr_workflows.host.approvals.desk import ApprovalDesk
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.fakes.push_gateway import Push, PushGateway
from tests.ha.phones import Phone, Phones, phones_for
from tests.nvr.conftest import until

from .conftest import set_up_again
from .workflow_files import write_workflow

HOUR = 3600.0

#: A question to the owners; each reply leaves its mark in the logbook through a log step.
GATE = """\
contract: workflow.v1
name: Gate
state: {state}
limits: {{ cooldown: 0s, per_hour: 100 }}
when:
  alert: {{ alert_type: person, cameras: [gate] }}
then:
  - ask_person:
      who: role:owner
      message: Somebody at the gate. Open it?
      replies: [{replies}]
      timeout: {timeout}
      default: Keep closed
    Open: [ log: "opened for {{answered_by}}" ]
    Keep closed: [ log: "kept closed" ]
"""


def gate(state: str = "on", replies: str = "Open, Keep closed", timeout: str = "1h") -> str:
    return GATE.format(state=state, replies=replies, timeout=timeout)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> ManualClock:
    manual = ManualClock(datetime.now(UTC))
    monkeypatch.setattr(workflows_module, "Engine", partial(Engine, clock=manual))
    return manual


class Home:
    """Alice (Android) and Bob (iPhone) answer for the owners; Carol has a phone too but
    is not asked."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: MockConfigEntry,
        alice: Phone,
        bob: Phone,
        carol: Phone,
        client: TestClient[Any, Any],
    ) -> None:
        self.hass = hass
        self.entry = entry
        self.alice, self.bob, self.carol = alice, bob, carol
        self.client = client

    @property
    def host(self) -> WorkflowHost:
        host = self.entry.runtime_data.workflows
        assert host is not None
        return host

    @property
    def desk(self) -> ApprovalDesk:
        return self.host.desk

    async def alert(self, sim: OpenNVRSimulator) -> str:
        """A person at the gate camera; the run id of the question it starts, once the
        desk has saved the question and told its listeners (the panel's and the card's
        signal: the question is listed before its save has finished)."""
        before = {r.run_id for r in self.host.engine.active_runs()}
        told: list[bool] = []
        unsubscribe = self.desk.subscribe(lambda: told.append(True))
        try:
            await sim.emit_alert(2, "person")
            await until(
                lambda: any(r.run_id not in before for r in self.host.engine.active_runs())
                and bool(self.desk.pending())
                and bool(told),
                "the question was asked",
            )
        finally:
            unsubscribe()
        await self.hass.async_block_till_done()
        return next(r.run_id for r in self.host.engine.active_runs() if r.run_id not in before)

    async def detail(self, run_id: str) -> dict[str, Any]:
        await self.host.engine.idle()
        await self.hass.async_block_till_done()
        return await self.host.engine.run_detail(run_id)

    def approvers(self, owners: list[str], anyone: list[str] | None = None) -> None:
        """Make ``owners`` the owners (the gate workflow's addressees), and ``anyone`` the
        people who answer any role, as the options would, without reloading the entry."""
        approvers: dict[str, Any] = {"roles": {"owner": owners}}
        if anyone is not None:
            approvers["users"] = anyone
        self.host.update_settings(
            workflows_module.HostSettings.from_options(
                {**self.entry.options, CONF_APPROVERS: approvers}
            )
        )

    def token_of(self, user_id: str, reply: str) -> str:
        """The token this process put on ``user_id``'s card for ``reply``, of the one open
        question (tokens live only in the desk's memory)."""
        ticket = self.desk.pending()[0]
        tokens = self.desk.tickets.tokens_of(ticket)
        assert tokens is not None
        return tokens[user_id][reply]


def asks(push: Push) -> bool:
    return bool(push.get("data", {}).get("actions"))


def action_of(push: Push, reply: str) -> str:
    return next(a["action"] for a in push["data"]["actions"] if a["title"] == reply)


async def set_up_home(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    workflow: str,
    hass_client_no_auth: ClientSessionGenerator,
) -> Home:
    alice = await phones.register(await phones.user("Alice"), "Alice's Pixel")
    bob = await phones.register(await phones.user("Bob", admin=True), "Bob's iPhone", os="ios")
    carol = await phones.register(await phones.user("Carol"), "Carol's Pixel")
    hass.config_entries.async_update_entry(
        config_entry,
        options={
            **config_entry.options,
            CONF_APPROVERS: {"roles": {"owner": [alice.user.id, bob.user.id]}},
            "camera_roles": {"gate": 2},
        },
    )
    write_workflow(hass, "gate", workflow)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    return Home(hass, config_entry, alice, bob, carol, await hass_client_no_auth())


@pytest.fixture
async def home(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    clock: ManualClock,
    hass_client_no_auth: ClientSessionGenerator,
) -> Home:
    return await set_up_home(hass, phones, config_entry, gate(), hass_client_no_auth)


def buttons_of(page: str) -> dict[str, tuple[str, dict[str, str]]]:
    """The answer page's buttons: label -> (form action, hidden fields)."""
    out: dict[str, tuple[str, dict[str, str]]] = {}
    for form in re.findall(r"<form (.*?)</form>", page, re.S):
        action = _group(re.search(r'action="([^"]*)"', form))
        fields = {
            html.unescape(k): html.unescape(v)
            for k, v in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', form)
        }
        label = _group(re.search(r"<button[^>]*>(.*?)</button>", form))
        out[label] = (action, fields)
    return out


def _group(found: re.Match[str] | None) -> str:
    assert found is not None
    return html.unescape(found.group(1))


async def access_token(hass: HomeAssistant, user: User) -> str:
    """A bearer token that logs in as ``user`` (a browser's, a dashboard's)."""
    refresh = await hass.auth.async_create_refresh_token(user, "https://example.test/")
    return hass.auth.async_create_access_token(refresh)


@asynccontextmanager
async def restarted(
    config_dir: str,
    entry: MockConfigEntry,
    gateway: PushGateway,
    aiohttp_client: ClientSessionGenerator,
    old: list[Phone],
) -> AsyncGenerator[tuple[HomeAssistant, MockConfigEntry, list[Phone]]]:
    """A second Home Assistant on the same config folder, with the phones ``old`` restored
    and ``entry`` set up again."""
    async with async_test_home_assistant(config_dir=config_dir) as second:
        second.data.pop(loader.DATA_CUSTOM_COMPONENTS)
        phones = await phones_for(second, gateway, aiohttp_client)
        restored = [await phones.restore(p) for p in old]
        again = await set_up_again(second, entry)
        yield second, again, restored
