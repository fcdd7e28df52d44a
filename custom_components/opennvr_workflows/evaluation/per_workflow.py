"""A model measured per workflow: the shipped cases of each workflow's AI steps and the
home's own cases, each run once, reported workflow by workflow.

The gate's one figure (the shipped Look suite) says how a model does on drawings; a
homeowner trusts a workflow, so the figure that matters is the workflow's: its AI steps on
the cases that ask their question. A shipped case belongs to a workflow when its step is
one of the workflow's AI steps exactly (same content hash: a template's step, unedited),
variants included; a home case (``origin:``) belongs to the workflow it was marked on. The
shipped Look suite also runs whole, for the gate. Each case runs once per model, however
many workflows share it. No Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..ai import Hardware, OllamaLLMClient
from ..engine.versions import step_hash
from ..workflow import Workflow, ai_steps
from ..workflow.model import InvestigateSpec
from .case_model import StepCase
from .gate import GATE_THRESHOLD, GateResult, gate_result, score_cases
from .metrics import summarize
from .scoring import Row

__all__ = [
    "FailedCase",
    "Measurement",
    "Plan",
    "WorkflowFigures",
    "WorkflowUnderTest",
    "case_key",
    "measure_plan",
    "plan",
    "under_test",
]


@dataclass(frozen=True)
class WorkflowUnderTest:
    """A workflow as measuring sees it: its AI steps' content hashes, and whether one of
    them investigates (the gate's per-workflow bound is for those)."""

    workflow_id: str
    name: str
    hashes: frozenset[str]
    investigates: bool


def under_test(workflow_id: str, workflow: Workflow) -> WorkflowUnderTest:
    steps = [step for _, step in ai_steps(workflow)]
    return WorkflowUnderTest(
        workflow_id=workflow_id,
        name=workflow.name,
        hashes=frozenset(step_hash(s) for s in steps),
        investigates=any(isinstance(s.spec, InvestigateSpec) for s in steps),
    )


def case_key(case: StepCase) -> str:
    """A case's key in a measurement: a home case's id is ``home:`` prefixed, so a shipped
    case can never stand for one of the home's."""
    return f"home:{case.id}" if case.origin is not None else case.id


@dataclass(frozen=True)
class Plan:
    """What one measurement runs: ``cases``, each once; ``gate`` the keys of the shipped
    Look suite (the gate's figure); ``by_workflow`` the keys of each workflow's cases."""

    cases: tuple[StepCase, ...]
    gate: frozenset[str]
    by_workflow: Mapping[str, tuple[str, ...]]
    names: Mapping[str, str]


def plan(
    workflows: Iterable[WorkflowUnderTest],
    shipped: Sequence[StepCase],
    home: Sequence[StepCase],
    *,
    gate_suite: bool = True,
) -> Plan:
    """The cases to run for ``workflows`` (see the module); with ``gate_suite`` every
    shipped Look case runs too, for the gate."""
    wanted: dict[str, StepCase] = {}
    if gate_suite:
        wanted.update((case_key(c), c) for c in shipped if c.suite == "look")
    by_workflow: dict[str, tuple[str, ...]] = {}
    names: dict[str, str] = {}
    hashes = {id(c): step_hash(c.step) for c in shipped}
    for w in workflows:
        mine = [c for c in shipped if hashes[id(c)] in w.hashes]
        mine += [c for c in home if c.origin is not None and c.origin.workflow == w.workflow_id]
        by_workflow[w.workflow_id] = tuple(case_key(c) for c in mine)
        names[w.workflow_id] = w.name
        wanted.update((case_key(c), c) for c in mine)
    gate = (
        frozenset(case_key(c) for c in shipped if c.suite == "look") if gate_suite else frozenset()
    )
    return Plan(tuple(wanted.values()), gate, by_workflow, names)


@dataclass(frozen=True)
class FailedCase:
    """A case the model did not pass: what it decided and why, what was expected, the
    checks that failed, and the picture files it looked at (names in the pictures folder
    of the shipped cases, or of the home's when ``home``)."""

    case_id: str
    home: bool
    about: str
    decision: str
    expected: tuple[str, ...]
    reason: str
    failures: tuple[str, ...] = ()
    pictures: tuple[str, ...] = ()
    variant: str | None = None


@dataclass(frozen=True)
class WorkflowFigures:
    """One workflow on one model: right decisions of ``rows`` cases with the 95 % Wilson
    interval, the unsure rate, p50/p95 seconds per case, how many cases were the home's,
    and the cases that failed."""

    workflow_id: str
    name: str
    model: str
    rows: int
    right: int
    wilson_low: float
    wilson_high: float
    unsure_rate: float | None
    p50_s: float | None
    p95_s: float | None
    home_rows: int
    failed: tuple[FailedCase, ...] = ()

    @property
    def accuracy(self) -> float | None:
        return self.right / self.rows if self.rows else None

    @property
    def passed(self) -> bool:
        """The lower bound reaches the gate's threshold (and something was measured)."""
        return self.rows > 0 and self.wilson_low >= GATE_THRESHOLD

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["accuracy"] = self.accuracy
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> WorkflowFigures:
        data = {k: v for k, v in raw.items() if k != "accuracy"}
        failed = tuple(
            FailedCase(
                **{
                    **f,
                    "expected": tuple(f.get("expected") or ()),
                    "failures": tuple(f.get("failures") or ()),
                    "pictures": tuple(f.get("pictures") or ()),
                }
            )
            for f in raw.get("failed") or ()
        )
        return cls(**{**data, "failed": failed})


@dataclass(frozen=True)
class Measurement:
    """A model measured: the gate's figure (the shipped Look suite; None when it did not
    run) and each workflow's figures, with when."""

    model: str
    date: str
    gate: GateResult | None = None
    workflows: Mapping[str, WorkflowFigures] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "date": self.date,
            "gate": self.gate.as_option() if self.gate else None,
            "workflows": {k: v.as_json() for k, v in self.workflows.items()},
        }

    @classmethod
    def from_json(cls, raw: Any) -> Measurement | None:
        """A stored measurement, or None when it cannot be read (then it counts as none)."""
        if not isinstance(raw, Mapping):
            return None
        try:
            return cls(
                model=str(raw["model"]),
                date=str(raw["date"]),
                gate=GateResult.from_option(raw.get("gate")),
                workflows={
                    str(k): WorkflowFigures.from_json(v)
                    for k, v in (raw.get("workflows") or {}).items()
                },
            )
        except (KeyError, TypeError, ValueError):
            return None


def _failed(case: StepCase, row: Row) -> FailedCase:
    return FailedCase(
        case_id=case.id,
        home=case.origin is not None,
        about=case.about,
        decision=row.decision,
        expected=tuple(row.expected),
        reason=row.reason,
        failures=tuple(f"{c.name}: {c.detail}" for c in row.failures),
        pictures=tuple(p.path.name for pics in case.pictures.values() for p in pics),
        variant=case.variant_kind,
    )


def figures(
    workflow_id: str,
    name: str,
    model: str,
    cases: Sequence[StepCase],
    rows: Mapping[str, Row],
) -> WorkflowFigures:
    """The figures of one workflow's ``cases`` from the measurement's ``rows``."""
    mine = [(c, rows[case_key(c)]) for c in cases if case_key(c) in rows]
    metrics = summarize("workflow", model, [row for _, row in mine])
    return WorkflowFigures(
        workflow_id=workflow_id,
        name=name,
        model=model,
        rows=metrics.rows,
        right=metrics.right,
        wilson_low=metrics.wilson_low,
        wilson_high=metrics.wilson_high,
        unsure_rate=metrics.unsure_rate,
        p50_s=metrics.p50_s,
        p95_s=metrics.p95_s,
        home_rows=sum(1 for c, _ in mine if c.origin is not None),
        failed=tuple(_failed(c, row) for c, row in mine if row.status in ("FAIL", "XFAIL")),
    )


async def measure_plan(
    measured: Plan,
    llm: OllamaLLMClient,
    model: str,
    hardware: Hardware,
    on_row: Callable[[int, int], None] | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Measurement:
    """Run the plan's cases on ``model`` (each once) and report the gate and every
    workflow; ``on_row(done, total)`` after each case."""
    rows = await score_cases(measured.cases, llm, model, hardware, on_row)
    by_key = {case_key(c): row for c, row in zip(measured.cases, rows, strict=True)}
    cases = {case_key(c): c for c in measured.cases}
    gate_rows = [by_key[k] for k in by_key if k in measured.gate]
    return Measurement(
        model=model,
        date=now().isoformat(timespec="seconds"),
        gate=gate_result(model, gate_rows, now) if measured.gate else None,
        workflows={
            wid: figures(
                wid, measured.names[wid], model, [cases[k] for k in keys if k in cases], by_key
            )
            for wid, keys in measured.by_workflow.items()
        },
    )
