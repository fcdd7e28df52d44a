"""The evidence pictures' store when its disk misbehaves: a picture that cannot be written
stays shown but is not kept, one that vanished from the disk reads as none, an index row of
another shape and a file no row names are dropped at start, and the memory of recent
frames stays bounded."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant

from custom_components.opennvr_workflows.host.model import evidence_store as evidence_module
from custom_components.opennvr_workflows.host.model.evidence_store import (
    RECENT,
    EvidenceStore,
    evidence_key,
)
from custom_components.opennvr_workflows.host.model.port import Evidence
from custom_components.opennvr_workflows.host.settings import Retention

JPEG = b"\xff\xd8frame"


def frame(run_id: str) -> Evidence:
    return Evidence(JPEG, datetime.now(UTC), run_id, "door")


async def test_a_picture_that_cannot_be_written_or_has_vanished(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = EvidenceStore(hass, "entry", Retention)
    await store.async_start()
    real_write = evidence_module._write

    def disk_full(path: Path, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(evidence_module, "_write", disk_full)
    with caplog.at_level(logging.WARNING):
        store.keep("door", frame("r1"))
        await store.async_flush()
    assert "Could not keep the picture of run r1" in caplog.text
    assert "r1" not in store.kept
    assert store.latest["door"].run_id == "r1", "shown while Home Assistant runs"

    monkeypatch.setattr(evidence_module, "_write", real_write)
    store.keep("door", frame("r2"))
    await store.async_flush()
    assert "r2" in store.kept
    (store.folder / store.kept["r2"].file).unlink()
    store._recent.clear()
    assert await store.async_read("r2") is None, "a picture gone from the disk is none"
    assert await store.async_read("never") is None
    for n in range(RECENT + 5):
        store.keep("door", frame(f"burst-{n}"))
    await store.async_flush()
    assert len(store._recent) == RECENT
    await store.async_stop()


async def test_what_the_index_no_longer_matches_is_dropped_at_start(
    hass: HomeAssistant, hass_storage: dict[str, object]
) -> None:
    store = EvidenceStore(hass, "entry2", Retention)
    store.folder.mkdir(parents=True)
    (store.folder / "stray.jpg").write_bytes(JPEG)
    (store.folder / "kept.jpg").write_bytes(JPEG)
    now = datetime.now(UTC).timestamp()
    hass_storage[evidence_key("entry2")] = {
        "version": 1,
        "minor_version": 1,
        "key": evidence_key("entry2"),
        "data": {
            "kept": [
                {
                    "run_id": "r1",
                    "workflow_id": "door",
                    "camera": None,
                    "at": now,
                    "file": "kept.jpg",
                    "size": len(JPEG),
                },
                {
                    "run_id": "r2",
                    "workflow_id": "door",
                    "camera": None,
                    "at": now,
                    "file": "missing.jpg",
                    "size": 9,
                },
                {"colour": "blue"},
            ]
        },
    }
    await store.async_start()
    assert list(store.kept) == ["r1"]
    assert not (store.folder / "stray.jpg").exists()
    assert store.latest["door"].run_id == "r1"
    await store.async_stop()
