"""Importing a module off the event loop, for what the integration loads only when used.

A first import reads files from disk (the module, often its package metadata), which Home
Assistant's blocking-call detector reports on the loop; it runs in an executor thread here
(the loop's default one: some callers, such as a transport's connection test, have no
``hass``). Once loaded, the callers import it again where they use it, for free. Nothing
here imports Home Assistant.
"""

from __future__ import annotations

import asyncio
import importlib
import sys

__all__ = ["async_import"]


async def async_import(name: str) -> None:
    """Import ``name`` in an executor thread; nothing once it is loaded."""
    if name not in sys.modules:
        await asyncio.get_running_loop().run_in_executor(None, importlib.import_module, name)
