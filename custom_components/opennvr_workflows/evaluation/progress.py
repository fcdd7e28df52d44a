"""A progress bar on stderr for long runs (a suite on a small CPU model takes minutes).

On a terminal it redraws one line; elsewhere (CI logs) it writes one line per finished row,
so a log shows how far a run got. stdout stays for the report.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

_WIDTH = 28


class Progress:
    """``total`` rows; :meth:`advance` after each, naming the row just done."""

    def __init__(self, total: int, *, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = total
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self._tty = self.stream.isatty()
        self._t0 = time.monotonic()

    def line(self, label: str) -> str:
        """The bar as text: ``[#####.....]  3/10  12s  label``."""
        filled = int(_WIDTH * self.done / self.total) if self.total else _WIDTH
        elapsed = int(time.monotonic() - self._t0)
        return (
            f"[{'#' * filled}{'.' * (_WIDTH - filled)}] {self.done}/{self.total} {elapsed}s {label}"
        )

    def advance(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self._tty:
            self.stream.write("\r\x1b[2K" + self.line(label)[:200])
        else:
            self.stream.write(self.line(label) + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._tty:
            self.stream.write("\n")
            self.stream.flush()
