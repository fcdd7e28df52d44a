"""Placeholders as data, site facts, rule tables and the budget, as units."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from opennvr_app_sdk.agent import DecisionSpec, decide_message, look_messages

from custom_components.opennvr_workflows.ai import (
    BudgetedClient,
    BudgetSpentError,
    FixedBudget,
    RuleRow,
    UnlimitedBudget,
    first_match,
)
from custom_components.opennvr_workflows.ai.prompts import (
    data_block,
    fill_text,
    placeholders,
    site_facts,
)
from custom_components.opennvr_workflows.ai.rules import fields_schema, rewrite_for_rules
from tests.fakes.ollama_server import FakeOllama

SPEC = DecisionSpec(options=("ignore", "alert"), fields={"who": ("staff", "intruder")})


def test_placeholders_are_found_in_order_without_repeats() -> None:
    assert placeholders("{plate} at {camera}, again {plate}; {not a name}") == ("plate", "camera")


def test_fill_text_is_for_data_and_keeps_unknown_names() -> None:
    assert fill_text("said {message} to {who}", {"message": "hi"}) == "said hi to {who}"


def test_data_block_is_json_safe_and_puts_referenced_names_first() -> None:
    at = datetime(2026, 11, 29, 2, 14, tzinfo=UTC)
    block = data_block(
        {"camera": "gate", "at": at, "score": math.nan, "x": "y" * 5000, "tags": ("a", "b")},
        ("plate", "camera"),
    )
    assert list(block)[:2] == ["plate", "camera"]
    assert block["plate"] is None
    assert block["at"] == "2026-11-29T02:14:00+00:00"
    assert block["score"] is None
    assert len(block["x"]) == 1001
    assert block["tags"] == ["a", "b"]


def test_site_facts_are_capped_with_a_note() -> None:
    assert site_facts("  two\nwords ") == "two words"
    capped = site_facts("w " * 350)
    assert capped.startswith("w " * 10)
    assert capped.count("w") == 300 + capped.count("words")
    assert "cut at 300 of 350 words" in capped


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"who": "intruder", "where": "fence"}, 0),
        ({"who": "intruder", "where": "road"}, 1),
        ({"who": "staff", "where": "road"}, 2),
        ({"who": "visitor", "where": "road"}, None),
    ],
)
def test_first_matching_rule_wins(fields: dict[str, str], expected: int | None) -> None:
    rules = [
        RuleRow({"who": ("intruder",), "where": ("fence",)}, "alert"),
        RuleRow({"who": ("intruder",)}, "watch"),
        RuleRow({"who": ("staff", "contractor")}, "ignore"),
    ]
    assert first_match(rules, fields) == expected
    assert first_match([*rules, RuleRow({}, "watch")], {"who": "visitor"}) == 3


def test_rules_ask_for_fields_not_a_decision() -> None:
    schema = fields_schema(SPEC)
    assert set(schema["properties"]) == {"reason", "who", "confidence"}
    assert schema["required"] == ["reason", "who", "confidence"]
    look = rewrite_for_rules(SPEC, look_messages(SPEC, prompt="p", inputs={"a": 1}))
    assert "decision" not in look[-1]["content"]
    assert "who: one of staff, intruder." in look[-1]["content"]
    assert look[-1]["content"].startswith("INPUTS (data):")
    after = rewrite_for_rules(SPEC, [{"role": "user", "content": "x"}, decide_message(SPEC)])
    assert after[-1]["content"].startswith("Now report what you found.")
    assert "decision" not in after[-1]["content"]


def test_fixed_budget_counts_and_refuses_without_taking() -> None:
    budget = FixedBudget(3)
    assert budget.try_draw(2)
    assert not budget.try_draw(2)
    assert budget.try_draw(1)
    assert (budget.remaining, budget.drawn, budget.refused) == (0, 3, 1)
    assert UnlimitedBudget().try_draw(10**6)
    with pytest.raises(ValueError, match="negative"):
        FixedBudget(-1)


async def test_budgeted_client_draws_before_each_call(fake: FakeOllama, llm: object) -> None:
    budget = FixedBudget(1)
    client = BudgetedClient(llm, budget, prepaid=1)  # type: ignore[arg-type]
    msgs = [{"role": "user", "content": "x"}]
    await client.chat(messages=msgs, format={"type": "object"})  # prepaid decision draw
    await client.chat(messages=msgs)  # drawn
    with pytest.raises(BudgetSpentError):
        await client.chat(messages=msgs)
    assert (len(fake.chats), client.refused, budget.remaining) == (2, 1, 0)
