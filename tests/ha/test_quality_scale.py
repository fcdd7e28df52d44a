"""quality_scale.yaml: every rule of Home Assistant's integration quality scale has a status,
each exemption says why, and the rules marked done that can be checked from the code are:
the flows' fields are described, per-entry objects live in the entry's runtime data, the
base entity and the coordinator are where the rule puts them, and every platform says how
many updates run at once."""

from __future__ import annotations

import ast
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


def _ours() -> dict[str, str]:
    return {name: _status(rule) for name, rule in _rules(PACKAGE / "quality_scale.yaml").items()}


def test_every_field_of_the_flows_is_described() -> None:
    """config-flow: each field's ``data_description`` says what to give there."""
    if _ours()["config-flow"] != "done":
        return
    strings = json.loads((PACKAGE / "strings.json").read_text())
    missing = [
        f"{section}.{step}.{field}"
        for section in ("config", "options")
        for step, body in strings[section]["step"].items()
        for field in body.get("data", {})
        if field not in body.get("data_description", {})
    ]
    assert missing == []


#: What the integration keeps in hass.data: one of each per Home Assistant, never per entry.
HASS_WIDE = {"DATA_FORM_KEY", "_KEY", "_STATS"}


def _hass_data_writes(tree: ast.AST) -> set[str]:
    """The keys a module writes into ``hass.data`` (``hass.data[K] = ...`` or
    ``hass.data.setdefault(K, ...)``), by the name of the key's constant."""
    keys: set[str] = set()

    def is_hass_data(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "data"

    for node in ast.walk(tree):
        key: ast.expr | None = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            if is_hass_data(node.value):
                key = node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "setdefault"
            and is_hass_data(node.func.value)
            and node.args
        ):
            key = node.args[0]
        if key is not None:
            keys.add(key.id if isinstance(key, ast.Name) else ast.unparse(key))
    return keys


def test_per_entry_objects_live_in_the_entrys_runtime_data() -> None:
    """runtime-data: nothing is written into hass.data per entry (the history search and
    the approvals desk once were); what is there is one per Home Assistant."""
    if _ours()["runtime-data"] != "done":
        return
    written = {
        f"{path.relative_to(PACKAGE)}: {key}"
        for path in PACKAGE.rglob("*.py")
        for key in _hass_data_writes(ast.parse(path.read_text()))
        if key not in HASS_WIDE
    }
    assert written == set()


def test_the_coordinator_and_the_base_entity_are_where_the_rule_puts_them() -> None:
    """common-modules: coordinator.py holds the coordinator and the entry's runtime type;
    entity.py the one base every entity derives from."""
    if _ours()["common-modules"] != "done":
        return
    from homeassistant.helpers.entity import Entity
    from homeassistant.helpers.update_coordinator import DataUpdateCoordinator

    coordinator = importlib.import_module(f"custom_components.{DOMAIN}.coordinator")
    entity = importlib.import_module(f"custom_components.{DOMAIN}.entity")
    assert issubclass(coordinator.CameraCoordinator, DataUpdateCoordinator)
    assert coordinator.OpenNVRRuntime.__module__ == coordinator.__name__
    platforms = importlib.import_module(f"custom_components.{DOMAIN}").PLATFORMS
    for platform in platforms:
        module = importlib.import_module(f"custom_components.{DOMAIN}.{platform.value}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Entity)
                and value.__module__ == module.__name__
            ):
                assert issubclass(value, entity.OpenNVREntity), value
