"""What importing a workflow would do, said before it is done, and a file's state forced to
Test without losing the author's comments.

The import action answers with this preview (and writes nothing when asked for a dry
run), so a person sees what a shared file needs from the site, what it listens for, and
which steps move things before it ever runs.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from ...workflow import (
    Report,
    Workflow,
    action_key,
    dump_workflow,
    is_actuator,
    walk_steps,
    workflow_to_data,
)
from ...workflow.model import ActionStep, State
from ..permissions import moving_steps, needs_admin_to_turn_on

#: A top-level ``state:`` line (not indented), with an optional comment after the value.
_STATE_LINE: Final = re.compile(r"^state:[ \t]*[A-Za-z_\"']*[ \t]*(#.*)?$", re.MULTILINE)
#: A top-level ``name:`` line holding the whole name on one line.
_NAME_LINE: Final = re.compile(r"^name:[ \t]*[^ \t\n>|][^\n]*$", re.MULTILINE)


def preview(
    workflow: Workflow, report: Report, judge: Callable[[ActionStep], str | None]
) -> dict[str, Any]:
    """What the workflow is and needs: ``name``, ``description``, ``problems`` (warnings
    with their fixes), ``needs`` (skills), ``triggers`` (what starts it, as the file
    spells it), ``actuators`` (``[{path, action, data}]``: the steps the contract calls
    actuators), ``moves_things`` (why each step moves things on this site, by the host's
    own ``judge``: a webhook marked moving, a notify service behind a speaker, a phone
    command) and ``needs_admin_to_turn_on``."""
    return {
        "name": workflow.name,
        "description": workflow.description,
        "problems": [p.as_dict() for p in report.problems],
        "needs": list(workflow.needs),
        "triggers": [workflow_to_data(workflow)["when"]],
        "actuators": [
            {"path": path, "action": action_key(step), "data": _plain(step.action)}
            for path, step in walk_steps(workflow)
            if isinstance(step, ActionStep) and is_actuator(step)
        ],
        "moves_things": moving_steps(workflow, judge),
        "needs_admin_to_turn_on": needs_admin_to_turn_on(workflow, judge),
    }


def in_test_state(
    text: str, workflow: Workflow, validate: Callable[[str], Report]
) -> tuple[str, Workflow]:
    """``text`` with its state set to Test, and the workflow it now holds
    (:func:`in_state`)."""
    return in_state(text, workflow, "test", validate)


def in_state(
    text: str, workflow: Workflow, state: State, validate: Callable[[str], Report]
) -> tuple[str, Workflow]:
    """``text`` with its state set to ``state``, and the workflow it now holds.

    The top-level ``state:`` line is rewritten in place (or, for a file with none, one is
    added after the ``name:`` line), so the author's comments and layout stay, and the
    edited text is validated again: it is used only when it reads back as the same
    workflow in that state. Otherwise (a line this cannot read) the canonical text of the
    workflow in that state is written, which reads back as exactly that workflow."""
    wanted = dataclasses.replace(workflow, state=state)
    if workflow.state == state:
        return text, workflow
    value = "'on'" if state == "on" else state  # YAML 1.1 readers take a bare on for true
    lines = _STATE_LINE.findall(text)
    edited: str | None = None
    if len(lines) == 1:
        edited = _STATE_LINE.sub(lambda m: f"state: {value}" + (f"  {m[1]}" if m[1] else ""), text)
    elif not lines and len(_NAME_LINE.findall(text)) == 1:
        edited = _NAME_LINE.sub(lambda m: f"{m[0]}\nstate: {value}", text)
    if edited is not None:
        report = validate(edited)
        if report.ok and report.workflow == wanted:
            return edited, report.workflow
    return dump_workflow(wanted), wanted


def _plain(value: Any) -> Any:
    """A model value as JSON-ready data (mappings to dicts, tuples to lists)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value
