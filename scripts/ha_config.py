"""Lay out a Home Assistant configuration directory for the development instance.

Shared by ``scripts/develop`` (a Home Assistant a developer opens at localhost:8123) and the
browser tests (``tests/browser``: the same configuration in a temporary directory), so both
run what a newcomer runs. It links the integration into ``custom_components`` and, when
there is none yet, writes ``configuration.yaml``: ``default_config`` (less ``go2rtc`` when
its binary is not installed: it is not on PyPI, and without it ``default_config`` fails as a
whole; camera streams then use HLS) and debug logging for the integration's packages.

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


def default_integrations() -> str:
    """``default_config:``, or its dependencies one by one without ``go2rtc``."""
    if shutil.which("go2rtc"):
        return "default_config:\n"
    manifest = Path(default_config.__file__).parent / "manifest.json"
    deps = json.loads(manifest.read_text())["dependencies"]
    lines = ["# default_config without go2rtc (no go2rtc binary here)"]
    lines += [f"{dep}:" for dep in deps if dep != "go2rtc"]
    return "\n".join(lines) + "\n"


def configuration() -> str:
    """The text of ``configuration.yaml``."""
    return default_integrations() + LOGGING


def lay_out(config_dir: Path) -> None:
    """Link the integration into ``config_dir`` and write its configuration when missing."""
    components = config_dir / "custom_components"
    components.mkdir(parents=True, exist_ok=True)
    link = components / INTEGRATION.name
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(INTEGRATION, target_is_directory=True)
    yaml_file = config_dir / "configuration.yaml"
    if not yaml_file.exists():
        yaml_file.write_text(configuration())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config_dir", type=Path)
    args = parser.parse_args()
    lay_out(args.config_dir)


if __name__ == "__main__":
    main()
