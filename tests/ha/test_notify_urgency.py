"""The severity cap holds for a notification's own urgency, however its data expresses it:
each way a phone or a messaging service can be asked to wake someone, sent through a real
notify platform from a step that carries AI output, arrives lowered, and the step says so."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.engine import ActionRequest, NvrEvent, RunContext
from custom_components.opennvr_workflows.host.effects.urgency import cap_urgency, effective_severity

from .notify_platforms import RecordingService, add_notify_platforms

PHONE = "notify.mobile_app_alices_phone"
PUSHOVER = "notify.pushover"


@pytest.fixture
async def platforms(hass: HomeAssistant) -> dict[str, RecordingService]:
    return await add_notify_platforms(
        hass, {"mobile_app": {"alices_phone": "a1"}, "pushover": None}
    )


def ctx(*, ai: bool, step: str = "then.0") -> RunContext:
    return RunContext(
        workflow_id="w",
        workflow_name="W",
        version="v1",
        run_id="r1",
        correlation_id="w/r1",
        chain=(),
        step_path=step,
        test=False,
        trigger=NvrEvent(kind="button", source="engine", time=datetime.now(UTC)),
        ai_derived=ai,
    )


def call(action: str, data: Any, **params: Any) -> ActionRequest:
    return ActionRequest(
        kind="home_assistant",
        params={"action": action, "data": {"message": "Someone", "data": data}, **params},
    )


#: (service, the data as written, what the phone may get at most medium, what was lowered)
URGENT: list[tuple[str, dict[str, Any], dict[str, Any], list[str]]] = [
    (
        PHONE,
        {"push": {"interruption-level": "critical"}},
        {"push": {"interruption-level": "active"}},
        ["push.interruption-level"],
    ),
    (
        PHONE,
        {"push": {"interruption-level": "time-sensitive"}},
        {"push": {"interruption-level": "active"}},
        ["push.interruption-level"],
    ),
    (
        PHONE,
        {"push": {"sound": {"name": "default", "critical": 1, "volume": 1.0}}},
        {"push": {"sound": {"name": "default"}}},
        ["push.sound.critical"],
    ),
    (PHONE, {"channel": "alarm_stream", "tag": "x"}, {"tag": "x"}, ["channel"]),
    (PHONE, {"importance": "max"}, {}, ["importance"]),
    (PHONE, {"priority": "high", "ttl": 0}, {}, ["priority", "ttl"]),
    (PUSHOVER, {"priority": 2, "retry": 30, "expire": 600}, {}, ["priority"]),
    (PUSHOVER, {"priority": "1"}, {}, ["priority"]),
]


@pytest.mark.parametrize(("service", "data", "sent", "lowered"), URGENT)
async def test_urgency_from_an_ai_step_is_lowered_to_medium(
    hass: HomeAssistant,
    platforms: dict[str, RecordingService],
    setup_entry: MockConfigEntry,
    service: str,
    data: dict[str, Any],
    sent: dict[str, Any],
    lowered: list[str],
) -> None:
    fx = setup_entry.runtime_data.workflows.effects
    result = await fx.call_action(ctx(ai=True), call(service, data))
    got = platforms[service.removeprefix("notify.").split("_alices")[0]].sent
    assert got[0]["data"] == sent
    assert result["lowered"] == lowered
    assert result["severity"] == "medium"
    assert result["capped_by"] == "ai_untrusted"
    assert result["requested_severity"] in ("high", "critical")


async def test_the_engines_limit_wins_and_a_plain_rule_is_not_capped(
    hass: HomeAssistant, platforms: dict[str, RecordingService], setup_entry: MockConfigEntry
) -> None:
    fx = setup_entry.runtime_data.workflows.effects
    phone = platforms["mobile_app"]
    critical = {"push": {"interruption-level": "critical"}}
    # A trusted AI step may reach high: critical becomes time-sensitive, not silent.
    result = await fx.call_action(
        ctx(ai=True), call(PHONE, critical, max_severity="high", capped_by="ai_trusted_max")
    )
    assert phone.sent[-1]["data"] == {"push": {"interruption-level": "time-sensitive"}}
    assert result["capped_by"] == "ai_trusted_max"
    # A path a plain rule or a person chose keeps what it asked for.
    result = await fx.call_action(ctx(ai=False, step="then.1"), call(PHONE, critical))
    assert phone.sent[-1]["data"] == critical
    assert "lowered" not in result
    pushover = platforms["pushover"]
    await fx.call_action(
        ctx(ai=True, step="then.2"),
        call(PUSHOVER, {"priority": 2, "retry": 30}, max_severity="high"),
    )
    assert pushover.sent[-1]["data"] == {"priority": 1}


async def test_urgency_that_cannot_be_read_is_refused(
    hass: HomeAssistant, platforms: dict[str, RecordingService], setup_entry: MockConfigEntry
) -> None:
    fx = setup_entry.runtime_data.workflows.effects
    with pytest.raises(HomeAssistantError, match="not a mapping"):
        await fx.call_action(ctx(ai=True), call(PHONE, "critical"))
    assert platforms["mobile_app"].sent == []


@pytest.mark.parametrize(
    ("data", "integration", "severity"),
    [
        (None, None, "low"),
        ({"tag": "x", "push": {"interruption-level": "passive"}}, None, "low"),
        ({"push": {"interruption-level": "critical"}}, None, "critical"),
        ({"push": "loud"}, None, "critical"),
        ({"push": {"sound": {"critical": "0"}}}, None, "low"),
        ({"media_stream": "alarm_stream_max"}, None, "critical"),
        ({"importance": "default"}, None, "low"),
        ({"importance": "shouting"}, None, "critical"),
        ({"ttl": 3600}, None, "low"),
        ({"priority": 2}, "pushover", "critical"),
        ({"priority": 0}, "pushover", "low"),
        ({"priority": 5}, "ntfy", "high"),
        ({"priority": 3}, "ntfy", "low"),
        ({"priority": 2}, None, "critical"),
        ({"urgency": "high"}, "html5", "high"),
    ],
)
def test_effective_severity(data: Any, integration: str | None, severity: str) -> None:
    assert effective_severity(data, integration) == severity


def test_cap_keeps_what_is_allowed_and_lowers_only_what_is_not() -> None:
    data = {"push": {"interruption-level": "time-sensitive"}, "channel": "alarm_stream"}
    capped = cap_urgency(data, "high")
    assert capped.data == {"push": {"interruption-level": "time-sensitive"}}
    assert capped.lowered == ("channel",)
    assert capped.requested == "critical"
    assert data["channel"] == "alarm_stream"  # the workflow's own data is left as written
    assert cap_urgency({"push": {"interruption-level": "active"}}, "low").lowered == ()
