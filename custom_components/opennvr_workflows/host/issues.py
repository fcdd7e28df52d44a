"""Repair issues the workflow host raises and clears.

One issue per invalid workflow file (naming the file, the line and the first problem), one
per workflow parked in *needs attention*, one while the model cannot be reached, and one
while the model's server is outside the local network without an admin's leave. Each
is deleted as soon as its cause is gone, so the Repairs page always shows what is true now.

An issue about one workflow links to its page in the Workflows panel (*Learn more*, which
Home Assistant opens in place: :func:`.pages.in_app`); the one listing the files that wait
for this site links to the panel's list, where each says what it waits for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from ..const import DOMAIN
from ..workflow import Problem
from .pages import in_app, panel_page, workflow_page


def invalid_file_id(entry_id: str, workflow_id: str) -> str:
    return f"{entry_id}_invalid_{workflow_id}"


def attention_id(entry_id: str, workflow_id: str) -> str:
    return f"{entry_id}_attention_{workflow_id}"


def waiting_id(entry_id: str) -> str:
    return f"{entry_id}_waiting_for_site"


def model_down_id(entry_id: str) -> str:
    return f"{entry_id}_model_unreachable"


def not_local_id(entry_id: str) -> str:
    return f"{entry_id}_model_not_local"


def raise_invalid_file(
    hass: HomeAssistant,
    entry_id: str,
    workflow_id: str,
    file: str,
    line: int,
    problem: str,
    count: int,
) -> None:
    ir.async_create_issue(
        hass,
        DOMAIN,
        invalid_file_id(entry_id, workflow_id),
        is_fixable=False,
        learn_more_url=in_app(workflow_page(workflow_id)),
        severity=ir.IssueSeverity.ERROR,
        translation_key="invalid_workflow_file",
        translation_placeholders={
            "file": file,
            "line": str(line),
            "problem": problem,
            "count": str(count),
        },
    )


def raise_waiting_for_site(
    hass: HomeAssistant, entry_id: str, waiting: Mapping[str, Sequence[Problem]]
) -> None:
    """One issue listing the files that wait for this site, each with what it needs."""
    lines = [
        f"- `{file}`: " + "; ".join(sorted({_need(p) for p in problems}))
        for file, problems in sorted(waiting.items())
    ]
    ir.async_create_issue(
        hass,
        DOMAIN,
        waiting_id(entry_id),
        is_fixable=False,
        learn_more_url=in_app(panel_page()),
        severity=ir.IssueSeverity.WARNING,
        translation_key="workflows_waiting_for_site",
        translation_placeholders={"count": str(len(waiting)), "files": "\n".join(lines)},
    )


def _need(problem: Problem) -> str:
    """What a site problem asks of the user, in a few words (the message names it)."""
    return problem.message.split(";")[0]


def raise_needs_attention(
    hass: HomeAssistant, entry_id: str, workflow_id: str, name: str, reason: str
) -> None:
    ir.async_create_issue(
        hass,
        DOMAIN,
        attention_id(entry_id, workflow_id),
        is_fixable=False,
        learn_more_url=in_app(workflow_page(workflow_id)),
        severity=ir.IssueSeverity.WARNING,
        translation_key="workflow_needs_attention",
        translation_placeholders={"workflow": name, "reason": reason},
    )


def raise_model_down(hass: HomeAssistant, entry_id: str, url: str, detail: str) -> None:
    ir.async_create_issue(
        hass,
        DOMAIN,
        model_down_id(entry_id),
        is_fixable=False,
        severity=ir.IssueSeverity.WARNING,
        translation_key="model_unreachable",
        translation_placeholders={"url": url, "detail": detail},
    )


def raise_not_local(hass: HomeAssistant, entry_id: str, url: str) -> None:
    """The AI server is outside the local network and no admin allowed that: nothing is
    sent to it (the issue says where to allow it or what to change)."""
    ir.async_create_issue(
        hass,
        DOMAIN,
        not_local_id(entry_id),
        is_fixable=False,
        severity=ir.IssueSeverity.WARNING,
        translation_key="model_not_local",
        translation_placeholders={"url": url},
    )


def clear(hass: HomeAssistant, issue_id: str) -> None:
    ir.async_delete_issue(hass, DOMAIN, issue_id)


def clear_prefix(hass: HomeAssistant, prefix: str, keep: set[str]) -> None:
    """Delete this domain's issues whose id starts with ``prefix``, except ``keep``."""
    registry = ir.async_get(hass)
    for domain, issue_id in list(registry.issues):
        if domain == DOMAIN and issue_id.startswith(prefix) and issue_id not in keep:
            ir.async_delete_issue(hass, DOMAIN, issue_id)
