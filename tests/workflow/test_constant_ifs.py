"""An ``if`` whose answer is known before the run: a warning that names it."""

from __future__ import annotations

import pytest

from custom_components.opennvr_workflows.workflow import validate_text

HEAD = """\
contract: workflow.v1
name: Constant
state: test
when:
  alert: {{}}
then:
  - ai:
      mode: look
      prompt: Who is it?
      decision: [visitor, stranger]
      fields: {{ kind: [adult, child] }}
      visitor:
        - if: [ {cond} ]
          then:
            - log: yes
      stranger: []
      unsure: []
"""


def warnings(cond: str) -> dict[str, str]:
    report = validate_text(HEAD.format(cond=cond))
    return {p.code: p.path for p in report.problems if p.code.startswith("WF-IF-")}


@pytest.mark.parametrize(
    ("cond", "code"),
    [
        ('time: { from: "08:00", to: "08:00" }', "WF-IF-ALWAYS-TRUE"),
        (
            'time: { from: "08:00", to: "08:00", days: [mon, tue, wed, thu, fri, sat, sun] }',
            "WF-IF-ALWAYS-TRUE",
        ),
        ("site_mode: [disarmed, armed_home, armed_away]", "WF-IF-ALWAYS-TRUE"),
        ("value: { of: '{kind}', is: [adult, child] }", "WF-IF-ALWAYS-TRUE"),
        (
            "value: { of: '{severity}', is: [low, medium, high, critical] }",
            "WF-IF-ALWAYS-TRUE",
        ),
        ("value: { of: '{kind}', is: [teen] }", "WF-IF-NEVER-TRUE"),
        ("value: { of: '{title}', is: [a], is_not: [a] }", "WF-IF-NEVER-TRUE"),
        ("value: { of: '{title}', above: 5, below: 2 }", "WF-IF-NEVER-TRUE"),
    ],
)
def test_a_constant_if_is_warned(cond: str, code: str) -> None:
    found = warnings(cond)
    assert set(found) == {code}
    assert found[code].startswith("$.then[0].ai.visitor[0].if")


@pytest.mark.parametrize(
    "cond",
    [
        'time: { from: "08:00", to: "18:00" }',
        'time: { from: "08:00", to: "08:00", days: [mon] }',
        "site_mode: [armed_home, armed_away]",
        "value: { of: '{kind}', is: [adult] }",
        "value: { of: '{title}', is: [a, b] }",
        "value: { of: '{title}', above: 2, below: 5 }",
    ],
)
def test_a_real_rule_is_not_warned(cond: str) -> None:
    assert warnings(cond) == {}
