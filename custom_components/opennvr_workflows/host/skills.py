"""The skill registry: what this site and this host can really do.

Handed to the validator, so a workflow that needs something the site lacks is refused at
import with the skill's name (the RFC's decision: a missing skill is a validation error,
not a runtime failure).
"""

from __future__ import annotations

from collections.abc import Iterable

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
    out.update(apps)
    return frozenset(out)
