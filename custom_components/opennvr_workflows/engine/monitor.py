"""The second lock: the safety rule, checked at run time before every effect that matters.

The validator (``workflow/checks/``) refuses a file that could break the rule on any path;
the engine then runs what it accepted, and a hole in the validator would be executed
faithfully. So before an effect that matters (:mod:`.what_matters`) the engine checks the
rule again, on the one path this run took (:mod:`.trail`) and the values it actually holds
(:mod:`.provenance`). Written from the rule's text in the README ("Writing a workflow"), not
from the validator: the two share only the model and the placeholder tokenizer, so a hole in
one is not a hole in the other.

An effect that moves things (an actuator, a notification the phone takes as a command) acts
only when, on its own path:

1. a plain ``if`` or a person's reply stands before it;
2. a person's reply follows every decision that is not plain: an AI step, an ``if`` that
   read AI output, a ``for_each`` over events, a run AI output started, and a run a person
   started by name with values of their own;
3. every AI output among its parameters was approved since it was last defined: a person's
   reply on its path to a question whose message showed that value;
4. the question it stands behind (the last one on its path, no AI step since) showed, for
   the outcome taken, this effect as it is about to run;
5. no AI decision chose who approves it: the questions that clear such actions under the
   AI decision that chose this question ask the same people (:mod:`.who_asks`, read from
   the file, which holds the paths the run did not take);
6. when it rests on a person's reply, the reply it stands behind (the last on its path,
   whose question showed what it does) is recent: given, or given again when the engine
   asked again, within the site's ``answer_fresh_s``.

An urgency above the AI cap (an alert's severity, a notification's) needs every AI decision
on the path (an AI step, an ``if`` on AI output, a loop over events, a run AI output started)
followed by a person's reply, except that ``high`` may follow AI steps that earned trust from
marked runs; ``critical`` also needs a plain ``if`` or a person's reply on the path.

A *person's reply* is a reply of a question other than its default; a default taken, or no
answer, never is. A violation refuses the step before it acts: recorded ``refused`` with the
rule, the decision and the value that broke it; the run stops and its workflow needs
attention (the host raises a repair), as when a provider is lost (:class:`.steps.Refused`);
nothing is sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..workflow import model
from .approvals import Approvals
from .freshness import answer_given_at
from .moving import moves_here
from .policy import SafetyPolicy
from .ports import SEVERITIES, ActionRequest, AlertRequest, SiteClock
from .provenance import ANSWER_NAMES, Held
from .recorder import StepRecorder
from .records import ActiveRun
from .steps import Refused
from .taint import placeholders
from .trail import Decision, decisions_on
from .trust import AI_CAP, Marks
from .violations import Violation, chose, refusal
from .what_matters import card_entry, phone_command, urgency
from .who_asks import approvers_chosen

__all__ = ["Monitor"]

#: The outcome of a question nobody answered and that has no default.
NO_ANSWER: Final = "no_answer"
_CAP: Final = SEVERITIES.index(AI_CAP)


class Monitor:
    """Checks an effect against the rule on its run's path; refuses it when broken."""

    def __init__(
        self,
        recorder: StepRecorder,
        clock: SiteClock,
        policy: SafetyPolicy,
        marks: Marks,
        approvals: Approvals,
    ) -> None:
        self._recorder = recorder
        self._clock = clock
        self._policy = policy
        self._marks = marks
        self._approvals = approvals

    def check(
        self,
        run: ActiveRun,
        action: model.Action,
        path: str,
        kind: str,
        values: Mapping[str, Any],
        request: AlertRequest | ActionRequest,
        summary: dict[str, Any],
    ) -> None:
        """Return when the effect may go ahead; otherwise record it refused and raise
        :class:`.steps.Refused`."""
        command = phone_command(action, request)
        moving = command is not None or moves_here(action, self._policy)
        level = urgency(action, request)
        urgent = level is not None and SEVERITIES.index(level) > _CAP
        if not moving and not urgent:
            return
        # Values without provenance are of unknown origin: never plain (fails closed).
        held = values if isinstance(values, Held) else Held(values)
        trail = decisions_on(run, path)
        found = self._moving(run, action, path, held, trail) if moving else None
        if found is None and level is not None and urgent:
            found = self._urgent(level, trail)
        if found is None:
            return
        what = (
            f"is a command to the phone ({command})"
            if command is not None
            else "moves things"
            if moving
            else f"asks for {level}"
        )
        self._refuse(run, path, kind, summary, what, found)

    # ── effects that move things ────────────────────────────────────────

    def _moving(
        self,
        run: ActiveRun,
        action: model.Action,
        path: str,
        held: Held,
        trail: Sequence[Decision],
    ) -> Violation | None:
        # One pass: the last person's reply, whether a plain rule stands before, the first
        # decision that is not plain with no reply after it, and whether any was cleared.
        last_reply = -1
        ruled = cleared = chosen_by_ai = False
        open_: Decision | None = None
        for i, decision in enumerate(trail):
            by = decision.by
            if by == "person":
                last_reply = i
                cleared = cleared or open_ is not None
                open_ = None
            elif by == "rule":
                ruled = True
            elif by in {"ai", "supplied"}:
                open_ = open_ or decision
                chosen_by_ai = chosen_by_ai or by == "ai"
        if last_reply < 0 and not ruled:
            return Violation(
                "gate", "nothing on its path decided it: no plain `if`, no person's reply"
            )
        if open_ is not None:
            return Violation("decision", f"{chose(open_)}, with no person's reply since", open_)
        # Whether it rests on a person's reply at all (else a plain rule is enough).
        rests = cleared or not ruled
        unapproved: list[str] = []
        for name in placeholders(action):
            if name not in held:
                continue
            provenance = held.provenance(name)
            if provenance.plain:
                continue
            rests = True
            if not provenance.cleared_on(path):
                unapproved.append(name)
        if unapproved:
            name = min(unapproved)
            provenance = held.provenance(name)
            return Violation(
                "value",
                f"it carries {{{name}}}, which is {provenance.label}: AI output no person's "
                "reply on its path approved, to a question whose message showed it",
                value=(name, provenance),
            )
        if chosen_by_ai and last_reply >= 0:
            chosen = approvers_chosen(run.workflow, trail, self._policy)
            if chosen is not None:
                chooser, other = chosen
                return Violation(
                    "who",
                    f"{chose(chooser)}, and under it the question at {other} asks other "
                    f"people than the one at {trail[last_reply].at}: the AI chose who approves",
                    chooser,
                )
        if rests and not self._fresh(run, trail[last_reply], self._clock.now_ts()):
            return self._stale(trail[last_reply])
        return self._card(action, held, trail)

    def _card(
        self, action: model.Action, held: Held, trail: Sequence[Decision]
    ) -> Violation | None:
        """Rule 4: the question the effect stands behind showed it, as it is about to run."""
        question: Decision | None = None
        for decision in trail:
            if decision.kind == "ask_person":
                question = decision
            elif decision.kind == "ai":
                question = None  # what follows an AI decision is on no earlier card
        if question is None:
            return None
        showed = (
            question.record.result.get("showed")
            if question.record and question.record.result
            else None
        )
        listed = showed.get(question.outcome) if isinstance(showed, Mapping) else None
        if card_entry(action, _card_view(held, question)) in (listed or ()):
            return None
        return Violation(
            "card",
            f"the question at {question.at} did not show, for {question.outcome!r}, this "
            "effect as it is about to run",
            question,
        )

    def _fresh(self, run: ActiveRun, reply: Decision, now: float) -> bool:
        """Whether the reply was given (or given again) recently enough to act on."""
        result = (reply.record.result or {}) if reply.record is not None else {}
        original = self._approvals.records.get(str(result.get("approval_id")))
        if original is None:
            return False
        given = answer_given_at(self._approvals, run.run_id, reply.at, original)
        return now - given <= self._policy.answer_fresh_s

    def _stale(self, reply: Decision) -> Violation:
        return Violation(
            "fresh",
            f"the reply {reply.outcome!r} to the question at {reply.at} was given more than "
            f"{round(self._policy.answer_fresh_s)} s ago, too long ago to act on",
            reply,
        )

    # ── urgency ─────────────────────────────────────────────────────────

    def _urgent(self, level: str, trail: Sequence[Decision]) -> Violation | None:
        for i, decision in enumerate(trail):
            if decision.by != "ai" or _last_reply(trail[i + 1 :]) is not None:
                continue
            if level == "high" and decision.kind == "ai" and self._trusted(decision):
                continue
            return Violation(
                "urgency",
                f"{chose(decision)}, with no person's reply since: an AI decides at most "
                f"{AI_CAP} (high once its step has earned trust from marked runs)",
                decision,
            )
        if level == "critical" and not any(d.by in ("rule", "person") for d in trail):
            return Violation(
                "urgency", "critical wakes people, and no plain `if` or person's reply chose it"
            )
        return None

    def _trusted(self, decision: Decision) -> bool:
        key = (decision.record.result or {}).get("key") if decision.record else None
        accuracy = self._marks.accuracy_of(str(key)) if key else None
        return accuracy is not None and accuracy.trusted

    # ── refusing ────────────────────────────────────────────────────────

    def _refuse(
        self,
        run: ActiveRun,
        path: str,
        kind: str,
        summary: dict[str, Any],
        what: str,
        found: Violation,
    ) -> None:
        """Record the step refused, with what broke the rule, and stop the run."""
        reason, result = refusal(run, kind, what, found)
        self._recorder.record(
            run, path, kind, "refused", outcome="done", inputs=summary, result=result
        )
        raise Refused(path, reason)


def _last_reply(decisions: Sequence[Decision]) -> Decision | None:
    for decision in reversed(decisions):
        if decision.by == "person":
            return decision
    return None


def _card_view(held: Held, question: Decision) -> Mapping[str, Any]:
    """The values as the question's card was filled: before anyone answered, it showed
    ``{answer}`` as the outcome's own reply and could not show who answers."""
    before = held.before.get(question.at)
    if before is None:
        return held
    view = {k: v for k, v in held.items() if k not in ANSWER_NAMES}
    view.update(before)
    if question.outcome is not None and question.outcome != NO_ANSWER:
        view["answer"] = question.outcome
    return view
