"""A first setup imports the integration (and ``ollama`` with it) off the event loop.

The integration's dependencies read files when first imported (``ollama`` asks
``importlib.metadata`` for its version; ``nats`` likewise), which Home Assistant's
blocking-call detector reports when it happens on the loop. Home Assistant imports a
custom integration, config flow included, in its import executor before a first setup's
config flow: nothing of ours may import such a module later, from a function running on
the loop. The check needs a fresh interpreter (this one imported everything long ago), so
it runs Home Assistant in a child process, with the detector on, twice: the way Home
Assistant does it (no report may name the integration), and, as the control that shows
the check can fail, with the integration imported on the loop (reports expected, naming
``ai/model_check.py``'s ``import ollama``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

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
    before = "ollama" in sys.modules
    if mode == "on_loop":
        import custom_components.opennvr_workflows.config_flow  # noqa: F401
    else:
        result = await hass.config_entries.flow.async_init(
            "opennvr_workflows", context={{"source": "user"}}
        )
        assert result["type"] == "form", result
    await hass.async_block_till_done()
    print(json.dumps({{"before": before, "after": "ollama" in sys.modules, "reports": reports}}))
    await hass.async_stop()

asyncio.run(main(sys.argv[1]), loop_factory=lambda: runner.create_event_loop(debug=False))
"""


def run_child(mode: str) -> dict[str, object]:
    script = CHILD.format(root=str(ROOT), scripts=str(ROOT / "scripts"))
    done = subprocess.run(
        [sys.executable, "-c", script, mode],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    ("mode", "reported"), [("first_setup", False), ("on_loop", True)], ids=["ha", "control"]
)
def test_the_first_setup_imports_ollama_off_the_loop(mode: str, reported: bool) -> None:
    got = run_child(mode)
    assert got["before"] is False
    assert got["after"] is True
    reports = got["reports"]
    assert isinstance(reports, list)
    if reported:
        assert any("import ollama" in r for r in reports), reports
    else:
        assert reports == []
