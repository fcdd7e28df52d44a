"""The read tools' handlers, their modes, and the guard that turns errors into failed calls."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opennvr_app_sdk.agent import (
    READ_TOOL_NAMES,
    DecisionSpec,
    Limits,
    Tool,
    ToolResult,
    build_tool_definitions,
    run_investigate,
)

from custom_components.opennvr_workflows.ai import (
    DEFAULT_SITE_POLICY,
    IMPLEMENTED_TOOLS,
    OllamaLLMClient,
    StoredEvent,
    site_policy,
    step_mode,
)
from custom_components.opennvr_workflows.ai.evidence import investigate_gap
from custom_components.opennvr_workflows.ai.read_tools import (
    HOST_DESCRIPTIONS,
    ToolHost,
    build_tools,
    guard_handler,
)
from tests.ai.fake_nvr import FakeNvr
from tests.fakes.ollama_server import Answer, FakeOllama, FromSchema, ToolCalls

NOW = datetime(2026, 11, 29, 2, 14, tzinfo=UTC)
ALL = IMPLEMENTED_TOOLS


def tools_on(
    nvr: FakeNvr,
    llm: Any,
    names: tuple[str, ...] = ALL,
    lists: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, Tool]:
    host = ToolHost(
        nvr=nvr, llm=llm, site_lists=lists or {"staff": ("Ann Lee", "Bo Chen")}, now=lambda: NOW
    )
    modes = {n: step_mode(site_policy(), n) for n in names}
    tools, refused = build_tools(names, host, modes)
    assert refused == []
    return {t.name: t for t in tools}


async def call(tool: Tool, **args: Any) -> ToolResult:
    out = await tool.handler(args)
    assert isinstance(out, ToolResult)
    return out


@pytest.fixture
def events() -> list[StoredEvent]:
    return [
        StoredEvent(7, "gate", "car", "2026-11-29T02:10:00+00:00", 0.9, "KA01AB1234"),
        StoredEvent(6, "yard", "person", "2026-11-29T01:58:00+00:00", 0.8, None, "a man"),
    ]


async def test_each_read_tool_answers_in_short_text(
    nvr: FakeNvr, llm: OllamaLLMClient, fake: FakeOllama, events: list[StoredEvent]
) -> None:
    nvr.events = events
    t = tools_on(nvr, llm)
    assert (await call(t["camera_snapshot"], camera_id="gate")).content == "gate: 1 person"
    assert "hi-vis" in (await call(t["describe_camera"], camera_id="all")).content
    recent = await call(t["recent_events"], camera_id="__any__", window_seconds=3600)
    assert recent.content.splitlines()[0].startswith("[#7] 2026-11-29T02:10:00+00:00 gate: car")
    assert nvr.calls[-1] == ("recent_events", (None, NOW.replace(hour=1)))
    plates = await call(t["recent_plates"], camera_id="gate", window_seconds=600, plate="ab 12")
    assert "KA01AB1234" in plates.content
    assert "person" not in plates.content
    found = await call(t["search_history"], label="person", attr=["blue", "van"])
    assert found.ok
    assert nvr.calls[-1][1]["query"] == "blue van"
    health = await call(t["camera_health"], camera_id="gate", ping=True)
    assert "online False" in health.content
    assert "ping: a fresh frame" in health.content
    staff = await call(t["site_lookup"], list="staff", query="ann")
    assert staff.content == "staff:\n- Ann Lee"
    missing = await call(t["site_lookup"], list="staff", query="zed")
    assert missing.content == "'zed' is not on the staff list."
    fake.script(Answer("A red car with its lights on."))
    described = await call(t["describe_event"], event_id=7)
    assert described.content == "[#7] A red car with its lights on."
    assert len(fake.chats[-1].images) == 1


async def test_describe_camera_falls_back_to_the_vision_model(
    nvr: FakeNvr, llm: OllamaLLMClient, fake: FakeOllama
) -> None:
    nvr.caption = None
    fake.script(Answer("Two people by a van."))
    out = await call(
        tools_on(nvr, llm)["describe_camera"], camera_id="yard", question="what are they doing?"
    )
    assert out.content == "yard: Two people by a van."
    assert fake.chats[0].user == "what are they doing?"


async def test_read_errors_and_unknown_cameras_are_failed_results(
    nvr: FakeNvr, llm: OllamaLLMClient
) -> None:
    nvr.fail["live_objects"] = "OpenNVRConnectionError: 503"
    t = tools_on(nvr, llm)
    out = await call(t["camera_snapshot"], camera_id="gate")
    assert (out.ok, out.content) == (False, "ERROR: OpenNVRConnectionError: 503")
    out = await call(t["recent_events"], camera_id="garage", window_seconds=60)
    assert not out.ok
    assert "unknown camera 'garage'" in out.content


async def test_guard_counts_an_error_string_as_a_failed_call(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    """A handler that returns an error as text, run through the SDK's loop."""

    async def flaky(args: dict[str, Any]) -> ToolResult:
        return ToolResult("ERROR: stream lost")

    definition = build_tool_definitions(["gate"], enabled=["describe_camera"])[0]
    tool = Tool.from_definition(definition, guard_handler(flaky))
    fake.script(
        ToolCalls([("describe_camera", {"camera_id": "gate"})]),
        Answer("hm"),
        FromSchema({"decision": "alert"}),
    )
    out = await run_investigate(
        llm, DecisionSpec(options=("ignore", "alert")), goal="g", tools=[tool], limits=Limits.cpu()
    )
    rows = [r for r in out.trace if r.kind == "tool"]  # type: ignore[union-attr]
    assert [(r.name, r.status, r.result) for r in rows] == [
        ("describe_camera", "failed", "ERROR: stream lost")
    ]
    assert investigate_gap(out.trace, ["describe_camera"]) == (  # type: ignore[union-attr]
        "a needed tool failed: describe_camera"
    )


def test_descriptions_are_the_sdks_where_it_has_them(nvr: FakeNvr, llm: OllamaLLMClient) -> None:
    sdk = {d["function"]["name"]: d for d in build_tool_definitions(list(nvr.cameras))}
    for name, tool in tools_on(nvr, llm).items():
        if name in HOST_DESCRIPTIONS:  # the arguments stay the SDK's; the text says the truth
            assert tool.parameters == sdk[name]["function"]["parameters"]
            assert tool.description == HOST_DESCRIPTIONS[name]
        elif name in sdk:
            assert tool.definition() == sdk[name]
        else:
            assert tool.description
            assert tool.parameters["type"] == "object"


def test_detect_objects_does_not_promise_a_fresh_inference(
    nvr: FakeNvr, llm: OllamaLLMClient
) -> None:
    sdk = {d["function"]["name"]: d for d in build_tool_definitions(list(nvr.cameras))}
    assert "FRESH detection" in sdk["detect_objects"]["function"]["description"]
    served = tools_on(nvr, llm)["detect_objects"].description
    assert "FRESH" not in served
    assert "always-on detector" in served


def test_the_implemented_tools_are_exactly_those_that_can_be_built(
    nvr: FakeNvr, llm: OllamaLLMClient
) -> None:
    every = (*READ_TOOL_NAMES, "camera_health", "site_lookup", "ask_person")
    tools, refused = build_tools(
        every,
        ToolHost(nvr=nvr, llm=llm, site_lists={"staff": ("Ann",)}),
        dict.fromkeys(every, "auto"),
    )
    assert sorted(t.name for t in tools) == sorted(IMPLEMENTED_TOOLS)
    # What OpenNVR offers an integration nothing to build on: no face gallery, no frames
    # from recordings.
    assert sorted(refused) == ["describe_window", "recognize_faces"]
    assert set(DEFAULT_SITE_POLICY) == set(IMPLEMENTED_TOOLS)
    assert {"search_footage", "detect_objects"} <= set(IMPLEMENTED_TOOLS)


# ── search_footage: OpenNVR's /search over recorded visits ──────────────────────────────


async def test_search_footage_searches_the_window_asked(
    nvr: FakeNvr, llm: OllamaLLMClient, events: list[StoredEvent]
) -> None:
    nvr.events = events
    t = tools_on(nvr, llm)
    out = await call(t["search_footage"], keywords=["red", " truck "], within_minutes=10)
    assert out.ok
    assert out.content.splitlines()[0].startswith("[#7] 2026-11-29T02:10:00+00:00 gate: car")
    assert "[#6]" not in out.content  # 01:58 is before the ten minutes asked
    assert nvr.calls[-1] == (
        "search",
        {
            "query": "red truck",
            "camera": None,
            "start": (NOW - timedelta(minutes=10)).isoformat(),
            "limit": 10,
        },
    )
    yard = await call(t["search_footage"], keywords=["man"], camera_id="yard", within_minutes=60)
    assert yard.content.startswith("[#6]")
    nothing = await call(t["search_footage"], keywords=["dog"], within_minutes=1)
    assert (nothing.ok, nothing.content) == (True, "No footage matched 'dog' in the last 1 min.")


async def test_search_footage_widens_from_the_last_week_to_all_history(
    nvr: FakeNvr, llm: OllamaLLMClient
) -> None:
    t = tools_on(nvr, llm)
    nvr.events = [StoredEvent(3, "gate", "truck", "2026-11-01T09:00:00+00:00", caption="red")]
    out = await call(t["search_footage"], keywords=["red", "truck"], camera_id="__any__")
    searched = [c[1]["start"] for c in nvr.calls if c[0] == "search"]
    assert searched == [(NOW - timedelta(days=7)).isoformat(), None]
    assert out.content.startswith("Nothing in the last week; from all history:\n[#3]")

    nvr.calls.clear()
    nvr.events = [StoredEvent(4, "gate", "truck", "2026-11-28T09:00:00+00:00")]
    out = await call(t["search_footage"], keywords=["truck"])
    assert [c[1]["start"] for c in nvr.calls] == [(NOW - timedelta(days=7)).isoformat()]
    assert out.content.startswith("[#4]")

    nvr.events = []
    out = await call(t["search_footage"], keywords=["truck"])
    assert out.content == "No footage matched 'truck' in all the recorded history."


async def test_search_footage_errors_go_back_to_the_model(
    nvr: FakeNvr, llm: OllamaLLMClient
) -> None:
    t = tools_on(nvr, llm)
    empty = await call(t["search_footage"], keywords=[" "])
    assert (empty.ok, empty.content) == (
        False,
        "ERROR: name what to look for, e.g. keywords ['red', 'truck']",
    )
    unknown = await call(t["search_footage"], keywords=["van"], camera_id="garage")
    assert not unknown.ok
    assert "unknown camera 'garage'" in unknown.content
    nvr.fail["search"] = "search: OpenNVRConnectionError: GET /search: 503"
    down = await call(t["search_footage"], keywords=["van"])
    assert (down.ok, down.content) == (
        False,
        "ERROR: search: OpenNVRConnectionError: GET /search: 503",
    )


# ── detect_objects: the always-on detector's latest frame, when it is current ───────────


async def test_detect_objects_counts_what_the_detector_sees_now(
    nvr: FakeNvr, llm: OllamaLLMClient
) -> None:
    nvr.objects = {"person": 2, "car": 0, "dog": 1}
    nvr.live["yard"] = {"motion": True}
    t = tools_on(nvr, llm)
    out = await call(t["detect_objects"], camera_id="all")
    assert out.ok
    assert out.content.splitlines() == [
        "gate: 1 dog, 2 person (frame at 2026-11-29T02:14:00Z)",
        "yard: 1 dog, 2 person (frame at 2026-11-29T02:14:00Z, motion)",
    ]
    nvr.objects = {}
    quiet = await call(t["detect_objects"], camera_id="gate")
    assert quiet.content == "gate: nothing detected (frame at 2026-11-29T02:14:00Z)"


async def test_detect_objects_gives_no_count_that_is_not_current(
    nvr: FakeNvr, llm: OllamaLLMClient
) -> None:
    t = tools_on(nvr, llm)
    nvr.live["yard"] = {"stale": True, "frame_at": "2026-11-29T01:02:03Z"}
    both = await call(t["detect_objects"], camera_ids=["gate", "yard"])
    assert both.ok  # the gate's count is current
    assert both.content.splitlines() == [
        "gate: 1 person (frame at 2026-11-29T02:14:00Z)",
        "no current detection on yard: its frames are stale, the last at 2026-11-29T01:02:03Z",
    ]
    nvr.live["gate"] = {"online": False}
    none = await call(t["detect_objects"], camera_ids=["gate", "yard"])
    assert not none.ok  # nothing current: a failed call, which the evidence check sees
    assert "no current detection on gate: the camera is offline" in none.content
    nvr.fail["live_detections"] = "live state of gate: OpenNVRAuthError: 403"
    denied = await call(t["detect_objects"], camera_id="gate")
    assert (denied.ok, denied.content) == (
        False,
        "ERROR: live state of gate: OpenNVRAuthError: 403",
    )


def test_only_read_and_ask_tools_can_be_built(nvr: FakeNvr, llm: OllamaLLMClient) -> None:
    host = ToolHost(nvr=nvr, llm=llm)
    names = ("describe_camera", "open_gate", "unlock", "set_site_mode", "siren", "notify")
    tools, refused = build_tools(names, host, dict.fromkeys(names, "auto"))
    assert [t.name for t in tools] == ["describe_camera"]
    assert refused == ["open_gate", "unlock", "set_site_mode", "siren", "notify"]
    assert all(t.effect in ("read", "ask_person") for t in tools)


def test_ask_person_always_waits_for_a_person(nvr: FakeNvr, llm: OllamaLLMClient) -> None:
    assert site_policy({"ask_person": "auto"})["ask_person"] == "ask"
    host = ToolHost(nvr=nvr, llm=llm)
    tools, _ = build_tools(("ask_person",), host, {"ask_person": "auto"})
    assert (tools[0].mode, tools[0].effect) == ("ask", "ask_person")


@pytest.mark.parametrize(
    ("site", "step", "expected"),
    [
        ("auto", None, "auto"),
        ("auto", "ask", "ask"),
        ("auto", "unavailable", "unavailable"),
        ("ask", "auto", "ask"),
        ("unavailable", "auto", "unavailable"),
        ("ask", "bogus", "unavailable"),
    ],
)
def test_modes_only_tighten(site: str, step: str | None, expected: str) -> None:
    policy = site_policy({"describe_camera": site})
    assert step_mode(policy, "describe_camera", step) == expected


def test_site_policy_defaults_and_unknown_modes() -> None:
    assert DEFAULT_SITE_POLICY["recent_events"] == "auto"
    assert DEFAULT_SITE_POLICY["ask_person"] == "ask"
    assert site_policy({"recent_events": "whenever"})["recent_events"] == "unavailable"
    assert step_mode(site_policy(), "open_gate") == "unavailable"
