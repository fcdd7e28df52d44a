"""An engine process for the outside-kill harness: a stream of events, a fake world.

Usage: ``python kill_child.py DB FOLDER TOTAL [BATCH] [PAUSE_S] [MAX_DRIVING]``.

The process runs the engine on the SQLite file ``DB`` with the porch workflow
(:func:`porch`: a notification, a short wait, an actuator, a log line) and offers
it alert ``0`` to ``TOTAL - 1``, ``BATCH`` at a time every ``PAUSE_S`` seconds,
through :meth:`Engine.dispatch`. It knows nothing of when it will be killed: the
harness sends SIGKILL from outside whenever it likes. The fake world keeps two
append-only logs in ``FOLDER``, each line written and fsynced before the process
goes on, so they say exactly what reached the world:

- ``effects.log``: ``METHOD RUN_ID:STEP_PATH`` for every effect performed (the
  actuator is ``app_action``; ``alert`` lines are the unknown-result alerts);
- ``acked.log``: ``EVENT RUN_IDS`` for every event whose dispatch returned, as a
  source that acknowledges after commit would record its acknowledgements.

Like a broker or a replaying server, the source delivers again every event it has
no acknowledgement for. Once every event is acknowledged and no run is left the
process stops the engine and exits 0. It prints ``started N`` (N runs restored),
``offered`` and ``drained`` as it passes those points, for the harness's tally.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from datetime import UTC, datetime, time
from pathlib import Path
from typing import IO

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.engine import isolated

isolated.install()

from custom_components.opennvr_workflows.engine import Engine  # noqa: E402
from custom_components.opennvr_workflows.engine.driver import MAX_DRIVING  # noqa: E402
from custom_components.opennvr_workflows.engine.events import NvrEvent  # noqa: E402
from custom_components.opennvr_workflows.engine.ports import (  # noqa: E402
    ActionRequest,
    JsonMap,
    RunContext,
)
from custom_components.opennvr_workflows.engine.testing import FakeAi, FakeEffects  # noqa: E402
from custom_components.opennvr_workflows.workflow import model as m  # noqa: E402

EFFECTS_LOG = "effects.log"
ACKED_LOG = "acked.log"
#: The porch workflow's waits, long enough that kills find runs waiting on a due row.
WAIT_S = 0.2


def porch() -> m.Workflow:
    """Notify, wait, switch the porch light on (an actuator: at most once), wait, log.

    The waits put runs in the database as waiting on either side of the actuator, so
    a kill finds some to restore before it acted and some after."""
    return m.Workflow(
        name="Porch light",
        when=m.AlertTrigger(alert_type="intrusion"),
        state="on",
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1_000_000),
        # A plain rule before the actuator: the engine refuses an ungated one at run time.
        conditions=(m.TimeCondition(time(0, 0), time(0, 0)),),
        then=(
            m.ActionStep(m.NotifyAction(roles=("owner",), message="Someone at {camera}")),
            m.ActionStep(m.WaitAction(seconds=WAIT_S)),
            m.ActionStep(m.AppAction(app="porch", action="light_on")),
            m.ActionStep(m.WaitAction(seconds=WAIT_S)),
            m.ActionStep(m.LogAction("porch lit for {camera}")),
        ),
    )


def alert(number: int) -> NvrEvent:
    """Alert ``number``: its own camera (so every alert starts its own run) and id."""
    return NvrEvent(
        kind="alert",
        source="websocket",
        time=datetime.now(UTC),
        type="intrusion",
        camera_id=f"cam-{number}",
        alert_id=f"alert-{number}",
    )


def append(out: IO[str], lines: list[str]) -> None:
    """Append ``lines`` and fsync: once this returns they survive any kill."""
    out.write("".join(f"{line}\n" for line in lines))
    out.flush()
    os.fsync(out.fileno())


class World(FakeEffects):
    """The fake effects, each one logged durably the moment it is performed; the
    actuator takes a moment, so a kill can land in the middle of it."""

    def __init__(self, log: IO[str]) -> None:
        super().__init__(after=self._performed)
        self._log = log

    def _performed(self, method: str, ctx: RunContext | None) -> None:
        append(self._log, [f"{method} {ctx.key if ctx else '-'}"])

    async def app_action(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        await asyncio.sleep(random.uniform(0.0, 0.004))
        return await super().app_action(ctx, request)


def acked(folder: Path) -> set[int]:
    path = folder / ACKED_LOG
    if not path.exists():
        return set()
    # A line cut by the kill (no newline yet) was not acknowledged.
    text = path.read_text(encoding="utf-8")
    return {int(line.split()[0]) for line in text.splitlines(keepends=True) if line.endswith("\n")}


async def run(
    db: Path,
    logs: tuple[IO[str], IO[str]],
    done: set[int],
    total: int,
    batch: int,
    pause_s: float,
    max_driving: int,
) -> int:
    effects_log, acked_log = logs
    engine = Engine(
        db, World(effects_log), FakeAi(), retention_interval_s=0, max_driving=max_driving
    )
    engine.set_workflows({"porch": porch()})
    await engine.start()
    # Progress for the harness's tally of where kills landed (the pipe is read after
    # the process is gone).
    print(f"started {len(engine.active_runs())}", flush=True)
    drained = asyncio.Event()
    engine.subscribe(lambda _: None if engine.active_runs() else drained.set())
    todo = [n for n in range(total) if n not in done]
    for start in range(0, len(todo), batch):
        numbers = todo[start : start + batch]
        results = await asyncio.gather(*(engine.dispatch(alert(n)) for n in numbers))
        lines = [f"{n} {','.join(ids) or '-'}" for n, ids in zip(numbers, results, strict=True)]
        append(acked_log, lines)
        await asyncio.sleep(pause_s)
    print("offered", flush=True)
    if engine.active_runs():
        await drained.wait()
    print("drained", flush=True)
    await engine.stop()
    return 0


def main(argv: list[str]) -> int:
    db, folder, total = Path(argv[1]), Path(argv[2]), int(argv[3])
    batch = int(argv[4]) if len(argv) > 4 else 10
    pause_s = float(argv[5]) if len(argv) > 5 else 0.02
    max_driving = int(argv[6]) if len(argv) > 6 else MAX_DRIVING
    done = acked(folder)
    with (
        open(folder / EFFECTS_LOG, "a", encoding="utf-8") as effects_log,
        open(folder / ACKED_LOG, "a", encoding="utf-8") as acked_log,
    ):
        return asyncio.run(
            run(db, (effects_log, acked_log), done, total, batch, pause_s, max_driving)
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv))
