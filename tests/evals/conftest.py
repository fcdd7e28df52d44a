"""Fixtures for the eval harness's tests: a cases folder written per test, on loopback."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _loopback(socket_enabled: None) -> None:
    """The harness talks to the Ollama fake and its own relay on 127.0.0.1 only."""


@pytest.fixture
def cases_root(tmp_path: Path) -> Path:
    root = tmp_path / "cases"
    for suite in ("look", "investigate", "draft"):
        (root / suite).mkdir(parents=True)
    return root


@pytest.fixture
def write_case(cases_root: Path) -> Callable[[str, str, str], Path]:
    """``write_case(suite, name, yaml_text)``: a case file under the test's cases folder."""

    def write(suite: str, name: str, text: str) -> Path:
        path = cases_root / suite / f"{name}.yaml"
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write
