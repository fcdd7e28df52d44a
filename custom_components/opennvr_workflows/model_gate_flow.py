"""The options' evaluation gate: run the look suite on the chosen model, off the event loop.

The options flow's model page offers to measure the vision model on the shipped look cases
(:mod:`.evaluation.gate`); the flow shows Home Assistant's progress bar while
:func:`async_measure` runs, then stores the :class:`~.evaluation.gate.GateResult`. The run
happens in a worker thread with its own event loop: the case files and pictures are disk
reads and the scoring is CPU, none of which belongs on Home Assistant's loop; each finished
case moves the bar from that thread through the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.util.ssl import get_default_context

from .ai import Hardware, OllamaLLMClient, OllamaSettings
from .const import (
    CONF_HARDWARE,
    CONF_MODEL_GATE,
    CONF_OLLAMA_URL,
    CONF_VISION_MODEL,
    DEFAULT_OLLAMA_URL,
    HARDWARE_GPU,
)
from .evaluation.gate import GATE_THRESHOLD, GateResult, look_cases, measure_look

#: The models page's follow-up field: measure the model now.
CONF_RUN_EVALUATION: Final = "run_evaluation"
#: Seconds one model call of the evaluation may take (a small CPU model on pictures).
EVALUATION_TIMEOUT_S: Final = 180.0


def gate_placeholders(settings: Mapping[str, Any]) -> dict[str, str]:
    """The figures the evaluation pages show: the model to measure, and the stored
    result (``-`` when none is stored or it was measured on another model)."""
    model = str(settings.get(CONF_VISION_MODEL) or "")
    gate = GateResult.from_option(settings.get(CONF_MODEL_GATE))
    same = gate is not None and gate.model == model
    return {
        "model": model or "-",
        "threshold": f"{GATE_THRESHOLD:.2f}",
        "right": str(gate.right) if gate and same else "-",
        "rows": str(gate.rows) if gate and same else "-",
        "low": f"{gate.wilson_low:.2f}" if gate and same else "-",
        "high": f"{gate.wilson_high:.2f}" if gate and same else "-",
        "date": gate.date if gate and same else "-",
    }


async def async_measure(
    hass: HomeAssistant, settings: Mapping[str, Any], progress: Callable[[float], None]
) -> GateResult:
    """Measure ``settings``' vision model on the look suite; ``progress(0..1)`` after
    each case, called on the event loop."""
    url = str(settings.get(CONF_OLLAMA_URL) or DEFAULT_OLLAMA_URL)
    model = str(settings[CONF_VISION_MODEL])
    hardware: Hardware = "gpu" if settings.get(CONF_HARDWARE) == HARDWARE_GPU else "cpu"
    ssl_context = get_default_context()
    loop = hass.loop

    def on_row(done: int, total: int) -> None:
        loop.call_soon_threadsafe(progress, done / total if total else 1.0)

    async def run() -> GateResult:
        llm = OllamaLLMClient(
            OllamaSettings(
                host=url,
                model=model,
                timeout_seconds=EVALUATION_TIMEOUT_S,
                ssl_context=ssl_context,
            )
        )
        try:
            return await measure_look(look_cases(), llm, model, hardware, on_row)
        finally:
            await llm.aclose()

    return await hass.async_add_executor_job(asyncio.run, run())
