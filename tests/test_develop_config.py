"""The develop configuration (``scripts/ha_config.py``) loads what Home Assistant's UI saves:
automations, scripts and scenes made in the UI (or from a blueprint) are written to
``automations.yaml``, ``scripts.yaml`` and ``scenes.yaml``, which load only when
``configuration.yaml`` includes them, as a fresh Home Assistant install's does."""

from __future__ import annotations

import sys
from pathlib import Path

from homeassistant.util.yaml import load_yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import ha_config  # noqa: E402  (scripts/ha_config.py)


def test_a_new_configuration_includes_the_ui_files_once(tmp_path: Path) -> None:
    ha_config.lay_out(tmp_path)
    text = (tmp_path / "configuration.yaml").read_text()
    for domain, (name, _) in ha_config.UI_FILES.items():
        assert f"{domain}: !include {name}" in text
        assert text.count(f"\n{domain}:") + text.startswith(f"{domain}:") == 1, domain
    loaded = load_yaml(tmp_path / "configuration.yaml")
    assert isinstance(loaded, dict)
    assert loaded["automation"] == []
    assert loaded["scene"] == []


def test_an_earlier_untouched_configuration_is_brought_up_to_date(tmp_path: Path) -> None:
    (tmp_path / "configuration.yaml").write_text(ha_config.earlier_configuration())
    ha_config.lay_out(tmp_path)
    assert (tmp_path / "configuration.yaml").read_text() == ha_config.configuration()


def test_an_edited_configuration_and_saved_automations_are_left_alone(tmp_path: Path) -> None:
    edited = ha_config.earlier_configuration() + "\nhomeassistant:\n  name: Mine\n"
    (tmp_path / "configuration.yaml").write_text(edited)
    (tmp_path / "automations.yaml").write_text("- id: kept\n")
    ha_config.lay_out(tmp_path)
    assert (tmp_path / "configuration.yaml").read_text() == edited
    assert (tmp_path / "automations.yaml").read_text() == "- id: kept\n"
