"""The logbook line a limit leaves when it holds a workflow's event back.

A workflow whose run is still going (one at a time), whose cooldown has not ended, or
whose runs of the hour are spent starts nothing for an event, and that is right; but a
person who sees parcels arrive and nothing run must be able to read why, and until when.
The engine says each hold once (a ``held_back`` update, :class:`~...engine.HeldBack`);
this writes it to the logbook on the workflow's entity, in Home Assistant's language.

The line is written under a context that carries the held event's chain and AI mark
(:mod:`.lineage`): an automation that answers logbook lines by starting the workflow
again starts it one link deeper, so such a loop ends at the depth limit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.util import dt as dt_util

from ...const import DOMAIN
from ...engine import EngineUpdate
from ..texts import Texts
from .lineage import ContextLineage

#: The limits a hold names, each with its text (``held_back_<limit>``).
LIMITS: Final = frozenset({"one_at_a_time", "cooldown", "per_hour", "chain_depth"})


class HeldLog:
    """Writes each hold the engine says to the logbook (an engine update listener)."""

    def __init__(
        self,
        hass: HomeAssistant,
        texts: Texts,
        workflow_entity: Callable[[str], str | None],
        workflow_name: Callable[[str], str | None],
        lineage: ContextLineage,
    ) -> None:
        self._hass = hass
        self._lineage = lineage
        self._texts = texts
        self._workflow_entity = workflow_entity
        self._workflow_name = workflow_name

    @callback
    def __call__(self, update: EngineUpdate) -> None:
        if update.kind != "held_back" or not update.detail:
            return
        workflow_id = update.workflow_id
        data: dict[str, Any] = {
            "name": self._workflow_name(workflow_id) or workflow_id,
            "message": held_text(self._texts, update.detail),
            "domain": DOMAIN,
        }
        if entity_id := self._workflow_entity(workflow_id):
            data["entity_id"] = entity_id
        context = Context()
        chain = update.detail.get("chain") or ()
        self._lineage.run(
            context.id, tuple(str(c) for c in chain), bool(update.detail.get("ai_derived"))
        )
        self._hass.bus.async_fire("logbook_entry", data, context=context)


def held_text(texts: Callable[[str, Mapping[str, Any]], str], held: Mapping[str, Any]) -> str:
    """What a hold says: which limit, until when (a run going says which run), and
    whether it is the Test runs' limit."""
    limit = str(held.get("limit"))
    until = held.get("until")
    name = limit if limit in LIMITS else "limit"
    if limit == "one_at_a_time" and until is None:
        name = "one_at_a_time_open"
    text = texts(
        f"held_back_{name}",
        {
            "limit": limit,
            "until": local_time(until) if isinstance(until, int | float) else "",
            "run_id": held.get("run_id") or "",
        },
    )
    return texts("held_in_test", {"text": text}) if held.get("test") else text


def local_time(at: float) -> str:
    """A time in Home Assistant's zone: the hour and minute, with the date when it is
    not today."""
    local = dt_util.as_local(datetime.fromtimestamp(at, UTC))
    if local.date() == dt_util.now().date():
        return local.strftime("%H:%M")
    return local.strftime("%Y-%m-%d %H:%M")
