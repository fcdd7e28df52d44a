"""Shared test setup.

pytest-homeassistant-custom-component ships its own ``custom_components`` package in its
testing config. Importing ours first makes Home Assistant find this integration instead of
reporting "Integration not found" (see README, "Development").
"""

from collections.abc import Generator
from pathlib import Path

import pytest

import custom_components.opennvr_workflows  # noqa: F401  (import order matters, see above)
from tests.fakes.brokers import Mosquitto, NatsServer, running


@pytest.fixture
def nats_server(socket_enabled: None, tmp_path: Path) -> Generator[NatsServer]:
    """A real, anonymous nats-server on a free loopback port."""
    with running(NatsServer(tmp_path)) as broker:
        assert isinstance(broker, NatsServer)
        yield broker


@pytest.fixture
def mosquitto(socket_enabled: None, tmp_path: Path) -> Generator[Mosquitto]:
    """A real, anonymous mosquitto on a free loopback port."""
    with running(Mosquitto(tmp_path)) as broker:
        assert isinstance(broker, Mosquitto)
        yield broker
