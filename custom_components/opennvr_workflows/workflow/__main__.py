"""``python -m custom_components.opennvr_workflows.workflow``: see :mod:`.cli`."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
