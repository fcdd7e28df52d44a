"""Lay out a Home Assistant configuration directory for the development instance.

Shared by ``scripts/develop`` (a Home Assistant a developer opens at localhost:8123) and the
browser tests (``tests/browser``: the same configuration in a temporary directory), so both
run what a newcomer runs. It links the integration into ``custom_components`` and, when
there is none yet, writes ``configuration.yaml``: ``default_config`` (less ``go2rtc`` when
its binary is not installed: it is not on PyPI, and without it ``default_config`` fails as a
whole; camera streams then use HLS), the files Home Assistant's UI saves automations,
scripts and scenes to (``automation: !include automations.yaml`` and the others, as a fresh
Home Assistant install writes them; without them what the UI or a blueprint makes is saved
and never loads), and debug logging for the integration's packages. A configuration an
earlier version of this script wrote, untouched since, is brought up to date.

    python scripts/ha_config.py CONFIG_DIR

(Another port than 8123: the ``SETUP_PORT`` environment variable when starting ``hass``; an
``http:`` block in YAML is deprecated in Home Assistant 2026.10 and asks the user to confirm
its migration.)
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from homeassistant.components import default_config

ROOT = Path(__file__).resolve().parent.parent
INTEGRATION = ROOT / "custom_components" / "opennvr_workflows"

LOGGING = """
logger:
  default: info
  logs:
    custom_components.opennvr_workflows: debug
    pyopennvr: debug
    opennvr_app_sdk: debug
"""


#: What the UI saves to, and the empty content Home Assistant starts each file with.
UI_FILES = {
    "automation": ("automations.yaml", "[]\n"),
    "script": ("scripts.yaml", ""),
    "scene": ("scenes.yaml", "[]\n"),
}


def default_integrations(*, with_ui_files: bool = True) -> str:
    """``default_config:``, or its dependencies one by one without ``go2rtc``; then the
    UI's files (an integration listed twice would be a duplicate YAML key, so the UI's
    three are listed only with their ``!include``)."""
    included = UI_FILES if with_ui_files else {}
    if shutil.which("go2rtc"):
        lines = ["default_config:"]
    else:
        manifest = Path(default_config.__file__).parent / "manifest.json"
        deps = json.loads(manifest.read_text())["dependencies"]
        lines = ["# default_config without go2rtc (no go2rtc binary here)"]
        lines += [f"{dep}:" for dep in deps if dep != "go2rtc" and dep not in included]
    lines += [f"{domain}: !include {name}" for domain, (name, _) in included.items()]
    return "\n".join(lines) + "\n"


def configuration() -> str:
    """The text of ``configuration.yaml``."""
    return default_integrations() + LOGGING


def earlier_configuration() -> str:
    """What this script wrote before it included the UI's files."""
    return default_integrations(with_ui_files=False) + LOGGING


def lay_out(config_dir: Path) -> None:
    """Link the integration into ``config_dir`` and write its configuration when missing."""
    components = config_dir / "custom_components"
    components.mkdir(parents=True, exist_ok=True)
    link = components / INTEGRATION.name
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(INTEGRATION, target_is_directory=True)
    yaml_file = config_dir / "configuration.yaml"
    if not yaml_file.exists() or yaml_file.read_text() == earlier_configuration():
        yaml_file.write_text(configuration())
    for name, empty in UI_FILES.values():
        if not (config_dir / name).exists():
            (config_dir / name).write_text(empty)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config_dir", type=Path)
    args = parser.parse_args()
    lay_out(args.config_dir)


if __name__ == "__main__":
    main()
