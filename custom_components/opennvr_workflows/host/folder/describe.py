"""Describe it: the ``describe_workflow`` action and the Workflows panel's hook.

A sentence in, a workflow.v1 file out: :func:`async_describe` drafts it with
:func:`...ai.draft.draft_workflow` on the entry's text model (else its vision model), told
this site's camera roles, skills and lists, and gated by this site's validator
(``host.validate``); an invalid draft is repaired with the validator's located problems at
most twice, then refused with them. Offered only once the evaluation gate is open (the look
suite's Wilson lower bound at 0.80 or above on the entry's model, see
:func:`..skills.gate_open`).

``save`` false returns the draft for review (the import action's dry run: the preview, the
file it would be). ``save`` true, for admins only, writes it through the import action's own
path, always in Test. The panel calls :func:`async_describe` with the user's context and
gets the same dictionary as the action's response::

    {valid: true, yaml, model, repairs, problems (warnings), workflow_id, file, written,
     replaced, state: "test", name, description, needs, triggers, actuators, ...}

A refused draft raises ``draft_refused`` naming the first problems (JSON path, code,
message); ``draft_failed`` when the model could not be asked.
"""

from __future__ import annotations

from typing import Any, Final

from homeassistant.core import Context, HomeAssistant, ServiceCall, ServiceResponse

from ...ai.draft import DraftSite, draft_workflow
from ...const import DOMAIN
from ...workflow import Report
from ..action_support import host_of
from ..errors import failed, invalid, problem_text
from ..permissions import is_admin
from ..skills import gate_open
from ..workflows import WorkflowHost
from . import actions as file_actions

#: How many of a refused draft's problems the error names.
_SHOWN_PROBLEMS: Final = 3


async def async_describe_action(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """The ``describe_workflow`` action."""
    data = call.data
    return await async_describe(
        hass,
        host_of(hass, call),
        data["sentence"],
        save=bool(data.get("save", False)),
        file_name=data.get("file_name"),
        overwrite=bool(data.get("overwrite", False)),
        context=call.context,
        entry_id=data.get("config_entry_id"),
    )


async def async_describe(
    hass: HomeAssistant,
    host: WorkflowHost,
    sentence: str,
    *,
    save: bool = False,
    file_name: str | None = None,
    overwrite: bool = False,
    context: Context | None = None,
    entry_id: str | None = None,
) -> dict[str, Any]:
    """Draft ``sentence`` on ``host``'s site; return it for review, or save it in Test
    (``save``: admins only). Raises the integration's translated errors."""
    settings = host.settings
    if not settings.ai_enabled or not (settings.text_model or settings.vision_model):
        raise invalid("ai_off")
    if not host.ai.may_send():
        raise failed("ollama_not_local", url=settings.ollama_url)
    if not gate_open(settings):
        raise invalid("describe_gate_closed", model=settings.vision_model or "none")
    if save and not await is_admin(hass, context):
        raise invalid("describe_save_needs_admin")
    model = settings.text_model or settings.vision_model
    site = host.site_profile()
    told = DraftSite(
        camera_roles=tuple(sorted(site.camera_roles or ())),
        skills=tuple(sorted(site.skills or ())),
        lists=tuple(sorted(site.lists or ())),
        facts=settings.site.facts,
    )

    async def validate(text: str) -> Report:
        return await hass.async_add_executor_job(host.validate, text)

    result = await draft_workflow(
        sentence, llm=host.ai.llm(model), model=model, site=told, validate=validate
    )
    if result.error is not None:
        raise failed("draft_failed", model=model, error=result.error)
    if not result.ok or result.text is None:
        shown = result.problems[:_SHOWN_PROBLEMS]
        raise invalid(
            "draft_refused",
            repairs=result.repairs,
            problems="; ".join(f"{p.path}: {problem_text(p)}" for p in shown),
        )
    data: dict[str, Any] = {"yaml": result.text, "dry_run": not save, "overwrite": overwrite}
    if file_name:
        data["file_name"] = file_name
    if entry_id:
        data["config_entry_id"] = entry_id
    imported = await file_actions.async_import(
        hass,
        ServiceCall(hass, DOMAIN, "import_workflow", data, context, return_response=True),
    )
    return {
        **(imported or {}),
        "valid": True,
        "yaml": result.text,
        "model": model,
        "repairs": result.repairs,
    }
