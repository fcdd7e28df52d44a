"""Steps a person answers: Ask a person (a path per reply and for ``no_answer``) and Call.

Only a person's real answer clears the safety rule again after an AI decision, so the paths
opened here are where it happens: a reply path is *answered*, unless the reply is also the
question's ``default`` (taken when nobody answers), and ``no_answer`` never is.

A reply (or ``no_answer``) without a path is a warning, not a refusal: the RFC's own example
gives a path only to the reply that matters, and the engine simply ends the run there.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from ..model import AskPersonStep, CallStep
from ..paths import PathPart, format_path
from .context import CheckContext
from .duration_ranges import check_duration
from .names import check_names
from .placeholders import check_text
from .scope import Asked, Branch, Scope

__all__ = ["check_ask_person", "check_call"]

#: Keys of the step that a reply cannot be named like: its setting, and the timeout's path.
_RESERVED_KEYS = ("ask_person", "no_answer")
#: What a person's answer defines on its path.
_ANSWER_NAMES = frozenset({"answer", "answered_by"})


def check_ask_person(
    ctx: CheckContext, step: AskPersonStep, scope: Scope, parts: tuple[PathPart, ...]
) -> list[Branch]:
    """Check one question; return its paths, the answered ones gated and cleared of the AI."""
    body = (*parts, "ask_person")
    check_text(ctx, step.message, scope, (*body, "message"))
    check_duration(ctx, step.timeout_s, "ask_timeout", "the timeout", (*body, "timeout"))
    check_names(
        ctx,
        step.replies,
        (*body, "replies"),
        what="reply",
        code="WF-ASK-REPLY-DUPLICATE",
        reserved=_RESERVED_KEYS,
    )
    if step.default is not None and step.default not in step.replies:
        ctx.report(
            "WF-ASK-DEFAULT-UNKNOWN",
            f"the default {step.default!r} is not one of the replies ("
            + ", ".join(step.replies)
            + ")",
            (*body, "default"),
        )
    if step.default is not None and "no_answer" in step.paths:
        ctx.report(
            "WF-ASK-DEFAULT-AND-NO-ANSWER",
            f"with a default reply ({step.default}), no answer takes that reply's path; "
            "remove `no_answer`, or remove the default",
            (*parts, "no_answer"),
            key=True,
        )
    outcomes = step.outcomes
    for outcome in outcomes:
        if outcome not in step.paths:
            if outcome == "no_answer":
                said = "if nobody answers in time, the run ends here"
                fix = "add `no_answer: [...]`, or a `default:` reply"
            else:
                said = f"the reply {outcome!r} has no path, so it ends the run here"
                fix = f"add `{outcome}: [...]` beside `ask_person:`"
            ctx.report(
                "WF-ASK-PATH-MISSING",
                f"{said}; {fix} (`[]` to end it on purpose), so every answer has a visible route",
                parts,
                severity="warning",
            )
    for key in step.paths:
        if key not in outcomes and key != "no_answer":
            ctx.report(
                "WF-ASK-PATH-UNKNOWN",
                f"{key!r} is not a reply of this question ("
                + ", ".join(step.replies)
                + "); fix the spelling, or add it to `replies`",
                (*parts, key),
                key=True,
            )
    branches: list[Branch] = []
    at = format_path(parts)
    for outcome, path in step.paths.items():
        answered = outcome in step.replies and outcome != step.default
        # The card lists what each outcome's path does (the reply defines {answer} and
        # {answered_by} there, so the card can show values read from them too).
        origins = {**scope.origins, **dict.fromkeys(_ANSWER_NAMES, f"the ask_person at {at}")}
        asked = Asked(at, outcome, answered, MappingProxyType(origins))
        if answered:
            inner = replace(
                scope,
                names=scope.names | _ANSWER_NAMES,
                gated=True,
                ai=None,
                depth=scope.depth + 1,
                choosers=(),
                asked=asked,
            )
        else:
            inner = replace(scope, depth=scope.depth + 1, asked=asked)
        branches.append(Branch(path, inner, (*parts, outcome)))
    ctx.questions.append((parts, step, scope.choosers))
    return branches


def check_call(
    ctx: CheckContext, step: CallStep, scope: Scope, parts: tuple[PathPart, ...]
) -> list[Branch]:
    """Refuse a Call (not available yet), and return its paths so they are checked too."""
    ctx.report(
        "WF-CALL-NOT-AVAILABLE",
        "the Call step (a voice agent phoning someone) is not available yet; use "
        "ask_person, which asks on the phone with reply buttons",
        (*parts, "call"),
        key=True,
    )
    branches: list[Branch] = []
    for outcome, path in step.paths.items():
        answered = outcome != "no_answer"
        inner = replace(
            scope,
            gated=scope.gated or answered,
            ai=None if answered else scope.ai,
            depth=scope.depth + 1,
        )
        branches.append(Branch(path, inner, (*parts, outcome)))
    return branches
