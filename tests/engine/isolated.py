"""Import the engine without the integration's Home Assistant ``__init__``.

The crash tests start many short-lived engine processes; importing Home
Assistant in each would cost seconds. Registering the integration package as
a bare package (its real folder, no ``__init__`` executed) lets
``custom_components.opennvr_workflows.engine`` and ``.workflow`` import as
they do in production, since neither imports Home Assistant.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def install() -> None:
    if "custom_components.opennvr_workflows" in sys.modules:
        return
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    parent = types.ModuleType("custom_components")
    parent.__path__ = [str(ROOT / "custom_components")]
    package = types.ModuleType("custom_components.opennvr_workflows")
    package.__path__ = [str(ROOT / "custom_components" / "opennvr_workflows")]
    sys.modules.setdefault("custom_components", parent)
    sys.modules["custom_components.opennvr_workflows"] = package
