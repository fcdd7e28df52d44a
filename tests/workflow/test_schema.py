"""The published JSON Schema: a valid Draft 2020-12 schema that agrees with the validator."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from custom_components.opennvr_workflows.workflow import CODES, load_schema, schema_text
from custom_components.opennvr_workflows.workflow.schema import schema_problems
from custom_components.opennvr_workflows.workflow.vocabulary import AI_STEP_KEYS
from custom_components.opennvr_workflows.workflow.yaml_loader import load_yaml

from .test_refused_corpus import FILES, _expected

STRUCTURAL = {
    "WF-UNKNOWN-KEY",
    "WF-MISSING-KEY",
    "WF-TYPE",
    "WF-VALUE",
    "WF-FORMAT",
    "WF-DURATION",
    "WF-TIME",
    "WF-RANGE",
    "WF-COUNT",
    "WF-TRIGGER-KIND",
    "WF-CONDITION-KIND",
    "WF-STEP-KIND",
    "WF-CAMERA-NOT-ROLE",
    "WF-WHO-NOT-ROLE",
    "WF-WEBHOOK-URL",
    "WF-AI-KEY-WRONG-MODE",
    "WF-FOREACH-KIND",
    "WF-SCHEDULE-KIND",
    "WF-AI-TOOLS-TOO-MANY",
    "WF-AI-TOOLS-DUPLICATE",
    "WF-AI-UNSURE-LISTED",
    "WF-AI-OPTION-RESERVED",
}


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    assert schema_text().endswith("\n")


def test_every_code_the_schema_names_is_a_stable_code() -> None:
    def codes(node: object) -> set[str]:
        found: set[str] = set()
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "x-code":
                    found.add(value)
                elif key == "x-codes":
                    found |= set(value.values())
                else:
                    found |= codes(value)
        elif isinstance(node, list):
            for item in node:
                found |= codes(item)
        return found

    assert codes(load_schema()) <= set(CODES)


def test_the_ai_step_keys_agree_with_the_schema() -> None:
    assert set(load_schema()["$defs"]["ai"]["properties"]) == AI_STEP_KEYS


STRUCTURAL_FILES = [
    p
    for p in FILES
    if (marks := _expected(p.read_text(encoding="utf-8"))) and {c for c, _ in marks} <= STRUCTURAL
]


@pytest.mark.parametrize("path", STRUCTURAL_FILES, ids=[p.stem for p in STRUCTURAL_FILES])
def test_structural_refusals_are_the_schema_s_own(path: Path) -> None:
    """A builder that only runs the published schema refuses these files too."""
    located, problems = load_yaml(path.read_text(encoding="utf-8"))
    assert located is not None, problems
    assert list(Draft202012Validator(load_schema()).iter_errors(located.data))
    assert schema_problems(located)


def test_there_are_structural_files() -> None:
    assert len(STRUCTURAL_FILES) >= 20


def test_count_messages_read_as_english() -> None:
    """ "1 item", not "1 items": these messages are read by people."""
    text = """contract: workflow.v1
name: Count
when:
  alert: { alert_type: person, cameras: [door] }
then:
  - ai:
      mode: look
      prompt: Who is it?
      input: picture
      decision: []
"""
    located, problems = load_yaml(text)
    assert located is not None, problems
    counts = [p.message for p in schema_problems(located) if p.code == "WF-COUNT"]
    assert counts == ["this value takes at least 1 item here"]
