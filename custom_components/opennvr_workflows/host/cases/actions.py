"""The actions on the home's own cases and on measuring the model. Responses:

* ``list_cases`` -> ``{keep, cases: [case]}``: the site's kept cases the caller may see
  (every camera their run touched), oldest first, each with its workflow and step, what
  was expected and answered, the note, signed links to its pictures and its size;
* ``delete_case`` -> ``{case_id, deleted, pictures}``: the case file and its pictures;
* ``export_cases`` -> ``{cases: [{case_id, file, yaml}]}``: copies to share, without
  pictures or anything that names the home (:func:`...evaluation.home_case.shared_text`);
* ``measure_model`` -> ``{models, home_cases_left_out, gate: {model: figures},
  workflows: {workflow id: {name, <model>: figures}}}``: the vision model (or ``model``)
  and, side by side, ``compare_with``; each workflow's figures with its failed cases and
  links to their pictures. Measuring the vision model also updates the gate.

A case is hidden from a person who may not see a camera its run touched, and a hidden case
answers like one that does not exist (:mod:`..read_scope`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import probatio as vol
import yaml
from homeassistant.const import ATTR_CONFIG_ENTRY_ID
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.helpers import config_validation as cv
from homeassistant.util.ssl import get_default_context

from ...ai import Hardware
from ...ai.model_check import list_models
from ...const import CONF_MODEL_GATE, DOMAIN
from ...evaluation.home_case import shared_text
from ...evaluation.per_workflow import Measurement, WorkflowFigures
from ...flows import model_gate
from ..action_support import entry_of, evaluation_of, host_of, log_change
from ..errors import invalid, listed
from ..permissions import Caller
from ..read_scope import Touched, action_caller, may_see
from .pictures import picture_link
from .store import KeptCase

if TYPE_CHECKING:
    from ..workflows import WorkflowHost

#: Seconds the check that a model is installed may take.
_LIST_TIMEOUT_S = 10.0


def _visible(caller: Caller, host: WorkflowHost, kept: KeptCase) -> bool:
    """Whether the caller may see every camera the case's run touched (as for the run)."""
    origin = kept.case.origin
    if origin is None:
        return False
    return may_see(caller, host, Touched(frozenset(origin.cameras), origin.all_cameras))


async def _cases(hass: HomeAssistant, call: ServiceCall) -> list[KeptCase]:
    """The site's kept cases the caller may see, of ``workflow`` when the call names one."""
    host = host_of(hass, call)
    caller = await action_caller(hass, call)
    workflow = call.data.get("workflow")
    return [
        kept
        for kept in await evaluation_of(hass, call).cases.async_cases()
        if _visible(caller, host, kept)
        and (workflow is None or (kept.case.origin and kept.case.origin.workflow == workflow))
    ]


async def async_list_cases(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """The kept cases the caller may see."""
    entry_id = entry_of(hass, call).entry_id
    rows: list[Any] = []
    for kept in await _cases(hass, call):
        case, origin = kept.case, kept.case.origin
        assert origin is not None
        rows.append(
            {
                "case_id": case.id,
                "workflow_id": origin.workflow,
                "workflow": origin.workflow_name,
                "step": origin.step,
                "marked": origin.marked,
                "marked_at": origin.marked_at,
                "expected": list(case.expect.decisions),
                "fields": dict(case.expect.fields),
                "answered": dict(origin.answered),
                "note": origin.note,
                "pictures": [picture_link(hass, entry_id, True, p.name) for p in kept.pictures],
                "size": kept.size,
            }
        )
    return {"keep": evaluation_of(hass, call).settings().keep, "cases": rows}


async def async_delete_case(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Delete a case and its pictures (one the caller may not see is "unknown")."""
    case_id = str(call.data["case_id"])
    found = next((k for k in await _cases(hass, call) if k.case.id == case_id), None)
    if found is None:
        raise invalid("unknown_case", case_id=case_id)
    await evaluation_of(hass, call).cases.async_delete(found)
    origin = found.case.origin
    log_change(call, hass, origin.workflow_name if origin else DOMAIN, f"case {case_id} deleted")
    return {"case_id": case_id, "deleted": True, "pictures": len(found.pictures)}


async def async_export_cases(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Copies of the caller's visible cases to share, without pictures."""
    found = await _cases(hass, call)
    texts = await hass.async_add_executor_job(_shared, [k.file for k in found])
    return {
        "cases": [
            {"case_id": k.case.id, "file": k.file.name, "yaml": text}
            for k, text in zip(found, texts, strict=True)
        ]
    }


def _shared(files: list[Path]) -> list[str]:
    """(blocking)"""
    return [shared_text(yaml.safe_load(f.read_text(encoding="utf-8"))) for f in files]


async def async_measure_model(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Measure the vision model (or ``model``) and ``compare_with`` on the shipped cases
    and the home's own, per workflow; keep each measurement; measuring the vision model
    updates the gate too (the entry reloads to apply it)."""
    entry = entry_of(hass, call)
    host = host_of(hass, call)
    evaluation = evaluation_of(hass, call)
    settings = host.settings
    if not settings.ai_enabled or not settings.vision_model:
        raise invalid("ai_off")
    models = [str(call.data.get("model") or settings.vision_model)]
    if (other := call.data.get("compare_with")) and other not in models:
        models.append(str(other))
    installed = await list_models(
        settings.ollama_url, timeout_seconds=_LIST_TIMEOUT_S, ssl_context=get_default_context()
    )
    missing = [m for m in models if installed is None or m not in installed]
    if missing:
        raise invalid("model_not_installed", model=missing[0], models=listed(installed or ()))
    inputs = await model_gate.async_measure_inputs(
        entry, settings.ollama_url, settings.ollama_anywhere
    )
    hardware: Hardware = "gpu" if settings.hardware == "gpu" else "cpu"
    measured: list[Measurement] = []
    for model in models:
        result = await model_gate.async_measure_model(
            hass, url=settings.ollama_url, model=model, hardware=hardware, inputs=inputs
        )
        await evaluation.measurements.async_save(result)
        measured.append(result)
    log_change(call, hass, entry.title, f"measured {', '.join(models)}")
    gate = measured[0].gate
    if models[0] == settings.vision_model and gate is not None:
        hass.config_entries.async_update_entry(
            entry, options={**entry.options, CONF_MODEL_GATE: gate.as_option()}
        )
        hass.config_entries.async_schedule_reload(entry.entry_id)
    return _response(hass, entry.entry_id, measured, inputs.home_left_out)


def _response(
    hass: HomeAssistant, entry_id: str, measured: list[Measurement], left_out: int
) -> dict[str, Any]:
    workflows: dict[str, Any] = {}
    for result in measured:
        for workflow_id, figures in result.workflows.items():
            row = workflows.setdefault(workflow_id, {"name": figures.name})
            row[result.model] = _figures(hass, entry_id, figures)
    return {
        "models": [m.model for m in measured],
        "date": measured[0].date,
        "home_cases_left_out": left_out,
        "gate": {
            m.model: (m.gate.as_option() | {"passed": m.gate.passed}) if m.gate else None
            for m in measured
        },
        "workflows": workflows,
    }


def _figures(hass: HomeAssistant, entry_id: str, figures: WorkflowFigures) -> dict[str, Any]:
    """A workflow's figures with links to its failed cases' pictures."""
    out = figures.as_json()
    out["passed"] = figures.passed
    out["failed"] = [
        {
            **failed,
            "pictures": [
                picture_link(hass, entry_id, bool(failed["home"]), name)
                for name in failed["pictures"]
            ],
        }
        for failed in out["failed"]
    ]
    return out


_BASE: Final[dict[Any, Any]] = {vol.Optional(ATTR_CONFIG_ENTRY_ID): cv.string}
_WORKFLOW: Final[dict[Any, Any]] = {**_BASE, vol.Optional("workflow"): cv.string}

#: The actions of this module: handler, data schema, response mode (registered with the
#: others, :mod:`..services`).
CASE_SERVICES: Final[
    dict[
        str,
        tuple[
            Callable[[HomeAssistant, ServiceCall], Awaitable[ServiceResponse]],
            vol.Schema,
            SupportsResponse,
        ],
    ]
] = {
    "list_cases": (async_list_cases, vol.Schema(_WORKFLOW), SupportsResponse.ONLY),
    "delete_case": (
        async_delete_case,
        vol.Schema({**_BASE, vol.Required("case_id"): cv.string}),
        SupportsResponse.OPTIONAL,
    ),
    "export_cases": (async_export_cases, vol.Schema(_WORKFLOW), SupportsResponse.ONLY),
    "measure_model": (
        async_measure_model,
        vol.Schema(
            {
                **_BASE,
                vol.Optional("model"): cv.string,
                vol.Optional("compare_with"): cv.string,
            }
        ),
        SupportsResponse.OPTIONAL,
    ),
}
