"""Print the packages Home Assistant installs on the first start of the development instance.

A Home Assistant started with ``scripts/ha_config.py``'s configuration installs, on its
first start, the requirements of every integration it sets up (``pymicro-vad``,
``pyspeex-noise``, the frontend, the Bluetooth stack, ...) and, at onboarding, those of the
integrations onboarding adds (``met``, ``radio_browser``, ``google_translate``): about two
minutes. ``scripts/setup`` installs them ahead of time, so ``scripts/develop`` and the
browser tests (``tests/browser``) start in seconds. The list is read from the installed Home
Assistant's manifests, so it follows a Home Assistant upgrade by itself.

    python scripts/ha_requirements.py      # one pinned requirement a line
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import homeassistant.components.onboarding.views as onboarding_views
from ha_config import configuration  # scripts/ha_config.py, beside this file
from homeassistant import bootstrap, components

COMPONENTS = Path(components.__file__).parent
#: What onboarding's core-config step adds (homeassistant/components/onboarding/views.py).
ONBOARDING_ADDS = ("google_translate", "met", "radio_browser", "shopping_list")
#: Multi-factor modules Home Assistant's auth loads at start (``auth_mfa_modules`` default).
MFA_MODULES = ("homeassistant.auth.mfa_modules.totp",)


def _manifest(domain: str) -> dict[str, object] | None:
    path = COMPONENTS / domain / "manifest.json"
    if not path.exists():
        return None
    manifest: dict[str, object] = json.loads(path.read_text())
    return manifest


def configured_domains() -> set[str]:
    """The domains of ``scripts/ha_config.py``'s configuration.yaml (top-level keys)."""
    return {
        line.split(":", 1)[0]
        for line in configuration().splitlines()
        if line and not line.startswith((" ", "#")) and line.endswith(":")
    }


def started_domains() -> set[str]:
    """Every domain that configuration sets up, as bootstrap's ``_get_domains`` picks
    them (the configured ones, the core and default integrations), onboarding's additions
    and, recursively, their dependencies."""
    todo = (
        configured_domains()
        | set(bootstrap.CORE_INTEGRATIONS)
        | set(bootstrap.DEFAULT_INTEGRATIONS)
        | set(ONBOARDING_ADDS)
    )
    domains: set[str] = set()
    while todo:
        domain = todo.pop()
        manifest = _manifest(domain)
        if domain in domains or manifest is None:
            continue
        domains.add(domain)
        todo |= set(manifest.get("dependencies", [])) - domains  # type: ignore[arg-type]
    return domains


def requirements() -> list[str]:
    """The pinned requirements of :func:`started_domains` and the MFA modules."""
    found: set[str] = set()
    for domain in started_domains():
        manifest = _manifest(domain) or {}
        found |= set(manifest.get("requirements", []))  # type: ignore[arg-type]
    for module in MFA_MODULES:
        found |= set(importlib.import_module(module).REQUIREMENTS)
    return sorted(found, key=str.lower)


def main() -> None:
    # Fail loudly if onboarding adds other integrations than we think (an upgrade).
    source = Path(onboarding_views.__file__).read_text()
    missing = [d for d in ONBOARDING_ADDS if f'"{d}"' not in source]
    if missing:
        raise SystemExit(f"onboarding no longer adds {missing}: update ONBOARDING_ADDS")
    print("\n".join(requirements()))


if __name__ == "__main__":
    main()
