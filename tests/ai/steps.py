"""Workflow AI steps shared by the tests and by the fresh-process resume worker."""

from __future__ import annotations

from typing import Any

from custom_components.opennvr_workflows.workflow.model import AIStep, InvestigateSpec, Rule

TOOLS = ("describe_camera", "recent_events", "site_lookup", "ask_person")


def investigate(**overrides: Any) -> AIStep:
    """Night intrusion triage, seed 000's worked example with a rule table."""
    spec: dict[str, Any] = {
        "goal": "Decide whether the person at {camera} is a threat (plate {plate}).",
        "tools": TOOLS,
        "instructions": "Guards on patrol are not intruders.",
    }
    spec.update(overrides.pop("spec", {}))
    base: dict[str, Any] = {
        "spec": InvestigateSpec(**spec),
        "decision": ("ignore", "watch", "alert"),
        "fields": {"who": ("staff", "contractor", "intruder", "unknown")},
        "rules": (
            Rule({"who": ("intruder",)}, "alert"),
            Rule({"who": ("staff", "contractor")}, "ignore"),
            Rule({}, "watch"),
        ),
        "sure": 0.75,
    }
    base.update(overrides)
    return AIStep(**base)
