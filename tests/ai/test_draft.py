"""Describe it's drafting core on the Ollama fake, gated by the contract's real validator.

The fake answers with scripted workflows: a valid one is accepted in Test state, an
invalid one goes back to the model with the validator's located problems (at most twice),
and a draft still invalid after that is refused with those problems.
"""

from __future__ import annotations

import json
from typing import Any

from custom_components.opennvr_workflows.ai import OllamaLLMClient
from custom_components.opennvr_workflows.ai.draft import (
    MAX_REPAIRS,
    DraftSite,
    draft_workflow,
)
from custom_components.opennvr_workflows.workflow import (
    Report,
    SiteProfile,
    load_schema,
    validate_text,
)
from tests.fakes.ollama_server import Answer, FakeOllama, HttpError

SITE = DraftSite(
    camera_roles=("front_door",), skills=("detector", "vision_model"), facts="We have a dog."
)
PROFILE = SiteProfile(skills=frozenset(SITE.skills), camera_roles=frozenset(SITE.camera_roles))
SENTENCE = "Tell the family when a parcel is left at the front door."


def parcel(camera: str = "front_door") -> dict[str, Any]:
    """A draft the way a model writes it: no contract or state (the core sets them)."""
    return {
        "name": "Parcel at the door",
        "needs": ["detector", "vision_model"],
        "when": {
            "event": {
                "type": "detection.observed.v1",
                "cameras": [camera],
                "match": {"label": ["package"]},
            }
        },
        "then": [
            {
                "ai": {
                    "mode": "look",
                    "prompt": "Has a parcel been left on the doorstep?",
                    "input": "picture",
                    "decision": ["parcel", "no_parcel"],
                    "parcel": [{"notify": {"who": "role:household", "message": "{reason}"}}],
                    "no_parcel": [],
                    "unsure": [],
                }
            }
        ],
    }


async def validate(text: str) -> Report:
    return validate_text(text, site=PROFILE)


async def draft(llm: OllamaLLMClient) -> Any:
    return await draft_workflow(
        SENTENCE, llm=llm, model="qwen2.5vl:3b", site=SITE, validate=validate
    )


async def test_a_valid_draft_lands_in_test_with_the_schema_as_format(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    fake.script(Answer({**parcel(), "state": "on"}))
    result = await draft(llm)
    assert result.ok, result.problems
    assert result.repairs == 0
    assert result.report is not None
    assert result.report.workflow is not None
    assert result.report.workflow.state == "test"  # the model asked for on; drafts are Test
    assert "state: test" in (result.text or "")
    (sent,) = fake.chats
    assert sent.format == load_schema()
    assert "front_door" in sent.system
    assert "vision_model" in sent.system
    assert "We have a dog." in sent.system
    assert json.dumps(SENTENCE) in sent.user


async def test_an_invalid_draft_is_repaired_with_the_located_problems(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    fake.script(Answer(parcel(camera="garage")), Answer(parcel()))
    result = await draft(llm)
    assert result.ok
    assert result.repairs == 1
    first = result.attempts[0]
    assert [p.code for p in first.errors] == ["WF-CAMERA-ROLE-UNMAPPED"]
    repair = fake.chats[1].messages
    assert repair[-2]["role"] == "assistant"
    assert json.loads(repair[-2]["content"])["when"]["event"]["cameras"] == ["garage"]
    feedback = repair[-1]["content"]
    assert "$.when.event.cameras[0]: WF-CAMERA-ROLE-UNMAPPED:" in feedback
    assert "'garage'" in feedback


async def test_a_draft_still_invalid_after_two_repairs_is_refused_with_its_problems(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    fake.script(*(Answer(parcel(camera="garage")) for _ in range(MAX_REPAIRS + 2)))
    result = await draft(llm)
    assert not result.ok
    assert result.text is None
    assert len(fake.chats) == MAX_REPAIRS + 1  # the first draft and two repairs, no more
    assert [p.code for p in result.problems] == ["WF-CAMERA-ROLE-UNMAPPED"]
    assert result.problems[0].line > 0  # located in the YAML the draft became


async def test_a_reply_that_is_not_a_workflow_is_fed_back_too(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    fake.script(Answer("sure! here is your workflow"), Answer(["not", "a", "mapping"]))
    fake.script(Answer(parcel()))
    result = await draft(llm)
    assert result.ok
    assert [a.problems[0].code for a in result.attempts[:2]] == ["WF-DRAFT-NOT-JSON"] * 2
    assert "not JSON" in fake.chats[1].messages[-1]["content"]


async def test_a_model_that_cannot_be_asked_ends_the_draft_with_why(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    fake.script(HttpError(status=500, error="model runner crashed"))
    result = await draft(llm)
    assert not result.ok
    assert result.error is not None
    assert "model runner crashed" in result.error
    assert [p.code for p in result.problems] == ["WF-DRAFT-MODEL"]
