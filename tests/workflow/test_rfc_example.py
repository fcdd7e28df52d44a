"""The RFC's own example (section 5, night intrusion triage) imports as written.

``rfc_night_intrusion.yaml`` is the RFC's YAML with only ``contract: workflow.v1`` added. What
later decisions made stricter (the file listing what it needs, a path for every reply) is a
warning with the fix, never a refusal; against a site that has its tools and camera roles it
is still valid, and a site that lacks one of them refuses it by name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from custom_components.opennvr_workflows.workflow import (
    SiteProfile,
    Workflow,
    dump_workflow,
    load_workflow,
    validate_text,
)
from custom_components.opennvr_workflows.workflow import model as m

TEXT = (Path(__file__).parent / "rfc_night_intrusion.yaml").read_text(encoding="utf-8")

TOOLS = frozenset(
    {"describe_camera", "recent_events", "site_lookup", "search_footage", "ask_person"}
)
ROLES = frozenset({"yard-east", "yard-west"})
#: The RFC site has passed the evaluation gate, so its Investigate step may run.
SKILLS = frozenset(
    {"detector", "language_model", "vision_model", "semantic_search", "investigate_model"}
)

#: (code, line, what the message must name) for each warning the example gets.
EXPECTED_WARNINGS = [
    ("WF-NEEDS-MISSING", 1, "`needs: [detector, language_model, semantic_search, vision_model]`"),
    ("WF-ASK-PATH-MISSING", 24, "add `no_answer: [...]`"),
    ("WF-ASK-PATH-MISSING", 24, "add `No: [...]`"),
]

SITES = {
    "contract alone": None,
    "tools and roles": SiteProfile(tools=TOOLS, camera_roles=ROLES),
    "skills, tools and roles": SiteProfile(skills=SKILLS, tools=TOOLS, camera_roles=ROLES),
}


def test_the_fixture_is_the_rfc_text_with_the_contract_line() -> None:
    first, second, *_ = TEXT.splitlines()
    assert first == "contract: workflow.v1"
    assert second == "name: Night intrusion triage"
    assert "needs" not in TEXT
    assert "detect.person_in_zone: { cameras: [yard-east, yard-west], min_seconds: 5 }" in TEXT


@pytest.mark.parametrize("site", SITES.values(), ids=list(SITES))
def test_it_validates_with_only_the_expected_warnings(site: SiteProfile | None) -> None:
    report = validate_text(TEXT, site=site)

    assert report.errors == (), [p.format("rfc.yaml") for p in report.errors]
    got = sorted((p.code, p.line, p.message) for p in report.warnings)
    assert [(code, line) for code, line, _ in got] == sorted(
        (code, line) for code, line, _ in EXPECTED_WARNINGS
    )
    for code, line, fix in EXPECTED_WARNINGS:
        assert any(c == code and n == line and fix in msg for c, n, msg in got), (code, fix)
    assert isinstance(report.workflow, Workflow)


def test_the_model_is_the_rfc_workflow() -> None:
    workflow = load_workflow(TEXT, site=SiteProfile(tools=TOOLS, camera_roles=ROLES))

    assert workflow.when == m.PersonInZoneTrigger(cameras=("yard-east", "yard-west"), min_s=5.0)
    assert workflow.limits == m.WorkflowLimits(
        cooldown_s=120.0, one_at_a_time="track", per_hour=20, ai_per_hour=40
    )
    (ai,) = workflow.then
    assert isinstance(ai, m.AIStep)
    assert isinstance(ai.spec, m.InvestigateSpec)
    assert ai.spec.tools == (
        "describe_camera",
        "recent_events",
        "site_lookup",
        "search_footage",
        "ask_person",
    )
    (ask,) = ai.paths["unsure"]
    assert isinstance(ask, m.AskPersonStep)
    assert set(ask.paths) == {"Yes"}  # No and no_answer end the run
    assert load_workflow(dump_workflow(workflow)) == workflow


@pytest.mark.parametrize(
    ("site", "code", "name"),
    [
        (SiteProfile(tools=TOOLS - {"search_footage"}), "WF-TOOL-NOT-HERE", "search_footage"),
        (
            SiteProfile(camera_roles=frozenset({"yard-east"})),
            "WF-CAMERA-ROLE-UNMAPPED",
            "yard-west",
        ),
        (SiteProfile(skills=SKILLS - {"detector"}), "WF-SKILL-MISSING", "detector"),
    ],
    ids=["tool", "camera role", "skill"],
)
def test_a_site_without_what_it_uses_refuses_it_by_name(
    site: SiteProfile, code: str, name: str
) -> None:
    report = validate_text(TEXT, site=site)

    assert [p.code for p in report.errors] == [code]
    (problem,) = report.errors
    assert repr(name) in problem.message or problem.message.startswith(name)
    assert report.workflow is None
