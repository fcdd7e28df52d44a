"""What is wrong with a workflow file, said so a person can fix it.

Every problem names where it is three ways: a JSON path (``$.then[0].ai.tools[2]``, stable
across reformatting, for builders), and the YAML line and column (1-based, for people and
editors; 0 when the workflow was not read from text). Its ``code`` is stable across releases,
so tests, CI and translations can key on it; the message is plain English and says the fix
where there is one. Errors make a file invalid; warnings do not.

:data:`CODES` lists every code this package emits, with what it means.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from .model import Workflow

__all__ = ["CODES", "Problem", "ProblemSeverity", "Report", "WorkflowInvalid"]

type ProblemSeverity = Literal["error", "warning"]

#: Every stable code, with its meaning. A code is never reused for another meaning.
CODES: dict[str, str] = {
    # Reading the text
    "WF-READ": "the file cannot be read (command line only)",
    "WF-YAML-SYNTAX": "the text is not valid YAML",
    "WF-YAML-TOO-LARGE": "the file is larger than a workflow can be",
    "WF-YAML-TOO-DEEP": "the YAML nests deeper than a workflow can",
    "WF-YAML-TOO-MANY-NODES": "the YAML has more values than a workflow can",
    "WF-YAML-DUPLICATE-KEY": "a key appears twice in one mapping",
    "WF-YAML-ALIAS": "YAML anchors and aliases are not allowed",
    "WF-YAML-TAG": "explicit YAML tags are not allowed",
    "WF-YAML-KEY": "a mapping key is not plain text",
    "WF-YAML-LINE-SEPARATOR": "a line separator (U+0085, U+2028, U+2029) outside a quoted string",
    "WF-YAML-NUMBER": "a number is not finite",
    "WF-NUMBER-TOO-LARGE": "a number too large to be held exactly (or one that overflows)",
    "WF-DATA-TYPE": "a value that is not plain data (text, number, true/false, list, mapping)",
    "WF-YAML-DOCUMENTS": "the file holds more or fewer than one YAML document",
    "WF-NOT-A-MAPPING": "the file is not a mapping of keys to values",
    "WF-VALIDATOR-CRASH": "the validator failed on this file (a bug; command line exit status 2)",
    # The contract version
    "WF-CONTRACT-MISSING": "the file does not say which contract it follows",
    "WF-CONTRACT-UNSUPPORTED": "the file follows a contract other than workflow.v1",
    # Structure (the JSON Schema)
    "WF-UNKNOWN-KEY": "a key the contract does not define",
    "WF-MISSING-KEY": "a required key is missing",
    "WF-TYPE": "a value of the wrong type",
    "WF-VALUE": "a value that is not one of those allowed",
    "WF-FORMAT": "text that does not have the required form",
    "WF-DURATION": "a duration that does not follow the grammar",
    "WF-TIME": "a clock time that is not HH:MM",
    "WF-RANGE": "a number or a length out of range",
    "WF-COUNT": "too few or too many items",
    "WF-DUPLICATE-ITEM": "the same item twice in a list",
    "WF-TRIGGER-KIND": "`when` does not hold exactly one known trigger",
    "WF-CONDITION-KIND": "a condition is not exactly one known condition",
    "WF-STEP-KIND": "a step is not exactly one known step kind",
    "WF-CAMERA-NOT-ROLE": "a camera named by id or otherwise than by role",
    "WF-WHO-NOT-ROLE": "people named otherwise than by role",
    "WF-WEBHOOK-URL": "a webhook names a URL instead of an approved destination",
    "WF-AI-KEY-WRONG-MODE": "an AI step key that belongs to the other mode",
    "WF-LIMIT-RANGE": "a limit outside its allowed range",
    "WF-FOREACH-KIND": "for_each does not name exactly one of cameras, list and events",
    # Steps that exist in the contract but not here
    "WF-CALL-NOT-AVAILABLE": "the Call step is not available (phase 3)",
    # Flow
    "WF-STEP-AFTER-BRANCH": "a step after a branching step in the same list",
    "WF-TOO-MANY-STEPS": "more steps than a workflow may have",
    "WF-TOO-DEEP": "paths nested deeper than a workflow may nest",
    "WF-NO-CURRENT-CAMERA": "a step needs the current camera, and there is none on its path",
    "WF-SCHEDULE-KIND": "a schedule needs exactly one of `at` and `every`",
    "WF-REPLY-NOT-MESSAGE": "a reply action in a workflow not triggered by a message",
    "WF-FOREACH-COLLECT-NO-AI": "for_each collects reasons but runs no AI step",
    # Safety
    "WF-SAFETY-ACTUATOR-UNGATED": "an action that moves things with no If or person before it",
    "WF-SAFETY-ACTUATOR-AFTER-AI": "an action that moves things on a path an AI step chose",
    "WF-SAFETY-ACTUATOR-AFTER-AI-IF": "an action that moves things on a path an If on AI output "
    "chose",
    "WF-SAFETY-ACTUATOR-AI-VALUE": "an action that moves things with AI output no person "
    "approved as shown",
    "WF-SEVERITY-AI-CAP": "an AI-decided alert or message above medium",
    "WF-SEVERITY-CRITICAL-UNGATED": "a critical alert with no If or person before it",
    # AI step
    "WF-AI-TOOL-ACTUATOR": "a tool that moves things on an AI step",
    "WF-AI-TOOL-UNKNOWN": "a tool that is not a known read or ask tool",
    "WF-AI-TOOLS-TOO-MANY": "more than five tools on an AI step",
    "WF-AI-TOOLS-DUPLICATE": "the same tool twice on an AI step",
    "WF-AI-PATH-MISSING": "a decision option or `unsure` without a path",
    "WF-AI-PATH-UNKNOWN": "a path for an outcome the step cannot take",
    "WF-AI-UNSURE-LISTED": "`unsure` listed among the decision options",
    "WF-AI-OPTION-RESERVED": "a decision option named like a key of the AI step",
    "WF-AI-FIELD-RESERVED": "a field named like a value every AI step defines",
    "WF-AI-NAME-SHADOWS": "an AI field, reason_as or a for_each's collect reusing a name the "
    "trigger or an earlier step defines",
    "WF-AI-RULE-FIELD-UNKNOWN": "a rule reads a field the step does not declare",
    "WF-AI-RULE-VALUE-UNKNOWN": "a rule tests a value its field cannot take",
    "WF-AI-RULE-OUTCOME-UNKNOWN": "a rule gives a decision the step does not list",
    "WF-AI-RULE-UNREACHABLE": "a rule after a catch-all can never match",
    "WF-AI-INPUT": "a Look input without what it needs, or with what it cannot use",
    "WF-AI-PLACEHOLDER-IN-INSTRUCTIONS": "a placeholder in an Investigate step's instructions",
    # Ask a person
    "WF-ASK-PATH-UNKNOWN": "a path for a reply the question does not offer",
    "WF-ASK-DEFAULT-UNKNOWN": "a default that is not one of the replies",
    "WF-ASK-DEFAULT-AND-NO-ANSWER": "both a default reply and a `no_answer` path",
    "WF-ASK-REPLY-DUPLICATE": "two replies that read the same",
    "WF-ASK-EFFECT-HIDDEN": "an action a reply leads to reads a value its question cannot show",
    "WF-ASK-WHO-AI": "an AI decision chooses who is asked to clear an action that moves things",
    # Names a person reads
    "WF-NAME-CHARACTER": "a name holds a control, formatting or invisible character",
    "WF-NAME-DUPLICATE": "two names in one list that read the same to a person",
    # Placeholders
    "WF-PLACEHOLDER-UNDEFINED": "a placeholder nothing on its path defines",
    "WF-PLACEHOLDER-SYNTAX": "a brace that does not open or close a placeholder",
    # The site (checked only when the caller passes a SiteProfile)
    "WF-SKILL-MISSING": "a skill the workflow needs or uses that the site does not have",
    "WF-TOOL-NOT-HERE": "an AI step's tool that this site does not implement",
    "WF-CAMERA-ROLE-UNMAPPED": "a camera role not mapped to a camera in the options",
    "WF-SITE-LIST-UNKNOWN": "a site list that is not set in the options (Site rules)",
    # Warnings
    "WF-EVENT-UNKNOWN": "an event that is not one of OpenNVR's contracted events (warning)",
    "WF-PORTABILITY-HA-TARGET": "a Home Assistant target names this home's entities (warning)",
    "WF-STATE-ON": "a file that turns itself on when imported (warning)",
    "WF-TRIGGER-AI-ALERTS": "an alert trigger that also matches alerts workflows raise from AI "
    "decisions, or alerts of an app that runs a model (warning)",
    "WF-IF-ALWAYS-TRUE": "an `if` that can never be false (warning)",
    "WF-IF-NEVER-TRUE": "an `if` condition that can never be true (warning)",
    "WF-NEEDS-MISSING": "the workflow uses a skill it does not list in `needs` (warning)",
    "WF-ASK-PATH-MISSING": "a reply, or `no_answer`, without a path: the run ends there (warning)",
    "WF-ASK-ANSWER-STALE": "a wait longer than an answer stays fresh between the answer and "
    "the action it clears (warning)",
}


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a workflow.

    ``path`` is a JSON path into the file (``$`` is the whole file); ``line`` and ``column``
    are 1-based positions in the YAML text, or 0 when unknown.
    """

    code: str
    message: str
    path: str = "$"
    line: int = 0
    column: int = 0
    severity: ProblemSeverity = "error"

    def format(self, filename: str = "<workflow>") -> str:
        """``FILE:LINE:COL CODE message``, the form editors and CI understand."""
        tag = "" if self.severity == "error" else " (warning)"
        return f"{filename}:{self.line}:{self.column} {self.code}{tag} {self.message}"

    def as_dict(self) -> dict[str, str | int]:
        """A JSON-ready form, for Home Assistant service responses and the import UI."""
        return {
            "code": self.code,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "severity": self.severity,
        }


def _order(problem: Problem) -> tuple[int, int, str, str, str]:
    """Position first; the message breaks the last ties, so the order never depends on
    the set's hashing (two undefined placeholders in one text share everything else)."""
    return (problem.line, problem.column, problem.path, problem.code, problem.message)


@dataclass(frozen=True, slots=True)
class Report:
    """The result of validating one workflow: its problems, and the model when it is valid.

    ``workflow`` is set exactly when there are no errors (warnings allowed).
    """

    problems: tuple[Problem, ...] = ()
    workflow: Workflow | None = field(default=None, compare=False)

    @classmethod
    def of(cls, problems: Iterable[Problem], workflow: Workflow | None = None) -> Report:
        """A report with the problems sorted by position; drops ``workflow`` on any error."""
        ordered = tuple(sorted(set(problems), key=_order))
        has_error = any(p.severity == "error" for p in ordered)
        return cls(ordered, None if has_error else workflow)

    @property
    def errors(self) -> tuple[Problem, ...]:
        """The problems that make the workflow invalid."""
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """The problems worth a look that do not make the workflow invalid."""
        return tuple(p for p in self.problems if p.severity == "warning")

    @property
    def ok(self) -> bool:
        """True when there are no errors."""
        return not self.errors


class WorkflowInvalid(ValueError):
    """A workflow that cannot be accepted; ``problems`` says every reason (warnings too)."""

    def __init__(self, problems: Iterable[Problem], filename: str = "<workflow>") -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.filename = filename
        errors = [p for p in self.problems if p.severity == "error"]
        first = errors[0].format(filename) if errors else "no errors"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"invalid workflow: {first}{more}")

    @property
    def errors(self) -> tuple[Problem, ...]:
        """The errors alone."""
        return tuple(p for p in self.problems if p.severity == "error")
