"""Why a workflow is not running, as a short to-do list the panel shows under its title.

A file the validator refused, or one the engine parked in *needs attention*, is read as what
a person does next: map a camera to a role, choose a vision model, measure it, add a site
list, or fix the file. Each to-do carries its ``kind`` (the panel words it in the user's
language), its ``subject`` (the role, skill, list or tool it is about, when there is one),
``where`` it is done (the integration's ``options`` or the workflow's ``file``) and the
validator's own words as ``details``, shown one click away.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from ..workflow import Problem
from ..workflow.vocabulary import INVESTIGATE_MODEL_SKILL

#: Skills a setting of the integration grants: a to-do of their own each.
_SKILL_KINDS: Final = {
    "vision_model": "vision_model",
    "language_model": "language_model",
    INVESTIGATE_MODEL_SKILL: "investigate_model",
    "semantic_search": "semantic_search",
}
#: The name a site problem is about, as its message quotes it (``the camera role 'gate'``).
_QUOTED: Final = re.compile(r"'([^']+)'")
#: The tool a WF-TOOL-NOT-HERE message begins with.
_TOOL: Final = re.compile(r"^(\S+) is a tool")
#: Every kind, in the order the list shows them: what is done in the options first, the
#: file last (the panel words each as its text ``panel_todo_<kind>``).
KINDS: Final = (
    "camera_role",
    "vision_model",
    "language_model",
    "investigate_model",
    "semantic_search",
    "app",
    "site_list",
    "tool",
    "fix_file",
    "attention",
)


def todos(problems: Iterable[Problem], reason: str | None = None) -> list[dict[str, Any]]:
    """The to-dos of a file's errors (and of the engine's reason it needs attention), one
    per thing to do, each with the problems that ask for it."""
    found: dict[tuple[str, str | None], dict[str, Any]] = {}
    for problem in problems:
        if problem.severity != "error":
            continue
        kind, subject = _todo_of(problem)
        todo = found.setdefault(
            (kind, subject),
            {
                "kind": kind,
                "subject": subject,
                "where": "file" if kind in ("tool", "fix_file") else "options",
                "details": [],
            },
        )
        todo["details"].append({"line": problem.line, "message": problem.message})
    if reason:
        found["attention", None] = {
            "kind": "attention",
            "subject": None,
            "where": "file",
            "details": [{"line": 0, "message": reason}],
        }
    return sorted(found.values(), key=lambda t: (KINDS.index(t["kind"]), t["subject"] or ""))


def _todo_of(problem: Problem) -> tuple[str, str | None]:
    """What ``problem`` asks a person to do, and what about."""
    quoted = _QUOTED.search(problem.message)
    subject = quoted.group(1) if quoted else None
    if problem.code == "WF-CAMERA-ROLE-UNMAPPED" and subject:
        return "camera_role", subject
    if problem.code == "WF-SITE-LIST-UNKNOWN" and subject:
        return "site_list", subject
    if problem.code == "WF-SKILL-MISSING" and subject:
        kind = _SKILL_KINDS.get(subject)
        return (kind, None) if kind else ("app", subject)
    if problem.code == "WF-TOOL-NOT-HERE" and (tool := _TOOL.match(problem.message)):
        return "tool", tool.group(1)
    return "fix_file", None
