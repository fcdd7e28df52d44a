"""Everything an AI step needs from its run and its site, in one object the engine builds.

The step itself (``workflow.model.AIStep``) says what to ask; the context says where to
ask it (the model, the NVR, the budget), what the run knows so far (the values its
placeholders read), and the site's standing rules (facts, lists, tool policy, the default
confidence floor, the hardware class). Nothing here is Home Assistant's: the host fills it
from its config entry.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Literal

from opennvr_app_sdk.agent import LLMClient

from .images import DEFAULT_IMAGE_SIZE
from .ports import AIBudget, NvrReadPort

type Hardware = Literal["gpu", "cpu"]

#: The RFC's example floor, used when neither the step nor the site sets one.
DEFAULT_FLOOR = 0.75
#: Agreement draws per decision by hardware class (seed 000): three where a call is
#: cheap, one plus the evidence check where each extra call costs about 9 s.
SAMPLES: Mapping[str, int] = MappingProxyType({"gpu": 3, "cpu": 1})
DEFAULT_FRAMES = 3


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class SiteRules:
    """The site's standing rules (the RFC's Site rules page).

    ``facts``: a few sentences every Investigate step is told (capped at ~300 words).
    ``lists``: named lists ``site_lookup`` reads (expected visitors, staff hours, ...).
    ``tool_policy``: the admin's mode per tool (auto, ask, unavailable); unset tools keep
    the RFC defaults. ``floor``: the confidence floor for steps that set no ``sure``."""

    facts: str = ""
    lists: Mapping[str, tuple[str, ...]] = field(default_factory=_empty)
    tool_policy: Mapping[str, str] = field(default_factory=_empty)
    floor: float = DEFAULT_FLOOR


@dataclass(frozen=True)
class AIStepContext:
    """One AI step's run-time surroundings.

    ``values`` are the run's placeholder values (the trigger's and earlier steps'); they go
    to the model as data only. ``camera`` is the run's current camera role (the trigger's
    or a for-each item). ``step_tool_modes`` lets a step tighten the site's tool modes.
    ``recent_decisions`` is the camera memory an Investigate step with ``memory: camera``
    reads. ``clock``, ``now`` and ``sleep`` are injectable so tests need no real waiting."""

    llm: LLMClient
    nvr: NvrReadPort
    budget: AIBudget
    hardware: Hardware = "cpu"
    site: SiteRules = field(default_factory=SiteRules)
    values: Mapping[str, Any] = field(default_factory=_empty)
    camera: str | None = None
    model_name: str = "llm"
    image_size: int = DEFAULT_IMAGE_SIZE
    step_tool_modes: Mapping[str, str] = field(default_factory=_empty)
    recent_decisions: tuple[str, ...] = ()
    frame_interval_s: float = 1.0
    clock: Callable[[], float] = time.monotonic
    now: Callable[[], datetime] = _utcnow
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    @property
    def samples(self) -> int:
        """Agreement draws per decision on this hardware class."""
        return SAMPLES.get(self.hardware, 1)
