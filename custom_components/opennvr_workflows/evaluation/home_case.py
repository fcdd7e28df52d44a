"""A marked run as a case file: the home's own evaluation set.

The shipped Look cases are drawn scenes; the homeowner's marks say what their own cameras
really saw. A run marked right or wrong becomes a case in the harness's own format (so
``python -m evals check`` and ``run`` read it like any other): the AI step as it ran (its
``ai:`` body without its paths, so the case runs exactly that question), the placeholders
its question read, the pictures it looked at (kept beside the case), and the expectation:

* marked **right**: what the model answered (decision and fields);
* marked **wrong** with the right ``decision`` (and ``fields``) given: those;
* marked wrong with only ``fields`` given: the same decision with those fields (the
  decision was right, a field was not);
* marked wrong with nothing given: any option the model did not pick (``unsure`` is not
  among them: a model that should have decided did not get it right by being unsure).

``origin:`` ties the case to the workflow, the step (its place and content hash), the site
and the cameras the run touched (who may read it), and keeps what the model answered and
the person's note: the failure notes a shared copy (:func:`shared_case`, no pictures, no
event values, nothing that names the home) carries. No Home Assistant imports.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final

import yaml

from ..engine.versions import step_hash
from ..workflow import Workflow, walk_steps, workflow_to_data
from ..workflow.model import AIStep, InvestigateSpec, LookSpec
from .draft_scoring import MISSING, value_at

__all__ = [
    "HomeCaseError",
    "MarkedRun",
    "case_data",
    "case_id",
    "case_text",
    "marked_step",
    "shared_case",
    "shared_text",
]

#: A placeholder in a question (``{plate}``).
_PLACEHOLDER: Final = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: The origin keys a shared copy keeps (the rest names the home: its site, its run, its
#: cameras, when someone marked it).
_SHARED_ORIGIN: Final = ("workflow", "workflow_name", "step", "step_hash", "marked", "model")


class HomeCaseError(ValueError):
    """A marked run that cannot become a case; ``reason`` is a translation key's tail
    (``investigate``, ``no_picture``, ``bad_decision``, ``bad_field``, ``same_answer``,
    ``step_changed``) and ``detail`` what the message names."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class MarkedRun:
    """What a case is made of: the run's step and what it saw, and the person's mark.

    ``values`` are the run's placeholder values at the step; ``camera`` the run's camera
    (the role whose picture the step looked at, unless the step names its own);
    ``pictures`` the case's picture files (relative to the cases folder), in the order
    the step saw them; ``decision``, ``fields`` and ``note`` what the person said was
    right (only read for a wrong mark)."""

    workflow_id: str
    workflow_name: str
    site: str
    run_id: str
    step_path: str
    step: AIStep
    body: Mapping[str, Any]
    answered_decision: str
    answered_fields: Mapping[str, str]
    answered_reason: str
    model: str
    right: bool
    marked_at: datetime
    values: Mapping[str, Any] = field(default_factory=_empty)
    camera: str | None = None
    pictures: tuple[str, ...] = ()
    cameras: tuple[str, ...] = ()
    all_cameras: bool = False
    decision: str | None = None
    fields: Mapping[str, str] = field(default_factory=_empty)
    note: str = ""


def marked_step(workflow: Workflow, wanted_hash: str) -> tuple[AIStep, dict[str, Any]]:
    """The AI step of ``workflow`` whose content hash is ``wanted_hash``, and its ``ai:``
    body as the file writes it without its paths (a case runs the step, never its paths).
    Raises :class:`HomeCaseError` ``step_changed`` when the workflow no longer has it."""
    data = workflow_to_data(workflow)
    for path, step in walk_steps(workflow):
        if isinstance(step, AIStep) and step_hash(step) == wanted_hash:
            found = value_at(data, path)
            if found is MISSING or not isinstance(found, dict):
                break
            body = {k: v for k, v in dict(found["ai"]).items() if k not in step.outcomes}
            return step, body
    raise HomeCaseError("step_changed", workflow.name)


def needs_pictures(step: AIStep) -> bool:
    """Whether the step looks at a camera's picture (a Look on ``picture`` or ``frames``)."""
    return isinstance(step.spec, LookSpec) and step.spec.input in ("picture", "frames")


def case_id(workflow_id: str, run_id: str) -> str:
    """The case's id: ``home-<workflow>-<a hash of the run>`` (the case file's pattern)."""
    slug = re.sub(r"[^a-z0-9_-]+", "-", workflow_id.lower()).strip("-_")[:40] or "workflow"
    return f"home-{slug}-{hashlib.blake2s(run_id.encode(), digest_size=5).hexdigest()}"


def expectation(mark: MarkedRun) -> tuple[list[str], dict[str, str]]:
    """The decisions a good run may give and the fields it must (see the module)."""
    step = mark.step
    said, said_fields = mark.answered_decision, dict(mark.answered_fields)
    if mark.right:
        return [said], {k: v for k, v in said_fields.items() if v in step.fields.get(k, ())}
    wanted = dict(mark.fields)
    for name, value in wanted.items():
        if value not in step.fields.get(name, ()):
            raise HomeCaseError("bad_field", f"{name}: {value}")
    if mark.decision is not None:
        if mark.decision not in step.outcomes:
            raise HomeCaseError("bad_decision", mark.decision)
        if mark.decision == said and all(said_fields.get(k) == v for k, v in wanted.items()):
            raise HomeCaseError("same_answer", said)
        return [mark.decision], wanted
    if wanted:
        if all(said_fields.get(k) == v for k, v in wanted.items()):
            raise HomeCaseError("same_answer", said)
        return [said], wanted
    others = [d for d in step.decision if d != said]
    if not others:
        raise HomeCaseError("bad_decision", said)
    return others, {}


def _event(mark: MarkedRun) -> dict[str, Any]:
    """The values the step's question reads, and the camera (a case's ``event``)."""
    spec = mark.step.spec
    texts = (spec.prompt, spec.text or "") if isinstance(spec, LookSpec) else (spec.goal,)
    wanted = {name for text in texts for name in _PLACEHOLDER.findall(text)}
    event: dict[str, Any] = {}
    if mark.camera:
        event["camera"] = mark.camera
    for name in sorted(wanted):
        value = mark.values.get(name)
        if _NAME.match(name) and _plain(value):
            event[name] = list(value) if isinstance(value, list | tuple) else value
    return event


def _plain(value: Any) -> bool:
    if isinstance(value, list | tuple):
        return all(isinstance(v, str | int | float | bool) for v in value)
    return isinstance(value, str | int | float | bool)


def case_data(mark: MarkedRun) -> dict[str, Any]:
    """The case file's data for ``mark`` (see the module); raises :class:`HomeCaseError`
    when the run cannot make a case: an Investigate step (its tools' answers are not kept
    as fixtures), or a Look at a picture that was not kept."""
    step = mark.step
    if isinstance(step.spec, InvestigateSpec):
        raise HomeCaseError("investigate", mark.workflow_name)
    looked_at = (step.spec.camera if isinstance(step.spec, LookSpec) else None) or mark.camera
    if needs_pictures(step) and not (mark.pictures and looked_at):
        raise HomeCaseError("no_picture", mark.workflow_name)
    decisions, fields = expectation(mark)
    verdict = "right" if mark.right else "wrong"
    about = f"{mark.workflow_name}: a run marked {verdict} on {mark.marked_at.date().isoformat()}"
    data: dict[str, Any] = {
        "id": case_id(mark.workflow_id, mark.run_id),
        "suite": "look",
        "about": f"{about} ({mark.note})." if mark.note else f"{about}.",
        "step": {"ai": dict(mark.body)},
        "event": _event(mark),
    }
    if needs_pictures(step):
        shows = (
            f"What the {looked_at} camera saw on a run marked {verdict}; the right answer: "
            f"{' or '.join(decisions)}." + (f" {mark.note}" if mark.note else "")
        )
        data["inputs"] = {
            "pictures": {str(looked_at): [{"file": f, "shows": shows} for f in mark.pictures]}
        }
    expect: dict[str, Any] = {"decision": decisions[0] if len(decisions) == 1 else decisions}
    if fields:
        expect["fields"] = fields
    data["expect"] = expect
    data["origin"] = _origin(mark)
    return data


def _origin(mark: MarkedRun) -> dict[str, Any]:
    origin: dict[str, Any] = {
        "workflow": mark.workflow_id,
        "workflow_name": mark.workflow_name,
        "step": mark.step_path,
        "step_hash": step_hash(mark.step),
        "site": mark.site,
        "run": mark.run_id,
        "cameras": list(mark.cameras),
        "marked": "right" if mark.right else "wrong",
        "marked_at": mark.marked_at.isoformat(timespec="seconds"),
        "model": mark.model,
        "answered": {
            "decision": mark.answered_decision,
            "fields": dict(mark.answered_fields),
            "reason": mark.answered_reason,
        },
    }
    if mark.all_cameras:
        origin["all_cameras"] = True
    if mark.note:
        origin["note"] = mark.note
    return origin


def case_text(data: Mapping[str, Any]) -> str:
    """The case file's text."""
    head = (
        "# A run this home marked, kept as an evaluation case (its pictures stay on this\n"
        "# machine). Delete it with the delete_case action, or delete this file and them.\n"
    )
    return head + _yaml(data)


def shared_case(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the case to share: the question, the expectation and the failure notes
    (what the model answered, the note), without pictures, the event's values (plates,
    names, messages) or anything that names the home (site, run, cameras, when)."""
    out = {k: v for k, v in data.items() if k not in ("inputs", "origin", "event")}
    event = data.get("event") or {}
    if "camera" in event:
        out["event"] = {"camera": event["camera"]}
    origin = dict(data.get("origin") or {})
    shared = {k: origin[k] for k in _SHARED_ORIGIN if k in origin}
    for key in ("answered", "note"):
        if key in origin:
            shared[key] = origin[key]
    pictures = [
        str(p["shows"])
        for rows in ((data.get("inputs") or {}).get("pictures") or {}).values()
        for p in rows
    ]
    if pictures:
        shared["pictures"] = pictures
    if shared:
        out["origin"] = shared
    return out


def shared_text(data: Mapping[str, Any]) -> str:
    """The shared copy's text, saying what is left out and how to make it run again."""
    head = (
        "# A case shared without its pictures or the event's values. To run it, add\n"
        "# pictures of your own under inputs.pictures (see origin.pictures for what they\n"
        "# showed) and the values the question reads under event.\n"
    )
    return head + _yaml(shared_case(data))


def _yaml(data: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100)
