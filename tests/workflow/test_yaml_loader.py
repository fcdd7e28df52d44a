"""The located YAML reader: YAML 1.2 scalars, positions, and what it refuses."""

from __future__ import annotations

import pytest

from custom_components.opennvr_workflows.workflow.yaml_loader import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_TEXT_BYTES,
    Mark,
    load_yaml,
    resolve_plain_scalar,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Yes", "Yes"),
        ("no", "no"),
        ("on", "on"),
        ("off", "off"),
        ("22:00", "22:00"),
        ("2026-01-01", "2026-01-01"),
        ("true", True),
        ("False", False),
        ("null", None),
        ("~", None),
        ("", None),
        ("12", 12),
        ("-3", -3),
        ("0o17", 15),
        ("0x1f", 31),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        ("role:owner", "role:owner"),
    ],
)
def test_plain_scalars_follow_yaml_1_2_core(text: str, value: object) -> None:
    assert resolve_plain_scalar(text) == value
    assert type(resolve_plain_scalar(text)) is type(value)


def test_quoted_scalars_are_text() -> None:
    located, problems = load_yaml("a: \"12\"\nb: 'true'\n")
    assert problems == []
    assert located is not None
    assert located.data == {"a": "12", "b": "true"}


def test_positions_of_values_and_keys() -> None:
    located, _ = load_yaml("then:\n  - log: hi\n  - wait: 1m\n")
    assert located is not None
    assert located.locate(("then", 1, "wait")) == Mark(3, 11)
    assert located.locate(("then", 1, "wait"), key=True) == Mark(3, 5)
    # a list is located at its key, where people look for it
    assert located.locate(("then",)) == Mark(1, 1)
    # an unknown path falls back to its nearest located ancestor
    assert located.locate(("then", 1, "wait", "nope")) == Mark(3, 11)


def test_all_problems_of_one_file_at_once() -> None:
    _, problems = load_yaml("a: 1\na: 2\nb: &x 1\nc: *x\nd: !!str e\n")
    assert [(p.code, p.line) for p in problems] == [
        ("WF-YAML-DUPLICATE-KEY", 2),
        ("WF-YAML-ALIAS", 3),
        ("WF-YAML-ALIAS", 4),
        ("WF-YAML-TAG", 5),
    ]


def test_billion_laughs_is_refused_without_expanding() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    lines += [
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    located, problems = load_yaml("\n".join(lines) + "\n")
    assert located is None
    assert {p.code for p in problems} == {"WF-YAML-ALIAS"}


def test_size_cap() -> None:
    located, problems = load_yaml("a: " + "x" * MAX_TEXT_BYTES)
    assert located is None
    assert [p.code for p in problems] == ["WF-YAML-TOO-LARGE"]


def test_depth_cap_without_recursion() -> None:
    located, problems = load_yaml("[" * 5000 + "]" * 5000)
    assert located is None
    assert [p.code for p in problems] == ["WF-YAML-TOO-DEEP"]
    assert problems[0].column == MAX_DEPTH + 1


def test_node_cap() -> None:
    located, problems = load_yaml("a: [" + ", ".join(["1"] * (MAX_NODES + 5)) + "]\n")
    assert located is None
    assert [p.code for p in problems] == ["WF-YAML-TOO-MANY-NODES"]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "WF-NOT-A-MAPPING"),
        ("# only a comment\n", "WF-NOT-A-MAPPING"),
        ("just text\n", "WF-NOT-A-MAPPING"),
        ("a: [1\n", "WF-YAML-SYNTAX"),
        ("? [a]\n: 1\n", "WF-YAML-KEY"),
        ("1: a\n", "WF-YAML-KEY"),
        ("a: .inf\n", "WF-YAML-NUMBER"),
    ],
)
def test_refusals(text: str, code: str) -> None:
    located, problems = load_yaml(text)
    assert located is None
    assert [p.code for p in problems] == [code]
