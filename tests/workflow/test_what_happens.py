"""The person approves what will actually happen: the validator's side of each hole class.

Each test writes the attack and, beside it, the safe look-alike that must still pass, so a
fix that refuses too much fails as surely as one that refuses too little. The engine's side
(what runs, what a question says) is in tests/engine/test_what_happens.py.
"""

from __future__ import annotations

import textwrap

import pytest

from custom_components.opennvr_workflows.workflow import Report, SiteProfile, validate_text
from custom_components.opennvr_workflows.workflow.names import name_key, names_clash

HEAD = """\
contract: workflow.v1
name: What happens
needs: [vision_model, gate_controller, intrusion]
"""


def check(body: str, site: SiteProfile | None = None) -> Report:
    return validate_text(HEAD + textwrap.dedent(body), site=site)


def codes(report: Report) -> list[str]:
    return sorted(p.code for p in report.errors)


def warnings(report: Report) -> list[str]:
    return sorted(p.code for p in report.warnings)


# ── 1. always: its own scope, the trigger's values ──────────────────────────────────────


ALWAYS = """\
when:
  event: { type: plate.recognized.v1, cameras: [gate] }
then:
  - for_each: { cameras: [gate], collect: COLLECT }
    do:
      - ai: { mode: look, prompt: Who?, decision: [known], known: [], unsure: [] }
always:
  - if: [ value: { of: "{READ}", above: 0.9 } ]
    then: [ app_action: { app: gate_controller, action: open } ]
    else: []
"""


def test_always_reads_the_trigger_and_a_collect_may_not_take_its_names() -> None:
    # Attack: the loop's AI reasons collected under the trigger's {confidence}, then an
    # `always` rule on {confidence} (the engine used to run it on the collected text).
    attack = check(ALWAYS.replace("COLLECT", "confidence").replace("READ", "confidence"))
    assert codes(attack) == ["WF-AI-NAME-SHADOWS"]
    assert attack.errors[0].path == "$.then[0].for_each.collect"
    # An AI value from `then` is not defined in `always` at all.
    assert codes(check(ALWAYS.replace("COLLECT", "notes").replace("READ", "notes"))) == [
        "WF-PLACEHOLDER-UNDEFINED"
    ]
    # Safe look-alike: the collect has its own name, `always` decides on the trigger's value.
    assert check(ALWAYS.replace("COLLECT", "notes").replace("READ", "confidence")).ok


# ── 2. escaped braces: literal for the validator and the engine alike ───────────────────


GATE_DATA = """\
when:
  event: { type: plate.recognized.v1, cameras: [gate] }
then:
  - ai:
      mode: look
      prompt: Open?
      decision: [open, stay]
      open:
        - ask_person: { who: role:owner, message: "Open for {plate}?", replies: [Open, Keep] }
          Open: [ app_action: { app: gate_controller, action: open, data: { how: "DATA" } } ]
          Keep: []
          no_answer: []
      stay: []
      unsure: []
"""


def test_doubled_braces_are_literal_and_a_value_inside_them_is_still_read() -> None:
    # Attack: the AI's decision filled between literal braces reaches the gate's data.
    attack = check(GATE_DATA.replace("DATA", "{{{decision}}}"))
    assert codes(attack) == ["WF-SAFETY-ACTUATOR-AI-VALUE"]
    # Safe look-alike: `{{decision}}` is the text {decision}, for the engine too.
    assert check(GATE_DATA.replace("DATA", "{{decision}}")).ok


# ── 3. severity chosen by AI output ─────────────────────────────────────────────────────


SEVERITY = """\
when:
  TRIGGER
then:
  - ai:
      mode: look
      prompt: Who?
      decision: [seen]
      fields: { who: [stranger, family] }
      seen:
        - ask_person: { who: role:owner, message: "Someone at the door", replies: [Ok, Ignore] }
          Ok:
            - if: [ value: { of: "{READ}", is: [stranger] } ]
              then: [ alert: { severity: critical, title: Intruder } ]
              else: []
          Ignore: []
          no_answer: []
      unsure: []
"""


@pytest.mark.parametrize(
    ("trigger", "read", "refused"),
    [
        # an AI field re-read after an answer whose question did not show it
        ("event: { type: plate.recognized.v1, cameras: [gate] }", "who", True),
        # a workflow-raised alert's title (an alert trigger with no filter)
        ("alert: { cameras: [gate] }", "title", True),
        # safe look-alike: the same rule on a value no AI produced (an app's own alert)
        ("alert: { app: intrusion, cameras: [gate] }", "title", False),
    ],
)
def test_a_severity_chosen_by_an_if_on_ai_output_is_capped(
    trigger: str, read: str, refused: bool
) -> None:
    report = check(SEVERITY.replace("TRIGGER", trigger).replace("READ", read))
    if refused:
        assert codes(report) == ["WF-SEVERITY-AI-CAP"]
        assert report.errors[0].path.endswith("alert.severity")
        assert "chosen by the `if` at" in report.errors[0].message
    else:
        assert report.ok, [p.format() for p in report.errors]


# ── 4. a question must be able to show what each reply does ────────────────────────────


HIDDEN = """\
when:
  button: {}
then:
  - ask_person: { who: role:owner, message: "Unlock?", replies: [Unlock, Keep], default: Keep }
    Unlock:
      - for_each: { cameras: [front_door, back_door] }
        do:
          - if: [ camera: [front_door] ]
            then: [ home_assistant: { action: lock.unlock, data: { entity_id: "ENTITY" } } ]
            else: []
    Keep: []
"""


def test_an_action_a_reply_leads_to_reads_only_values_the_question_can_show() -> None:
    # Attack: which lock opens is decided after the question by the loop, so the card
    # cannot say it.
    attack = check(HIDDEN.replace("ENTITY", "lock.{camera}"))
    assert codes(attack) == ["WF-ASK-EFFECT-HIDDEN"]
    assert "{camera}" in attack.errors[0].message
    assert attack.errors[0].path.endswith("home_assistant.data.entity_id")
    # Safe look-alike: the same loop unlocking a lock named in the file.
    assert check(HIDDEN.replace("ENTITY", "lock.front")).ok


# ── 5. for_each over events is a decision on them ───────────────────────────────────────


LOOP = """\
when:
  schedule: { every: 1h }
if:
  - time: { from: "22:00", to: "06:00" }
then:
  - for_each: { ITEMS }
    do:
      - home_assistant: { action: siren.turn_on, data: { entity_id: siren.yard } }
"""


def test_a_loop_over_events_decides_like_an_if_on_them() -> None:
    # Attack: an AI-raised alert among the events makes the siren ring.
    attack = check(LOOP.replace("ITEMS", "events: { within: 1h }"))
    assert codes(attack) == ["WF-SAFETY-ACTUATOR-AFTER-AI-IF"]
    assert "runs its steps once per event" in attack.errors[0].message
    # Safe look-alike: a loop over the cameras the file names, after a plain rule.
    assert check(LOOP.replace("ITEMS", "cameras: [garden]")).ok


# ── 6. look-alike replies: Unicode's confusables, blank characters ──────────────────────


@pytest.mark.parametrize(
    "look_alike",
    [
        "Keep Iocked",  # capital I for small l
        "Keep \u029focked",  # small capital L
        "K\u1d07\u1d07\u1d18 locked",  # small capitals E, E, P
        "Keep \u01c0ocked",  # LATIN LETTER DENTAL CLICK for l
        "Keep locked\u2800",  # a trailing blank braille pattern
        "Keep locked\u3164",  # a Hangul filler
        "Keep \ua4e1ocked",  # Lisu capital L
    ],
)
def test_a_reply_that_reads_like_another_is_refused(look_alike: str) -> None:
    body = f"""\
    when:
      button: {{}}
    then:
      - ask_person:
          who: role:owner
          message: Open the door?
          replies: ["Keep locked", "{look_alike}"]
          default: Keep locked
        Keep locked: []
        "{look_alike}": [ app_action: {{ app: gate_controller, action: open }} ]
    """
    report = check(body)
    assert {"WF-ASK-REPLY-DUPLICATE", "WF-NAME-CHARACTER"} & set(codes(report)), codes(report)
    assert names_clash("Keep locked", look_alike)
    # Safe look-alikes: names that really differ stay apart.
    assert not names_clash("Keep locked", "Keep unlocked")
    assert not names_clash("Lift", "Gift")
    assert name_key("Keep Locked") == name_key("keep locked")


# ── 7. line separators outside quoted strings ───────────────────────────────────────────


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_line_separator_outside_quotes_is_refused_where_it_stands(separator: str) -> None:
    attack = (
        "when:\n  button: {}\nthen:\n"
        f'  - log: "Nightly check"  # done by hand{separator}- site_mode: disarmed\n'
    )
    report = check(attack)
    assert codes(report) == ["WF-YAML-LINE-SEPARATOR"]
    assert (report.errors[0].line, report.errors[0].column) == (7, 41)
    # Safe look-alike: the same character inside a quoted string is text.
    assert check(f'when:\n  button: {{}}\nthen:\n  - log: "two{separator}lines"\n').ok


# ── 9. who is asked is not the AI's choice ──────────────────────────────────────────────


WHO = """\
when:
  button: {}
then:
  - ai:
      mode: look
      prompt: Who is at the door?
      input: picture
      camera: front_door
      decision: [family, stranger]
      family:
        - ask_person: { who: role:FIRST, message: Unlock?, replies: [Unlock, Keep], default: Keep }
          Unlock: [ home_assistant: { action: lock.unlock, data: { entity_id: lock.front } } ]
          Keep: []
      stranger:
        - ask_person: { who: role:owner, message: Unlock?, replies: [Unlock, Keep], default: Keep }
          Unlock: [ home_assistant: { action: lock.unlock, data: { entity_id: lock.front } } ]
          Keep: []
      unsure: []
"""


def test_the_ai_does_not_choose_who_approves() -> None:
    attack = check(WHO.replace("FIRST", "kids"))
    assert codes(attack) == ["WF-ASK-WHO-AI"]
    assert attack.errors[0].path == "$.then[0].ai.stranger[0].ask_person.who"
    assert "role:kids" in attack.errors[0].message
    # Safe look-alike: the same people are asked whichever way the AI decided.
    assert check(WHO.replace("FIRST", "owner")).ok


# ── 10. an answer clears an action for a bounded time ───────────────────────────────────


STALE = """\
when:
  button: {}
then:
  - ask_person: { who: role:owner, message: Open?, replies: [Open, Keep], default: Keep }
    Open:
      - wait: WAIT
      - app_action: { app: gate_controller, action: open }
    Keep: []
"""


def test_a_long_wait_between_the_answer_and_the_action_is_warned() -> None:
    attack = check(STALE.replace("WAIT", "1d"))
    assert attack.ok
    assert warnings(attack) == ["WF-ASK-ANSWER-STALE"]
    assert attack.warnings[0].path == "$.then[0].Open[1].app_action"
    # Safe look-alike: a short wait, and a site that lets answers last a day.
    assert warnings(check(STALE.replace("WAIT", "5m"))) == []
    assert warnings(check(STALE.replace("WAIT", "1d"), SiteProfile(answer_fresh_s=86_400))) == []


# ── 12. integer fields take whole numbers as written ────────────────────────────────────


def test_a_count_written_as_a_float_is_refused_at_its_line() -> None:
    body = """\
    when:
      button: {}
    then:
      - ai:
          mode: look
          prompt: Moving?
          input: frames
          camera: gate
          frames: FRAMES
          decision: [yes_moving]
          yes_moving: []
          unsure: []
    """
    attack = check(body.replace("FRAMES", "3.0"))
    assert [(p.code, p.line) for p in attack.errors] == [("WF-TYPE", 12)]
    assert "whole number" in attack.errors[0].message
    assert check(body.replace("FRAMES", "3")).ok


# ── 13. alerts of apps that run a model are AI output ───────────────────────────────────


MODEL_APP = """\
when:
  alert: { app: APP, cameras: [gate] }
then:
  - if: [ value: { of: "{title}", is: [Delivery] } ]
    then: [ app_action: { app: gate_controller, action: open } ]
    else: []
"""


def test_an_apps_alert_is_ai_output_when_the_site_says_it_runs_a_model() -> None:
    site = SiteProfile(model_apps=frozenset({"scene_describer"}))
    attack = check(MODEL_APP.replace("APP", "scene_describer"), site)
    assert codes(attack) == ["WF-SAFETY-ACTUATOR-AFTER-AI-IF"]
    assert "WF-TRIGGER-AI-ALERTS" in warnings(attack)
    # Safe look-alike: a detector app's alert is a plain rule's input.
    assert check(MODEL_APP.replace("APP", "intrusion"), site).ok
