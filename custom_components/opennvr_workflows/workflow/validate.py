"""The one validator of workflow.v1: the entry points that run every check on a workflow.

A file is checked in three stages, each only once the one before passed: the ``contract`` key
(a file for another contract version is refused before anything else is read into it), the JSON
Schema (the shape), then the semantic checks of :mod:`.checks` on the typed model. A file with
structural problems also gets the semantic errors that can be told apart from them (best
effort), so a person sees every mistake in one pass. Text, parsed
data and a model built in code all go through the same stages, so the engine, the import UI,
the command line and CI refuse the same files for the same reasons.

Each entry point takes the :class:`~.site.SiteProfile` to check against (``site=``; None checks
the contract alone). ``skills=`` is the older, shorter form of a profile with skills only.
"""

from __future__ import annotations

from collections.abc import Mapping

from .checks import check_workflow
from .dump import workflow_to_data
from .model import CONTRACT, Workflow
from .parse import parse_workflow
from .plain_data import plain_data_problems
from .problems import Problem, Report, WorkflowInvalid
from .schema import schema_problems
from .site import SiteProfile
from .yaml_loader import Located, Mark, load_yaml

__all__ = [
    "CRASH_CODE",
    "load_workflow",
    "validate_data",
    "validate_text",
    "validate_workflow",
]

#: The code of the one problem reported when the validator itself fails on a file.
CRASH_CODE = "WF-VALIDATOR-CRASH"


def validate_text(
    text: str, *, site: SiteProfile | None = None, skills: frozenset[str] | None = None
) -> Report:
    """Every problem of a workflow file's text; the model too when there are no errors."""
    site = _site(site, skills)
    try:
        located, problems = load_yaml(text)
        if located is None:
            return Report.of(problems)
        return _validate_located(located, site)
    except Exception as err:  # a bug in a check must not become a traceback
        return _crashed(err)


def validate_data(
    data: object, *, site: SiteProfile | None = None, skills: frozenset[str] | None = None
) -> Report:
    """Every problem of already-parsed workflow data (positions are 0:0)."""
    if not isinstance(data, Mapping):
        return Report.of([Problem("WF-NOT-A-MAPPING", "a workflow is a mapping of keys to values")])
    site = _site(site, skills)
    try:
        return _validate_located(Located(dict(data)), site)
    except Exception as err:  # a bug in a check must not become a traceback
        return _crashed(err)


def _crashed(err: Exception) -> Report:
    """The report of a validation that failed: the file is refused (the engine never runs
    what was not fully checked), and the failure is named so it can be reported."""
    return Report.of(
        [
            Problem(
                CRASH_CODE,
                f"the validator failed on this file ({type(err).__name__}: {str(err)[:200]}); "
                "the file is refused until this is fixed, please report it with the file",
            )
        ]
    )


def validate_workflow(
    workflow: Workflow, *, site: SiteProfile | None = None, skills: frozenset[str] | None = None
) -> Report:
    """Every problem of a model built in code, checked exactly as its file would be."""
    try:
        data = workflow_to_data(workflow)
    except ValueError as err:
        return Report.of([Problem("WF-DURATION", f"the model cannot be written: {err}")])
    return validate_data(data, site=_site(site, skills))


def load_workflow(
    text: str,
    *,
    filename: str = "<workflow>",
    site: SiteProfile | None = None,
    skills: frozenset[str] | None = None,
) -> Workflow:
    """The model of a valid workflow file; raises :class:`WorkflowInvalid` otherwise."""
    report = validate_text(text, site=site, skills=skills)
    if report.workflow is None:
        raise WorkflowInvalid(report.problems, filename)
    return report.workflow


def _site(site: SiteProfile | None, skills: frozenset[str] | None) -> SiteProfile | None:
    """The site to check against: ``skills=`` is short for ``site=SiteProfile(skills=...)``."""
    if skills is None:
        return site
    if site is not None:
        raise TypeError("pass the skills in the SiteProfile, not beside it")
    return SiteProfile(skills=skills)


def _validate_located(located: Located, site: SiteProfile | None) -> Report:
    unsafe = plain_data_problems(located)
    if unsafe:
        return Report.of(unsafe)
    contract, go_on = _contract_problems(located)
    if not go_on:
        return Report.of(contract)
    structural = [
        p
        for p in schema_problems(located)
        if not (
            p.path == "$.contract" or (p.code == "WF-MISSING-KEY" and "`contract`" in p.message)
        )
    ]
    if structural:
        return Report.of(contract + structural + _semantic_beside(located, site, structural))
    assert isinstance(located.data, dict)
    workflow = parse_workflow(located.data)
    semantic = check_workflow(workflow, locate=located.locate, site=site)
    return Report.of(contract + semantic, workflow)


def _semantic_beside(
    located: Located, site: SiteProfile | None, structural: list[Problem]
) -> list[Problem]:
    """The semantic errors of a file that also has structural ones, where they can be told.

    A person fixing a file wants every mistake at once, not one more after each save. The
    typed model is only defined for data that fits the schema, so this is best effort: the
    model is built from the data as it is, and when building or checking it fails, the
    structural problems stand alone. Only errors are kept (a warning about a half-written
    file is noise), and none at, above or under a place a structural problem names: those
    would be the same mistake said twice, or a consequence of it.
    """
    assert isinstance(located.data, dict)
    try:
        workflow = parse_workflow(located.data)
        found = check_workflow(workflow, locate=located.locate, site=site)
    except Exception:  # data outside the schema: the model may not be built from it
        return []
    taken = [p.path for p in structural]
    return [
        p
        for p in found
        if p.severity == "error"
        and p.path != "$"
        and not any(_related(p.path, path) for path in taken)
    ]


def _related(first: str, second: str) -> bool:
    """Whether two JSON paths are the same place, or one lies inside the other."""
    return _inside(first, second) or _inside(second, first)


def _inside(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith((f"{outer}.", f"{outer}["))


def _contract_problems(located: Located) -> tuple[list[Problem], bool]:
    """Problems with the ``contract`` key, and whether checking may go on as workflow.v1."""
    data = located.data
    assert isinstance(data, dict)
    if "contract" not in data:
        return [
            Problem(
                "WF-CONTRACT-MISSING",
                f"the file does not say which contract it follows; add `contract: {CONTRACT}` "
                "as its first line",
                "$",
                *_line_col(located.locate(())),
            )
        ], True
    if data["contract"] != CONTRACT:
        mark = located.locate(("contract",))
        return [
            Problem(
                "WF-CONTRACT-UNSUPPORTED",
                f"the file follows {data['contract']!r}; this version reads {CONTRACT} only",
                "$.contract",
                mark.line,
                mark.column,
            )
        ], False
    return [], True


def _line_col(mark: Mark) -> tuple[int, int]:
    return mark.line, mark.column
