"""The templates gallery: each shipped template with what it needs, what this site still
lacks for it (a skill, a camera role to map), as the validator says, and whether the folder
already holds it (the gallery then offers to replace it or to save a copy under a free
name, rather than a Save that is refused)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..host.workflows import SITE_CODES, WorkflowHost
from ..workflow import template_names, template_text, validate_text

#: How many copies of one template the gallery names before it gives up suggesting one.
_COPIES = 100


def template_rows(host: WorkflowHost, installed: Collection[str]) -> list[dict[str, Any]]:
    """Every template, sorted by name (blocking: reads the package's files); ``installed``
    are the workflow ids of the folder's files (read on the event loop)."""
    rows = []
    for name in template_names():
        text = template_text(name)
        alone = validate_text(text)  # the contract only: the template's own shape
        here = host.validate(text)  # against this site
        workflow = alone.workflow
        missing = [p.as_dict() for p in here.problems if p.code in SITE_CODES]
        rows.append(
            {
                "template": name,
                "name": workflow.name if workflow else name,
                "description": workflow.description if workflow else None,
                "needs": list(workflow.needs) if workflow else [],
                "ready": here.ok,
                "missing": missing,
                "yaml": text,
                # The folder's file of this name (its workflow id), if there is one.
                "installed": name in installed,
                "copy_name": copy_name(name, installed),
            }
        )
    return rows


def copy_name(name: str, taken: Collection[str]) -> str | None:
    """A file name for a copy of ``name`` that no workflow of the folder has."""
    for n in range(1, _COPIES + 1):
        candidate = f"{name}_copy" if n == 1 else f"{name}_copy_{n}"
        if candidate not in taken:
            return candidate
    return None
