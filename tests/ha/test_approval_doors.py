"""The approvals desk's doors, each tried as an attack in a real Home Assistant.

* Another logged-in person cannot answer as the addressee: Home Assistant's shared
  notification carries no link or token, and a link's button refuses a request logged in
  as someone else, proof or not.
* A person who may not see the camera is not asked at all (not only refused).
* An answer after the deadline is refused, on every path, even before the timeout is taken.
* No answer token is kept on disk: only hashes, also for a store an older version wrote
  with the tokens in clear; a card from before a restart still answers.

The household, the phones and the manual clock are :mod:`tests.ha.approval_support`'s.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import timedelta
from typing import Any

import pytest
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.components.persistent_notification import _async_get_or_create_notifications
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import (
    ClientSessionGenerator,
    WebSocketGenerator,
)

from custom_components.opennvr_workflows.const import DOMAIN
from custom_components.opennvr_workflows.engine.testing import ManualClock
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.fakes.push_gateway import Push, PushGateway
from tests.ha.phones import Phone, Phones
from tests.nvr.conftest import until

from .approval_support import (
    HOUR,
    Home,
    access_token,
    action_of,
    asks,
    buttons_of,
    gate,
    restarted,
    set_up_home,
)

pytest_plugins = ["tests.ha.phones", "tests.ha.approval_support"]

#: Four replies: Alice's Android card then carries a link (*More replies*) to the page.
FOUR_REPLIES = "Open, Keep closed, Call me, Sound the chime"
ACTION_PREFIX = "OPENNVR_WF_"


@pytest.fixture
async def home_with_link(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    clock: ManualClock,
    hass_client_no_auth: ClientSessionGenerator,
) -> Home:
    """The household, asked a question with four replies (a link on Alice's card)."""
    workflow = gate(replies=FOUR_REPLIES)
    return await set_up_home(hass, phones, config_entry, workflow, hass_client_no_auth)


def tokens_on(*cards: Push) -> list[str]:
    """Every answer token a card carries: its buttons', and the one in its link."""
    found = []
    for card in cards:
        for action in card["data"]["actions"]:
            if action["action"].startswith(ACTION_PREFIX):
                found.append(action["action"].removeprefix(ACTION_PREFIX))
            elif "uri" in action:
                found.append(action["uri"].split("/answer/")[1].split("?")[0])
    return found


def sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def approval_log(detail: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    return [(n["event"], n["user"], n["detail"]) for n in detail["approval_log"]]


def ask_notes(hass: HomeAssistant) -> list[str]:
    """The messages of the questions in Home Assistant's own notifications."""
    shown = _async_get_or_create_notifications(hass)
    return [
        str(n["message"])
        for n in shown.values()
        if n["notification_id"].startswith(f"{DOMAIN}_ask_")
    ]


def store_key(entry: MockConfigEntry) -> str:
    return f"{DOMAIN}.{entry.entry_id}.approvals"


# ── (2) nobody answers as somebody else ─────────────────────────────────


async def test_the_shared_notification_gives_no_one_a_link_or_token(
    hass: HomeAssistant,
    home: Home,
    sim: OpenNVRSimulator,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Dave has no phone. Carol, logged in as herself, reads Home Assistant's
    notifications: nothing there answers as Dave (or anyone). Dave answers in the panel,
    as himself."""
    dave = await hass.auth.async_create_user("Dave", group_ids=[GROUP_ID_USER])
    home.approvers([home.alice.user.id, home.bob.user.id, dave.id])
    run_id = await home.alert(sim)
    cards = [await home.alice.wait_for(asks), await home.bob.wait_for(asks)]
    await until(lambda: bool(ask_notes(hass)), "the question in Home Assistant's notifications")

    assert await async_setup_component(hass, "persistent_notification", {})  # as at start
    carol = await hass_ws_client(hass, access_token=await access_token(hass, home.carol.user))
    await carol.send_json({"id": 1, "type": "persistent_notification/get"})
    read = json.dumps((await carol.receive_json())["result"])
    assert "Open it?" in read  # the question (as markdown)
    assert "Alice is asked on their phone." in read
    assert "Dave has no phone with the app and answers here, in Workflows > Questions" in read
    secrets = tokens_on(*cards) + [
        home.token_of(dave.id, reply) for reply in ("Open", "Keep closed")
    ]
    assert len(secrets) == 6
    assert [s for s in secrets if s in read] == []
    assert f"/api/{DOMAIN}/answer/" not in read
    # Its one link is the question's page in the Workflows panel, which answers only as
    # whoever is logged in there.
    assert f"[Open the question](/opennvr-workflows/question/{run_id}:then.0)" in read
    assert read.count("](") == 1

    dave_ws = await hass_ws_client(hass, access_token=await access_token(hass, dave))
    await dave_ws.send_json({"id": 1, "type": f"{DOMAIN}/approvals/list"})
    (row,) = (await dave_ws.receive_json())["result"]["approvals"]
    assert row["may_answer"] is True
    await dave_ws.send_json(
        {
            "id": 2,
            "type": f"{DOMAIN}/approvals/answer",
            "approval_id": row["approval_id"],
            "reply": "Open",
        }
    )
    assert (await dave_ws.receive_json())["success"] is True
    detail = await home.detail(run_id)
    assert detail["steps"][0]["outcome"] == "Open"
    assert ("answered", dave.id, "Open (panel)") in approval_log(detail)


async def test_a_link_button_refuses_a_login_as_another_person(
    hass: HomeAssistant, home_with_link: Home, sim: OpenNVRSimulator
) -> None:
    """Carol holds Alice's page (its button's token and proof). Posting it logged in as
    herself is refused and logged; with no login and no proof nothing happens; Alice's own
    login needs no proof."""
    home = home_with_link
    run_id = await home.alert(sim)
    link = (await home.alice.wait_for(asks))["data"]["actions"][2]["uri"]
    page = await home.client.get(link)
    action, fields = buttons_of(await page.text())["Answer “Open” as Alice"]
    carol = {"Authorization": f"Bearer {await access_token(hass, home.carol.user)}"}

    as_carol = await home.client.post(action, data=fields, headers=carol)
    assert as_carol.status == 403
    assert "belongs to another person" in await as_carol.text()
    no_proof = await home.client.post(action, data={})
    assert no_proof.status == 403
    detail = await home.detail(run_id)
    assert detail["status"] == "waiting"
    assert ("refused", home.carol.user.id, "wrong_user (link)") in approval_log(detail)
    assert home.desk.refused["wrong_user"] == 1

    alice = {"Authorization": f"Bearer {await access_token(hass, home.alice.user)}"}
    as_alice = await home.client.post(action, data={}, headers=alice)
    assert as_alice.status == 200, await as_alice.text()
    detail = await home.detail(run_id)
    assert detail["steps"][0]["outcome"] == "Open"
    assert ("answered", home.alice.user.id, "Open (link)") in approval_log(detail)


# ── (9) only people who may see the camera are asked ────────────────────


async def eve_with_a_phone(hass: HomeAssistant, phones: Phones) -> Phone:
    """Eve: a person with the app, whose user may read no entity (no group at all), so
    not the gate camera."""
    eve = await hass.auth.async_create_user("Eve", group_ids=[])
    return await phones.register(eve, "Eve's Pixel")


async def test_a_person_who_may_not_see_the_camera_is_not_asked(
    hass: HomeAssistant,
    home: Home,
    phones: Phones,
    sim: OpenNVRSimulator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    eve = await eve_with_a_phone(hass, phones)
    home.approvers([home.alice.user.id, home.bob.user.id, eve.user.id])
    with caplog.at_level(logging.WARNING):
        run_id = await home.alert(sim)
        await home.alice.wait_for(asks)
        await home.bob.wait_for(asks)
    await hass.async_block_till_done()
    assert [p for p in eve.received() if asks(p)] == []
    (ticket,) = home.desk.pending()
    assert ticket.asked == [home.alice.user.id, home.bob.user.id]
    assert await home.desk.pending_for(eve.user.id, False) == []
    (listed,) = await home.desk.pending_for(home.bob.user.id, True)
    assert listed["asked"] == ["Alice", "Bob"]
    assert "Eve" not in "".join(ask_notes(hass))
    detail = await home.detail(run_id)
    skipped = [n for n in approval_log(detail) if n[0] == "not_asked"]
    assert [(user, text.split(" (")[0]) for _, user, text in skipped] == [
        (eve.user.id, "Eve: camera_hidden")
    ]
    assert "not asking Eve: they may not see camera." in caplog.text
    # Eve cannot answer through Home Assistant either, and is told why.
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(
            DOMAIN,
            "answer_approval",
            {"approval_id": ticket.approval_id, "reply": "Open"},
            blocking=True,
            context=Context(user_id=eve.user.id),
        )
    assert err.value.translation_key == "approval_refused_camera_hidden"


async def test_nobody_of_the_role_may_see_the_camera_the_approvers_who_may_are_asked(
    hass: HomeAssistant, home: Home, phones: Phones, sim: OpenNVRSimulator
) -> None:
    eve = await eve_with_a_phone(hass, phones)
    home.approvers([eve.user.id], anyone=[eve.user.id, home.alice.user.id])
    run_id = await home.alert(sim)
    question = await home.alice.wait_for(asks)
    await hass.async_block_till_done()
    assert [p for p in eve.received() + home.bob.received() if asks(p)] == []
    assert home.desk.pending()[0].asked == [home.alice.user.id]
    await home.alice.tap(action_of(question, "Open"))
    detail = await home.detail(run_id)
    assert detail["steps"][0]["outcome"] == "Open"
    assert "not_asked" in [n[0] for n in approval_log(detail)]


async def test_nobody_who_may_see_the_camera_the_owner_and_admins_are_asked(
    hass: HomeAssistant, home: Home, phones: Phones, sim: OpenNVRSimulator
) -> None:
    eve = await eve_with_a_phone(hass, phones)
    home.approvers([eve.user.id], anyone=[eve.user.id])
    await home.alert(sim)
    question = await home.bob.wait_for(asks)  # Bob is an admin
    await hass.async_block_till_done()
    assert [p for p in eve.received() + home.alice.received() if asks(p)] == []
    names = [(await hass.auth.async_get_user(u)).name for u in home.desk.pending()[0].asked]
    assert names == ["Owner", "Bob"]
    await home.bob.tap(action_of(question, "Keep closed"))
    assert home.desk.pending() == []


# ── (10) the deadline holds at the moment of the answer ─────────────────


async def test_an_answer_after_the_deadline_is_refused_on_every_path(
    hass: HomeAssistant,
    home_with_link: Home,
    sim: OpenNVRSimulator,
    clock: ManualClock,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """The hour is up but the timeout has not been taken yet (Home Assistant was busy):
    a tap, a link's button, the action and the panel are all too late."""
    home = home_with_link
    run_id = await home.alert(sim)
    alice_card = await home.alice.wait_for(asks)
    link = alice_card["data"]["actions"][2]["uri"]
    action, fields = buttons_of(await (await home.client.get(link)).text())[
        "Answer “Open” as Alice"
    ]
    approval_id = home.desk.pending()[0].approval_id
    bob_ws = await hass_ws_client(hass, access_token=await access_token(hass, home.bob.user))

    clock.set(clock.now() + timedelta(seconds=HOUR + 1))  # no timer has run
    await home.alice.tap(action_of(alice_card, "Open"))
    pressed = await home.client.post(action, data=fields)
    assert pressed.status == 403
    assert "Too late" in await pressed.text()
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(
            DOMAIN,
            "answer_approval",
            {"approval_id": approval_id, "reply": "Open"},
            blocking=True,
            context=Context(user_id=home.bob.user.id),
        )
    assert err.value.translation_key == "approval_refused_expired"
    await bob_ws.send_json(
        {"id": 1, "type": f"{DOMAIN}/approvals/answer", "approval_id": approval_id, "reply": "Open"}
    )
    refused = await bob_ws.receive_json()
    assert refused["success"] is False
    assert refused["error"]["code"] == "expired"
    page = await (await home.client.get(link)).text()
    assert "Too late" in page
    assert buttons_of(page) == {}

    assert home.desk.refused["expired"] == 4
    detail = await home.detail(run_id)
    assert detail["status"] == "waiting"
    assert {(user, text) for event, user, text in approval_log(detail) if event == "refused"} == {
        (home.alice.user.id, "expired (phone)"),
        (home.alice.user.id, "expired (link)"),
        (home.bob.user.id, "expired (action)"),
        (home.bob.user.id, "expired (panel)"),
    }
    # Then the timeout is taken: the default, as if nobody had answered.
    await clock.advance(0)
    assert (await home.detail(run_id))["steps"][0]["outcome"] == "Keep closed"


# ── (15) no token at rest ───────────────────────────────────────────────


async def test_no_token_of_any_card_is_written_to_storage(
    hass: HomeAssistant,
    home_with_link: Home,
    sim: OpenNVRSimulator,
    hass_storage: dict[str, Any],
) -> None:
    home = home_with_link
    await home.alert(sim)
    cards = [await home.alice.wait_for(asks), await home.bob.wait_for(asks)]
    tokens = tokens_on(*cards)
    assert len(tokens) == 3 + 4  # Alice: two buttons and the link; Bob: four buttons
    raw = json.dumps(hass_storage[store_key(home.entry)])
    assert all(sha256(token) in raw for token in tokens)  # the question was saved
    everything = json.dumps(hass_storage)
    assert [t for t in tokens if t in everything] == []


def clear_store(stored: dict[str, Any], cards: dict[str, Push]) -> dict[str, Any]:
    """``stored`` as an older version wrote it: version 1, each person's tokens in clear
    (those of their card), no hashes."""
    ticket = dict(stored["data"]["tickets"][0])
    ticket.pop("token_hashes")
    ticket["tokens"] = {
        user_id: {
            a["title"]: a["action"].removeprefix(ACTION_PREFIX) for a in card["data"]["actions"]
        }
        for user_id, card in cards.items()
    }
    return {**stored, "version": 1, "minor_version": 1, "data": {"tickets": [ticket]}}


async def test_a_store_with_clear_tokens_is_hashed_when_read_and_its_cards_still_answer(
    hass: HomeAssistant,
    home: Home,
    sim: OpenNVRSimulator,
    push_gateway: PushGateway,
    aiohttp_client: ClientSessionGenerator,
    hass_storage: dict[str, Any],
) -> None:
    run_id = await home.alert(sim)
    cards = {
        home.alice.user.id: await home.alice.wait_for(asks),
        home.bob.user.id: await home.bob.wait_for(asks),
    }
    config_dir = hass.config.config_dir
    await hass.async_stop()
    key = store_key(home.entry)
    hass_storage[key] = clear_store(hass_storage[key], cards)
    tokens = tokens_on(*cards.values())
    assert all(t in json.dumps(hass_storage[key]) for t in tokens)

    async with restarted(
        config_dir, home.entry, push_gateway, aiohttp_client, [home.alice, home.bob]
    ) as (second, again, (alice, _bob)):
        host = again.runtime_data.workflows
        assert host is not None
        await host.engine.idle()
        raw = json.dumps(hass_storage[key])
        assert hass_storage[key]["version"] == 2
        assert [t for t in tokens if t in raw] == []
        assert all(sha256(t) in raw for t in tokens)
        await alice.tap(action_of(cards[alice.user.id], "Open"))
        await host.engine.idle()
        await second.async_block_till_done()
        assert (await host.engine.run_detail(run_id))["steps"][0]["outcome"] == "Open"
        assert await second.config_entries.async_unload(again.entry_id)
        await second.async_stop(force=True)


async def test_a_card_sent_again_after_a_restart_has_new_tokens_and_the_old_card_still_answers(
    hass: HomeAssistant,
    home: Home,
    sim: OpenNVRSimulator,
    push_gateway: PushGateway,
    aiohttp_client: ClientSessionGenerator,
    hass_storage: dict[str, Any],
) -> None:
    run_id = await home.alert(sim)
    old = await home.alice.wait_for(asks)
    config_dir = hass.config.config_dir
    await hass.async_stop()

    async with restarted(
        config_dir, home.entry, push_gateway, aiohttp_client, [home.alice, home.bob]
    ) as (second, again, (alice, bob)):
        host = again.runtime_data.workflows
        assert host is not None
        await until(lambda: again.runtime_data.hub.connected("websocket"), "connected")
        # Home Assistant's notification, shown again at start, names no token.
        assert [t for t in tokens_on(old) if t in "".join(ask_notes(second))] == []
        # The trigger fires again: the same card, sent again, with tokens of this process.
        await sim.emit_alert(2, "person")
        again_alice = await alice.wait_for(lambda p: asks(p) and "Seen again" in p["message"])
        again_bob = await bob.wait_for(lambda p: asks(p) and "Seen again" in p["message"])
        assert again_alice["data"]["tag"] == old["data"]["tag"]
        assert set(tokens_on(again_alice)).isdisjoint(tokens_on(old))
        everything = json.dumps(hass_storage)
        assert [t for t in tokens_on(old, again_alice, again_bob) if t in everything] == []
        # The card from before the restart answers; the new one is then too late.
        await alice.tap(action_of(old, "Open"))
        await bob.tap(action_of(again_bob, "Keep closed"))
        await host.engine.idle()
        await second.async_block_till_done()
        assert (await host.engine.run_detail(run_id))["steps"][0]["outcome"] == "Open"
        assert host.desk.refused == {"closed": 1}
        assert await second.config_entries.async_unload(again.entry_id)
        await second.async_stop(force=True)


# ── what a card carries out of the house ────────────────────────────────────────────────

PLATE_GATE = """\
contract: workflow.v1
name: Gate
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: plate, cameras: [gate] }
then:
  - ask_person:
      who: role:owner
      message: "Car {title} at the gate. Open it?"
      replies: [Open, Keep closed]
      timeout: 1h
      default: Keep closed
    Open: [ log: "opened" ]
    Keep closed: [ log: "kept closed" ]
"""


async def test_a_question_card_carries_no_plate_out_of_the_house_unless_allowed(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    clock: ManualClock,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    # An admin let Bob's iPhone carry the full text; Alice's phone keeps the default.
    hass.config_entries.async_update_entry(
        config_entry,
        options={**config_entry.options, "full_text_to": ["notify.mobile_app_bob_s_iphone"]},
    )
    home = await set_up_home(hass, phones, config_entry, PLATE_GATE, hass_client_no_auth)
    assert home.bob.notify_action == "notify.mobile_app_bob_s_iphone"
    await sim.emit_alert(2, "plate", title="AB123CD")
    hidden = await home.alice.wait_for(asks)
    assert "AB123CD" not in str(hidden)
    assert hidden["message"].startswith("Car ••• at the gate. Open it?")
    full = await home.bob.wait_for(asks)
    assert full["message"].startswith("Car AB123CD at the gate. Open it?")
    # Home Assistant's own notification keeps the full text (it stays in the house).
    (ticket,) = home.desk.pending()
    assert "AB123CD" in ticket.message
