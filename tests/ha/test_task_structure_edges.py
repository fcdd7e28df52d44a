"""More structures the AI Task's Look reads or refuses: a structure that is not a mapping,
too many fields, a select with only "unsure" or too many values, a number without a range,
``probatio.In`` choices, names that slug to nothing or to a step's own keys, an unsure
answer of a boolean decision, and a task with no structure at all."""

from __future__ import annotations

from typing import Any

import probatio as vol
import pytest
from homeassistant.helpers import selector

from custom_components.opennvr_workflows.host.model.task_structure import (
    MAX_FIELDS,
    StructureError,
    plan_of,
    text_answer,
)


def _schema(fields: dict[str, Any]) -> vol.Schema:
    return vol.Schema(
        {vol.Optional(name): selector.selector(config) for name, config in fields.items()}
    )


@pytest.mark.parametrize(
    ("structure", "key"),
    [
        (vol.Schema(str), "task_field_unsupported"),
        (
            _schema({f"f{i}": {"boolean": {}} for i in range(MAX_FIELDS + 2)}),
            "task_too_many_fields",
        ),
        (_schema({"x": {"select": {"options": ["unsure"]}}}), "task_field_too_many_values"),
        (
            _schema({"x": {"select": {"options": [str(i) for i in range(40)]}}}),
            "task_field_too_many_values",
        ),
        (_schema({"n": {"number": {"min": 0}}}), "task_field_unsupported"),
        (_schema({"n": {"number": {"min": 0, "max": 4, "step": "any"}}}), "task_field_unsupported"),
        (_schema({"n": {"number": {"min": 5, "max": 1}}}), "task_field_too_many_values"),
    ],
)
def test_what_a_look_cannot_answer(structure: vol.Schema, key: str) -> None:
    with pytest.raises(StructureError) as refused:
        plan_of(structure)
    assert refused.value.key == key


def test_choices_given_as_in_and_names_that_slug_to_nothing() -> None:
    plan = plan_of(
        vol.Schema(
            {
                vol.Required("colour", description="The car's colour"): vol.In(["red", "blue"]),
                vol.Optional("!!!"): selector.selector({"select": {"options": ["1st", "2nd"]}}),
                vol.Optional("rule"): selector.selector({"boolean": {}}),
            }
        )
    )
    assert plan.decision is not None
    assert plan.decision.name == "colour"
    assert plan.options == ("red", "blue")
    fields = plan.step_fields()
    assert fields["field"] == ["1st", "2nd"], "a name with no letters gets a plain one"
    assert "rule_value" in fields or "rule" in fields


def test_an_unsure_boolean_decision_is_null_and_no_structure_is_a_sentence() -> None:
    plan = plan_of(_schema({"person": {"boolean": {}}, "count": {"number": {"min": 1, "max": 3}}}))
    answer = plan.answer("unsure", {"count": "2"}, "too dark", 0.2, "below_floor", "run")
    assert answer["person"] is None
    assert answer["count"] is None
    assert plan_of(None).decision is None
    assert text_answer("unsure", "") == "unsure"
    assert text_answer("answered", "a red car") == "a red car"
