"""Each run keeps the picture its AI step looked at: an older run's page still shows its own
frame (not only the workflow's latest), a restart keeps them, and the pictures stay within
the age and size bounds of the options' *Data kept* page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.opennvr_workflows.host.model import evidence_store as evidence_module
from custom_components.opennvr_workflows.host.model.evidence_store import EvidenceStore
from custom_components.opennvr_workflows.host.model.port import Evidence
from custom_components.opennvr_workflows.host.permissions import Caller
from custom_components.opennvr_workflows.host.settings import Retention
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from custom_components.opennvr_workflows.panel.run_detail import evidence
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .conftest import ai_options
from .test_hosting import host_of, restarted
from .test_services import set_up
from .workflow_files import DOOR_LOOK


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return ai_options(ollama)


async def look_once(host: WorkflowHost, sim: OpenNVRSimulator) -> str:
    (run_id,) = host.engine.start_now("door", {"camera": "front_door"}).run_ids
    await host.engine.idle()
    await host.evidence_store.async_flush()
    return run_id


async def test_each_run_keeps_its_frame_also_after_a_restart(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    config_dir = hass.config.config_dir
    host = await set_up(hass, config_entry, door=DOOR_LOOK.format(state="on"))
    first = await look_once(host, sim)
    seen_first = (await host.evidence_store.async_read(first)).image  # type: ignore[union-attr]
    second_run = await look_once(host, sim)
    assert host.evidence["door"].run_id == second_run  # the workflow's latest
    assert len(list(host.evidence_store.folder.glob("*.jpg"))) == 2

    # The older run's page still shows the frame its own step looked at.
    (frame,) = [
        e for e in evidence(hass, host, Caller(None), "door", first) if e["kind"] == "frame"
    ]
    client = await hass_client_no_auth()
    served = await client.get(frame["url"])
    assert served.status == HTTPStatus.OK
    assert await served.read() == seen_first
    await hass.async_stop()

    async with restarted(config_dir, config_entry) as (second, again, _):
        after = host_of(again)
        kept = await after.evidence_store.async_read(first)
        assert kept is not None
        assert kept.image == seen_first
        assert after.evidence["door"].run_id == second_run  # the Last picture entity's
        links = evidence(second, after, Caller(None), "door", first)
        assert [e["kind"] for e in links] == ["frame"]
        assert await second.config_entries.async_unload(again.entry_id)
        await second.async_stop(force=True)


async def test_pictures_stay_within_the_age_and_size_bounds(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evidence_module, "_MB", 1000)  # "megabytes" of 1000 bytes
    bounds = Retention(evidence_days=30, evidence_mb=1)
    store = EvidenceStore(hass, "entry", lambda: bounds)
    await store.async_start()
    now = datetime.now(UTC)
    store.keep("w", Evidence(b"\xff\xd8" + b"a" * 398, now - timedelta(days=40), "old", None))
    store.keep("w", Evidence(b"\xff\xd8" + b"b" * 398, now - timedelta(seconds=3), "r1", "door"))
    store.keep("w", Evidence(b"\xff\xd8" + b"c" * 398, now - timedelta(seconds=2), "r2", "door"))
    store.keep("w", Evidence(b"\xff\xd8" + b"d" * 398, now - timedelta(seconds=1), "r3", "door"))
    await store.async_flush()
    # 40 days is past the age bound; 1000 bytes hold two of the other three: the newest.
    assert list(store.kept) == ["r2", "r3"]
    assert sorted(p.name for p in store.folder.iterdir()) == sorted(
        row.file for row in store.kept.values()
    )
    await store.async_stop()

    again = EvidenceStore(hass, "entry", lambda: bounds)
    await again.async_start()
    assert list(again.kept) == ["r2", "r3"]
    assert again.latest["w"].run_id == "r3"
    await again.async_stop()

    none = EvidenceStore(hass, "other", lambda: Retention(evidence_days=0))
    await none.async_start()
    none.keep("w", Evidence(b"\xff\xd8x", now, "r9", None))
    await none.async_flush()
    assert not Path(none.folder).exists()  # 0 keeps nothing on disk
    assert none.latest["w"].run_id == "r9"  # still shown until a restart
    await none.async_stop()


async def test_the_bounds_count_a_replaced_picture_once_and_a_late_old_one(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A picture added within the bounds is not sorted against the others: the store keeps
    their bytes and the oldest one's time as they change. A run whose later frame replaces
    its earlier one counts once; a picture older than the age bound that lands after newer
    ones still goes; and the index written off the loop lists what is kept, a replaced
    picture once."""
    monkeypatch.setattr(evidence_module, "_MB", 1000)  # "megabytes" of 1000 bytes
    bounds = Retention(evidence_days=30, evidence_mb=1)
    store = EvidenceStore(hass, "entry", lambda: bounds)
    await store.async_start()
    now = datetime.now(UTC)

    def picture(size: int, age: timedelta, run_id: str) -> Evidence:
        return Evidence(b"\xff\xd8" + b"p" * (size - 2), now - age, run_id, "door")

    store.keep("w", picture(300, timedelta(seconds=3), "r1"))
    await store.async_flush()
    store.keep("w", picture(300, timedelta(seconds=2), "r2"))
    await store.async_flush()
    store.keep("w", picture(600, timedelta(seconds=1), "r1"))  # r1's later frame
    await store.async_flush()
    # 600 + 300 bytes: within the bound, were r1's first frame not counted as well.
    assert list(store.kept) == ["r2", "r1"]
    assert store.kept["r1"].size == 600
    # The index as written: r1 once, with its later frame's size.
    index = Store[dict[str, Any]](hass, 1, evidence_module.evidence_key("entry"))
    written = await index.async_load()
    assert written is not None
    assert [(row["run_id"], row["size"]) for row in written["kept"]] == [("r2", 300), ("r1", 600)]

    store.keep("w", picture(50, timedelta(days=40), "late"))  # past the age bound
    await store.async_flush()
    assert "late" not in store.kept
    assert sorted(p.name for p in store.folder.iterdir()) == sorted(
        row.file for row in store.kept.values()
    )

    store.keep("w", picture(200, timedelta(seconds=0), "r3"))  # 1,100 bytes: r2 goes
    await store.async_flush()
    assert list(store.kept) == ["r1", "r3"]
    await store.async_stop()

    again = EvidenceStore(hass, "entry", lambda: bounds)
    await again.async_start()
    assert list(again.kept) == ["r1", "r3"]
    assert [row.size for row in again.kept.values()] == [600, 200]
    await again.async_stop()
