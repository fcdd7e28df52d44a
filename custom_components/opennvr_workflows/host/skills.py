"""The skill registry: what this site and this host can really do.

Handed to the validator, so a workflow that needs something the site lacks is refused at
import with the skill's name (the RFC's decision: a missing skill is a validation error,
not a runtime failure). ``investigate_model`` is granted by the evaluation gate, not by a
setting: see :func:`gate_open`.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..workflow.vocabulary import INVESTIGATE_MODEL_SKILL
from .settings import HostSettings


def site_skills(
    settings: HostSettings, scopes: frozenset[str] | None, apps: Iterable[str] = ()
) -> frozenset[str]:
    """The skills (and OpenNVR apps) workflows on this entry may name in ``needs``."""
    out = {"detector", "plate_recognition"}
    if scopes is None or "recordings.view" in scopes:
        out.add("semantic_search")
    if settings.ai_enabled and (settings.vision_model or settings.text_model):
        out.add("language_model")
    if settings.ai_enabled and settings.vision_model:
        out.add("vision_model")
    if gate_open(settings):
        out.add(INVESTIGATE_MODEL_SKILL)
    out.update(apps)
    return frozenset(out)


def gate_open(settings: HostSettings) -> bool:
    """Whether the evaluation gate is open: AI on, and the stored look-suite result is the
    vision model's (the model the suite measures) with its Wilson lower bound at 0.80 or
    above. Investigate steps and Describe it wait for it."""
    gate = settings.model_gate
    return settings.ai_enabled and gate is not None and gate.opens_for(settings.vision_model)
