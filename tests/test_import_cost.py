"""A site brings the client library of the event transport it chose, and no other.

A home on the OpenNVR websocket carries neither NATS's nor MQTT's client library (3 to 4 MB
together on a small box). The loader's path is followed in a fresh interpreter, since this
test process has everything imported already: the package (as Home Assistant imports a
component), then every module at its top (the platforms, and what Home Assistant preloads
with a component: ``config_flow``, ``diagnostics``, ``logbook``...). Then each transport's
module is loaded as a setup loads it (off the loop) and brings its library, so the first
check cannot pass by a module that is never loaded at all.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Top-level package -> the transport that alone should bring it in.
ONLY_WITH = {"nats": "nats", "paho": "mqtt"}

_SCRIPT = textwrap.dedent(
    """
    import asyncio, importlib, json, pkgutil, sys
    watched, transport = json.loads(sys.argv[1]), sys.argv[2]
    def loaded():
        return sorted(m for m in watched if any(k.partition(".")[0] == m for k in sys.modules))
    pkg = importlib.import_module("custom_components.opennvr_workflows")
    tops = [m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.ispkg]
    for name in tops:
        importlib.import_module(f"{pkg.__name__}.{name}")
    before = after = loaded()
    if transport:
        from custom_components.opennvr_workflows.nvr.sources.factory import async_load_transport
        asyncio.run(async_load_transport(transport))
        after = loaded()
    print(json.dumps({"tops": tops, "before": before, "after": after}))
    """
)


def _load(transport: str = "") -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, json.dumps(sorted(ONLY_WITH)), transport],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_loading_the_integration_brings_no_transport_library() -> None:
    seen = _load()
    # The walk reached the platforms and the modules Home Assistant preloads.
    assert {"sensor", "camera", "config_flow", "diagnostics", "ai_task"} <= set(seen["tops"])
    assert seen["before"] == [], {m: f"only the {ONLY_WITH[m]} transport" for m in seen["before"]}


@pytest.mark.parametrize(("transport", "library"), [("nats", "nats"), ("mqtt", "paho")])
def test_a_transport_brings_its_library_when_a_site_chooses_it(
    transport: str, library: str
) -> None:
    seen = _load(transport)
    assert seen["before"] == []
    assert seen["after"] == [library]
