"""AI provenance at run time: which effects carry an AI's output, and which runs it started.

"AI informs and recommends; people and plain rules move things" (RFC section 7). The
validator keeps the promise inside one file; this module keeps it across workflows, where
only the running engine can see it:

* an effect is **AI-derived** when it stands on a path an AI step chose (no person's
  answer since), when its text or data reads a value an AI step defined, or when its run
  is AI-derived. An alert raised so carries ``ai_derived`` back into the event hub, and
  the run that raised it is remembered by its correlation id;
* a run is **AI-derived** when its trigger event is (``NvrEvent.ai_derived``, or an alert
  of an app the site lists as running a model itself), or when
  any run in the event's chain (or the run named by its correlation id) emitted
  AI-derived effects or was AI-derived itself. That is how the mark survives a round
  trip the host does not label: an alert re-read from OpenNVR, a run started with
  ``run_workflow`` from an action a run called (whose context carries the chain);
* in an AI-derived run every trigger field is AI output, so an action that moves
  things needs a person's reply in that run: it must stand on a reply path of an Ask a
  person step that a person answered, with no AI decision since. Otherwise the engine
  refuses it, traced, and the workflow needs attention.

The rule is decided per event: an alert trigger without an app or alert-type filter
matches both the world's alerts and the ones workflows raise, and only the latter make
its run AI-derived.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from ..workflow import model
from ..workflow.template import placeholders_in
from .events import NvrEvent
from .per_object import PerObject
from .policy import SafetyPolicy

#: Correlation ids of runs remembered as AI-derived; older ones are forgotten first.
REMEMBERED: Final = 16_384

#: What every AI step defines, whatever its fields (see :func:`.ai_step.ai_values`).
AI_STEP_NAMES: Final = frozenset({"decision", "reason", "confidence"})


class AiRuns:
    """The correlation ids of runs whose effects carried AI output (bounded, oldest out),
    and the site's apps whose alerts are AI output (``policy.model_apps``)."""

    def __init__(self, limit: int = REMEMBERED, policy: SafetyPolicy | None = None) -> None:
        self._limit = limit
        self._ids: dict[str, None] = {}
        self.policy = policy or SafetyPolicy()

    def add(self, correlation_id: str) -> None:
        if correlation_id in self._ids:
            return
        self._ids[correlation_id] = None
        while len(self._ids) > self._limit:
            self._ids.pop(next(iter(self._ids)))

    def __contains__(self, correlation_id: object) -> bool:
        return correlation_id in self._ids

    def any_of(self, correlation_ids: Iterable[str | None]) -> bool:
        return any(cid is not None and cid in self._ids for cid in correlation_ids)

    def event_is_derived(self, event: NvrEvent) -> bool:
        """Whether a run started by ``event`` reads AI output as its trigger: an alert
        of an app that runs a model is one, like an alert a workflow raised from an AI
        decision."""
        return (
            event.ai_derived
            or (event.kind == "alert" and event.app in self.policy.model_apps)
            or self.any_of(event.chain)
            or (event.correlation_id is not None and event.correlation_id in self._ids)
        )


def ai_names(workflow: model.Workflow) -> frozenset[str]:
    """Every placeholder an AI step of ``workflow`` defines, and every ``collect`` that
    gathers an AI step's reasons. A value under one of these names is AI output (the
    validator refuses a name that shadows a trigger's or an earlier step's). Worked
    out once per workflow."""
    return _ai_names(workflow)


def _find_ai_names(workflow: model.Workflow) -> frozenset[str]:
    names: set[str] = set()
    for step, inside_ai in _steps(workflow.then + workflow.always):
        if isinstance(step, model.AIStep):
            names |= AI_STEP_NAMES | set(step.fields)
            if step.reason_as:
                names.add(step.reason_as)
        elif isinstance(step, model.ForEachStep) and step.collect and inside_ai:
            names.add(step.collect)
    return frozenset(names)


def _steps(steps: Iterable[model.Step]) -> Iterator[tuple[model.Step, bool]]:
    """Each step with, for a For each step, whether an AI step runs in its body."""
    for step in steps:
        if isinstance(step, model.ForEachStep):
            inner = list(_steps(step.steps))
            yield step, any(isinstance(s, model.AIStep) for s, _ in inner)
            yield from inner
            continue
        yield step, False
        paths: Mapping[str, tuple[model.Step, ...]] | None = getattr(step, "paths", None)
        if paths is not None:
            for branch in paths.values():
                yield from _steps(branch)


_ai_names: Final = PerObject(_find_ai_names)


def placeholders(value: Any) -> frozenset[str]:
    """The ``{names}`` an action's text and data read (its fields, recursively), worked
    out once per action."""
    return _placeholders(value)


def _find_placeholders(value: Any) -> frozenset[str]:
    found: set[str] = set()
    _collect(value, found)
    return frozenset(found)


_placeholders: Final = PerObject(_find_placeholders)


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        found.update(placeholders_in(value)[0])
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _collect(k, found)
            _collect(v, found)
    elif isinstance(value, tuple | list | frozenset | set):
        for v in value:
            _collect(v, found)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _collect(getattr(value, f.name), found)
