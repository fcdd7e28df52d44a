"""A process that runs the gate workflow once and can be killed on purpose.

Usage: ``python crash_child.py DB LOG KILL``. ``KILL`` is ``none``,
``commit:N`` (die right after the N-th database commit) or
``effect:METHOD:NTH:before|after`` (die around the NTH call of an effect).
Every effect the fake performs is appended to LOG and fsynced before the
process can die, so the parent sees exactly what reached the world. The
process starts the engine, offers the trigger if no run exists yet, answers
the approval with "Let in", and exits 0 once no run is left.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.engine import isolated

isolated.install()

from custom_components.opennvr_workflows.engine import Engine  # noqa: E402
from custom_components.opennvr_workflows.engine import store as store_module  # noqa: E402
from custom_components.opennvr_workflows.engine.ports import RunContext  # noqa: E402
from custom_components.opennvr_workflows.engine.testing import (  # noqa: E402
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from tests.engine.workflows import gate  # noqa: E402

KILLED = 137


def main(db: str, log: str, kill: str) -> int:
    counts: dict[str, int] = {}
    parts = kill.split(":")

    def die() -> None:
        os._exit(KILLED)

    if parts[0] == "commit":
        target = int(parts[1])
        original = store_module.Store._run_batch
        commits = [0]

        def run_batch(self: store_module.Store, conn: object, batch: list[object]) -> None:
            original(self, conn, batch)  # type: ignore[arg-type]
            commits[0] += 1
            if commits[0] == target:
                die()

        store_module.Store._run_batch = run_batch  # type: ignore[method-assign,assignment]

    def hook(phase: str) -> object:
        def at(method: str, ctx: RunContext | None) -> None:
            if phase == "before":
                counts[method] = counts.get(method, 0) + 1
            else:  # the effect reached the world: record it before anything can die
                with open(log, "a", encoding="utf-8") as out:
                    out.write(f"{method} {ctx.key if ctx else ''}\n")
                    out.flush()
                    os.fsync(out.fileno())
            wanted = parts[0] == "effect" and parts[1] == method and parts[3] == phase
            if wanted and counts[method] == int(parts[2]):
                die()

        return at

    effects = FakeEffects(before=hook("before"), after=hook("after"))  # type: ignore[arg-type]
    return asyncio.run(_run(db, effects))


async def _run(db: str, effects: FakeEffects) -> int:
    engine = Engine(db, effects, FakeAi(), ManualClock(), retention_interval_s=0)
    engine.set_workflows({"gate": gate()})
    await engine.start()
    if not await engine.runs("gate"):
        engine.submit(event())
    for _ in range(50):
        await engine.idle()
        for approval, _seen in engine.pending_approvals():
            await engine.answer_approval(approval.approval_id, "Let in", "alice")
        await engine.idle()
        if not engine.active_runs():
            break
    await engine.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
