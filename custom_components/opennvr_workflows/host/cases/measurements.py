"""What measuring a model per workflow leaves behind, and what reads it.

The latest measurement of each model (:class:`...evaluation.per_workflow.Measurement`) is
kept in Home Assistant's storage (``.storage/opennvr_workflows.<entry>.measured``), not in
the options: saving options reloads the entry, and a measurement is a result, not a
setting. Two things read it for the model the site runs on (the vision model):

* each workflow's *Accuracy* sensor shows the measured lower bound when there is one
  (:func:`measured_signal` tells it a new one is stored);
* with *Require a measured bound* on, a workflow with an Investigate step goes On only
  when its own measured bound reaches the gate's 0.80 (:func:`check_turn_on`).
"""

from __future__ import annotations

from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers.dispatcher import async_dispatcher_send
from homeassistant.helpers.storage import Store

from ...const import DOMAIN
from ...evaluation.gate import GATE_THRESHOLD
from ...evaluation.per_workflow import Measurement, WorkflowFigures, under_test
from ...workflow import Workflow
from ..errors import invalid

_VERSION: Final = 1


def measured_key(entry_id: str) -> str:
    """The storage key of the entry's measurements (the removal deletes it)."""
    return f"{DOMAIN}.{entry_id}.measured"


def measured_signal(entry_id: str) -> str:
    """The dispatcher signal sent when a measurement of the entry is stored."""
    return f"{DOMAIN}_measured_{entry_id}"


class Measurements:
    """The latest measurement per model of one entry."""

    def __init__(self, hass: HomeAssistant, entry_id: str) -> None:
        self._hass = hass
        self._entry_id = entry_id
        self._store: Store[dict[str, Any]] = Store(hass, _VERSION, measured_key(entry_id))
        self.by_model: dict[str, Measurement] = {}

    async def async_load(self) -> None:
        data = await self._store.async_load() or {}
        for raw in data.get("models", []):
            measured = Measurement.from_json(raw)
            if measured is not None:
                self.by_model[measured.model] = measured

    async def async_save(self, measured: Measurement) -> None:
        """Keep ``measured`` as its model's latest (written now: an options save that
        reloads the entry follows at once)."""
        self.by_model[measured.model] = measured
        await self._store.async_save({"models": [m.as_json() for m in self.by_model.values()]})
        async_dispatcher_send(self._hass, measured_signal(self._entry_id))

    def figures(self, workflow_id: str, model: str) -> WorkflowFigures | None:
        """The workflow's measured figures on ``model``; None when it was not measured
        there or none of its cases ran."""
        measured = self.by_model.get(model)
        found = measured.workflows.get(workflow_id) if measured is not None else None
        return found if found is not None and found.rows > 0 else None


def check_turn_on(
    measurements: Measurements | None,
    require: bool,
    model: str,
    workflow_id: str,
    workflow: Workflow | None,
    state: str,
) -> None:
    """Refuse turning a workflow with an Investigate step On without its own measured
    bound (when the homeowner requires one); raises the translated error."""
    if not require or state != "on" or workflow is None:
        return
    if not under_test(workflow_id, workflow).investigates:
        return
    found = measurements.figures(workflow_id, model) if measurements is not None else None
    if found is None or not found.passed:
        raise invalid(
            "measure_first",
            workflow=workflow.name,
            low=f"{found.wilson_low:.2f}" if found is not None else "-",
            threshold=f"{GATE_THRESHOLD:.2f}",
        )


def measured_attributes(figures: WorkflowFigures | None) -> dict[str, Any]:
    """What the *Accuracy* sensor adds: where its figure comes from and, when measured,
    of how many cases, on which model, when."""
    if figures is None:
        return {"source": "marked"}
    return {
        "source": "measured",
        "measured_right": figures.right,
        "measured_cases": figures.rows,
        "measured_model": figures.model,
    }
