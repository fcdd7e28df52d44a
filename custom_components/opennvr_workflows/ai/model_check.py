"""What the config flow asks of an Ollama server before it saves the model settings.

"Ollama unreachable" and "this model cannot see pictures" must be form errors the person
can act on, not a failed run at 2 am. So :func:`check_model` reads ``/api/version``,
``/api/tags`` and ``/api/show`` and returns a plain answer; it never raises. Both calls take
the host's ``ssl_context`` (Home Assistant's shared one) or its ``session``, so a check made
from a config flow loads no certificates on the event loop.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from .ollama_api import OllamaApi
from .ollama_client import OllamaSettings, as_llm_error


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
    host: str,
    *,
    timeout_seconds: float = 10.0,
    ssl_context: ssl.SSLContext | None = None,
    session: aiohttp.ClientSession | None = None,
) -> tuple[str, ...] | None:
    """The names of the models the server has pulled, or None when it cannot be reached."""
    api = OllamaApi(host, timeout_seconds=timeout_seconds, ssl_context=ssl_context, session=session)
    try:
        return model_names(await api.get("/api/tags"))
    except Exception:
        return None
    finally:
        await api.aclose()


async def check_model(
    host: str,
    model: str,
    *,
    need_vision: bool = True,
    need_tools: bool = False,
    timeout_seconds: float = 10.0,
    ssl_context: ssl.SSLContext | None = None,
    session: aiohttp.ClientSession | None = None,
) -> ModelCheck:
    """Is ``model`` on the server at ``host`` usable for the AI steps? Never raises."""
    settings = OllamaSettings(
        host=host, model=model, timeout_seconds=timeout_seconds, ssl_context=ssl_context
    )
    api = OllamaApi(host, timeout_seconds=timeout_seconds, ssl_context=ssl_context, session=session)
    try:
        try:
            version = _version(await api.get("/api/version"))
            models = model_names(await api.get("/api/tags"))
        except Exception as err:
            return ModelCheck(
                reachable=False, error="cannot_connect", detail=str(as_llm_error(err, settings))
            )
        if not _has(models, model):
            return ModelCheck(
                reachable=True,
                version=version,
                models=models,
                error="model_not_found",
                detail=f"model {model!r} is not pulled on {host}; try 'ollama pull {model}'",
            )
        try:
            shown = await show_model(api, model)
        except Exception as err:
            return ModelCheck(
                reachable=True,
                version=version,
                models=models,
                found=True,
                error="cannot_connect",
                detail=str(as_llm_error(err, settings)),
            )
        caps = capabilities(shown)
        details = shown.get("details")
        families = _texts(details.get("families")) if isinstance(details, dict) else ()
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
        await api.aclose()


async def show_model(api: OllamaApi, model: str) -> dict[str, Any]:
    """``/api/show`` for ``model``: what it is and can do (``capabilities``, ``details``)."""
    return await api.post("/api/show", {"model": model})


def model_names(listing: dict[str, Any]) -> tuple[str, ...]:
    """The pulled models' names from ``/api/tags``, sorted."""
    return tuple(sorted(name for name, _ in listed_models(listing)))


def listed_models(listing: dict[str, Any]) -> list[tuple[str, str | None]]:
    """Each model of a ``/api/tags`` reply: its name and its family (when the reply says).
    An entry without a name is left out."""
    out = []
    for entry in listing.get("models") or ():
        if not isinstance(entry, dict):
            continue
        name = entry.get("model") or entry.get("name")
        if not isinstance(name, str) or not name:
            continue
        details = entry.get("details")
        family = details.get("family") if isinstance(details, dict) else None
        out.append((name, family if isinstance(family, str) else None))
    return out


def capabilities(shown: dict[str, Any]) -> tuple[str, ...]:
    """What a model can do (``vision``, ``tools``, ``embedding``...), from ``/api/show``."""
    return _texts(shown.get("capabilities"))


def _version(reply: dict[str, Any]) -> str | None:
    version = reply.get("version")
    return str(version) if version is not None else None


def _texts(value: Any) -> tuple[str, ...]:
    """A list of words from a reply (capabilities, families); anything else is none."""
    if not isinstance(value, list):
        return ()
    return tuple(str(v) for v in value if isinstance(v, str))


def _has(models: tuple[str, ...], model: str) -> bool:
    """``llava`` means ``llava:latest``, as Ollama itself reads it."""
    wanted = model if ":" in model else f"{model}:latest"
    return model in models or wanted in models
