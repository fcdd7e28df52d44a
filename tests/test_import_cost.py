"""A site brings the client library of the event transport it chose, and no other, and the
AI brings no model library at all.

A home on the OpenNVR websocket carries neither NATS's nor MQTT's client library (3 to 4 MB
together on a small box). The AI speaks Ollama's HTTP API over aiohttp, which Home
Assistant has loaded already, so no home carries ``ollama`` or the ``pydantic`` it brings
(about 9.5 MB). The loader's path is followed in a fresh interpreter, since this test
process has everything imported already: the package (as Home Assistant imports a
component), then every module at its top (the platforms, and what Home Assistant preloads
with a component: ``config_flow``, ``diagnostics``, ``logbook``...). Then each transport's
module is loaded as a setup loads it (off the loop) and brings its library, so the first
check cannot pass by a module that is never loaded at all; and every module of the AI's
packages (the model client, its checks and embeddings, the model's port and actions, the
history search, the evaluations, the flows) is loaded, and brings nothing.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.fresh_python import run_fresh

#: Top-level package -> what alone should bring it in (a transport's name), or None: nothing.
ONLY_WITH = {"nats": "nats", "paho": "mqtt", "ollama": None, "pydantic": None}
#: The packages whose every module the AI's check loads.
AI_PACKAGES = ("ai", "evaluation", "flows", "host.model", "host.history", "host.cases")

_SCRIPT = textwrap.dedent(
    """
    import asyncio, importlib, json, pkgutil, sys
    watched, feature = json.loads(sys.argv[1]), sys.argv[2]
    def loaded():
        return sorted(m for m in watched if any(k.partition(".")[0] == m for k in sys.modules))
    pkg = importlib.import_module("custom_components.opennvr_workflows")
    tops = [m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.ispkg]
    for name in tops:
        importlib.import_module(f"{pkg.__name__}.{name}")
    before = after = loaded()
    if feature == "ai":
        for sub in json.loads(sys.argv[3]):
            inner = importlib.import_module(f"{pkg.__name__}.{sub}")
            for m in pkgutil.walk_packages(inner.__path__, f"{inner.__name__}."):
                importlib.import_module(m.name)
        after = loaded()
    elif feature:
        from custom_components.opennvr_workflows.nvr.sources.factory import async_load_transport
        asyncio.run(async_load_transport(feature))
        after = loaded()
    print(json.dumps({"tops": tops, "before": before, "after": after}))
    """
)


def _load(feature: str = "") -> dict[str, list[str]]:
    return run_fresh(_SCRIPT, json.dumps(sorted(ONLY_WITH)), feature, json.dumps(AI_PACKAGES))


def test_loading_the_integration_brings_no_transport_or_model_library() -> None:
    seen = _load()
    # The walk reached the platforms and the modules Home Assistant preloads.
    assert {"sensor", "camera", "config_flow", "diagnostics", "ai_task"} <= set(seen["tops"])
    assert seen["before"] == [], {m: f"only for {ONLY_WITH[m]}" for m in seen["before"]}


@pytest.mark.parametrize(
    ("feature", "libraries"),
    [("nats", ["nats"]), ("mqtt", ["paho"]), ("ai", [])],
)
def test_a_feature_brings_its_library_when_a_site_uses_it(
    feature: str, libraries: list[str]
) -> None:
    seen = _load(feature)
    assert seen["before"] == []
    assert seen["after"] == libraries
