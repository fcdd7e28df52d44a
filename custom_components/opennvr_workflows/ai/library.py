"""The ``ollama`` package, imported when the AI first needs it rather than with the
integration.

``ollama`` brings ``pydantic`` and its models: about 10 MB of memory that a site with the
AI off never uses. Its first import reads package metadata from disk, so on Home
Assistant's event loop it happens in an executor thread (:func:`async_load_ollama`): the
entry's setup awaits it when the AI is on (an options change that turns it on reloads the
entry), and so does each place that reaches a model server from a flow or an action before
that (listing or checking models, measuring one). The modules that use the package import
it again inside their functions, which is then free; a script (the eval harness) simply
imports it there.
"""

from __future__ import annotations

from ..lazy_imports import async_import

__all__ = ["async_load_ollama"]


async def async_load_ollama() -> None:
    """Import ``ollama`` off the event loop (nothing once it is loaded)."""
    await async_import("ollama")
