"""Questions on phones: a workflow asks, the right person taps, the run goes on.

Everything here is real Home Assistant: phones are companion-app registrations made through
``mobile_app``'s registration API with each person's own login, notifications leave through
``notify.mobile_app_<device>`` to a local push gateway, and a tap is the app's webhook
``fire_event``, so the event's user is the phone's user. The engine runs on a manual clock
(a timeout is one call); Home Assistant's own timers (clearing cards) move with
``async_fire_time_changed``.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed
from pytest_homeassistant_custom_component.typing import (
    ClientSessionGenerator,
    WebSocketGenerator,
)

from custom_components.opennvr_workflows.const import DOMAIN
from custom_components.opennvr_workflows.engine.testing import ManualClock
from custom_components.opennvr_workflows.host.approvals import links as approval_links
from custom_components.opennvr_workflows.host.approvals.desk import CLEAR_AFTER_S
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.fakes.push_gateway import PushGateway
from tests.ha.phones import Phones
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
from .conftest import ai_options

pytest_plugins = ["tests.ha.phones", "tests.ha.approval_support"]

#: The issue's own scenario: an unsure Look asks the owners, with the picture it looked at.
UNSURE_LOOK = """\
contract: workflow.v1
name: Gate look
state: on
needs: [vision_model]
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person, cameras: [gate] }
then:
  - ai:
      mode: look
      prompt: Is this a delivery driver at the gate?
      input: picture
      decision: [driver, stranger]
      driver: [ log: "driver" ]
      stranger: [ log: "stranger" ]
      unsure:
        - ask_person:
            who: role:owner
            message: "Not sure who is at the gate ({reason}). Open?"
            replies: [Yes, No]
            timeout: 10m
            default: No
          Yes: [ log: "opened for {answered_by}" ]
          No: [ log: "kept closed" ]
"""


# ── asking ──────────────────────────────────────────────────────────────


async def test_the_question_reaches_each_addressees_phones_and_nobody_elses(
    home: Home, sim: OpenNVRSimulator
) -> None:
    run_id = await home.alert(sim)
    android = await home.alice.wait_for(asks)
    ios = await home.bob.wait_for(asks)
    assert [p for p in home.carol.received() if asks(p)] == []

    # Android: the two replies as buttons, a tag and group, urgent settings only when
    # the answer is needed soon (an hour here), no iOS keys.
    assert android["title"] == "Gate asks"
    assert android["message"].startswith("Somebody at the gate. Open it?")
    assert "Keep closed" in android["message"]  # what happens with no answer
    data = android["data"]
    assert [a["title"] for a in data["actions"]] == ["Open", "Keep closed"]
    assert data["tag"].startswith(f"{DOMAIN}_ask_")
    assert data["group"] == f"{DOMAIN}_gate"
    # Tapping the card opens the question's page in the Workflows panel: a path of Home
    # Assistant's (it works away from home) naming only the question (its run and step).
    page = f"/opennvr-workflows/question/{run_id}:then.0"
    assert [t.approval_id for t in home.desk.pending()] == [f"{run_id}:then.0"]
    assert data["clickAction"] == page
    assert data["alert_once"] is True
    assert not {"priority", "ttl", "push"} & set(data)
    # iOS: same buttons, its own keys.
    assert [a["title"] for a in ios["data"]["actions"]] == ["Open", "Keep closed"]
    assert ios["data"]["push"] == {"interruption-level": "active"}
    assert ios["data"]["url"] == page
    assert "clickAction" not in ios["data"]
    # Each person's buttons carry their own tokens; no token appears twice.
    tokens = [a["action"] for p in (android, ios) for a in p["data"]["actions"]]
    assert len(set(tokens)) == 4
    # Never the OpenNVR API token in anything sent.
    assert sim.config.token not in str(android) + str(ios)


async def test_alice_taps_open_the_run_goes_down_open_and_every_card_is_cleared(
    hass: HomeAssistant, home: Home, sim: OpenNVRSimulator
) -> None:
    run_id = await home.alert(sim)
    question = await home.alice.wait_for(asks)
    tag = question["data"]["tag"]
    await home.alice.tap(action_of(question, "Open"), tag=tag)
    detail = await home.detail(run_id)
    assert detail["status"] == "done"
    assert [(s["path"], s["outcome"]) for s in detail["steps"]][:2] == [
        ("then.0", "Open"),
        ("then.0.Open.0", "done"),
    ]
    ask = detail["steps"][0]
    assert "Alice" in str(ask["result"])
    log = [(n["event"], n["user"]) for n in detail["approval_log"]]
    assert ("answered", home.alice.user.id) in log

    # Bob's card now says who answered, without buttons; then every card is cleared.
    said = await home.bob.wait_for(lambda p: "Alice answered" in str(p.get("message")))
    assert said["data"]["tag"] == tag
    assert "actions" not in said["data"]
    # Tapping the ended card opens the run's page (Bob's phone is an iPhone).
    assert said["data"]["url"] == f"/opennvr-workflows/run/{run_id}"
    assert home.desk.pending() == []
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=CLEAR_AFTER_S + 1))
    for phone in (home.alice, home.bob):
        cleared = await phone.wait_for(lambda p: p.get("message") == "clear_notification")
        assert cleared["data"]["tag"] == tag
    assert hass.states.get("sensor.opennvr_demo_questions_waiting") is None or (
        hass.states.get("sensor.opennvr_demo_questions_waiting").state == "0"
    )


async def test_bob_denies(home: Home, sim: OpenNVRSimulator) -> None:
    run_id = await home.alert(sim)
    question = await home.bob.wait_for(asks)
    await home.bob.tap(action_of(question, "Keep closed"))
    detail = await home.detail(run_id)
    assert [(s["path"], s["outcome"]) for s in detail["steps"]][:2] == [
        ("then.0", "Keep closed"),
        ("then.0.Keep closed.0", "done"),
    ]
    assert "Bob" in str(detail["steps"][0]["result"])


async def test_no_answer_takes_the_default_and_clears_the_cards(
    hass: HomeAssistant, home: Home, sim: OpenNVRSimulator, clock: ManualClock
) -> None:
    run_id = await home.alert(sim)
    question = await home.alice.wait_for(asks)
    await clock.advance(HOUR + 1)
    said = await home.alice.wait_for(lambda p: "No answer in time" in str(p.get("message")))
    detail = await home.detail(run_id)
    assert detail["steps"][0]["outcome"] == "Keep closed"
    assert ("timed_out", None) in [(n["event"], n["user"]) for n in detail["approval_log"]]
    assert said["data"]["tag"] == question["data"]["tag"]
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=CLEAR_AFTER_S + 1))
    await home.bob.wait_for(lambda p: p.get("message") == "clear_notification")
    # A tap that comes after the timeout is refused and changes nothing.
    await home.alice.tap(action_of(question, "Open"))
    assert home.desk.refused["closed"] == 1
    assert (await home.detail(run_id))["steps"][0]["outcome"] == "Keep closed"


# ── who may answer ──────────────────────────────────────────────────────


async def test_a_person_who_is_not_asked_cannot_answer_even_with_a_real_token(
    home: Home, sim: OpenNVRSimulator
) -> None:
    run_id = await home.alert(sim)
    question = await home.alice.wait_for(asks)
    # Carol got hold of Alice's button (a shared screenshot): her phone's tap is refused.
    await home.carol.tap(action_of(question, "Open"))
    # A forged token, and Carol through the action and the websocket, are refused too.
    await home.carol.tap("OPENNVR_WF_made-up-token")
    approval_id = home.desk.pending()[0].approval_id
    assert home.desk.refused == {"wrong_user": 1, "forged": 1}
    detail = await home.detail(run_id)
    assert detail["status"] == "waiting"
    refused = [(n["event"], n["user"], n["detail"]) for n in detail["approval_log"]]
    assert ("refused", home.carol.user.id, "wrong_user (phone)") in refused
    # Then Alice's own tap still counts.
    await home.alice.tap(action_of(question, "Open"))
    assert (await home.detail(run_id))["steps"][0]["outcome"] == "Open"
    assert approval_id not in {t.approval_id for t in home.desk.pending()}


async def test_an_addressee_who_may_not_see_the_camera_cannot_answer(
    hass: HomeAssistant, home: Home, sim: OpenNVRSimulator
) -> None:
    """Eve is in the role, but her user has no permission to read the gate camera."""
    eve = await hass.auth.async_create_user("Eve", group_ids=[])
    home.approvers([home.alice.user.id, home.bob.user.id, eve.id])
    run_id = await home.alert(sim)
    approval_id = home.desk.pending()[0].approval_id
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(
            DOMAIN,
            "answer_approval",
            {"approval_id": approval_id, "reply": "Open"},
            blocking=True,
            context=Context(user_id=eve.id),
        )
    assert err.value.translation_key == "approval_refused_camera_hidden"
    assert (await home.detail(run_id))["status"] == "waiting"


async def test_the_action_answers_as_the_caller_and_checks_them(
    hass: HomeAssistant, home: Home, sim: OpenNVRSimulator
) -> None:
    run_id = await home.alert(sim)
    approval_id = home.desk.pending()[0].approval_id
    for context, reason in (
        (Context(user_id=home.carol.user.id), "approval_refused_not_addressee"),
        (Context(), "approval_refused_no_user"),  # an automation: no person
    ):
        with pytest.raises(ServiceValidationError) as err:
            await hass.services.async_call(
                DOMAIN,
                "answer_approval",
                {"approval_id": approval_id, "reply": "Open"},
                blocking=True,
                context=context,
            )
        assert err.value.translation_key == reason
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(
            DOMAIN,
            "answer_approval",
            {"approval_id": approval_id, "reply": "Maybe"},
            blocking=True,
            context=Context(user_id=home.bob.user.id),
        )
    assert err.value.translation_key == "approval_refused_reply"
    await hass.services.async_call(
        DOMAIN,
        "answer_approval",
        {"approval_id": approval_id, "reply": "Open"},
        blocking=True,
        context=Context(user_id=home.bob.user.id),
    )
    assert (await home.detail(run_id))["steps"][0]["outcome"] == "Open"


async def test_a_replayed_tap_is_refused(home: Home, sim: OpenNVRSimulator) -> None:
    first = await home.alert(sim)
    question = await home.alice.wait_for(asks)
    await home.alice.tap(action_of(question, "Keep closed"))
    await home.alice.tap(action_of(question, "Open"))  # the same card, tapped again
    await home.alice.tap(action_of(question, "Keep closed"))  # the same token again
    assert home.desk.refused["closed"] == 2
    assert (await home.detail(first))["steps"][0]["outcome"] == "Keep closed"
    # The old token does not answer the next question either.
    second = await home.alert(sim)
    await home.alice.tap(action_of(question, "Open"))
    assert (await home.detail(second))["status"] == "waiting"


async def test_two_approvers_racing_one_answer_wins(home: Home, sim: OpenNVRSimulator) -> None:
    run_id = await home.alert(sim)
    alice_q = await home.alice.wait_for(asks)
    bob_q = await home.bob.wait_for(asks)
    await asyncio.gather(
        home.alice.tap(action_of(alice_q, "Open")),
        home.bob.tap(action_of(bob_q, "Keep closed")),
    )
    detail = await home.detail(run_id)
    answered = [n for n in detail["approval_log"] if n["event"] == "answered"]
    refused = [n for n in detail["approval_log"] if n["event"] == "refused"]
    assert (len(answered), len(refused)) == (1, 1)
    winner = "Open" if answered[0]["user"] == home.alice.user.id else "Keep closed"
    assert detail["steps"][0]["outcome"] == winner
    assert sum(1 for s in detail["steps"] if s["path"].startswith("then.0.")) == 1


# ── floods, Test mode ───────────────────────────────────────────────────


async def test_a_repeating_trigger_joins_the_question_and_updates_the_same_card(
    hass: HomeAssistant, home: Home, sim: OpenNVRSimulator
) -> None:
    run_id = await home.alert(sim)
    first = await home.alice.wait_for(asks)
    for _ in range(3):
        await sim.emit_alert(2, "person")
    await until(lambda: home.desk.pending()[0].seen_again == 3, "seen again three times")
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=60))
    updated = await home.alice.wait_for(lambda p: "Seen again: 3" in str(p.get("message")))
    assert updated["data"]["tag"] == first["data"]["tag"]
    assert [r.run_id for r in home.host.engine.active_runs()] == [run_id]
    asked = [p for p in home.alice.received() if asks(p)]
    # One first card and at most two updates (at once, then the last count), same tag.
    assert 2 <= len(asked) <= 3
    assert {p["data"]["tag"] for p in asked} == {first["data"]["tag"]}
    # The buttons of the update are the same tokens: a tap on either card counts.
    assert action_of(updated, "Open") == action_of(first, "Open")


async def test_test_mode_asks_nobody_and_takes_the_default_at_once(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    clock: ManualClock,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    home = await set_up_home(hass, phones, config_entry, gate(state="test"), hass_client_no_auth)
    await sim.emit_alert(2, "person")
    runs: list[dict[str, Any]] = []

    async def ended() -> bool:
        runs[:] = await home.host.engine.runs("gate")
        return bool(runs) and runs[0]["status"] == "done"

    for _ in range(250):
        if await ended():
            break
        await home.host.engine.idle()
        await hass.async_block_till_done()
    detail = await home.detail(runs[0]["id"])
    assert detail["steps"][0]["status"] == "would_have"
    assert detail["steps"][0]["outcome"] == "Keep closed"
    assert "would_have_asked" in str(detail["steps"][0]["result"])
    await hass.async_block_till_done()
    assert [p for p in home.alice.received() + home.bob.received() if asks(p)] == []
    assert home.desk.pending() == []


# ── many replies, pictures, links ───────────────────────────────────────


async def test_more_than_three_replies_on_android_and_ios(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    clock: ManualClock,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    workflow = gate(replies="Open, Keep closed, Call me, Sound the chime", timeout="5m")
    home = await set_up_home(hass, phones, config_entry, workflow, hass_client_no_auth)
    await home.alert(sim)
    android = await home.alice.wait_for(asks)
    ios = await home.bob.wait_for(asks)
    buttons = android["data"]["actions"]
    assert [b["title"] for b in buttons] == ["Open", "Keep closed", "More replies"]
    assert buttons[2]["action"] == "URI"
    assert buttons[2]["uri"].startswith(f"/api/{DOMAIN}/answer/")
    assert [b["title"] for b in ios["data"]["actions"]] == [
        "Open",
        "Keep closed",
        "Call me",
        "Sound the chime",
    ]
    # Five minutes to answer: urgent on both.
    assert (android["data"]["priority"], android["data"]["ttl"]) == ("high", 0)
    assert ios["data"]["push"] == {"interruption-level": "time-sensitive"}
    # The "More replies" page offers all four, as Alice, and answers only on a button.
    page = await home.client.get(buttons[2]["uri"])
    text = await page.text()
    assert page.status == 200
    assert list(buttons_of(text)) == [
        f"Answer “{reply}” as Alice"
        for reply in ("Open", "Keep closed", "Call me", "Sound the chime")
    ]
    assert home.desk.pending()


async def test_a_link_opens_a_page_and_only_its_button_answers(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    clock: ManualClock,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    """The link on Alice's Android card (*More replies*): its page answers only on a
    button, as Alice."""
    workflow = gate(replies="Open, Keep closed, Call me, Sound the chime")
    home = await set_up_home(hass, phones, config_entry, workflow, hass_client_no_auth)
    run_id = await home.alert(sim)
    link = (await home.alice.wait_for(asks))["data"]["actions"][2]["uri"]
    # Following the link (a previewer, a prefetcher, the person) answers nothing.
    for _ in range(2):
        page = await home.client.get(link)
        assert page.status == 200
        text = await page.text()
    assert (await home.detail(run_id))["status"] == "waiting"
    buttons = buttons_of(text)
    assert list(buttons)[:2] == ["Answer “Open” as Alice", "Answer “Keep closed” as Alice"]
    action, fields = buttons["Answer “Open” as Alice"]
    # A button whose proof was tampered with, or whose link expired, answers nothing.
    for bad in (
        {**fields, "proof": "0" * 64},
        {**fields, "expires": str(int(fields["expires"]) + 3600)},
        {**fields, "expires": "1"},
    ):
        assert (await home.client.post(action, data=bad)).status == 403
    assert (await home.detail(run_id))["status"] == "waiting"
    # The page's button does.
    answered = await home.client.post(action, data=fields)
    assert answered.status == 200, await answered.text()
    assert "“Open” was sent" in await answered.text()
    detail = await home.detail(run_id)
    assert detail["steps"][0]["outcome"] == "Open"
    answered_by = [(n["event"], n["user"]) for n in detail["approval_log"]]
    assert ("answered", home.alice.user.id) in answered_by
    # Pressed again: refused, and the page says the question is closed.
    again = await home.client.post(action, data=fields)
    assert again.status == 403
    assert "no longer open" in await again.text()


async def test_an_expired_or_altered_link_is_refused(
    hass: HomeAssistant, home: Home, sim: OpenNVRSimulator
) -> None:
    await home.alert(sim)
    token = home.token_of(home.alice.user.id, "Open")
    expired = approval_links.answer_link(hass, token, 1)
    await asyncio.sleep(2.1)
    response = await home.client.get(expired)
    assert response.status == 401
    fresh = approval_links.answer_link(hass, token, 600)
    altered = fresh.replace(token, token[:-2] + "xx")
    assert (await home.client.get(altered)).status == 401
    unsigned = fresh.split("?")[0]
    assert (await home.client.get(unsigned)).status == 401
    assert home.desk.pending()


async def test_the_picture_the_run_looked_at_is_attached_through_a_signed_link(
    home: Home, sim: OpenNVRSimulator
) -> None:
    await home.alert(sim)
    question = await home.alice.wait_for(asks)
    image = question["data"].get("image")
    # No AI step looked at a picture: OpenNVR's own signed link to the evidence.
    assert str(image).startswith(f"http://127.0.0.1:{sim.port}/api/v1/media/s/")
    assert sim.config.token not in image


async def test_an_unsure_look_asks_with_its_picture_and_yes_continues_after_a_restart(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    clock: ManualClock,
    push_gateway: PushGateway,
    aiohttp_client: ClientSessionGenerator,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    hass.config_entries.async_update_entry(config_entry, options=ai_options(ollama))
    home = await set_up_home(hass, phones, config_entry, UNSURE_LOOK, hass_client_no_auth)
    ollama.script(
        *[FromSchema({"decision": "unsure", "reason": "a blurry figure", "confidence": 0.3})] * 4
    )
    run_id = await home.alert(sim)
    question = await home.alice.wait_for(asks)
    # The model's words stay in the house (the card's tap opens Home Assistant).
    assert "blurry" not in question["message"]
    assert question["message"].startswith("The details are in Home Assistant")
    assert [a["title"] for a in question["data"]["actions"]] == ["Yes", "No"]
    # The picture is the frame the model looked at, served by Home Assistant through a
    # signed path that needs no login.
    image = question["data"]["image"]
    assert image.startswith(f"/api/{DOMAIN}/picture/")
    picture = await home.client.get(image)
    assert picture.status == 200
    assert (await picture.read())[:2] == b"\xff\xd8"
    assert (await home.client.get(image.split("?")[0])).status == 401
    # Ten minutes to answer: urgent.
    assert question["data"]["priority"] == "high"

    config_dir = hass.config.config_dir
    await hass.async_stop()
    async with restarted(
        config_dir, home.entry, push_gateway, aiohttp_client, [home.alice, home.bob]
    ) as (second, again, (alice, bob)):
        host = again.runtime_data.workflows
        assert host is not None
        await host.engine.idle()
        await bob.tap(action_of(await bob.wait_for(asks), "Yes"))
        await host.engine.idle()
        await second.async_block_till_done()
        detail = await host.engine.run_detail(run_id)
        assert detail["status"] == "done"
        paths = [(s["path"], s["outcome"]) for s in detail["steps"]]
        assert ("then.0.unsure.0", "Yes") in paths
        assert ("then.0.unsure.0.Yes.0", "done") in paths
        # Alice's phone is told who answered, on the same card.
        said = await alice.wait_for(lambda p: "Bob answered" in str(p.get("message")))
        assert said["data"]["tag"] == question["data"]["tag"]
        assert await second.config_entries.async_unload(again.entry_id)
        await second.async_stop(force=True)


# ── the list, the sensor, the websocket ─────────────────────────────────


async def test_the_websocket_lists_and_answers_as_the_connected_user(
    hass: HomeAssistant,
    home: Home,
    sim: OpenNVRSimulator,
    hass_ws_client: WebSocketGenerator,
) -> None:
    run_id = await home.alert(sim)
    await home.alice.wait_for(asks)
    state = hass.states.get("sensor.opennvr_demo_questions_waiting")
    assert state is not None
    assert state.state == "1"
    # Which question waits, not its text (that is for the people asked, below).
    (waiting,) = state.attributes["questions"]
    assert "Somebody at the gate" not in str(state.attributes)
    assert "token" not in str(state.attributes)

    alice_token = await access_token(hass, home.alice.user)
    ws = await hass_ws_client(hass, access_token=alice_token)
    await ws.send_json({"id": 1, "type": f"{DOMAIN}/approvals/list"})
    listed = await ws.receive_json()
    (row,) = listed["result"]["approvals"]
    assert row["may_answer"] is True
    assert row["approval_id"] == waiting["approval_id"]
    assert row["message"] == "Somebody at the gate. Open it?"
    # The question's picture as a link a browser loads (here OpenNVR's signed one).
    assert str(row["picture"]).startswith(f"http://127.0.0.1:{sim.port}/api/v1/media/s/")
    assert "tokens" not in row
    assert ticket_tokens(home) not in str(listed)

    carol_ws = await hass_ws_client(hass, access_token=await access_token(hass, home.carol.user))
    await carol_ws.send_json({"id": 1, "type": f"{DOMAIN}/approvals/list"})
    assert (await carol_ws.receive_json())["result"]["approvals"] == []
    await carol_ws.send_json(
        {
            "id": 2,
            "type": f"{DOMAIN}/approvals/answer",
            "approval_id": row["approval_id"],
            "reply": "Open",
        }
    )
    refused = await carol_ws.receive_json()
    assert refused["success"] is False
    assert refused["error"]["code"] == "not_addressee"

    await ws.send_json(
        {
            "id": 2,
            "type": f"{DOMAIN}/approvals/answer",
            "approval_id": row["approval_id"],
            "reply": "Open",
        }
    )
    assert (await ws.receive_json())["success"] is True
    assert (await home.detail(run_id))["steps"][0]["outcome"] == "Open"
    await hass.async_block_till_done()
    assert hass.states.get("sensor.opennvr_demo_questions_waiting").state == "0"


def ticket_tokens(home: Home) -> str:
    return home.token_of(home.alice.user.id, "Open")


# ── restart ─────────────────────────────────────────────────────────────


async def test_a_tap_after_a_restart_resumes_the_run(
    hass: HomeAssistant,
    home: Home,
    sim: OpenNVRSimulator,
    push_gateway: PushGateway,
    aiohttp_client: ClientSessionGenerator,
) -> None:
    run_id = await home.alert(sim)
    question = await home.alice.wait_for(asks)
    config_dir = hass.config.config_dir
    await hass.async_stop()

    async with restarted(
        config_dir, home.entry, push_gateway, aiohttp_client, [home.alice, home.bob]
    ) as (second, again, (alice, _bob)):
        host = again.runtime_data.workflows
        assert host is not None
        await host.engine.idle()
        assert [r.run_id for r in host.engine.active_runs()] == [run_id]
        sent_before = len(push_gateway.sent)
        await alice.tap(action_of(question, "Open"))
        await host.engine.idle()
        await second.async_block_till_done()
        detail = await host.engine.run_detail(run_id)
        assert detail["status"] == "done"
        assert detail["steps"][0]["outcome"] == "Open"
        # The other phone's card says who answered (the same tag as before the restart).
        after = push_gateway.sent[sent_before:]
        assert any(
            "Alice answered" in str(p.get("message"))
            and p["data"]["tag"] == question["data"]["tag"]
            for p in after
        )
        assert await second.config_entries.async_unload(again.entry_id)
        await second.async_stop(force=True)


async def test_a_timeout_that_fell_during_downtime_fires_at_start(
    hass: HomeAssistant,
    home: Home,
    sim: OpenNVRSimulator,
    clock: ManualClock,
    push_gateway: PushGateway,
    aiohttp_client: ClientSessionGenerator,
) -> None:
    run_id = await home.alert(sim)
    question = await home.alice.wait_for(asks)
    config_dir = hass.config.config_dir
    await hass.async_stop()
    await clock.advance(2 * HOUR)  # Home Assistant was off for two hours

    async with restarted(
        config_dir, home.entry, push_gateway, aiohttp_client, [home.alice, home.bob]
    ) as (second, again, (alice, _bob)):
        host = again.runtime_data.workflows
        assert host is not None
        await until(lambda: not host.engine.active_runs(), "the run ended")
        await second.async_block_till_done()
        detail = await host.engine.run_detail(run_id)
        assert detail["steps"][0]["outcome"] == "Keep closed"
        await alice.wait_for(
            lambda p: "No answer in time" in str(p.get("message"))
            and p["data"]["tag"] == question["data"]["tag"]
        )
        assert await second.config_entries.async_unload(again.entry_id)
        await second.async_stop(force=True)
