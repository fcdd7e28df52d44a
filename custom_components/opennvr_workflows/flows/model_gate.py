"""Measuring the model from Home Assistant: the options' gate, and each workflow.

The options flow's model page offers to measure the vision model (*Measure the model
now*), and so does the ``measure_model`` action: the shipped look cases run for the gate
(:mod:`..evaluation.gate`), and each workflow's AI steps on their shipped cases and the
home's own (:mod:`..evaluation.per_workflow`). The flow shows Home Assistant's progress bar
while :func:`async_measure` runs, then stores the :class:`~..evaluation.gate.GateResult` in
the options and the per-workflow figures beside them (:mod:`..host.cases.measurements`). The run
happens in a worker thread with its own event loop: the case files and pictures are disk
reads and the scoring is CPU, none of which belongs on Home Assistant's loop; each finished
case moves the bar from that thread through the loop. The home's pictures go only to a
server on the local network, or one an admin allowed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.util.ssl import get_default_context

from ..ai import Hardware, OllamaLLMClient, OllamaSettings
from ..const import (
    CONF_HARDWARE,
    CONF_MODEL_GATE,
    CONF_OLLAMA_ANYWHERE,
    CONF_OLLAMA_URL,
    CONF_VISION_MODEL,
    DEFAULT_OLLAMA_URL,
    HARDWARE_GPU,
)
from ..evaluation.case_model import StepCase
from ..evaluation.gate import GATE_THRESHOLD, GateResult, shipped_cases
from ..evaluation.per_workflow import Measurement, WorkflowUnderTest, measure_plan, plan, under_test
from ..local_network import async_is_local

if TYPE_CHECKING:
    from ..coordinator import OpenNVRConfigEntry

#: The models page's follow-up field: measure the model now.
CONF_RUN_EVALUATION: Final = "run_evaluation"
#: Seconds one model call of the evaluation may take (a small CPU model on pictures).
EVALUATION_TIMEOUT_S: Final = 180.0


def gate_placeholders(settings: Mapping[str, Any]) -> dict[str, str]:
    """The figures the evaluation pages show: the model to measure, and the stored
    result (``-`` when none is stored or it was measured on another model); ``stored``
    says that result in a sentence, or, when there is none, what to do instead of a row of
    empty figures."""
    model = str(settings.get(CONF_VISION_MODEL) or "")
    gate = GateResult.from_option(settings.get(CONF_MODEL_GATE))
    same = gate is not None and gate.model == model
    if gate is not None and same:
        stored = (
            f"Stored for {model}: {gate.right} of {gate.rows} right, interval "
            f"{gate.wilson_low:.2f} to {gate.wilson_high:.2f}, measured {gate.date}."
        )
    else:
        stored = (
            f"{model or 'The model'} has not been measured yet: turn on Measure the model "
            "now and submit to measure it, or leave it off to save the model settings "
            "without Investigate steps and Describe it."
        )
    return {
        "stored": stored,
        "model": model or "-",
        "threshold": f"{GATE_THRESHOLD:.2f}",
        "right": str(gate.right) if gate and same else "-",
        "rows": str(gate.rows) if gate and same else "-",
        "low": f"{gate.wilson_low:.2f}" if gate and same else "-",
        "high": f"{gate.wilson_high:.2f}" if gate and same else "-",
        "date": gate.date if gate and same else "-",
    }


def workflow_lines(measured: Measurement | None) -> str:
    """Each measured workflow in a line for the result page: right of cases, the
    interval, the unsure rate, p50/p95 seconds and how many cases failed."""
    if measured is None or not any(f.rows for f in measured.workflows.values()):
        return "No workflow has cases of its own yet."
    lines = []
    for figures in sorted(measured.workflows.values(), key=lambda f: f.name):
        if not figures.rows:
            continue
        unsure = f"{figures.unsure_rate:.0%}" if figures.unsure_rate is not None else "-"
        lines.append(
            f"{figures.name}: {figures.right} of {figures.rows} right "
            f"({figures.wilson_low:.2f} to {figures.wilson_high:.2f}), unsure {unsure}, "
            f"{_seconds(figures.p50_s)} / {_seconds(figures.p95_s)} s, "
            f"{len(figures.failed)} failed"
        )
    return "\n\n".join(lines)


def _seconds(value: float | None) -> str:
    return f"{value:.1f}" if value is not None else "-"


@dataclass(frozen=True)
class MeasureInputs:
    """What a measurement runs besides the shipped Look suite: the entry's workflows,
    the home's own cases, and how many of those were left out because the server is
    outside the local network and no admin allowed sending there (their pictures stay
    home)."""

    workflows: tuple[WorkflowUnderTest, ...] = ()
    home: tuple[StepCase, ...] = ()
    home_left_out: int = 0


async def async_measure_inputs(
    entry: OpenNVRConfigEntry, url: str, anywhere: bool
) -> MeasureInputs:
    """The entry's workflows and own cases (none while the entry is not loaded)."""
    if entry.state is not ConfigEntryState.LOADED:
        return MeasureInputs()
    host, evaluation = entry.runtime_data.workflows, entry.runtime_data.evaluation
    workflows = tuple(
        under_test(workflow_id, loaded.workflow)
        for workflow_id, loaded in (host.files if host is not None else {}).items()
        if loaded.workflow is not None
    )
    home = tuple(k.case for k in await evaluation.cases.async_cases()) if evaluation else ()
    if home and not (anywhere or await async_is_local(url)):
        return MeasureInputs(workflows, (), len(home))
    return MeasureInputs(workflows, home)


async def async_measure_model(
    hass: HomeAssistant,
    *,
    url: str,
    model: str,
    hardware: Hardware,
    inputs: MeasureInputs,
    progress: Callable[[float], None] | None = None,
) -> Measurement:
    """Measure ``model``: the shipped Look suite (the gate), and each workflow on its
    shipped and own cases (:mod:`..evaluation.per_workflow`); ``progress(0..1)`` after
    each case, called on the event loop."""
    ssl_context = get_default_context()
    loop = hass.loop

    def on_row(done: int, total: int) -> None:
        if progress is not None:
            loop.call_soon_threadsafe(progress, done / total if total else 1.0)

    async def run() -> Measurement:
        shipped = [*shipped_cases("look"), *shipped_cases("investigate")]
        measured = plan(inputs.workflows, shipped, inputs.home)
        llm = OllamaLLMClient(
            OllamaSettings(
                host=url,
                model=model,
                timeout_seconds=EVALUATION_TIMEOUT_S,
                ssl_context=ssl_context,
            )
        )
        try:
            return await measure_plan(measured, llm, model, hardware, on_row)
        finally:
            await llm.aclose()

    return await hass.async_add_executor_job(asyncio.run, run())


async def async_measure(
    hass: HomeAssistant,
    settings: Mapping[str, Any],
    progress: Callable[[float], None],
    entry: OpenNVRConfigEntry | None = None,
) -> Measurement:
    """Measure ``settings``' vision model on the look suite, and the entry's workflows
    on their cases; ``progress(0..1)`` after each case, called on the event loop."""
    url = str(settings.get(CONF_OLLAMA_URL) or DEFAULT_OLLAMA_URL)
    inputs = (
        await async_measure_inputs(entry, url, bool(settings.get(CONF_OLLAMA_ANYWHERE)))
        if entry is not None
        else MeasureInputs()
    )
    return await async_measure_model(
        hass,
        url=url,
        model=str(settings[CONF_VISION_MODEL]),
        hardware="gpu" if settings.get(CONF_HARDWARE) == HARDWARE_GPU else "cpu",
        inputs=inputs,
        progress=progress,
    )
