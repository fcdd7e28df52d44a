"""Durations: the grammar, the canonical form, and the round trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from custom_components.opennvr_workflows.workflow import load_schema
from custom_components.opennvr_workflows.workflow.durations import (
    DURATION_PATTERN,
    DurationError,
    format_duration,
    parse_duration,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("60s", 60.0),
        ("2m", 120.0),
        ("1h", 3600.0),
        ("1h30m", 5400.0),
        ("1d2h", 93600.0),
        ("0s", 0.0),
    ],
)
def test_parse(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5", "m", "1.5m", "2 minutes", "1m1h", "-1s", "1w"])
def test_parse_refuses(text: str) -> None:
    with pytest.raises(DurationError, match="not a duration"):
        parse_duration(text)


@pytest.mark.parametrize(("seconds", "text"), [(0.0, "0s"), (90.0, "1m30s"), (86_400.0, "1d")])
def test_format(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize("seconds", [-1.0, 1.5])
def test_format_refuses(seconds: float) -> None:
    with pytest.raises(ValueError, match="whole"):
        format_duration(seconds)


@given(st.integers(min_value=0, max_value=10**9))
def test_round_trip(seconds: int) -> None:
    assert parse_duration(format_duration(float(seconds))) == seconds


def test_schema_uses_the_same_grammar() -> None:
    assert load_schema()["$defs"]["duration"]["pattern"] == DURATION_PATTERN
