"""The run state machine: walk a workflow's steps, recording each one.

A run is executed by replay. :meth:`Runner.execute` walks the workflow from the
top every time it is called (a new run, a person's answer, a due wait, a
restart); a step that already has a settled record is not run again, its
recorded outcome picks the path. Only the first unsettled step does work. So
resuming needs no program counter, and a run's history is exactly its rows.

Order of writes, which is what the restart guarantees rest on:

* a step's record is queued before its work and its result after; before any
  effect on the world the queue is flushed, so the database never lags what
  was done (a repeatable effect's "running" record stays in memory: a restart
  that finds no row for it sends it again, as it would after "running");
* an action that moves things (or POSTs a webhook) writes an *intent* first.
  A replay that finds an intent without a result cannot know whether the act
  happened, so it marks the step ``unknown`` and raises an alert, and never
  acts again (RFC section 8, point 5). Other effects (a notification, a log
  line, an alert) are sent again with the same idempotency key;
* an Ask a person step stores its approval and timeout before delivering the
  question, then the run ends its task as ``waiting``; the answer, the
  timeout or a restart resumes it.

This module is the path walk; each kind of step has its executor module
(:mod:`.conditions`, :mod:`.actions`, :mod:`.asking`, :mod:`.ai_step`,
:mod:`.for_each`), and every record goes through :mod:`.recorder`. The values a path
holds travel with their provenance (:class:`.provenance.Held`): the walk says where the
trigger's values, an AI step's and an answer's come from, and which values a person's
reply approved, so the run-time monitor (:mod:`.monitor`) can judge an effect on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..workflow import model
from ..workflow.checks.taint import condition_reads
from ..workflow.template import placeholders_in
from ..workflow.vocabulary import COMMON_PLACEHOLDERS
from .actions import ActionSteps
from .ai_step import AiSteps
from .asking import Asking
from .conditions import Conditions
from .for_each import ForEachSteps
from .ports import Clock
from .provenance import (
    AI_TRIGGER,
    ANSWER_NAMES,
    SUPPLIED,
    WORLD,
    Approval,
    Held,
    Source,
    made_by,
)
from .records import ActiveRun
from .steps import Declined, Lineage, ProviderLost, trigger_values
from .taint import AI_STEP_NAMES, ai_names


class Runner:
    """Executes runs: walks the steps and hands each to its kind's executor."""

    def __init__(
        self,
        clock: Clock,
        conditions: Conditions,
        actions: ActionSteps,
        asking: Asking,
        ai: AiSteps,
        for_each: ForEachSteps,
    ) -> None:
        self._clock = clock
        self._conditions = conditions
        self._actions = actions
        self._asking = asking
        self._ai = ai
        self._for_each = for_each

    async def execute(self, run: ActiveRun) -> None:
        """Advance ``run`` as far as it can go. Raises :class:`~.steps.Waiting`
        or :class:`~.steps.ProviderLost`; returns when the run is complete."""
        wf = run.workflow
        if run.ai_names is None:
            run.ai_names = ai_names(wf)
        values = trigger_held(run, trigger_values(wf, run.event))
        ok = True
        if wf.conditions:
            ok = await self._conditions.gate(run, "if", wf.conditions, values)
        # ``try`` rather than ``with suppress(...)``: a suspended run would keep the
        # context manager alive, one more object per run in flight for the collector.
        if ok:
            try:  # noqa: SIM105 (see above)
                await self._walk(run, wf.then, "then", values, trigger_lineage(run, values))
            except Declined:  # a person declined, asked again: the path ends there
                pass
            # ``always`` has its own scope, the trigger's values only, as the validator
            # checks it: whatever path ``then`` took (an AI step that redefined
            # {reason}, a collect), none of it reaches ``always``.
            if wf.always:
                fresh = trigger_held(run, trigger_values(wf, run.event))
                try:  # noqa: SIM105 (see above)
                    await self._walk(run, wf.always, "always", fresh, trigger_lineage(run, fresh))
                except Declined:
                    pass
        run.status = "done"

    async def _walk(
        self,
        run: ActiveRun,
        steps: Sequence[model.Step],
        prefix: str,
        values: Held,
        lineage: Lineage,
    ) -> None:
        # By index: ``enumerate`` keeps an iterator and its result tuple alive while the
        # run waits at a step, objects the garbage collector walks for every run in flight.
        for i in range(len(steps)):
            step = steps[i]
            path = f"{prefix}.{i}"
            outcome, branch = await self._step(run, step, path, values, lineage)
            paths: Mapping[str, tuple[model.Step, ...]] | None = getattr(step, "paths", None)
            if paths is not None and outcome is not None and outcome in paths:
                await self._walk(run, paths[outcome], f"{path}.{outcome}", values, branch)
            elif isinstance(step, model.ForEachStep):
                lineage = branch  # what it collected holds for the steps after it

    async def _step(
        self,
        run: ActiveRun,
        step: model.Step,
        path: str,
        values: Held,
        lineage: Lineage,
    ) -> tuple[str | None, Lineage]:
        if run.first_step_at is None:
            run.first_step_at = self._clock.monotonic()
        match step:
            case model.ActionStep(action=action):
                await self._actions.run(run, action, path, values, lineage)
                return "done", lineage
            case model.IfStep(conditions=conditions):
                ok = await self._conditions.gate(run, path, conditions, values)
                reads = frozenset().union(*(condition_reads(c) for c in conditions))
                return ("true" if ok else "false"), lineage.by_rule(reads, path)
            case model.AIStep():
                # Everything the step defines is its output: AI output.
                with values.written_by(made_by(Source("ai", path))):
                    outcome, decider = await self._ai.run(run, step, path, values)
                return outcome, lineage.by_ai(decider, path, ai_defines(step, outcome))
            case model.AskPersonStep():
                before = {name: values[name] for name in ANSWER_NAMES if name in values}
                with values.written_by(made_by(Source("answer", path))):
                    outcome = await self._asking.ask(run, step, path, values, lineage)
                shown = frozenset(placeholders_in(step.message)[0])
                values.before[path] = before
                if _replied(run, path):
                    values.approve(shown, Approval(path, outcome))
                return outcome, lineage.by_person(path, _replied(run, path), shown)
            case model.ForEachStep():
                after = await self._for_each.run(run, step, path, values, lineage, self._walk)
                return "done", after
            case model.CallStep():
                raise ProviderLost(path, "call steps are not available in this integration yet")
        raise ProviderLost(path, f"unknown step {type(step).__name__}")


def trigger_held(run: ActiveRun, values: dict[str, Any]) -> Held:
    """The trigger's values with where they came from: the world's event, or, in a run AI
    output started, AI output, or, in a run a person started by name with values of their
    own, that person's."""
    base = AI_TRIGGER if run.ai_derived else SUPPLIED if run.supplied_by is not None else WORLD
    return Held.of_trigger(values, base)


def trigger_lineage(run: ActiveRun, values: Mapping[str, Any]) -> Lineage:
    """Where every path starts: in a run an AI-derived event started, every value the
    trigger defines is AI output (as the validator taints a trigger that may match one)."""
    if not run.ai_derived:
        return Lineage()
    return Lineage(tainted=frozenset(values) - COMMON_PLACEHOLDERS)


def ai_defines(step: model.AIStep, outcome: str) -> frozenset[str]:
    """What an AI step defines on the path of ``outcome`` (its fields, except on
    ``unsure``), all of it AI output."""
    names = set(AI_STEP_NAMES)
    if step.reason_as:
        names.add(step.reason_as)
    if outcome != "unsure":
        names |= set(step.fields)
    return frozenset(names)


def _replied(run: ActiveRun, path: str) -> bool:
    """Whether a person's reply chose the outcome: answered, and not the default (as the
    question's record says, see :mod:`.trail`)."""
    rec = run.steps.get(path)
    return rec is not None and (rec.result or {}).get("by") == "person"
