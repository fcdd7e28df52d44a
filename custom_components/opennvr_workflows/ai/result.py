"""What an AI step returns: a decided result, or a step waiting for a person.

Both are plain-JSON serialisable (``to_json`` / ``from_json``), because the engine writes
the result to ``workflow_run_steps`` and its trace to ``workflow_tool_calls``, and persists
a suspended step's state across a restart. The decision itself is the SDK's ``Decision``,
unchanged, so a decision here means what it means in OpenNVR core; the result adds what
the SDK does not record yet (which rule fired) and how the step ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from opennvr_app_sdk.agent import UNSURE, Decision, TraceRow, Usage

RESULT_VERSION = 1


def reason_or_decision(reason: str, decision: str, unsure_reason: str | None = None) -> str:
    """The reason a person reads: the model's words, or, when it gave none, the decision in
    words (``Decided: no parcel``; ``Not sure (no rule)``). A notification with an empty
    body, or Assist saying only "At the front door:", tells nobody anything."""
    if reason.strip():
        return reason
    if decision == UNSURE:
        why = (unsure_reason or "").replace("_", " ").strip()
        return f"Not sure ({why})" if why else "Not sure"
    return f"Decided: {decision.replace('_', ' ')}"


@dataclass(frozen=True)
class AIStepResult:
    """One AI step's outcome.

    ``decision`` is the SDK's ``Decision`` (outcome, fields, reason, confidence and its
    source, the model's self-report, unsure_reason, proposed, evidence ids, the full trace
    and usage). ``rule`` is the index of the rule that fired (None without rules, or when
    none matched). ``mode`` is ``look`` or ``investigate``; ``samples`` the agreement draws
    asked for; ``hardware`` the class the step ran as."""

    decision: Decision
    mode: str
    model: str
    hardware: str
    samples: int
    rule: int | None = None
    refused_tools: tuple[str, ...] = field(default=())

    @property
    def outcome(self) -> str:
        """The path the run takes: one of the step's options, or ``unsure``."""
        return self.decision.decision

    @property
    def unsure(self) -> bool:
        return self.decision.decision == UNSURE

    @property
    def reason(self) -> str:
        """The reason as shown and sent (:func:`reason_or_decision`); the model's own words
        stay in ``decision.reason`` (empty when it gave none)."""
        d = self.decision
        return reason_or_decision(d.reason, d.decision, d.unsure_reason)

    def values(self) -> dict[str, Any]:
        """The placeholders later steps may read: ``{decision}``, ``{reason}``,
        ``{confidence}`` and each field (none on the unsure path)."""
        out: dict[str, Any] = {
            "decision": self.decision.decision,
            "reason": self.reason,
            "confidence": self.decision.confidence,
        }
        out.update(self.decision.fields)
        return out

    def as_rows(self) -> list[dict[str, Any]]:
        """The trace, one row per model call and tool call, shaped for
        ``workflow_tool_calls`` (the SDK's ``TraceRow.as_row()``, unchanged)."""
        return [row.as_row() for row in self.decision.trace]

    def step_row(self) -> dict[str, Any]:
        """The ``workflow_run_steps`` columns seed 000 lists for an AI step."""
        d = self.decision
        return {
            "outcome": d.decision,
            "fields": dict(d.fields),
            "reason": d.reason,
            "confidence": d.confidence,
            "confidence_source": d.confidence_source,
            "self_reported": d.self_reported,
            "unsure_reason": d.unsure_reason,
            "proposed": d.proposed,
            "rule": self.rule,
            "model": self.model,
            "mode": self.mode,
            "usage": asdict(d.usage),
            "evidence": list(d.evidence),
        }

    def to_json(self) -> dict[str, Any]:
        d = self.decision
        return {
            "v": RESULT_VERSION,
            "decision": {
                "decision": d.decision,
                "fields": dict(d.fields),
                "reason": d.reason,
                "confidence": d.confidence,
                "confidence_source": d.confidence_source,
                "self_reported": d.self_reported,
                "unsure_reason": d.unsure_reason,
                "proposed": d.proposed,
                "evidence": list(d.evidence),
                "trace": self.as_rows(),
                "usage": asdict(d.usage),
            },
            "mode": self.mode,
            "model": self.model,
            "hardware": self.hardware,
            "samples": self.samples,
            "rule": self.rule,
            "refused_tools": list(self.refused_tools),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AIStepResult:
        """The result :meth:`to_json` wrote. Raises ``ValueError`` naming what is wrong."""
        try:
            if data.get("v") != RESULT_VERSION:
                raise ValueError(f"unknown AI step result version {data.get('v')!r}")
            d = dict(data["decision"])
            decision = Decision(
                decision=str(d["decision"]),
                fields=dict(d.get("fields") or {}),
                reason=str(d.get("reason") or ""),
                confidence=float(d.get("confidence") or 0.0),
                confidence_source=str(d.get("confidence_source") or ""),
                self_reported=d.get("self_reported"),
                unsure_reason=d.get("unsure_reason"),
                proposed=d.get("proposed"),
                evidence=list(d.get("evidence") or []),
                trace=[TraceRow(**row) for row in d.get("trace") or []],
                usage=Usage(**(d.get("usage") or {})),
            )
            rule = data.get("rule")
            return cls(
                decision=decision,
                mode=str(data["mode"]),
                model=str(data["model"]),
                hardware=str(data["hardware"]),
                samples=int(data["samples"]),
                rule=int(rule) if rule is not None else None,
                refused_tools=tuple(data.get("refused_tools") or ()),
            )
        except (KeyError, TypeError) as err:
            raise ValueError(f"not an AI step result: {err!r}") from err


@dataclass(frozen=True)
class AISuspended:
    """An Investigate step waiting for a person to answer ``ask_person``.

    ``pending`` is the call to put to the person: ``{"id", "name", "arguments"}`` (the
    arguments as the model asked: ``question`` and, maybe, ``replies``). ``state`` is
    everything :func:`~.executor.resume_ai_step` needs, as plain JSON; persist
    :meth:`to_json` as it is and hand it back after the person answers, in this process
    or another."""

    pending: dict[str, Any]
    state: dict[str, Any]

    @property
    def question(self) -> str:
        args = self.pending.get("arguments") or {}
        return str(args.get("question") or "") if isinstance(args, dict) else ""

    @property
    def replies(self) -> tuple[str, ...]:
        args = self.pending.get("arguments") or {}
        replies = args.get("replies") if isinstance(args, dict) else None
        return tuple(str(r) for r in replies) if isinstance(replies, list) else ()

    def to_json(self) -> dict[str, Any]:
        return {"v": RESULT_VERSION, "pending": self.pending, "state": self.state}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AISuspended:
        """The suspension :meth:`to_json` wrote. Raises ``ValueError`` when it is not one."""
        if (
            data.get("v") != RESULT_VERSION
            or not isinstance(data.get("pending"), dict)
            or not isinstance(data.get("state"), dict)
        ):
            raise ValueError("not a suspended AI step")
        return cls(pending=dict(data["pending"]), state=dict(data["state"]))
