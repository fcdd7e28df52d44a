"""The templates gallery: each shipped template with what it needs and what this site
still lacks for it (a skill, a camera role to map), as the validator says."""

from __future__ import annotations

from typing import Any

from ..host.workflows import SITE_CODES, WorkflowHost
from ..workflow import template_names, template_text, validate_text


def template_rows(host: WorkflowHost) -> list[dict[str, Any]]:
    """Every template, sorted by name (blocking: reads the package's files)."""
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
            }
        )
    return rows
