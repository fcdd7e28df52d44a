"""One Home Assistant ``Context`` per workflow run, and the sent-effects ledger.

Home Assistant attributes a state change to whatever fired the first event of its context:
every action a run calls carries the run's context, and the run's first effect fires an
``opennvr_workflows_run`` event with it, so the logbook and traces say "triggered by
workflow X" exactly as they do for automations.

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

from ..const import DOMAIN
from ..engine import RunContext

EVENT_RUN: Final = f"{DOMAIN}_run"
#: How long a sent key is remembered: longer than any run waits for a person.
LEDGER_DAYS: Final = 7
LEDGER_MAX: Final = 20_000
_STORE_VERSION: Final = 1


def short_key(key: str) -> str:
    """A stable, short, URL- and tag-safe form of an effect key."""
    return hashlib.blake2s(key.encode(), digest_size=10).hexdigest()


class RunContexts:
    """The Home Assistant context of each run (kept while the run is known), and back from
    a context to the run's chain, so an action a run called (or an automation a run set
    off) that starts a workflow carries the chain and stops at the depth limit."""

    def __init__(self, hass: HomeAssistant) -> None:
        self._hass = hass
        self._contexts: dict[str, Context] = {}
        self._chains: dict[str, tuple[str, ...]] = {}

    def chain_of(self, context: Context | None) -> tuple[str, ...]:
        """The chain of the run behind ``context`` or its parent; ``()`` when none."""
        if context is None:
            return ()
        for context_id in (context.id, context.parent_id):
            if context_id is not None and (chain := self._chains.get(context_id)):
                return chain
        return ()

    def of(self, ctx: RunContext) -> Context:
        context = self._contexts.get(ctx.run_id)
        if context is None:
            context = self._contexts[ctx.run_id] = Context()
            self._chains[context.id] = ctx.chain
            self._hass.bus.async_fire(
                EVENT_RUN,
                {
                    "workflow_id": ctx.workflow_id,
                    "name": ctx.workflow_name,
                    "run_id": ctx.run_id,
                    "correlation_id": ctx.correlation_id,
                },
                context=context,
            )
            if len(self._contexts) > 4096:
                dropped = self._contexts.pop(next(iter(self._contexts)))
                self._chains.pop(dropped.id, None)
        return context


class SentLedger:
    """Keys of effects already sent, durable across restarts."""

    def __init__(self, hass: HomeAssistant, entry_id: str) -> None:
        self._store: Store[dict[str, Any]] = Store(
            hass, _STORE_VERSION, f"{DOMAIN}.{entry_id}.sent"
        )
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
