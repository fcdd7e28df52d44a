"""quality_scale.yaml: every rule of Home Assistant's integration quality scale has a status,
each exemption says why, and the rules marked done that can be checked from the code are."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import homeassistant
import yaml

from custom_components.opennvr_workflows import async_remove_config_entry_device
from custom_components.opennvr_workflows.const import DOMAIN

PACKAGE = Path(__file__).resolve().parents[2] / "custom_components" / DOMAIN
#: A platinum integration of the installed Home Assistant: its file names every rule.
REFERENCE = Path(homeassistant.__file__).parent / "components" / "reolink" / "quality_scale.yaml"


def _rules(path: Path) -> dict[str, Any]:
    rules = yaml.safe_load(path.read_text())["rules"]
    assert isinstance(rules, dict)
    return rules


def _status(rule: Any) -> str:
    return rule if isinstance(rule, str) else rule["status"]


def test_every_rule_has_a_status_and_every_exemption_a_reason() -> None:
    ours = _rules(PACKAGE / "quality_scale.yaml")
    assert set(ours) == set(_rules(REFERENCE))
    for name, rule in ours.items():
        assert _status(rule) in ("done", "todo", "exempt"), name
        if _status(rule) == "exempt":
            assert isinstance(rule, dict), name
            assert rule["comment"].strip(), name


def test_rules_marked_done_hold() -> None:
    ours = {name: _status(rule) for name, rule in _rules(PACKAGE / "quality_scale.yaml").items()}
    manifest = json.loads((PACKAGE / "manifest.json").read_text())
    if ours["integration-owner"] == "done":
        assert manifest["codeowners"]
    if ours["brands"] == "done":
        assert (PACKAGE / "brand" / "icon.png").is_file()
    if ours["stale-devices"] == "done":
        assert callable(async_remove_config_entry_device)
    if ours["config-flow"] == "done":
        assert manifest["config_flow"] is True
    if ours["diagnostics"] == "done":
        assert (PACKAGE / "diagnostics.py").is_file()
    if ours["icon-translations"] == "done":
        assert (PACKAGE / "icons.json").is_file()
    if ours["parallel-updates"] == "done":
        platforms = importlib.import_module(f"custom_components.{DOMAIN}").PLATFORMS
        for platform in platforms:
            module = importlib.import_module(f"custom_components.{DOMAIN}.{platform.value}")
            assert isinstance(module.PARALLEL_UPDATES, int), platform
    flow = importlib.import_module(f"custom_components.{DOMAIN}.config_flow")
    flows = [v for v in vars(flow).values() if isinstance(v, type) and hasattr(v, "VERSION")]
    for rule, step in (
        ("reauthentication-flow", "async_step_reauth"),
        ("reconfiguration-flow", "async_step_reconfigure"),
    ):
        if ours[rule] == "done":
            assert any(hasattr(f, step) for f in flows), rule
