"""The engine's AI port, backed by the ``ai`` package and the entry's Ollama settings.

The engine hands an AI step its run context and hourly budget; this port adds what only
the host knows: the Ollama client (made with Home Assistant's shared SSL context, so no
certificate loading happens on the event loop), the site's read port over pyopennvr with
the run's correlation id on every request, the site rules and tool policy from the
options, and the pictures the step looked at (kept as the run's evidence, for its image
entity and its run page). It never raises: a model that is off, slow or down answers
``unsure``, and so does a server outside the local network that no admin allowed
(``may_send``): not one picture or text goes to it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Any

from opennvr_app_sdk.agent import LLMClient
from pyopennvr import OpenNVRClient

from ...ai import (
    AIStepContext,
    AIStepResult,
    AISuspended,
    NvrReadPort,
    OllamaSettings,
    PyOpenNvrReadPort,
    make_llm_client,
    resume_ai_step,
    run_ai_step,
)
from ...engine import AiContext, AiResult, AiSuspended
from ...workflow.model import AIStep, InvestigateSpec
from ..runs.trial_picture import event_picture_port
from ..settings import HostSettings

_LOGGER = logging.getLogger(__name__)

#: Makes the model client for one model name (the host passes HA's SSL context in).
ClientFactory = Callable[[OllamaSettings], LLMClient]


@dataclass(frozen=True, slots=True)
class Evidence:
    """The last picture an AI step of a workflow looked at."""

    image: bytes
    at: datetime
    run_id: str
    camera: str | None
    #: A trial's (the try_workflow action): shown with the trial, never as the workflow's.
    trial: bool = False


class _CapturingPort:
    """The read port, remembering the last picture it handed the step."""

    def __init__(self, inner: NvrReadPort) -> None:
        self._inner = inner
        self.last: tuple[bytes, str] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def snapshot(self, camera: str) -> bytes:
        data = await self._inner.snapshot(camera)
        self.last = (data, camera)
        return data


class HaAiPort:
    """:class:`~...engine.ports.AiPort` for one config entry."""

    def __init__(
        self,
        client: OpenNVRClient,
        settings: HostSettings,
        make_client: ClientFactory = make_llm_client,
        on_evidence: Callable[[str, Evidence], None] | None = None,
        may_send: Callable[[], bool] = lambda: True,
    ) -> None:
        self._client = client
        self._settings = settings
        self._make_client = make_client
        self._on_evidence = on_evidence
        #: Whether the server in the options may be sent pictures and texts (it is on
        #: the local network, or an admin allowed it): see :mod:`.watch`.
        self.may_send = may_send
        self._llms: dict[str, LLMClient] = {}

    def update(self, settings: HostSettings) -> None:
        """New options: new models or URL take effect on the next step."""
        if (settings.ollama_url, settings.hardware) != (
            self._settings.ollama_url,
            self._settings.hardware,
        ):
            self._llms.clear()
        self._settings = settings

    def model_for(self, step: AIStep | None, override: str | None = None) -> str:
        """The model a step runs on: an allowed override, else the vision model for Look
        (and Investigate, which describes pictures too), the text model as a fallback."""
        if override:
            return override
        s = self._settings
        if step is not None and isinstance(step.spec, InvestigateSpec) and s.text_model:
            return s.text_model or s.vision_model
        return s.vision_model or s.text_model

    def llm(self, model: str) -> LLMClient:
        client = self._llms.get(model)
        if client is None:
            client = self._llms[model] = self._make_client(
                OllamaSettings(host=self._settings.ollama_url, model=model)
            )
        return client

    def step_context(
        self,
        *,
        budget: Any,
        values: Mapping[str, Any],
        camera: str | None,
        correlation_id: str | None,
        model: str,
        cameras: Mapping[str, int] | None = None,
    ) -> tuple[AIStepContext, _CapturingPort]:
        """An AI step's surroundings; also used by the look / investigate actions, which
        may name a camera that plays no role (``cameras``: more names for camera ids)."""
        s = self._settings
        port = _CapturingPort(
            PyOpenNvrReadPort(
                self._client, {**s.roles, **(cameras or {})}, correlation_id=correlation_id
            )
        )
        context = AIStepContext(
            llm=self.llm(model),
            nvr=port,
            budget=budget,
            hardware="gpu" if s.hardware == "gpu" else "cpu",
            site=s.site,
            values=values,
            camera=camera,
            model_name=model,
        )
        return context, port

    # ── the AiPort protocol ────────────────────────────────────────────

    async def run(self, step: Any, ctx: AiContext) -> AiResult | AiSuspended:
        if not self._settings.ai_enabled or not self.model_for(step):
            return _off()
        if not self.may_send():
            return _not_local()
        context, port = self._context(step, ctx)
        out = await run_ai_step(step, context)
        return self._convert(out, ctx, port)

    async def resume(
        self, step: Any, state: Mapping[str, Any], answer: str, ctx: AiContext
    ) -> AiResult | AiSuspended:
        if not self._settings.ai_enabled or not self.model_for(step):
            return _off()
        if not self.may_send():
            return _not_local()
        context, port = self._context(step, ctx)
        out = await resume_ai_step(step, context, state, answer)
        return self._convert(out, ctx, port)

    def _context(self, step: AIStep, ctx: AiContext) -> tuple[AIStepContext, _CapturingPort]:
        camera = _current_camera(step, ctx)
        context, port = self.step_context(
            budget=ctx.budget,
            values=ctx.inputs,
            camera=camera,
            correlation_id=ctx.run.correlation_id,
            model=self.model_for(step),
        )
        if ctx.run.trial:
            # A trial looks at the event's own picture, never at the camera now.
            port = _CapturingPort(event_picture_port(port, ctx.run.trigger))
            context = replace(context, nvr=port)
        return context, port

    def _convert(
        self, out: AIStepResult | AISuspended, ctx: AiContext, port: _CapturingPort
    ) -> AiResult | AiSuspended:
        if port.last is not None and self._on_evidence is not None:
            image, camera = port.last
            self._on_evidence(
                ctx.run.workflow_id,
                Evidence(image, datetime.now(UTC), ctx.run.run_id, camera, ctx.run.trial),
            )
        if isinstance(out, AISuspended):
            return AiSuspended(pending=out.pending, state=out.to_json())
        return to_engine_result(out)


def to_engine_result(out: AIStepResult) -> AiResult:
    """The ai package's result in the engine's shape (its step row and trace)."""
    d = out.decision
    return AiResult(
        outcome=d.decision,
        fields=dict(d.fields),
        reason=out.reason,  # the decision's words when the model gave none
        confidence=d.confidence,
        confidence_source=d.confidence_source,
        self_reported=d.self_reported,
        unsure_reason=d.unsure_reason,
        rule=out.rule,
        model=out.model,
        usage=asdict(d.usage),
        evidence=tuple(str(e) for e in d.evidence),
        trace=tuple(out.as_rows()),
    )


def _current_camera(step: AIStep, ctx: AiContext) -> str | None:
    """The step's camera: the for-each item's, else the trigger's role."""
    camera = ctx.inputs.get("camera_role") if isinstance(ctx.inputs, Mapping) else None
    if isinstance(camera, str) and camera:
        return camera
    return ctx.run.trigger.camera_role


def _off() -> AiResult:
    return AiResult(
        outcome="unsure",
        unsure_reason="llm_down",
        reason="AI is switched off or no model is chosen in the integration's options",
    )


def _not_local() -> AiResult:
    return AiResult(
        outcome="unsure",
        unsure_reason="not_local",
        reason="the AI server is outside the local network and no admin allowed sending "
        "pictures there (the integration's options, Ollama)",
    )
