"""A script run in a fresh interpreter, for checks about what gets imported (this test
process imported everything long ago)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_fresh(script: str, *args: str, timeout: float = 120) -> dict[str, Any]:
    """Run ``script`` with ``args`` in a new interpreter at the repository's root; the last
    line it printed, one JSON object (a failing script fails the test with its stderr)."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))
