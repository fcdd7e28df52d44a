"""The read tools at their edges: cameras asked for in every way (a list, "all", none, an
unknown one), a health ping whose frame cannot be had, a site list that does not exist or
is empty, ``ask_person`` reached directly, and windows given as text or out of range."""

from __future__ import annotations

from typing import Any

from opennvr_app_sdk.agent import ToolResult

from custom_components.opennvr_workflows.ai import OllamaLLMClient
from tests.ai.fake_nvr import FakeNvr

from .test_read_tools import call, tools_on


async def test_cameras_asked_for_in_every_way(nvr: FakeNvr, llm: OllamaLLMClient) -> None:
    t = tools_on(nvr, llm)
    both = await call(t["camera_snapshot"], camera_ids=["gate", "yard", "gate"])
    assert both.ok
    assert both.content.count("\n") == 1, "each camera once"
    unnamed = await call(t["camera_snapshot"])
    assert (unnamed.ok, unnamed.content) == (False, "ERROR: name a camera")
    unknown = await call(t["camera_snapshot"], camera_ids=["gate", "garage"])
    assert not unknown.ok
    assert "unknown camera(s) ['garage']" in unknown.content
    everywhere = await call(t["camera_health"], camera_id="all")
    assert (everywhere.ok, everywhere.content) == (False, "ERROR: name one camera")


async def test_a_ping_whose_frame_cannot_be_had(nvr: FakeNvr, llm: OllamaLLMClient) -> None:
    nvr.fail["snapshot"] = "camera offline"
    health = await call(tools_on(nvr, llm)["camera_health"], camera_id="gate", ping=True)
    assert health.ok
    assert "ping: no frame (camera offline)" in health.content


async def test_site_lists_that_are_missing_or_empty(nvr: FakeNvr, llm: OllamaLLMClient) -> None:
    t = tools_on(nvr, llm, lists={"staff": ("Ann Lee",), "visitors": ()})
    missing = await call(t["site_lookup"], list="couriers")
    assert (missing.ok, missing.content) == (
        False,
        "ERROR: no list 'couriers'; lists: staff, visitors",
    )
    empty = await call(t["site_lookup"], list="visitors")
    assert empty.content == "The visitors list is empty."


async def test_asking_a_person_is_never_answered_by_the_tool(
    nvr: FakeNvr, llm: OllamaLLMClient
) -> None:
    t = tools_on(nvr, llm, names=("ask_person",))
    out: ToolResult = await t["ask_person"].handler({"question": "open?"})
    assert (out.ok, out.content) == (False, "ERROR: asking a person must wait for the person")


async def test_windows_given_as_text_or_out_of_range(nvr: FakeNvr, llm: OllamaLLMClient) -> None:
    t = tools_on(nvr, llm)
    windows: list[Any] = ["an hour", -5, 10**9, True]
    for window in windows:
        out = await call(t["recent_events"], camera_id="gate", window_seconds=window)
        assert out.ok, (window, out.content)
