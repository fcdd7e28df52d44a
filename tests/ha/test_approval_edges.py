"""A question where things go wrong around it: a phone whose app was removed, a phone
that cannot be reached, a dashboard listener that fails, an answer to a question that
does not exist, a link opened after the question closed. The question still waits for
the people asked, every failure is logged, and nothing else breaks."""

from __future__ import annotations

import logging

import pytest
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.exceptions import HomeAssistantError

from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .approval_support import Home

pytest_plugins = ["tests.ha.phones", "tests.ha.approval_support"]


async def test_a_phone_gone_or_unreachable_leaves_the_question_to_the_others(
    hass: HomeAssistant,
    home: Home,
    sim: OpenNVRSimulator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    heard: list[str] = []

    def broken_listener() -> None:
        raise RuntimeError("a dashboard card crashed")

    home.desk.subscribe(broken_listener)
    home.desk.subscribe(lambda: heard.append("changed"))
    with caplog.at_level(logging.WARNING):
        await home.alert(sim)
    (ticket,) = home.desk.pending()
    assert heard, "a failing listener does not keep the others from hearing"
    assert "Approvals listener failed" in caplog.text

    # Meanwhile Alice's app is removed and Bob's phone cannot be reached.
    hass.services.async_remove("notify", home.alice.notify_service)

    async def unreachable(call: ServiceCall) -> None:
        raise HomeAssistantError("push relay down")

    hass.services.async_register("notify", home.bob.notify_service, unreachable)
    # Alice answers in the panel as herself: the question was still hers to answer, and
    # the closing cards go wherever they still can.
    with caplog.at_level(logging.WARNING):
        done = await home.desk.answer(ticket.approval_id, "Open", home.alice.user.id, "panel")
        await hass.async_block_till_done()
    assert done.ok, done.reason
    assert f"the phone notify.{home.alice.notify_service} is gone" in caplog.text
    assert f"could not reach notify.{home.bob.notify_service}" in caplog.text


async def test_an_answer_to_no_question_and_a_link_after_the_close(
    hass: HomeAssistant, home: Home, sim: OpenNVRSimulator
) -> None:
    refused = await home.desk.answer("no-such-question", "Open", home.alice.user.id, "action")
    assert (refused.ok, refused.reason) == (False, "approval_refused_unknown")
    assert await home.desk.answer_page("not-a-token", None) is None

    await home.alert(sim)
    token = home.token_of(home.alice.user.id, "Open")
    (ticket,) = home.desk.pending()
    page = await home.desk.answer_page(token, home.bob.user.id)
    assert page is not None
    assert any("another" in line or "not" in line for line in page["lines"][1:]), page

    done = await home.desk.answer(ticket.approval_id, "Keep closed", home.bob.user.id, "panel")
    assert done.ok, done.reason
    await until(lambda: not home.desk.pending(), "the question is closed")
    page = await home.desk.answer_page(token, None)
    assert page is not None
    assert page["lines"][0] == ticket.message
    assert "buttons" not in page, "a closed question has no buttons"
