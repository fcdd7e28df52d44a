"""The workflow.v1 templates shipped in this package (``templates/*.yaml``).

Each template is an ordinary workflow file with its ``needs``, so the import UI checks a
template exactly as it checks a file someone shared.
"""

from __future__ import annotations

from importlib import resources

from .model import Workflow
from .site import SiteProfile

__all__ = ["load_template", "template_names", "template_text"]

_FOLDER = "templates"


def template_names() -> tuple[str, ...]:
    """The templates' names (file names without ``.yaml``), sorted."""
    folder = resources.files(__package__).joinpath(_FOLDER)
    return tuple(
        sorted(
            entry.name.removesuffix(".yaml")
            for entry in folder.iterdir()
            if entry.name.endswith(".yaml")
        )
    )


def template_text(name: str) -> str:
    """The YAML text of one template; raises KeyError for an unknown name."""
    if name not in template_names():
        raise KeyError(f"no template named {name!r}; templates: {', '.join(template_names())}")
    folder = resources.files(__package__).joinpath(_FOLDER)
    return folder.joinpath(f"{name}.yaml").read_text(encoding="utf-8")


def load_template(
    name: str, *, site: SiteProfile | None = None, skills: frozenset[str] | None = None
) -> Workflow:
    """The model of one template (raises WorkflowInvalid if the site lacks what it uses)."""
    from . import load_workflow

    return load_workflow(template_text(name), filename=f"{name}.yaml", site=site, skills=skills)
