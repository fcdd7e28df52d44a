"""Is the configured model usable? A light periodic check behind the "model unreachable" repair.

An AI step that finds the model down answers ``unsure`` (reason ``llm_down``) and the run
goes on, which is right for the run but tells the homeowner nothing. So while AI is
enabled in the options, this watch asks Ollama for its model list (one small request, with
Home Assistant's shared SSL context, so no certificates load on the event loop) every few
minutes, and at once when a step reports ``llm_down``. When the server does not answer, or
answers without a configured model, the repair issue is raised; the first answer with the
models clears it. With AI off nothing is checked and no issue stays up.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.event import async_track_time_interval
from homeassistant.util import dt as dt_util
from homeassistant.util.ssl import get_default_context

from ...ai import list_models
from ...engine import AiContext, AiResult, AiSuspended
from ...engine.ports import AiPort
from ...local_network import async_is_local
from .. import issues
from ..settings import HostSettings
from .latency import LookLatency

_LOGGER = logging.getLogger(__name__)

CHECK_INTERVAL: Final = timedelta(minutes=5)
CHECK_TIMEOUT_S: Final = 10.0
#: A burst of steps reporting ``llm_down`` causes one check, not one each.
MIN_GAP_S: Final = 30.0


@dataclass(frozen=True, slots=True)
class ModelHealth:
    """What the last check found. ``reachable`` is None before the first check and while
    AI is off; ``missing`` names configured models the server has not pulled."""

    reachable: bool | None = None
    models: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    checked_at: datetime | None = None
    detail: str = ""

    @property
    def usable(self) -> bool | None:
        """Answers and has every configured model (None: not known)."""
        if self.reachable is None:
            return None
        return self.reachable and not self.missing


class ModelWatch:
    """Checks one entry's Ollama and keeps its repair issue true."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry_id: str,
        settings: Callable[[], HostSettings],
        *,
        interval: timedelta = CHECK_INTERVAL,
    ) -> None:
        self._hass = hass
        self._entry_id = entry_id
        self._settings = settings
        self._interval = interval
        self._listeners: list[Callable[[], None]] = []
        self._health = ModelHealth()
        #: How long the Looks of the last hour took (the model device's latency sensor).
        self.looks = LookLatency()
        self._task: asyncio.Task[ModelHealth] | None = None
        self._unsub_timer: Callable[[], None] | None = None
        self._last_check = -MIN_GAP_S
        #: Whether the server's address is on the local network (None: not checked yet).
        self.local: bool | None = None

    @property
    def health(self) -> ModelHealth:
        """What the last check found."""
        return self._health

    @health.setter
    def health(self, value: ModelHealth) -> None:
        self._health = value
        for listener in list(self._listeners):
            listener()

    @callback
    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` after every check (the model device's entities follow the
        same watch as the repair); returns the function that stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    @property
    def sends_allowed(self) -> bool:
        """Whether pictures and texts may go to the server in the options: it is on the
        local network, or an admin allowed one outside it."""
        return self._settings().ollama_anywhere or self.local is True

    async def async_check_locality(self) -> bool:
        """Look up where the server is; raise or clear the "outside the network" repair.
        Returns :attr:`sends_allowed`."""
        settings = self._settings()
        issue_id = issues.not_local_id(self._entry_id)
        was = self.sends_allowed if self.local is not None else None
        self.local = await async_is_local(settings.ollama_url)
        if self.sends_allowed or not settings.ai_enabled:
            issues.clear(self._hass, issue_id)
            return self.sends_allowed
        issues.raise_not_local(self._hass, self._entry_id, settings.ollama_url)
        if was is not False:
            _LOGGER.warning(
                "The AI server %s is not on the local network: no picture or text is sent "
                "to it until an admin allows that in the options",
                settings.ollama_url,
            )
        return self.sends_allowed

    def observe(self, port: AiPort) -> AiPort:
        """``port`` as the engine should use it: every ``llm_down`` it answers asks for a
        check now, and every Look step's time is kept (:attr:`looks`)."""
        return _ObservedAiPort(port, self._on_result)

    async def async_start(self) -> None:
        """Check now (in the background: setup does not wait on a slow server), then on
        every interval."""
        self._unsub_timer = async_track_time_interval(
            self._hass,
            self._tick,
            self._interval,
            name=f"opennvr_workflows model check {self._entry_id}",
            cancel_on_shutdown=True,
        )
        self.check_soon()

    async def async_stop(self) -> None:
        if self._unsub_timer is not None:
            self._unsub_timer()
            self._unsub_timer = None
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def async_settled(self) -> ModelHealth:
        """The health once the check in flight (if any) has ended."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        return self.health

    @callback
    def check_soon(self) -> None:
        """Start a check unless one is running or one ended a moment ago."""
        if self._task is not None and not self._task.done():
            return
        if time.monotonic() - self._last_check < MIN_GAP_S:
            return
        self._task = self._hass.async_create_background_task(
            self.async_check(), f"opennvr_workflows model check {self._entry_id}"
        )

    async def async_check(self) -> ModelHealth:
        """Ask the server for its models; raise or clear the repair issue."""
        settings = self._settings()
        issue_id = issues.model_down_id(self._entry_id)
        if not settings.ai_enabled:
            self.health = ModelHealth()
            issues.clear(self._hass, issue_id)
            issues.clear(self._hass, issues.not_local_id(self._entry_id))
            return self.health
        if not await self.async_check_locality():
            # Not even the model list is asked of a server nobody allowed.
            self.health = ModelHealth()
            issues.clear(self._hass, issue_id)
            return self.health
        url = settings.ollama_url
        try:
            models = await list_models(
                url, timeout_seconds=CHECK_TIMEOUT_S, ssl_context=get_default_context()
            )
            detail = "it does not answer a request for its model list"
        except ValueError as err:  # the URL itself is wrong (a port out of range)
            models, detail = None, f"the address is not usable: {err}"
        self._last_check = time.monotonic()
        was = self.health.usable
        now = dt_util.utcnow()
        if models is None:
            self.health = ModelHealth(False, checked_at=now, detail=detail)
        else:
            missing = tuple(
                m
                for m in (settings.vision_model, settings.text_model)
                if m and not _pulled(m, models)
            )
            detail = (
                f"it has not pulled {', '.join(missing)} (run 'ollama pull' on that server)"
                if missing
                else ""
            )
            self.health = ModelHealth(True, models, missing, now, detail)
        if self.health.usable:
            issues.clear(self._hass, issue_id)
            if was is False:
                _LOGGER.info("The AI model at %s answers again", url)
        else:
            issues.raise_model_down(self._hass, self._entry_id, url, detail)
            if was is not False:
                _LOGGER.warning(
                    "The AI model at %s cannot be used: %s; AI steps answer unsure until then",
                    url,
                    detail,
                )
        return self.health

    @callback
    def _tick(self, _now: datetime) -> None:
        if self._settings().ai_enabled:
            self._last_check = -MIN_GAP_S
            self.check_soon()

    def _on_result(self, step: Any, out: AiResult | AiSuspended, seconds: float) -> None:
        if isinstance(out, AiResult) and getattr(step, "mode", None) == "look":
            self.looks.add(seconds, out.unsure_reason)
        down = isinstance(out, AiResult) and out.unsure_reason == "llm_down"
        if down and self._settings().ai_enabled:
            self.check_soon()


class _ObservedAiPort:
    """An AI port that hands every answer to ``on_result`` before the engine sees it."""

    def __init__(
        self, inner: AiPort, on_result: Callable[[Any, AiResult | AiSuspended, float], None]
    ):
        self._inner = inner
        self._on_result = on_result

    async def run(self, step: Any, ctx: AiContext) -> AiResult | AiSuspended:
        started = time.monotonic()
        out = await self._inner.run(step, ctx)
        self._on_result(step, out, time.monotonic() - started)
        return out

    async def resume(
        self, step: Any, state: Mapping[str, Any], answer: str, ctx: AiContext
    ) -> AiResult | AiSuspended:
        started = time.monotonic()
        out = await self._inner.resume(step, state, answer, ctx)
        self._on_result(step, out, time.monotonic() - started)
        return out


def _pulled(model: str, models: tuple[str, ...]) -> bool:
    """``llava`` means ``llava:latest``, as Ollama reads it."""
    return model in models or (":" not in model and f"{model}:latest" in models)
