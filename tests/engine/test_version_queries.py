"""The versions the engine recorded of a workflow, and one version read back whole
(what a rollback chooses from and writes back)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from custom_components.opennvr_workflows.engine import UnknownVersionError
from custom_components.opennvr_workflows.engine.testing import ManualClock, event
from custom_components.opennvr_workflows.workflow import model as m

from . import workflows as W
from .conftest import EngineFactory


async def test_versions_are_listed_newest_first_with_their_runs(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    first = W.simple()
    second = replace(first, then=(m.ActionStep(m.LogAction("second on {camera}")),))
    engine = make_engine()
    engine.set_workflows({"s": first})
    await engine.start()
    v1 = engine.workflow_status("s").version
    engine.submit(event())
    await engine.idle()
    await clock.advance(60)
    engine.set_workflows({"s": second})
    v2 = engine.workflow_status("s").version
    # Turning it off is not a new version.
    engine.set_workflow_state("s", "off")
    engine.set_workflows({"s": replace(second, state="off")})
    await engine.idle()
    t0 = clock.now().timestamp()
    assert await engine.versions("s") == [
        {"version": v2, "created_at": t0, "runs": 0},
        {"version": v1, "created_at": t0 - 60, "runs": 1},
    ]
    assert await engine.versions("other") == []


async def test_a_version_reads_back_as_the_workflow_it_was(make_engine: EngineFactory) -> None:
    first = W.gate()
    engine = make_engine()
    engine.set_workflows({"g": first})
    await engine.start()
    v1 = engine.workflow_status("g").version
    engine.set_workflows({"g": W.simple()})
    await engine.idle()
    old = await engine.version_workflow("g", v1)
    # The version is stored without its state (turning on or off is not a version).
    assert old == replace(first, state="test")
    with pytest.raises(UnknownVersionError, match="0000"):
        await engine.version_workflow("g", "0000")
    with pytest.raises(UnknownVersionError):
        await engine.version_workflow("other", v1)
