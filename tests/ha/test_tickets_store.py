"""The questions' tickets as they are stored: read back at start without what no longer
fits (a record of another shape, a question closed more than a week ago), forgotten a week
after they close, and a token of a forgotten question answers nothing."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any

import pytest
from homeassistant.core import HomeAssistant

from custom_components.opennvr_workflows.host.approvals.tickets import (
    REMEMBER_CLOSED_S,
    STORE_VERSION,
    Ticket,
    Tickets,
    tickets_key,
)

NOW = 1_900_000_000.0


def ticket(approval_id: str, *, closed_at: float | None = None) -> Ticket:
    return Ticket(
        approval_id=approval_id,
        run_id=f"run-{approval_id}",
        workflow_id="gate",
        workflow_name="Gate",
        message="Open the gate?",
        replies=["Open", "Keep closed"],
        default="Keep closed",
        roles=["owner"],
        camera_id="2",
        expires_at=NOW + 3600,
        tag=f"opennvr-{approval_id}",
        status="pending" if closed_at is None else "answered",
        closed_at=closed_at,
    )


async def test_what_is_read_back_and_what_is_forgotten(
    hass: HomeAssistant, hass_storage: dict[str, Any]
) -> None:
    hass_storage[tickets_key("e1")] = {
        "version": STORE_VERSION,
        "minor_version": 1,
        "key": tickets_key("e1"),
        "data": {
            "tickets": [
                asdict(ticket("open")),
                asdict(ticket("closed-yesterday", closed_at=NOW - 86_400)),
                asdict(ticket("closed-long-ago", closed_at=NOW - REMEMBER_CLOSED_S - 1)),
                {"approval_id": "another-shape", "colour": "blue"},
            ]
        },
    }
    tickets = Tickets(hass, "e1")
    await tickets.async_load(NOW)
    assert set(tickets.by_id) == {"open", "closed-yesterday"}

    tokens = tickets.new(tickets.by_id["closed-yesterday"], ["alice"])
    token = tokens["alice"]["Open"]
    found = tickets.find(token)
    assert found is not None
    assert (found.user_id, found.reply) == ("alice", "Open")

    tickets.prune(NOW + REMEMBER_CLOSED_S)
    assert set(tickets.by_id) == {"open"}
    assert tickets.find(token) is None, "a forgotten question's token answers nothing"
    assert tickets.tokens_of(ticket("closed-yesterday")) is None


async def test_a_burst_of_saves_shares_writes_and_each_change_reaches_the_disk(
    hass: HomeAssistant, hass_storage: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fifty questions opened at once: every caller returns with its own ticket on disk,
    and the writes coalesce (one running, the next taking everyone who waits meanwhile)
    instead of fifty copies of the whole store queued one behind the other."""
    tickets = Tickets(hass, "e1")
    await tickets.async_load(NOW)
    # A disk that takes its time, as a real one does (the test storage writes at once).
    write = tickets._store.async_save

    async def slow_disk(data: dict[str, Any]) -> None:
        await asyncio.sleep(0.01)
        await write(data)

    monkeypatch.setattr(tickets._store, "async_save", slow_disk)

    async def opened(n: int) -> set[str]:
        tickets.by_id[f"q{n}"] = ticket(f"q{n}")
        await tickets.async_save()
        stored = hass_storage[tickets_key("e1")]["data"]["tickets"]
        return {raw["approval_id"] for raw in stored}

    seen = await asyncio.gather(*(opened(n) for n in range(50)))
    for n, on_disk in enumerate(seen):
        assert f"q{n}" in on_disk, (n, sorted(on_disk))
    assert 1 <= tickets.writes <= 3, tickets.writes
    on_disk = {raw["approval_id"] for raw in hass_storage[tickets_key("e1")]["data"]["tickets"]}
    assert on_disk == {f"q{n}" for n in range(50)}
    # A save after the burst writes again, with what changed since.
    tickets.by_id["late"] = ticket("late")
    await tickets.async_save()
    assert "late" in {
        raw["approval_id"] for raw in hass_storage[tickets_key("e1")]["data"]["tickets"]
    }
