"""The fixture NVR answers the read tools from a case, and the harness shows the case's
pictures to the model (scripted answers: this checks the plumbing, not a model)."""

from __future__ import annotations

import asyncio
import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PIL import Image

from custom_components.opennvr_workflows.ai import NvrReadError
from custom_components.opennvr_workflows.evaluation.case_loader import DEFAULT_CASES, load_case
from custom_components.opennvr_workflows.evaluation.case_model import StepCase
from custom_components.opennvr_workflows.evaluation.fixture_nvr import FixtureNvr
from custom_components.opennvr_workflows.evaluation.harness import FALLBACK_NOW, case_now
from evals.cli import main
from tests.fakes.ollama_server import FakeOllama, FromSchema


def shipped(suite: str, name: str) -> StepCase:
    case = load_case(DEFAULT_CASES / suite / f"{name}.yaml")
    assert isinstance(case, StepCase)
    return case


async def test_stored_events_by_camera_and_window_newest_first() -> None:
    nvr = FixtureNvr(shipped("investigate", "intrusion_stranger"))
    assert nvr.camera_names() == ("garden", "back_yard", "front_door")
    since = datetime(2026, 1, 15, 2, 0, tzinfo=UTC)
    assert [e.id for e in await nvr.recent_events(None, since, 10)] == [902]
    early = datetime(2026, 1, 15, 1, 0, tzinfo=UTC)
    assert [e.id for e in await nvr.recent_events(None, early, 10)] == [902, 901]
    assert [e.id for e in await nvr.recent_events("back_yard", early, 10)] == [901]
    assert [e.id for e in await nvr.search(camera="garden")] == []
    assert [e.id for e in await nvr.search(label="person")] == [901]
    assert await nvr.describe_camera("front_door", None) is None  # the vision model looks
    assert "shed" in (await nvr.describe_camera("garden", None) or "")
    with pytest.raises(NvrReadError, match="unknown camera 'attic'"):
        await nvr.describe_camera("attic", None)
    with pytest.raises(NvrReadError, match="no live detection state"):
        await nvr.live_detections("garden")
    with pytest.raises(NvrReadError, match="no health"):
        await nvr.camera_health("garden")
    with pytest.raises(NvrReadError, match="has no kept picture"):
        await nvr.event_image(901)


async def test_health_and_ping() -> None:
    nvr = FixtureNvr(shipped("investigate", "offline_network"))
    health = await nvr.camera_health("garden")
    assert health.online is False
    assert "no route" in (health.status or "")
    with pytest.raises(NvrReadError, match="does not answer"):
        await nvr.snapshot("garden")
    with Image.open(io.BytesIO(await nvr.snapshot("front_door"))) as img:
        assert img.format == "JPEG"  # pinged: a camera that answers gives a frame


async def test_frames_come_in_order_then_the_last_repeats() -> None:
    case = shipped("look", "gear_no_helmet")
    nvr = FixtureNvr(case)
    frames = [p.read() for p in case.pictures["garden"]]
    got = [await nvr.snapshot("garden") for _ in range(4)]
    assert got == [*frames, frames[-1]]
    assert len(set(frames)) == 3


def test_the_run_time_of_a_case() -> None:
    assert case_now(shipped("investigate", "intrusion_stranger")) == datetime(
        2026, 1, 15, 2, 14, tzinfo=UTC
    )
    assert case_now(shipped("look", "gate_taxi")) == FALLBACK_NOW


async def test_a_look_case_shows_its_frames_to_the_model(tmp_path: Path) -> None:
    async with FakeOllama() as fake:
        fake.default = FromSchema(values={"decision": "missing", "missing": "helmet"})
        rc = await asyncio.to_thread(
            main,
            ["run", "--suite", "look", "--case", "gear-no-helmet", "--ollama", fake.url,
             "--model", "qwen2.5vl:3b", "--json", str(tmp_path / "r.json"), "--no-progress"],
        )  # fmt: skip
        (chat,) = fake.chats
    assert len(chat.images) == 3  # the step's three frames, prepared by the AI library
    assert "helmet" in chat.system
    report = json.loads((tmp_path / "r.json").read_text())
    (row,) = report["results"][0]["rows"]
    # The scripted answer's reason is empty, so the keyword check fails the row.
    assert [c["name"] for c in row["checks"] if not c["ok"]] == ["keyword helmet|head"]
    assert rc == 1
