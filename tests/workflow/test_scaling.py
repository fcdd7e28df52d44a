"""The validator's work grows with the file, not with its square: the parts that compared
every pair (uniqueness of unsortable items, errors against kind errors) and the schema's walk
of steps past the caps are replaced; these tests check each replacement does the same job."""

from __future__ import annotations

import pytest
from jsonschema import _keywords

from custom_components.opennvr_workflows.workflow import schema as schema_module
from custom_components.opennvr_workflows.workflow import validate_text
from custom_components.opennvr_workflows.workflow.schema import json_key
from custom_components.opennvr_workflows.workflow.vocabulary import MAX_STEPS

HEAD = "contract: workflow.v1\nname: Scale\nwhen:\n  button: {}\nthen:\n"


@pytest.mark.parametrize(
    ("first", "second", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        ({"a": 1, "b": [1, 2]}, {"b": [1.0, 2], "a": 1}, True),
        ([1, 2], [2, 1], False),
        ("1", 1, False),
        (None, False, False),
        ({"a": {"b": None}}, {"a": {"b": None}}, True),
    ],
)
def test_uniqueness_keys_follow_json_schema_equality(
    first: object, second: object, equal: bool
) -> None:
    assert (json_key(first) == json_key(second)) is equal


def test_uniqueness_never_compares_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    def pairwise(*args: object) -> bool:
        raise AssertionError("the pairwise uniqueness check ran")

    monkeypatch.setattr(_keywords, "uniq", pairwise)
    distinct = ", ".join(f"{{ k: {i} }}" for i in range(2_000))
    repeated = distinct + ", { k: 7 }"
    for items, duplicate in ((distinct, False), (repeated, True)):
        text = HEAD + f"  - ask_person: {{ who: role:owner, message: Hi, replies: [{items}] }}\n"
        codes = [p.code for p in validate_text(text).errors]
        assert ("WF-DUPLICATE-ITEM" in codes) is duplicate


def test_mixed_numbers_and_text_are_told_apart() -> None:
    text = HEAD + "  - ask_person: { who: role:owner, message: Hi, replies: [1, '1', x] }\n"
    assert "WF-DUPLICATE-ITEM" not in [p.code for p in validate_text(text).errors]


def test_steps_past_the_cap_are_one_problem_and_not_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked: list[object] = []
    original = schema_module._library_ref

    def counting(validator: object, ref: str, instance: object, schema: object) -> object:
        if ref == "#/$defs/step":
            checked.append(instance)
        return original(validator, ref, instance, schema)

    monkeypatch.setattr(schema_module, "_library_ref", counting)
    nested = "".join(
        "  - if: [ { value: { of: '{camera}', is: x } } ]\n    then:\n"
        + "".join(f"      - {{ bad{i}_{j}: 1 }}\n" for j in range(30))
        for i in range(40)
    )
    report = validate_text(HEAD + nested)
    codes = [p.code for p in report.errors]
    assert codes.count("WF-TOO-MANY-STEPS") == 1
    assert len(checked) == MAX_STEPS
    assert codes.count("WF-STEP-KIND") < MAX_STEPS


def test_items_past_a_lists_cap_are_not_checked() -> None:
    steps = "".join(f"  - {{ bad{i}: 1 }}\n" for i in range(500))
    codes = [p.code for p in validate_text(HEAD + steps).errors]
    assert codes.count("WF-COUNT") == 1
    assert codes.count("WF-STEP-KIND") == 32  # the list's maxItems


def test_errors_under_a_kind_error_are_dropped_and_others_kept() -> None:
    kind = {("then", 0), ("then", 2, "ai")}
    under = schema_module._under_kind_error
    assert under(("then", 0), kind)
    assert under(("then", 0, "log", 3), kind)
    assert under(("then", 2, "ai", "prompt"), kind)
    assert not under(("then", 1), kind)
    assert not under(("then",), kind)
    assert not under(("then", 2, "if"), kind)
