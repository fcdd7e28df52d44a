"""One Home Assistant ``Context`` per workflow run, and the sent-effects ledger.

Home Assistant attributes a state change to whatever fired the first event of its context:
every action a run calls carries the run's context, and the run's first effect fires an
``opennvr_workflows_run`` event with it, so the logbook and traces say "triggered by
workflow X" exactly as they do for automations. The event says whether the run resumed
(it waited before this effect, or Home Assistant restarted while it waited), so the
logbook does not read "started run" for a run that only went on.

The ledger remembers which effects (by ``RunContext.key``: one step of one run) were sent,
in a small Home Assistant ``Store``, so a step the engine re-sends after a restart does not
notify twice. Notifications also carry the key as their ``tag`` / notification id, so even
a send that happened just before a crash, before the ledger was written, replaces itself
on the phone instead of showing twice.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Final

from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers.storage import Store

from ...const import DOMAIN
from ...engine import RunContext
from .lineage import context_lineage

EVENT_RUN: Final = f"{DOMAIN}_run"
#: How long a sent key is remembered: longer than any run waits for a person.
LEDGER_DAYS: Final = 7
LEDGER_MAX: Final = 20_000
_STORE_VERSION: Final = 1


def ledger_key(entry_id: str) -> str:
    """The storage key of an entry's sent ledger (the removal deletes it)."""
    return f"{DOMAIN}.{entry_id}.sent"


def short_key(key: str) -> str:
    """A stable, short, URL- and tag-safe form of an effect key."""
    return hashlib.blake2s(key.encode(), digest_size=10).hexdigest()


class RunContexts:
    """The Home Assistant context of each run (kept while the run is known), told to the
    instance's :class:`~.lineage.ContextLineage`: a context that descends from a run's (an
    action a run called, an automation it set off, a helper it set and the automation on
    that) carries the run's chain, so a workflow it starts stops at the depth limit, and
    the AI mark when what the run emitted carried AI output."""

    def __init__(self, hass: HomeAssistant) -> None:
        self._hass = hass
        self._contexts: dict[str, Context] = {}
        self.lineage = context_lineage(hass)

    def of(self, ctx: RunContext) -> Context:
        """The run's context; marked from the first effect that carries AI output on."""
        context = self._contexts.get(ctx.run_id)
        if context is None:
            context = self._contexts[ctx.run_id] = Context()
            self.lineage.run(context.id, ctx.chain, ctx.ai_derived)
            self._hass.bus.async_fire(
                EVENT_RUN,
                {
                    "workflow_id": ctx.workflow_id,
                    "name": ctx.workflow_name,
                    "run_id": ctx.run_id,
                    "correlation_id": ctx.correlation_id,
                    # A run that waited acts again (after a wait, an answer, a restart):
                    # the logbook says it resumed, not that it started.
                    "resumed": ctx.resumed,
                },
                context=context,
            )
            if len(self._contexts) > 4096:
                self._contexts.pop(next(iter(self._contexts)))
        elif ctx.ai_derived:
            self.lineage.mark(context.id)
        return context

    def find(self, run_id: str | None) -> Context | None:
        """The context a run acted under, if it acted since Home Assistant started."""
        return self._contexts.get(run_id) if run_id else None

    def for_output(self, run_id: str | None, ai_derived: bool) -> Context | None:
        """The context to write something a run produced under (an entity's state, an
        event): the run's own; for AI output without one, a new marked context; None for
        plain output of a run that never acted (Home Assistant makes its own)."""
        context = self.find(run_id)
        if context is None and ai_derived:
            context = Context()
        if context is not None and ai_derived:
            self.lineage.mark(context.id)
        return context


class SentLedger:
    """Keys of effects already sent, durable across restarts."""

    def __init__(self, hass: HomeAssistant, entry_id: str) -> None:
        self._store: Store[dict[str, Any]] = Store(hass, _STORE_VERSION, ledger_key(entry_id))
        self._sent: dict[str, float] = {}

    async def async_load(self) -> None:
        data = await self._store.async_load() or {}
        sent = data.get("sent")
        if isinstance(sent, dict):
            cutoff = time.time() - LEDGER_DAYS * 86400
            self._sent = {
                str(k): float(v)
                for k, v in sent.items()
                if isinstance(v, int | float) and v > cutoff
            }

    def seen(self, key: str) -> bool:
        return key in self._sent

    def add(self, key: str) -> None:
        self._sent[key] = time.time()
        while len(self._sent) > LEDGER_MAX:
            self._sent.pop(next(iter(self._sent)))
        self._store.async_delay_save(self._data, 1.0)

    async def async_flush(self) -> None:
        await self._store.async_save(self._data())

    def _data(self) -> dict[str, Any]:
        return {"sent": dict(self._sent)}
