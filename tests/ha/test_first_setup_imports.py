"""The integration's dependencies are imported off the event loop, and ``ollama`` only when
the AI needs it.

The integration's dependencies read files when first imported (``ollama`` asks
``importlib.metadata`` for its version; ``nats`` likewise), which Home Assistant's
blocking-call detector reports when it happens on the loop. Home Assistant imports a
custom integration, config flow included, in its import executor before a first setup's
config flow; ``ollama`` (with ``pydantic``, about 10 MB) is not part of that import at all
and is loaded off the loop by whatever first reaches a model server (``ai/library.py``).
The check needs a fresh interpreter (this one imported everything long ago), so it runs
Home Assistant in a child process, with the detector on:

* a first config flow, as Home Assistant starts it: no report names the integration, and
  ``ollama`` is still not imported;
* listing a server's models, the first thing a flow does with the AI: ``ollama`` is
  imported, and no report;
* the control that shows the check can fail: making a model client on the loop before
  anything loaded the library, which reports ``import ollama`` in ``ai/ollama_client.py``.
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
    before = "ollama" in sys.modules
    from custom_components.opennvr_workflows.ai import ollama_client, model_check
    if mode == "on_loop":
        ollama_client.async_client("http://127.0.0.1:9", 1.0)
    elif mode == "list_models":
        from homeassistant.util.ssl import get_default_context  # as every caller passes it
        listed = await model_check.list_models(
            "http://127.0.0.1:9", timeout_seconds=1.0, ssl_context=get_default_context()
        )
        assert listed is None, listed
    await hass.async_block_till_done()
    print(json.dumps({{"before": before, "after": "ollama" in sys.modules, "reports": reports}}))
    await hass.async_stop()

asyncio.run(main(sys.argv[1]), loop_factory=lambda: runner.create_event_loop(debug=False))
"""


def run_child(mode: str) -> dict[str, object]:
    return run_fresh(CHILD.format(root=str(ROOT), scripts=str(ROOT / "scripts")), mode)


@pytest.mark.parametrize(
    ("mode", "loaded", "reported"),
    [("first_setup", False, False), ("list_models", True, False), ("on_loop", True, True)],
    ids=["ha", "models", "control"],
)
def test_ollama_is_imported_off_the_loop_and_only_for_the_ai(
    mode: str, loaded: bool, reported: bool
) -> None:
    got = run_child(mode)
    assert got["before"] is False
    assert got["after"] is loaded
    reports = got["reports"]
    assert isinstance(reports, list)
    if reported:
        assert any("import ollama" in r for r in reports), reports
    else:
        assert reports == []
