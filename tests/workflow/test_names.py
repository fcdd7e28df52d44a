"""Look-alike names: replies, options and field values that read the same are one name, and
names with invisible or formatting characters are refused; name patterns match whole texts."""

from __future__ import annotations

import json
import sys
from importlib import resources

import pytest

from custom_components.opennvr_workflows.workflow import validate_text
from custom_components.opennvr_workflows.workflow.names import (
    _prototypes,
    forbidden_character,
    name_key,
    names_clash,
)
from custom_components.opennvr_workflows.workflow.schema import ecma_pattern


def _ask(replies: list[str]) -> str:
    return (
        "contract: workflow.v1\nname: Ask\nwhen:\n  button: {}\nthen:\n"
        f"  - ask_person: {{ who: role:owner, message: Open?, replies: {json.dumps(replies)}, "
        "timeout: 60s }\n"
    )


def _look(fields: dict[str, list[str]], decision: list[str] | None = None) -> str:
    options = decision or ["ignore", "alert"]
    paths = "".join(f"      {o}: []\n" for o in options)
    return (
        "contract: workflow.v1\nname: Look\nwhen:\n  alert: { app: intrusion }\nthen:\n"
        "  - ai:\n      mode: look\n      prompt: Who is it?\n"
        f"      decision: {json.dumps(options)}\n      fields: {json.dumps(fields)}\n"
        f"{paths}      unsure: []\n"
    )


def _codes(text: str) -> list[str]:
    return [p.code for p in validate_text(text).errors]


LOOK_ALIKES = [
    ("Yes", "yes"),  # case
    ("Yes", "\uff39\uff45\uff53"),  # full width
    ("Yes", "Y\u0435s"),  # Cyrillic e
    ("Yes", "Y\u0435\u0455"),  # Cyrillic e and dze
    ("Open", "\u039fpen"),  # Greek capital omicron
    ("Cafe", "Cafe\u0301"),  # a combining accent
    ("Go now", "Go  now"),  # white space
    ("Go now", "Go\u00a0now"),  # no-break space
    ("Stop", "\u0405top"),  # Cyrillic capital dze
]


@pytest.mark.parametrize(("first", "second"), LOOK_ALIKES)
def test_look_alike_replies_are_duplicates(first: str, second: str) -> None:
    assert names_clash(first, second)
    assert "WF-ASK-REPLY-DUPLICATE" in _codes(_ask([first, second]))


@pytest.mark.parametrize(("first", "second"), LOOK_ALIKES)
def test_look_alike_field_values_are_duplicates(first: str, second: str) -> None:
    assert "WF-NAME-DUPLICATE" in _codes(_look({"who": [first, second]}))


@pytest.mark.parametrize(
    "invisible",
    ["\u200b", "\u200d", "\u00ad", "\u202e", "\u2066", "\ufeff", "\x07", "\u2028", "\ue000"],
)
def test_invisible_and_control_characters_are_refused_in_names(invisible: str) -> None:
    name = f"Ye{invisible}s"
    assert forbidden_character(name) is not None
    assert "WF-NAME-CHARACTER" in _codes(_ask([name, "No"]))
    assert "WF-NAME-CHARACTER" in _codes(_look({"who": [name, "staff"]}))


def test_a_reply_named_like_the_timeout_path_is_a_duplicate() -> None:
    assert "WF-ASK-REPLY-DUPLICATE" in _codes(_ask(["No_Answer", "Yes"]))
    assert "WF-ASK-REPLY-DUPLICATE" in _codes(_ask(["no\u200b_answer", "Yes"]))


def test_names_that_differ_are_kept_apart() -> None:
    assert _codes(_ask(["Yes", "No", "Later"])) == []
    assert _codes(_look({"who": ["staff", "stuff", "unknown"]})) == []
    assert not names_clash("Yes", "Yea")
    assert name_key("  Stra\u00dfe ") == "strasse"


def _listed_prototypes() -> dict[str, str]:
    """Each single character's prototype read straight from the package's confusables data,
    as UTS #39 gives it (a pair that only lists each other named by its smaller member)."""
    data = resources.files("confusable_homoglyphs").joinpath("confusables.json")
    marks = str.maketrans("", "", "\u200e\u200f")
    listed = {
        key.translate(marks): [entry["c"].translate(marks) for entry in entries]
        for key, entries in json.loads(data.read_text(encoding="utf-8")).items()
    }
    out = {}
    for char, targets in listed.items():
        if len(char) == 1 and len(targets) == 1:
            target = targets[0]
            if len(target) == 1 and len(listed.get(target, ())) == 1:
                target = min(char, target)
            if target != char:
                out[char] = target
    return out


def test_the_compact_prototype_table_answers_as_unicode_data_for_every_character() -> None:
    """The table is kept as flat strings searched by bisection (a dict would hold 11,000
    objects): every listed character gets its own prototype, multi-character ones whole,
    and every other code point is its own prototype."""
    expected = _listed_prototypes()
    table = _prototypes()
    assert len(expected) > 6000
    assert {char: table.of(char) for char in expected} == expected
    assert any(len(proto) > 1 for proto in expected.values())
    others = (chr(c) for c in range(sys.maxunicode + 1) if chr(c) not in expected)
    assert [char for char in others if table.of(char) != char] == []


def test_a_rule_value_with_a_formatting_character_is_refused() -> None:
    text = _look({"who": ["staff", "unknown"]}).replace(
        "      unsure: []\n",
        '      unsure: []\n      rules:\n        - { when: { who: "sta\u200bff" }, then: alert }\n'
        "        - { then: ignore }\n",
    )
    assert "WF-NAME-CHARACTER" in _codes(text)


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("role", 'who: "role:owner\\n"'),
        ("role", 'who: "role:owner\\r"'),
        ("destination", None),
        ("option", None),
    ],
)
def test_a_trailing_newline_does_not_pass_a_name_pattern(where: str, text: str | None) -> None:
    if where == "role":
        assert text is not None
        workflow = (
            "contract: workflow.v1\nname: N\nwhen:\n  button: {}\nthen:\n"
            f"  - notify: {{ {text}, message: Hi }}\n"
        )
    elif where == "destination":
        workflow = (
            "contract: workflow.v1\nname: N\nwhen:\n  button: {}\nthen:\n"
            '  - webhook: { to: "ticketing\\n" }\n'
        )
    else:
        workflow = _look({}, ["ignore", "alert"]).replace('"alert"]', '"alert\\n"]')
    codes = _codes(workflow)
    assert codes, f"a {where} with a trailing newline passed"
    assert set(codes) & {"WF-WHO-NOT-ROLE", "WF-WEBHOOK-URL", "WF-FORMAT"}


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("^[a-z]+$", "abc", True),
        ("^[a-z]+$", "abc\n", False),
        ("^(?=\\d)(\\d+)s$", "45s", True),
        ("^(?=\\d)(\\d+)s$", "\u0664\u0665s", False),  # Arabic-Indic digits
        ("^[$a]+$", "$a", True),
        ("^a\\$$", "a$", True),
    ],
)
def test_schema_patterns_mean_what_they_mean_in_json_schema(
    pattern: str, text: str, matches: bool
) -> None:
    assert (ecma_pattern(pattern).search(text) is not None) is matches


def test_a_duration_in_other_digits_is_refused() -> None:
    text = _ask(["Yes", "No"]).replace("timeout: 60s", 'timeout: "\u0666\u0660s"')
    assert "WF-DURATION" in _codes(text)
