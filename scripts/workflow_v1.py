#!/usr/bin/env python3
"""The ``workflow-v1`` command, run from a checkout without installing anything but its needs.

    python scripts/workflow_v1.py validate FILE...      (also: schema, templates)

The contract package lives inside the Home Assistant integration
(custom_components/opennvr_workflows/workflow), and importing it by that name runs the
integration's ``__init__``, which imports Home Assistant. This launcher loads the package's
folder as the top-level package ``opennvr_workflow_v1``, the name ``pip install`` gives it (see
pyproject.toml), so only the package itself runs: an interpreter with PyYAML and jsonschema is
enough. Installed with pip, the same command is ``workflow-v1``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PACKAGE = "opennvr_workflow_v1"
FOLDER = (
    Path(__file__).resolve().parents[1] / "custom_components" / "opennvr_workflows" / "workflow"
)


def load_package() -> None:
    """Import the contract package's folder as :data:`PACKAGE` (its parents never run)."""
    if PACKAGE in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(
        PACKAGE, FOLDER / "__init__.py", submodule_search_locations=[str(FOLDER)]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the workflow package from {FOLDER}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    spec.loader.exec_module(module)


def main() -> int:
    """Run the contract's command line; returns its exit status."""
    load_package()
    cli = importlib.import_module(f"{PACKAGE}.cli")
    status: int = cli.main()
    return status


if __name__ == "__main__":
    sys.exit(main())
