"""The AI mark at the integration's edges with Home Assistant: what a start by name
carries in, and what an event written out carries.

A workflow run that AI output started moves nothing without a person's reply in it, and
its alerts and notifications stay at the AI cap (:mod:`...engine.taint`,
:mod:`...engine.actions`). Inside the engine the mark travels with the event; once a run's
output is in Home Assistant (a bus event, an entity's state, a notification), automations
carry it on, and only Home Assistant's context lineage (:mod:`.lineage`) says where it
went. Every door that starts a workflow by name (the run_workflow action, the Run now
button, a message) asks :func:`start_mark`, and every entity that shows a run's output
asks :func:`event_mark` (or :meth:`.context.RunContexts.for_output`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from homeassistant.core import Context

from ...engine import NvrEvent
from ..permissions import moving_steps

if TYPE_CHECKING:
    from ..workflows import WorkflowHost


@dataclass(frozen=True, slots=True)
class StartMark:
    """What a start by name carries in: the runs that led to it, and the AI mark with how
    it was found (``NvrEvent.ai_origin``)."""

    chain: tuple[str, ...] = ()
    ai_derived: bool = False
    ai_origin: str | None = None


def start_mark(
    host: WorkflowHost, workflow_id: str, context: Context | None, also: Iterable[str] = ()
) -> StartMark:
    """How a start of ``workflow_id`` under ``context`` is marked.

    AI-derived when the context descends from AI output (an automation set off by a run's
    AI-derived effect, through scripts and helpers; the caller of a look), or from a run
    that emitted AI output. When an automation or script whose start nothing records (a
    time trigger) starts a workflow that moves things, the run is treated as AI-derived
    too, unless an admin marked the workflow as started only by trusted triggers.
    ``also``: context ids the caller says it descends from (can add the mark only)."""
    if context is None:
        return StartMark()
    origin = host.effects.contexts.lineage.origin(context, also)
    if origin.ai or host.engine.ai_runs.any_of(origin.chain):
        return StartMark(origin.chain, True, "lineage")
    if (
        not origin.traced
        and workflow_id not in host.settings.trusted_starts
        and moves_things_here(host, workflow_id)
    ):
        return StartMark(origin.chain, True, "untraced")
    return StartMark(origin.chain)


def moves_things_here(host: WorkflowHost, workflow_id: str) -> bool:
    """Whether the workflow moves things on this site: an actuator of the contract, or a
    step this host's judgement finds moving (the import preview's ``moves_things``)."""
    loaded = host.files.get(workflow_id)
    workflow = loaded.workflow if loaded is not None else None
    return workflow is not None and bool(moving_steps(workflow, host.step_judge()))


def event_mark(host: WorkflowHost | None, event: NvrEvent) -> tuple[bool, Context | None]:
    """Whether ``event`` carries AI output (its own mark, or a run that emitted AI output
    raised it), and the context to write it into Home Assistant under: the run's that
    raised it, a new marked one for AI output of no known run, or None (Home Assistant
    makes its own)."""
    if host is None:
        return event.ai_derived, None
    derived = host.engine.ai_runs.event_is_derived(event)
    run_id = event.correlation_id.rsplit("/", 1)[-1] if event.correlation_id else None
    return derived, host.effects.contexts.for_output(run_id, derived)
