"""What the options pages parse from what people type, every way it can be wrong: each
problem names its line and says what to write instead, blank lines and ``#`` comments are
skipped, and an address is a web address with a host and a port in range."""

from __future__ import annotations

import pytest

from custom_components.opennvr_workflows.flows.options import (
    moving_webhooks,
    parse_approver_roles,
    parse_webhooks,
)
from custom_components.opennvr_workflows.flows.urls import web_address_problem

PEOPLE = {"u1": "Ann", "u2": "Bo"}


def test_people_per_role_read_and_refused() -> None:
    text = "# the gate\n\nrole: guard: Ann, Bo\nowner: bo\n"
    assert parse_approver_roles(text, PEOPLE) == ({"guard": ["u1", "u2"], "owner": ["u2"]}, None)
    for typed, problem in (
        ("guard Ann", "line 1: write it as 'role: Name, Name'"),
        ("guard: Ann\nguard: Bo", "line 2: the role 'guard' is already given"),
        ("guard: Carl", "line 1: there is no Home Assistant user named 'Carl'"),
        ("guard: , ,", "line 1: name at least one person for 'guard'"),
    ):
        assert parse_approver_roles(typed, PEOPLE) == ({}, problem), typed
    found, problem = parse_approver_roles("9guard: Ann", PEOPLE)
    assert found == {}
    assert problem is not None
    assert problem.startswith("line 1: ")


def test_webhook_destinations_read_and_refused() -> None:
    text = "# destinations\ntickets: https://hooks.local/t\ngate: http://10.0.0.5/open !moves\n"
    assert parse_webhooks(text) == (
        {"tickets": "https://hooks.local/t", "gate": "http://10.0.0.5/open"},
        None,
    )
    assert moving_webhooks(text) == ["gate"]
    for typed, problem in (
        ("gate: http://x/open !loud", "line 1: after the address, only '!moves' may follow"),
        ("tickets", "line 1: write it as 'name: https://host/path'"),
        ("the gate: http://x/open", "line 1: write it as 'name: https://host/path'"),
        ("gate: ftp://x/open", "line 1: the address must start with http:// or https://"),
        ("a: http://x/1\na: http://x/2", "line 2: the destination 'a' is already defined"),
    ):
        assert parse_webhooks(typed) == ({}, problem), typed


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("https://nvr.local:8443", None),
        ("", "invalid_url"),
        ("https://nvr local", "invalid_url"),
        ("http://[::1", "invalid_url"),
        ("nvr.local", "invalid_url"),
        ("ftp://nvr.local", "invalid_url"),
        ("https://nvr.local:99999", "invalid_url"),
    ],
)
def test_a_web_address(text: str, problem: str | None) -> None:
    assert web_address_problem(text) == problem
