"""What the config flow asks of an Ollama server before it saves the model settings.

"Ollama unreachable" and "this model cannot see pictures" must be form errors the person
can act on, not a failed run at 2 am. So :func:`check_model` reads ``/api/version``,
``/api/tags`` and ``/api/show`` and returns a plain answer; it never raises. Both calls take
the host's ``ssl_context`` (Home Assistant's shared one), so a check made from a config flow
loads no certificates on the event loop.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .library import async_load_ollama
from .ollama_client import OllamaSettings, _as_llm_error, async_client

if TYPE_CHECKING:
    import ollama


@dataclass(frozen=True)
class ModelCheck:
    """The outcome of checking one model on one server.

    ``error`` is one of ``cannot_connect``, ``model_not_found``, ``no_vision``,
    ``no_tools`` (only when tools were required) or None when usable; ``detail`` is the
    human-readable diagnosis."""

    reachable: bool
    version: str | None = None
    models: tuple[str, ...] = ()
    found: bool = False
    capabilities: tuple[str, ...] = ()
    error: str | None = None
    detail: str = ""
    families: tuple[str, ...] = field(default=())

    @property
    def vision(self) -> bool:
        return "vision" in self.capabilities

    @property
    def tools(self) -> bool:
        return "tools" in self.capabilities

    @property
    def thinking(self) -> bool:
        return "thinking" in self.capabilities


async def list_models(
    host: str, *, timeout_seconds: float = 10.0, ssl_context: ssl.SSLContext | None = None
) -> tuple[str, ...] | None:
    """The names of the models the server has pulled, or None when it cannot be reached."""
    await async_load_ollama()
    client = async_client(host, timeout_seconds, ssl_context)
    try:
        listing = await client.list()
        return tuple(sorted(m.model for m in listing.models if m.model))
    except Exception:
        return None
    finally:
        await client.close()  # type: ignore[no-untyped-call]  # untyped upstream


async def check_model(
    host: str,
    model: str,
    *,
    need_vision: bool = True,
    need_tools: bool = False,
    timeout_seconds: float = 10.0,
    ssl_context: ssl.SSLContext | None = None,
) -> ModelCheck:
    """Is ``model`` on the server at ``host`` usable for the AI steps? Never raises."""
    settings = OllamaSettings(
        host=host, model=model, timeout_seconds=timeout_seconds, ssl_context=ssl_context
    )
    await async_load_ollama()
    client = async_client(host, timeout_seconds, ssl_context)
    try:
        try:
            version = await _version(client)
            listing = await client.list()
        except Exception as err:
            return ModelCheck(
                reachable=False, error="cannot_connect", detail=str(_as_llm_error(err, settings))
            )
        models = tuple(sorted(m.model for m in listing.models if m.model))
        if not _has(models, model):
            return ModelCheck(
                reachable=True,
                version=version,
                models=models,
                error="model_not_found",
                detail=f"model {model!r} is not pulled on {host}; try 'ollama pull {model}'",
            )
        try:
            shown = await client.show(model)
        except Exception as err:
            return ModelCheck(
                reachable=True,
                version=version,
                models=models,
                found=True,
                error="cannot_connect",
                detail=str(_as_llm_error(err, settings)),
            )
        caps = tuple(shown.capabilities or ())
        families = tuple(shown.details.families or ()) if shown.details else ()
        error, detail = None, ""
        if need_vision and "vision" not in caps:
            error, detail = "no_vision", f"model {model!r} cannot read pictures"
        elif need_tools and "tools" not in caps:
            error, detail = "no_tools", f"model {model!r} cannot call tools"
        return ModelCheck(
            reachable=True,
            version=version,
            models=models,
            found=True,
            capabilities=caps,
            error=error,
            detail=detail,
            families=families,
        )
    finally:
        await client.close()  # type: ignore[no-untyped-call]  # untyped upstream


async def _version(client: ollama.AsyncClient) -> str | None:
    """``/api/version``; the ollama package has no call for it, so ask its HTTP client."""
    response = await client._client.get("/api/version")
    response.raise_for_status()
    data = response.json()
    return str(data.get("version")) if isinstance(data, dict) else None


def _has(models: tuple[str, ...], model: str) -> bool:
    """``llava`` means ``llava:latest``, as Ollama itself reads it."""
    wanted = model if ":" in model else f"{model}:latest"
    return model in models or wanted in models
