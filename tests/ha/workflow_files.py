"""Workflow files the Home Assistant tests write into the config folder."""

from __future__ import annotations

from pathlib import Path

from homeassistant.core import HomeAssistant

from custom_components.opennvr_workflows.const import WORKFLOW_FOLDER

DOOR_LOOK = """\
contract: workflow.v1
name: Visitor at the front door
state: {state}
needs: [vision_model]
limits: {{ cooldown: 0s, per_hour: 100 }}
when:
  alert: {{ alert_type: person, cameras: [front_door] }}
then:
  - ai:
      mode: look
      prompt: Is somebody waiting at the front door?
      input: picture
      decision: [visitor, nobody]
      visitor:
        - notify:
            {{ who: role:household, title: Front door, message: "Visitor: {{reason}}" }}
      nobody: [ log: "Nobody at the door: {{reason}}" ]
      unsure: [ log: "Not sure: {{reason}}" ]
"""

#: A notify, an hour's wait, another notify: the run waits in the middle.
REMIND = """\
contract: workflow.v1
name: Remind later
state: on
when:
  button: {}
then:
  - notify: { who: role:household, title: Reminder, message: first }
  - wait: 1h
  - notify: { who: role:household, title: Reminder, message: second }
"""

#: A question; the run waits for the answer (or the hour's timeout).
ASK = """\
contract: workflow.v1
name: Ask first
state: on
when:
  button: {}
then:
  - ask_person:
      who: role:owner
      message: Open the gate?
      replies: [Open, Keep closed]
      timeout: 1h
      default: Keep closed
    Open: [ notify: { who: role:household, message: opened } ]
    Keep closed: [ notify: { who: role:household, message: kept closed } ]
"""


def write_workflow(hass: HomeAssistant, name: str, text: str) -> Path:
    """Write ``text`` as ``<config>/opennvr_workflows/<name>.yaml`` (before setup)."""
    folder = Path(hass.config.path(WORKFLOW_FOLDER))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def log_on_alert(name: str, cameras: str = "") -> str:
    """A rule-only workflow (no AI) that logs every person alert on ``cameras``."""
    where = f", cameras: [{cameras}]" if cameras else ""
    return f"""\
contract: workflow.v1
name: {name}
state: on
limits: {{ cooldown: 0s, per_hour: 100 }}
when:
  alert: {{ alert_type: person{where} }}
then:
  - log: "{name} saw {{camera}}"
"""
