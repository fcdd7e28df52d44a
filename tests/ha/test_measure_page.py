"""The options' *Measure the model* page says what is stored for the model in a sentence,
and, when nothing is, what to do: never a row of empty figures ("- of - right, interval -
to -")."""

from __future__ import annotations

import json
from pathlib import Path

from custom_components.opennvr_workflows.const import CONF_MODEL_GATE, CONF_VISION_MODEL
from custom_components.opennvr_workflows.evaluation.gate import GateResult
from custom_components.opennvr_workflows.flows.model_gate import gate_placeholders

STRINGS = Path(__file__).parents[2] / "custom_components" / "opennvr_workflows" / "strings.json"
MODEL = "qwen2.5vl:3b"
MEASURED = GateResult(
    model=MODEL, wilson_low=0.81, wilson_high=0.99, right=16, rows=16, date="2026-11-30"
)


def page(settings: dict[str, object]) -> str:
    """The page's text as Home Assistant fills it in."""
    text = json.loads(STRINGS.read_text(encoding="utf-8"))["options"]["step"]["evaluate"]
    return str(text["description"]).format(**gate_placeholders(settings))


def test_a_model_never_measured_is_told_what_to_do() -> None:
    shown = page({CONF_VISION_MODEL: MODEL})
    assert " - " not in shown
    assert "- of -" not in shown
    assert f"{MODEL} has not been measured yet: turn on Measure the model now" in shown


def test_a_measurement_of_another_model_is_not_shown_as_this_ones() -> None:
    other = {**MEASURED.as_option(), "model": "llava:7b"}
    shown = page({CONF_VISION_MODEL: MODEL, CONF_MODEL_GATE: other})
    assert "has not been measured yet" in shown
    assert "16 of 16" not in shown


def test_a_stored_measurement_is_said_in_a_sentence() -> None:
    shown = page({CONF_VISION_MODEL: MODEL, CONF_MODEL_GATE: MEASURED.as_option()})
    assert (
        f"Stored for {MODEL}: 16 of 16 right, interval 0.81 to 0.99, measured 2026-11-30." in shown
    )
    assert "not been measured" not in shown
