"""The contract package without Home Assistant: the ``workflow-v1`` entry and the launcher.

Each command runs in an interpreter that has only the package (as pyproject.toml installs it)
and its declared dependencies; Home Assistant is not there, and any attempt to import it, the
integration or the SDK is recorded (tests/workflow/standalone.py).
"""

from __future__ import annotations

import json
from fnmatch import fnmatch
from pathlib import Path

import pytest
from opennvr_app_sdk.agent import READ_TOOL_NAMES

from custom_components.opennvr_workflows.workflow import (
    load_schema,
    template_names,
    validate_text,
)
from custom_components.opennvr_workflows.workflow.vocabulary import SDK_READ_TOOLS

from .standalone import LAUNCHER, ROOT, IsolatedRun, build_site, distribution, run_isolated

DIST = distribution()
TEMPLATES = DIST.folder / "templates"
REFUSED = Path(__file__).parent / "refused"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(tmp_path_factory.mktemp("standalone") / "site-packages")


def _entry(site: Path, *args: str) -> IsolatedRun:
    return run_isolated(site, DIST.entry, DIST.command, *args)


def _expected(*paths: Path) -> str:
    """What the command prints for ``paths``, from the package as the integration imports it."""
    lines: list[str] = []
    for path in paths:
        report = validate_text(path.read_text(encoding="utf-8"))
        lines.extend(problem.format(str(path)) for problem in report.problems)
    return "".join(f"{line}\n" for line in lines)


def _assert_alone(run: IsolatedRun) -> None:
    assert run.available == [], "the isolated interpreter can see Home Assistant or the SDK"
    assert run.tried == [], f"tried to import {run.tried}"
    assert run.loaded == []


def test_entry_validates_files_without_home_assistant(site: Path) -> None:
    good = sorted(TEMPLATES.glob("*.yaml"))
    run = _entry(site, "validate", *map(str, good))
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    _assert_alone(run)

    bad = [REFUSED / "safety_ai_option_app_action.yaml", REFUSED / "yaml_duplicate_key.yaml"]
    run = _entry(site, "validate", str(good[0]), *map(str, bad))
    assert run.returncode == 1
    assert run.stdout == _expected(good[0], *bad)
    assert "WF-SAFETY-ACTUATOR-AFTER-AI" in run.stdout
    _assert_alone(run)


def test_entry_prints_the_schema_and_the_templates(site: Path) -> None:
    run = _entry(site, "schema")
    assert run.returncode == 0
    assert json.loads(run.stdout) == load_schema()
    run = _entry(site, "templates")
    assert run.stdout.split() == list(template_names())
    _assert_alone(run)


def test_entry_usage_names_the_command(site: Path) -> None:
    run = _entry(site, "--help")
    assert run.returncode == 0
    assert run.stdout.startswith(f"usage: {DIST.command} ")
    assert _entry(site).returncode == 2


def test_launcher_runs_from_a_checkout_without_home_assistant(site: Path) -> None:
    path = TEMPLATES / "camera_offline_triage.yaml"
    run = run_isolated(site, str(LAUNCHER), str(LAUNCHER), "validate", "--format", str(path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"# {path}\ncontract: workflow.v1\n")
    _assert_alone(run)
    bad = REFUSED / "ai_key_typo.yaml"
    run = run_isolated(site, str(LAUNCHER), str(LAUNCHER), "validate", str(bad))
    assert (run.returncode, run.stdout) == (1, _expected(bad))


def test_a_refused_import_is_seen_even_when_caught(site: Path, tmp_path: Path) -> None:
    """The guard itself: a guarded import of Home Assistant is recorded and fails."""
    script = tmp_path / "sneaky.py"
    script.write_text(
        "try:\n    import homeassistant.core\nexcept ImportError:\n    print('refused')\n",
        encoding="utf-8",
    )
    run = run_isolated(site, str(script), str(script))
    assert run.stdout == "refused\n"
    assert run.tried == ["homeassistant"]


def test_read_tools_are_the_sdks() -> None:
    """The contract's copy of the SDK's read tools (kept so it needs no SDK) is the SDK's."""
    assert frozenset(READ_TOOL_NAMES) == SDK_READ_TOOLS


def test_distribution_version_is_the_integrations() -> None:
    manifest = json.loads((DIST.folder.parent / "manifest.json").read_text(encoding="utf-8"))
    assert DIST.version == manifest["version"]


def test_distribution_ships_every_module_and_file_the_package_has() -> None:
    """A new subpackage or data file in the folder must be listed in pyproject.toml too."""
    folders = {path.parent.relative_to(DIST.folder) for path in DIST.folder.rglob("__init__.py")}
    assert {".".join((DIST.package, *folder.parts)) for folder in folders} == set(DIST.packages)
    patterns = DIST.package_data[DIST.package]
    data = [
        path.relative_to(DIST.folder).as_posix()
        for path in DIST.folder.rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts
    ]
    assert data
    unshipped = [name for name in data if not any(fnmatch(name, p) for p in patterns)]
    assert unshipped == []
    assert (ROOT / "README.md").is_file()
