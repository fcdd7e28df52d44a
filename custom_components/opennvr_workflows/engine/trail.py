"""The decisions on the path a step stands on, read back from the run's trace.

A run's path is chosen by decisions: the start (an event of the world, one that carries AI
output, or a person's own values given by name), the workflow's ``if``, each ``if`` step, an
AI step's decision, a question's outcome (a person's reply, or nobody's: a default taken, no
answer), and a ``for_each`` whose steps ran for an item. Each is recorded before the steps
it chose run, with the provenance of what it read (``by`` in its record: :data:`BY`), and a
step's path names every one of them as a prefix (``then.0.yes.1.true.0`` stands on the
decisions at ``then.0`` and ``then.0.yes.1``). So the monitor reads the decisions on a step's
path from the records, on a first run and on a replay alike, and a trace says what every
verdict rests on.

A record that does not say what decided it (``by`` missing) counts as the least it can be:
an AI's choice for an ``if`` or a loop, nobody's reply for a question. The monitor fails
closed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, NamedTuple

from ..workflow import model
from .records import ActiveRun, StepRecord

__all__ = ["BY", "Decision", "decisions_on", "step_at"]

By = Literal["world", "rule", "ai", "supplied", "person", "nobody"]

#: What decided a branch: ``world`` (the world's event, a site list, the file's own cameras),
#: ``rule`` (an ``if`` that read no AI output), ``ai`` (an AI step, an ``if`` on AI output,
#: a loop over events, a run AI output started), ``supplied`` (a run started by name with a
#: person's own values), ``person`` (a person's reply, not the default), ``nobody`` (a
#: default taken, no answer).
BY: Final[frozenset[str]] = frozenset({"world", "rule", "ai", "supplied", "person", "nobody"})

#: What a record of each kind may say decided it, and the least it can be: what it counts
#: as when it says nothing, or something its kind cannot be (another kind counts as an AI's).
_MAY_BE: Final[dict[str, tuple[By, frozenset[str]]]] = {
    "if": ("ai", frozenset({"ai", "rule"})),
    "for_each": ("ai", frozenset({"ai", "world"})),
    "ask_person": ("nobody", frozenset({"nobody", "person"})),
    "ai": ("ai", frozenset({"ai"})),
}
_AI: Final[tuple[By, frozenset[str]]] = ("ai", frozenset({"ai"}))


class Decision(NamedTuple):
    """One decision on a step's path: where (``at``: a step path, or ``trigger``), what
    kind of step, what decided it, and its record (None for the start). A tuple: the
    monitor reads a few of these before every effect that matters."""

    at: str
    kind: str
    by: By
    record: StepRecord | None = None

    @property
    def outcome(self) -> str | None:
        return self.record.outcome if self.record is not None else None


_STARTS: Final[dict[By, Decision]] = {
    "world": Decision("trigger", "start", "world"),
    "ai": Decision("trigger", "start", "ai"),
    "supplied": Decision("trigger", "start", "supplied"),
}


def start_of(run: ActiveRun) -> Decision:
    """What started the run: AI output (the event carries it), a person's own values (a
    start by name by someone who is not an admin), or the world."""
    return _STARTS[
        "ai" if run.ai_derived else "supplied" if run.supplied_by is not None else "world"
    ]


def decisions_on(run: ActiveRun, path: str) -> list[Decision]:
    """Every decision on the path of the step at ``path``, in the order it was taken:
    the start, the workflow's ``if``, then each step whose branch the path runs through."""
    out = [start_of(run)]
    steps = run.steps
    gate = steps.get("if")
    if gate is not None:
        out.append(_decision(gate))
    size = len(path)
    above = [
        rec
        for at, rec in steps.items()
        if len(at) < size and path[len(at)] == "." and path.startswith(at)
    ]
    if len(above) > 1:
        above.sort(key=lambda rec: rec.seq)
    out.extend(_decision(rec) for rec in above)
    return out


def _decision(rec: StepRecord) -> Decision:
    least, may_be = _MAY_BE.get(rec.kind, _AI)
    said = rec.result.get("by") if rec.result else None
    return Decision(rec.path, rec.kind, said if said in may_be else least, rec)


def step_at(workflow: model.Workflow, path: str) -> model.Step | None:
    """The step of ``workflow`` a run's step path names (``then.0.Let in.1``, and a loop's
    item ``then.1.3.0``), read against the file so an outcome may hold a dot; None when the
    path names no step of it."""
    head, _, rest = path.partition(".")
    steps: tuple[model.Step, ...] | None = (
        workflow.then if head == "then" else workflow.always if head == "always" else None
    )
    while steps is not None and rest:
        index, _, rest = rest.partition(".")
        if not index.isdigit() or int(index) >= len(steps):
            return None
        step = steps[int(index)]
        if not rest:
            return step
        if isinstance(step, model.ForEachStep):
            _, _, rest = rest.partition(".")  # the item's index
            steps = step.steps
            continue
        paths: Mapping[str, tuple[model.Step, ...]] = getattr(step, "paths", {})
        outcome = max((k for k in paths if rest.startswith(f"{k}.")), key=len, default=None)
        if outcome is None:
            return None
        rest = rest[len(outcome) + 1 :]
        steps = paths[outcome]
    return None
