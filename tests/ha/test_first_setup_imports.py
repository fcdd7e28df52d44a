"""The integration's dependencies are imported off the event loop, and the AI loads no
model library at all.

The integration's dependencies read files when first imported (``nats`` asks
``importlib.metadata`` for its version), which Home Assistant's blocking-call detector
reports when it happens on the loop. Home Assistant imports a custom integration, config
flow included, in its import executor before a first setup's config flow. The AI speaks
Ollama's HTTP API over aiohttp (``ai/ollama_api.py``), so neither ``ollama`` nor the
``pydantic`` it brings (about 9.5 MB) is ever imported. The check needs a fresh interpreter
(this one imported everything long ago), so it runs Home Assistant in a child process,
with the detector on:

* a first config flow, as Home Assistant starts it: no report names the integration;
* listing a server's models and checking one, the first things a flow does with the AI:
  no report, and neither library imported;
* the control that shows the check can fail: importing the NATS transport's module on the
  loop (a setup imports it in an executor), which reports ``import nats`` in
  ``nvr/sources/nats.py``.
"""

from __future__ import annotations

import pytest

from tests.fresh_python import ROOT, run_fresh

CHILD = """
import asyncio, json, logging, sys, tempfile
from pathlib import Path
sys.path[:0] = [{root!r}, {scripts!r}]
from bench_footprint import start_home_assistant
from homeassistant import runner

reports = []

class Reports(logging.Handler):
    def emit(self, record):
        text = record.getMessage()
        if "blocking call" in text and "opennvr_workflows" in text:
            reports.append(text[:400])

async def main(mode):
    logging.getLogger().addHandler(Reports(logging.DEBUG))
    logging.getLogger("homeassistant.util.loop").setLevel(logging.DEBUG)
    hass = await start_home_assistant(Path(tempfile.mkdtemp()))
    await hass.async_start()
    result = await hass.config_entries.flow.async_init(
        "opennvr_workflows", context={{"source": "user"}}
    )
    assert result["type"] == "form", result
    libraries = lambda: sorted(m for m in ("ollama", "pydantic") if m in sys.modules)
    before = libraries()
    if mode == "on_loop":
        import importlib
        importlib.import_module("custom_components.opennvr_workflows.nvr.sources.nats")
    elif mode == "list_models":
        from homeassistant.util.ssl import get_default_context  # as every caller passes it
        from custom_components.opennvr_workflows.ai import model_check
        listed = await model_check.list_models(
            "http://127.0.0.1:9", timeout_seconds=1.0, ssl_context=get_default_context()
        )
        assert listed is None, listed
        checked = await model_check.check_model(
            "http://127.0.0.1:9", "m", timeout_seconds=1.0, ssl_context=get_default_context()
        )
        assert checked.error == "cannot_connect", checked
    await hass.async_block_till_done()
    print(json.dumps({{"before": before, "after": libraries(), "reports": reports}}))
    await hass.async_stop()

asyncio.run(main(sys.argv[1]), loop_factory=lambda: runner.create_event_loop(debug=False))
"""


def run_child(mode: str) -> dict[str, object]:
    return run_fresh(CHILD.format(root=str(ROOT), scripts=str(ROOT / "scripts")), mode)


@pytest.mark.parametrize(
    ("mode", "reported"),
    [("first_setup", None), ("list_models", None), ("on_loop", "import nats")],
    ids=["ha", "models", "control"],
)
def test_dependencies_load_off_the_loop_and_the_ai_loads_no_model_library(
    mode: str, reported: str | None
) -> None:
    got = run_child(mode)
    assert got["before"] == []
    assert got["after"] == []
    reports = got["reports"]
    assert isinstance(reports, list)
    if reported:
        assert any(reported in r for r in reports), reports
    else:
        assert reports == []
