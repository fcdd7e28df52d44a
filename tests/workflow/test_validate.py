"""The semantic validator: what it accepts at the edges of each rule, its caps, and its API."""

from __future__ import annotations

import textwrap
from types import MappingProxyType

import pytest

from custom_components.opennvr_workflows.workflow import (
    CODES,
    WorkflowInvalid,
    action_key,
    is_actuator,
    load_workflow,
    validate_data,
    validate_text,
    validate_workflow,
    walk_steps,
)
from custom_components.opennvr_workflows.workflow import model as m
from custom_components.opennvr_workflows.workflow.vocabulary import (
    AI_TOOL_NAMES,
    MAX_NESTING,
    MAX_STEPS,
    is_safe_home_assistant_action,
)

HEAD = """\
contract: workflow.v1
name: Edge
needs: [intrusion, vision_model, gate_controller]
when:
  alert: { app: intrusion, cameras: [front_door] }
"""


def check(body: str, head: str = HEAD) -> tuple[set[str], set[str]]:
    report = validate_text(head + textwrap.dedent(body))
    return {p.code for p in report.errors}, {p.code for p in report.warnings}


ACCEPTED = {
    "actuator after the workflow's own if": """
        if: [ site_mode: [armed_away] ]
        then:
          - site_mode: disarmed
        always:
          - app_action: { app: gate_controller, action: close }
        """,
    "actuator after an if step": """
        then:
          - if: [ time: { from: "08:00", to: "18:00" } ]
            then: [ app_action: { app: gate_controller, action: open } ]
            else: [ site_mode: armed_home ]
        """,
    "actuator after a person's answer on an AI path": """
        then:
          - ai:
              mode: look
              prompt: Who is it?
              decision: [visitor]
              visitor:
                - ask_person:
                    { who: role:owner, message: Open?, replies: [Open, Keep], default: Keep }
                  Open:
                    - app_action: { app: gate_controller, action: open }
                    - alert: { severity: critical, title: Gate opened by the owner }
                  Keep: []
              unsure: []
        """,
    "notify and webhook after AI are not actuators": """
        then:
          - ai:
              mode: look
              prompt: Who is it?
              decision: [visitor]
              visitor:
                - home_assistant: { action: notify.mobile_app_phone, data: { message: "{reason}" } }
                - home_assistant: { action: persistent_notification.create, data: { message: hi } }
                - webhook: { to: ticketing, data: { reason: "{reason}" } }
                - alert: { severity: medium, title: "{reason}" }
                - save_clip: {}
                - ptz_preset: { camera: driveway, preset: gate }
              unsure: []
        """,
    "high alert without AI, critical after a rule": """
        then:
          - alert: { severity: high, title: Motion }
          - if: [ site_mode: [armed_away] ]
            then: [ alert: { severity: critical, title: Break-in } ]
        """,
    "placeholders from the trigger, an AI step and a reply": """
        then:
          - ai:
              mode: look
              prompt: "Who is at {camera}?"
              decision: [visitor]
              fields: { who: [friend, stranger] }
              visitor:
                - ask_person:
                    who: role:owner
                    message: "{who}: {reason} ({confidence})"
                    replies: [Ok, No]
                  Ok:
                    - log: "{answered_by} said {answer} to {who} at {time} on {date} in {workflow}"
                  No: []
                  no_answer: [ log: "{{literal braces}} and {decision}" ]
              unsure: [ log: "{reason}" ]
        """,
}


@pytest.mark.parametrize("body", ACCEPTED.values(), ids=list(ACCEPTED))
def test_accepted(body: str) -> None:
    errors, _ = check(body)
    assert errors == set()


def test_person_in_zone_is_a_trigger_with_its_placeholders() -> None:
    head = """\
contract: workflow.v1
name: Zone
needs: [detector]
when:
  detect.person_in_zone: { cameras: [garden], zone: lawn, min_seconds: 5 }
"""
    body = """
        if: [ camera: [garden] ]
        then:
          - log: "{camera} {zone} {track} {seconds}"
        """
    assert check(body, head) == (set(), set())
    errors, _ = check(body.replace("{seconds}", "{title}"), head)
    assert errors == {"WF-PLACEHOLDER-UNDEFINED"}
    _, warnings = check(body, head.replace("needs: [detector]\n", ""))
    assert warnings == {"WF-NEEDS-MISSING"}


def test_warnings_do_not_make_a_file_invalid() -> None:
    head = HEAD.replace("name: Edge\n", "name: Edge\nstate: on\n")
    body = """
        then:
          - if: [ site_mode: [armed_away] ]
            then:
              - home_assistant: { action: light.turn_on, target: { entity_id: light.porch } }
          """
    errors, warnings = check(body, head)
    assert errors == set()
    assert warnings == {"WF-STATE-ON", "WF-PORTABILITY-HA-TARGET"}


def test_unknown_event_and_unreachable_rule_are_warnings() -> None:
    head = HEAD.replace(
        "alert: { app: intrusion, cameras: [front_door] }", "event: { type: doorbell.rang.v1 }"
    )
    body = """
        then:
          - ai:
              mode: look
              prompt: Who?
              decision: [a, b]
              fields: { who: [x, y] }
              rules:
                - { then: a }
                - { when: { who: x }, then: b }
              a: []
              b: []
              unsure: []
        """
    errors, warnings = check(body, head)
    assert errors == set()
    assert warnings == {"WF-EVENT-UNKNOWN", "WF-AI-RULE-UNREACHABLE"}


def test_all_problems_at_once() -> None:
    body = """
        then:
          - ai:
              mode: investigate
              goal: "{plate}"
              tools: [open_gate, describe_camera]
              decision: [a]
              a: [ site_mode: disarmed, alert: { severity: high, title: x } ]
        """
    errors, warnings = check(body)
    assert errors >= {
        "WF-PLACEHOLDER-UNDEFINED",
        "WF-AI-TOOL-ACTUATOR",
        "WF-AI-PATH-MISSING",
        "WF-SAFETY-ACTUATOR-AFTER-AI",
        "WF-SEVERITY-AI-CAP",
    }
    assert warnings == {"WF-NEEDS-MISSING"}


def test_problems_are_located_and_sorted() -> None:
    report = validate_text(HEAD + "then:\n  - log: '{a}'\n  - log: '{b}'\n")
    assert [(p.line, p.column, p.path) for p in report.errors] == [
        (7, 10, "$.then[0].log"),
        (8, 10, "$.then[1].log"),
    ]


def _deep(levels: int) -> str:
    lines, pad = ["then:"], "  "
    for _ in range(levels):
        lines += [f"{pad}- if: [ site_mode: [armed_away] ]", f"{pad}  then:"]
        pad += "    "
    lines.append(f"{pad}- log: deep")
    return HEAD + "\n".join(lines) + "\n"


def test_nesting_cap() -> None:
    assert validate_text(_deep(MAX_NESTING)).ok
    report = validate_text(_deep(MAX_NESTING + 1))
    assert [p.code for p in report.errors] == ["WF-TOO-DEEP"]


def test_step_cap() -> None:
    steps = "".join(
        "  - for_each: { cameras: [garden] }\n    do:\n" + "      - log: x\n" * 30 for _ in range(3)
    )
    report = validate_text(HEAD + "then:\n" + steps)
    assert MAX_STEPS < 93
    assert [p.code for p in report.errors] == ["WF-TOO-MANY-STEPS"]


def test_skills_registry() -> None:
    text = HEAD + "then:\n  - log: hi\n"
    assert validate_text(
        text, skills=frozenset({"intrusion", "vision_model", "gate_controller"})
    ).ok
    report = validate_text(text, skills=frozenset({"vision_model"}))
    missing = [p for p in report.errors if p.code == "WF-SKILL-MISSING"]
    assert [p.path for p in missing] == ["$.needs[0]", "$.needs[2]"]
    assert "'intrusion'" in missing[0].message


def test_load_workflow_raises_with_every_problem() -> None:
    with pytest.raises(WorkflowInvalid) as caught:
        load_workflow(
            HEAD + "then:\n  - site_mode: armed_away\n  - log: '{x}'\n", filename="w.yaml"
        )
    assert {p.code for p in caught.value.errors} == {
        "WF-SAFETY-ACTUATOR-UNGATED",
        "WF-PLACEHOLDER-UNDEFINED",
    }
    assert str(caught.value).startswith("invalid workflow: w.yaml:7:5 WF-SAFETY-ACTUATOR-UNGATED")


def test_model_built_in_code_is_checked_like_a_file() -> None:
    bad = m.Workflow(
        name="Built",
        when=m.ButtonTrigger(),
        then=(m.ActionStep(m.SiteModeAction("armed_away")),),
    )
    report = validate_workflow(bad)
    assert [(p.code, p.path, p.line) for p in report.errors] == [
        ("WF-SAFETY-ACTUATOR-UNGATED", "$.then[0].site_mode", 0)
    ]
    fractional = m.Workflow(
        name="Built", when=m.ButtonTrigger(), then=(m.ActionStep(m.WaitAction(1.5)),)
    )
    assert [p.code for p in validate_workflow(fractional).errors] == ["WF-DURATION"]
    too_many = m.Workflow(
        name="Built",
        needs=("language_model",),
        when=m.ButtonTrigger(),
        then=(
            m.AIStep(
                spec=m.InvestigateSpec(goal="g", tools=tuple(sorted(AI_TOOL_NAMES))[:6]),
                decision=("a",),
                paths=MappingProxyType({"a": (), "unsure": ()}),
            ),
        ),
    )
    assert "WF-AI-TOOLS-TOO-MANY" in {p.code for p in validate_workflow(too_many).errors}


def test_validate_data_for_service_calls() -> None:
    assert not validate_data(["not", "a", "mapping"]).ok
    report = validate_data(
        {"contract": "workflow.v1", "name": "D", "when": {"button": {}}, "then": [{"log": "x"}]}
    )
    assert report.ok
    assert report.workflow is not None
    assert report.workflow.limits == m.WorkflowLimits()


def test_walk_steps_names_each_step_by_its_path() -> None:
    wf = load_workflow(
        HEAD
        + textwrap.dedent("""
        then:
          - if: [ site_mode: [armed_away] ]
            then:
              - ask_person: { who: role:owner, message: ok?, replies: [Let in, No] }
                Let in: [ app_action: { app: gate_controller, action: open } ]
                No: []
                no_answer: []
            else: [ log: off ]
        """)
    )
    paths = [path for path, _ in walk_steps(wf)]
    assert paths == [
        "$.then[0]",
        "$.then[0].then[0]",
        '$.then[0].then[0]["Let in"][0]',
        "$.then[0].else[0]",
    ]
    actions = [s for _, s in walk_steps(wf) if isinstance(s, m.ActionStep)]
    assert [action_key(s) for s in actions] == ["app_action", "log"]
    assert [is_actuator(s) for s in actions] == [True, False]


@pytest.mark.parametrize(
    ("action", "safe"),
    [
        ("notify.mobile_app_phone", True),
        ("notify.send_message", True),
        ("logbook.log", True),
        ("persistent_notification.create", True),
        ("lock.unlock", False),
        ("alarm_control_panel.alarm_arm_away", False),
        ("script.turn_on", False),
        ("tts.speak", False),
        ("notifyx.foo", False),
    ],
)
def test_home_assistant_allow_list(action: str, safe: bool) -> None:
    assert is_safe_home_assistant_action(action) is safe


def test_codes_are_documented_and_well_formed() -> None:
    for code, meaning in CODES.items():
        assert code.startswith("WF-")
        assert code.upper() == code
        assert meaning


def test_problems_that_share_a_position_come_in_a_stable_order() -> None:
    """Two undefined placeholders in one text tie on line, column, path and code."""
    text = """contract: workflow.v1
name: Order
when:
  alert: { alert_type: person, cameras: [door] }
then:
  - log: "{zebra} and {apple}"
"""
    report = validate_text(text)
    messages = [p.message for p in report.errors if p.code == "WF-PLACEHOLDER-UNDEFINED"]
    assert len(messages) == 2
    assert messages == sorted(messages)


def test_a_step_after_a_branch_names_the_branching_step() -> None:
    text = """contract: workflow.v1
name: After
when:
  alert: { alert_type: person, cameras: [door] }
then:
  - ask_person: { who: role:owner, message: Open?, replies: [Open, Keep], default: Keep }
    Open: []
    Keep: []
  - log: done
"""
    (problem,) = [p for p in validate_text(text).errors if p.code == "WF-STEP-AFTER-BRANCH"]
    assert problem.message.startswith("this step follows an ask_person step in the same list")
    assert problem.line == 9
