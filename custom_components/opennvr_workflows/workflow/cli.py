"""The command line: check workflow files in CI or before sharing, and print the schema.

    workflow-v1 validate FILE...
    workflow-v1 schema
    workflow-v1 templates

``workflow-v1`` is this module's ``main`` as ``pip install`` of the repository installs it (the
package alone, as ``opennvr_workflow_v1``: PyYAML and jsonschema are all it needs, see
pyproject.toml). From a checkout, ``python scripts/workflow_v1.py`` runs the same without
installing, and ``python -m custom_components.opennvr_workflows.workflow`` runs it inside the
integration (which imports Home Assistant first).

``validate`` prints each problem as ``FILE:LINE:COL CODE message`` (warnings marked) and exits
1 when any file has an error, 0 otherwise; 2 when the validator itself failed on a file
(``WF-VALIDATOR-CRASH``, the file named; the other files are still checked). It checks the
contract alone unless told about a site: ``--skills a,b`` (the skills it has), ``--tools a,b``
(the AI tools its host implements) and ``--camera-roles a,b`` (the roles mapped to cameras),
each checked only when given.
``--format`` prints each valid file's canonical form.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from . import SiteProfile, dump_workflow, schema_text, template_names, validate_text
from .validate import CRASH_CODE

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    # No fixed prog: argparse names the command as it was run (``workflow-v1``, or
    # ``python -m ...`` for a module run).
    parser = argparse.ArgumentParser(
        description="Check workflow.v1 files, or print the contract's JSON Schema.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("validate", help="check workflow files; exit 1 on any error")
    check.add_argument("files", nargs="+", type=Path, metavar="FILE")
    check.add_argument(
        "--skills",
        help="comma-separated skills the site has; a needed skill not listed is an error",
    )
    check.add_argument(
        "--tools",
        help="comma-separated AI tools the site's host implements; another tool is an error",
    )
    check.add_argument(
        "--camera-roles",
        help="comma-separated camera roles mapped to cameras; another role is an error",
    )
    check.add_argument(
        "--format", action="store_true", help="print the canonical YAML of each valid file"
    )
    commands.add_parser("schema", help="print the workflow.v1 JSON Schema")
    commands.add_parser("templates", help="list the templates shipped with the package")
    return parser


def _validate(files: Sequence[Path], site: SiteProfile, show: bool, out: TextIO) -> int:
    """Check each file in turn; 2 when the validator failed on any file (the others are still
    checked), else 1 when any file has an error, else 0."""
    failed = crashed = False
    for path in files:
        name = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            print(f"{name}:0:0 WF-READ cannot read the file: {err}", file=out)
            failed = True
            continue
        report = validate_text(text, site=site)
        for problem in report.problems:
            print(problem.format(name), file=out)
        failed = failed or not report.ok
        crashed = crashed or any(p.code == CRASH_CODE for p in report.problems)
        if show and report.workflow is not None:
            print(f"# {name}", file=out)
            print(dump_workflow(report.workflow), file=out, end="")
    return 2 if crashed else 1 if failed else 0


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; returns the exit status."""
    stream = out if out is not None else sys.stdout
    args = _parser().parse_args(argv)
    if args.command == "schema":
        stream.write(schema_text())
        return 0
    if args.command == "templates":
        for name in template_names():
            print(name, file=stream)
        return 0
    site = SiteProfile(
        skills=_names(args.skills), tools=_names(args.tools), camera_roles=_names(args.camera_roles)
    )
    return _validate(args.files, site, args.format, stream)


def _names(option: str | None) -> frozenset[str] | None:
    """A comma-separated option as a set of names; None when the option was not given."""
    if option is None:
        return None
    return frozenset(name.strip() for name in option.split(",") if name.strip())
