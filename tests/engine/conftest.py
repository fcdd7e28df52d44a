"""Shared fixtures for the engine tests: fakes, a manual clock, workflows."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.engine import Engine
from custom_components.opennvr_workflows.engine.testing import FakeAi, FakeEffects, ManualClock

EngineFactory = Callable[..., Engine]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def effects() -> FakeEffects:
    return FakeEffects()


@pytest.fixture
def ai() -> FakeAi:
    return FakeAi()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "workflows.db"


@pytest.fixture
def open_db(db: Path) -> Iterator[Callable[[], sqlite3.Connection]]:
    """Open connections to the engine's file for reading; all closed after the test."""
    opened: list[sqlite3.Connection] = []

    def _open() -> sqlite3.Connection:
        opened.append(sqlite3.connect(db))
        return opened[-1]

    yield _open
    for conn in opened:
        conn.close()


@pytest.fixture
async def make_engine(
    db: Path, effects: FakeEffects, ai: FakeAi, clock: ManualClock
) -> AsyncIterator[EngineFactory]:
    """Build engines on the test's database; every one is stopped at the end."""
    made: list[Engine] = []

    def factory(**kwargs: object) -> Engine:
        engine = Engine(
            kwargs.pop("path", db),  # type: ignore[arg-type]
            kwargs.pop("effects", effects),  # type: ignore[arg-type]
            kwargs.pop("ai", ai),  # type: ignore[arg-type]
            kwargs.pop("clock", clock),  # type: ignore[arg-type]
            retention_interval_s=0,
            **kwargs,  # type: ignore[arg-type]
        )
        made.append(engine)
        return engine

    yield factory
    for engine in made:
        await engine.stop(grace_s=0.1)
