"""The models an Ollama server offers, with what each can do, for the models form.

The form must offer only models that can see pictures for the vision field, and say which
those are; ``/api/tags`` lists names only, so each model's ``/api/show`` is read for its
capabilities.
"""

from __future__ import annotations

import asyncio
from typing import Final

from homeassistant.util.ssl import get_default_context

from ..ai.model_check import capabilities, list_models, show_model
from ..ai.ollama_api import OllamaApi

#: How long each of the reads may take.
_TIMEOUT_SECONDS: Final = 10.0


async def async_model_capabilities(url: str) -> dict[str, tuple[str, ...]] | None:
    """Each pulled model with its capabilities (``vision``, ``tools``...), or None when
    the server cannot be reached. A model whose details cannot be read has none listed,
    so it is not offered where a capability is needed."""
    context = get_default_context()
    names = await list_models(url, timeout_seconds=_TIMEOUT_SECONDS, ssl_context=context)
    if names is None:
        return None
    api = OllamaApi(url, timeout_seconds=_TIMEOUT_SECONDS, ssl_context=context)
    try:
        shown = await asyncio.gather(
            *(show_model(api, name) for name in names), return_exceptions=True
        )
    finally:
        await api.aclose()
    return {
        name: () if isinstance(info, BaseException) else capabilities(info)
        for name, info in zip(names, shown, strict=True)
    }


def vision_models(models: dict[str, tuple[str, ...]]) -> list[str]:
    """The models that can see pictures, in order."""
    return [name for name, capabilities in models.items() if "vision" in capabilities]


def embedding_models(models: dict[str, tuple[str, ...]]) -> list[str]:
    """The models that make embeddings (history search by meaning), in order."""
    return [name for name, capabilities in models.items() if "embedding" in capabilities]
