"""The taint of AI output: what AI steps produce reaches nothing that moves things unapproved.

The refused and warned corpora hold one file per way a value can go wrong; these tests hold the
other side (what a person's approval, a plain rule or a filter lets through) and what the
messages say, so a fix is never a guess.
"""

from __future__ import annotations

import textwrap

import pytest

from custom_components.opennvr_workflows.const import DOMAIN
from custom_components.opennvr_workflows.workflow import Report, validate_text
from custom_components.opennvr_workflows.workflow.vocabulary import WORKFLOW_ALERT_SOURCE

HEAD = """\
contract: workflow.v1
name: Taint
needs: [vision_model, gate_controller, intrusion]
"""

#: A look that picks a gate, and a question about it; ``{message}`` and ``{open_path}`` vary.
GATE = """\
when:
  event: {{ type: plate.recognized.v1, cameras: [gate] }}
then:
  - ai:
      mode: look
      prompt: Which gate should open?
      decision: [open, stay]
      fields: {{ which_gate: [north, south] }}
      reason_as: finding
      open:
        - ask_person:
            who: role:owner
            message: "{message}"
            replies: [Open, Keep closed]
          Open:
{open_path}
          Keep closed: []
          no_answer: []
      stay: []
      unsure: []
"""


def _check(body: str) -> Report:
    return validate_text(HEAD + textwrap.dedent(body))


def _codes(report: Report) -> list[str]:
    return [p.code for p in report.errors]


def _gate(message: str, action: str) -> Report:
    open_path = textwrap.indent(textwrap.dedent(action).strip("\n"), " " * 12)
    return validate_text(HEAD + GATE.format(message=message, open_path=open_path))


APP_DATA = """\
- app_action: { app: gate_controller, action: open, data: { gate: "{which_gate}" } }
"""


def test_a_reply_to_a_question_that_shows_the_value_approves_it() -> None:
    report = _gate("Open the {which_gate} gate for {plate}?", APP_DATA)
    assert report.ok, [p.format() for p in report.errors]


def test_a_reply_to_a_question_that_does_not_show_the_value_approves_nothing() -> None:
    report = _gate("Open a gate for {plate}?", APP_DATA)
    assert _codes(report) == ["WF-SAFETY-ACTUATOR-AI-VALUE"]
    problem = report.errors[0]
    assert problem.path == "$.then[0].ai.open[0].Open[0].app_action.data.gate"
    assert "{which_gate}" in problem.message
    assert "the AI step at $.then[0].ai" in problem.message
    assert "ask_person whose message shows {which_gate}" in problem.message


@pytest.mark.parametrize(
    ("action", "path"),
    [
        (
            '- home_assistant: { action: lock.unlock, target: { entity_id: "lock.{which_gate}" } }',
            "home_assistant.target.entity_id",
        ),
        (
            '- home_assistant: { action: cover.open_cover, data: { entity_id: ["cover.a", '
            '"cover.{which_gate}"] } }',
            "home_assistant.data.entity_id[1]",
        ),
        (
            '- app_action: { app: gate_controller, action: open, data: { opts: { note: "x '
            '{which_gate}" } } }',
            "app_action.data.opts.note",
        ),
    ],
)
def test_every_parameter_of_an_actuator_is_read(action: str, path: str) -> None:
    report = _gate("Open for {plate}?", action)
    values = [p for p in report.errors if p.code == "WF-SAFETY-ACTUATOR-AI-VALUE"]
    assert [p.path for p in values] == [f"$.then[0].ai.open[0].Open[0].{path}"]
    assert _gate("Open {which_gate} for {plate}?", action).ok


def test_reason_as_is_approved_only_by_showing_it_under_that_name() -> None:
    tts = '- home_assistant: { action: tts.speak, data: { message: "Leave: {finding}" } }'
    assert _codes(_gate("Warn them? {reason}", tts)) == ["WF-SAFETY-ACTUATOR-AI-VALUE"]
    assert _gate("Warn them? {finding}", tts).ok


def test_each_value_is_reported_once_where_it_first_appears() -> None:
    action = """\
    - app_action:
        app: gate_controller
        action: open
        data: { a: "{which_gate}", b: "{which_gate} {decision}", c: "{plate}" }
    """
    report = _gate("Open?", action)
    got = sorted(
        (p.path.rsplit(".", 1)[1], p.message.split("{")[1].split("}")[0]) for p in report.errors
    )
    assert got == [("a", "which_gate"), ("b", "decision")]


def test_an_approval_holds_on_the_path_until_an_ai_step_decides_again() -> None:
    report = _check(
        """\
        when:
          button: {}
        then:
          - ai:
              mode: look
              prompt: Open?
              input: picture
              camera: gate
              decision: [open]
              open:
                - ask_person:
                    who: role:owner
                    message: "Open? {reason}"
                    replies: [Go on, Stop]
                  Go on:
                    - ask_person:
                        who: role:owner
                        message: Sure?
                        replies: [Yes, No]
                      Yes:
                        - app_action: { app: gc, action: open, data: { w: "{reason}" } }
                        - ai:
                            mode: look
                            prompt: Again?
                            input: picture
                            camera: gate
                            decision: [again]
                            again:
                              - ask_person:
                                  who: role:owner
                                  message: Still sure?
                                  replies: [Yes, No]
                                Yes:
                                  - app_action: { app: gc, action: open, data: { w: "{reason}" } }
                                No: []
                                no_answer: []
                            unsure: []
                      No: []
                      no_answer: []
                  Stop: []
                  no_answer: []
              unsure: []
        """
    )
    values = [p for p in report.errors if p.code == "WF-SAFETY-ACTUATOR-AI-VALUE"]
    assert len(values) == 1
    assert values[0].path.endswith("again[0].Yes[0].app_action.data.w")
    assert '$.then[0].ai.open[0]["Go on"][0].Yes[1].ai' in values[0].message


def test_a_person_answer_is_not_ai_output() -> None:
    report = _gate(
        "Open?",
        '- app_action: { app: gc, action: open, data: { a: "{answered_by} {answer}" } }',
    )
    assert report.ok, [p.format() for p in report.errors]


def test_an_if_on_an_approved_value_is_a_plain_rule_again() -> None:
    report = _check(
        """\
        when:
          schedule: { at: "23:00" }
        then:
          - for_each: { cameras: [garden], collect: notes }
            do:
              - ai:
                  mode: look
                  prompt: Quiet?
                  decision: [quiet, busy]
                  quiet: []
                  busy: []
                  unsure: []
          - ask_person:
              who: role:owner
              message: "Tonight: {notes}. Check again later?"
              replies: [Later, Now]
            Later:
              - if: [ value: { of: "{notes}", is: [quiet] } ]
                then: [ site_mode: armed_away ]
                else: []
            Now: []
            no_answer: []
        """
    )
    assert report.ok, [p.format() for p in report.errors]


def test_an_if_on_ai_output_is_cleared_by_a_reply_after_it() -> None:
    body = """\
    when:
      schedule: { at: "23:00" }
    then:
      - for_each: { cameras: [garden], collect: notes }
        do:
          - ai:
              mode: look
              prompt: Quiet?
              decision: [quiet]
              quiet: []
              unsure: []
      - if: [ value: { of: "{notes}", is: [quiet] } ]
        then:
          - ask_person:
              who: role:owner
              message: Arm the house?
              replies: [Arm, Leave]
            Arm: [ site_mode: armed_away ]
            Leave: []
            no_answer: [ site_mode: armed_home ]
        else: []
    """
    report = _check(body)
    assert [(p.code, p.path) for p in report.errors] == [
        ("WF-SAFETY-ACTUATOR-AFTER-AI-IF", "$.then[1].then[0].no_answer[0].site_mode")
    ]
    assert "the `if` at $.then[1].if, which reads {notes}" in report.errors[0].message


@pytest.mark.parametrize(
    ("trigger", "warned"),
    [
        ("alert: {}", True),
        ("alert: { cameras: [gate], min_severity: high }", True),
        (f"alert: {{ app: {WORKFLOW_ALERT_SOURCE} }}", True),
        (f"alert: {{ alert_type: {WORKFLOW_ALERT_SOURCE} }}", True),
        (f"alert: {{ app: {WORKFLOW_ALERT_SOURCE}, alert_type: intrusion }}", False),
        ("alert: { app: intrusion }", False),
        ("alert: { alert_type: line_crossing }", False),
    ],
)
def test_an_alert_trigger_is_ai_output_unless_it_excludes_workflow_alerts(
    trigger: str, warned: bool
) -> None:
    report = _check(
        f"""\
        when:
          {trigger}
        if:
          - value: {{ of: "{{severity}}", is: [high, critical] }}
        then:
          - app_action: {{ app: gate_controller, action: close }}
        """
    )
    warnings = [p for p in report.warnings if p.code == "WF-TRIGGER-AI-ALERTS"]
    assert bool(warnings) is warned
    assert (_codes(report) == ["WF-SAFETY-ACTUATOR-AFTER-AI-IF"]) is warned
    assert report.ok is not warned
    if warned:
        assert "add `app: " in warnings[0].message
        assert warnings[0].path == "$.when.alert"


def test_workflows_raise_their_alerts_under_the_name_the_validator_excludes() -> None:
    assert WORKFLOW_ALERT_SOURCE == DOMAIN


def test_a_for_each_item_replaces_a_tainted_value_of_the_same_name() -> None:
    report = _check(
        """\
        when:
          alert: {}
        then:
          - for_each: { cameras: [gate] }
            do:
              - if: [ camera: [gate] ]
                then:
                  - home_assistant: { action: light.turn_on, target: { entity_id: "l.{camera}" } }
                else: []
        """
    )
    assert report.ok, [p.format() for p in report.errors]


#: The step that reuses a name, placed where each case puts ``STEP``.
SHADOWING_STEP = """\
ai:
  mode: look
  prompt: Again
  input: picture
  camera: gate
  decision: [done]
  fields: { NAME: [a, b] }
  done: []
  unsure: []"""

SHADOWING = {
    "trigger": ("plate", "which the trigger defines", "- STEP"),
    "field": (
        "kind",
        "which the AI step at $.then[0].ai defines",
        """\
- ai:
    mode: look
    prompt: What kind?
    input: picture
    camera: gate
    decision: [seen]
    fields: { kind: [car, van] }
    seen:
      - STEP
    unsure: []""",
    ),
    "collect": (
        "notes",
        "which the for_each at $.then[0] defines",
        """\
- for_each: { cameras: [gate], collect: notes }
  do:
    - ai: { mode: look, prompt: x, decision: [a], a: [], unsure: [] }
- STEP""",
    ),
    "answer": (
        "answered_by",
        "which the ask_person at $.then[0] defines",
        """\
- ask_person: { who: role:owner, message: Look?, replies: [Look, Skip] }
  Look:
    - STEP
  Skip: []
  no_answer: []""",
    ),
}


@pytest.mark.parametrize("where", sorted(SHADOWING))
def test_a_shadowing_name_is_refused_naming_both(where: str) -> None:
    name, origin, steps = SHADOWING[where]
    line = next(line for line in steps.splitlines() if "- STEP" in line)
    indent = " " * (line.index("- STEP") + 2)
    step = textwrap.indent(SHADOWING_STEP.replace("NAME", name), indent).lstrip()
    text = (
        "when:\n  event: { type: plate.recognized.v1, cameras: [gate] }\nthen:\n"
        + textwrap.indent(steps.replace("- STEP", "- " + step), "  ")
    )
    report = validate_text(HEAD + text)
    shadows = [p for p in report.errors if p.code == "WF-AI-NAME-SHADOWS"]
    assert len(shadows) == 1, [p.format() for p in report.problems]
    assert f"reuses {{{name}}}, {origin}" in shadows[0].message
    assert f"`ai_{name}`" in shadows[0].message
    renamed = validate_text(HEAD + text.replace(f"{{ {name}: [a, b] }}", "{ other: [a, b] }"))
    assert "WF-AI-NAME-SHADOWS" not in _codes(renamed)


def test_names_on_other_paths_do_not_shadow() -> None:
    report = _check(
        """\
        when:
          button: {}
        then:
          - ai:
              mode: look
              prompt: Which?
              input: picture
              camera: gate
              decision: [a, b]
              a:
                - ai:
                    mode: look
                    prompt: More?
                    input: picture
                    camera: gate
                    decision: [c]
                    fields: { kind: [x] }
                    reason_as: why
                    c: []
                    unsure: []
              b:
                - ai:
                    mode: look
                    prompt: Other?
                    input: picture
                    camera: gate
                    decision: [d]
                    fields: { kind: [y] }
                    reason_as: why
                    d: []
                    unsure: []
              unsure: []
        """
    )
    assert report.ok, [p.format() for p in report.errors]
