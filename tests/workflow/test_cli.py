"""The command line, run as people and CI run it: a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from custom_components.opennvr_workflows.workflow import load_schema

ROOT = Path(__file__).resolve().parents[2]
MODULE = "custom_components.opennvr_workflows.workflow"
TEMPLATES = ROOT / "custom_components" / "opennvr_workflows" / "workflow" / "templates"
REFUSED = Path(__file__).parent / "refused"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", MODULE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_valid_files_exit_zero_and_print_nothing() -> None:
    result = _run("validate", *(str(p) for p in sorted(TEMPLATES.glob("*.yaml"))))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


def test_invalid_file_prints_located_problems_and_exits_one() -> None:
    bad = REFUSED / "safety_ai_option_app_action.yaml"
    result = _run("validate", str(bad))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    location, code, *_ = lines[0].split(" ")
    assert location == f"{bad}:13:11"  # the `app_action` key
    assert code == "WF-SAFETY-ACTUATOR-AFTER-AI"


def test_one_bad_file_among_good_ones_fails_the_run() -> None:
    good = TEMPLATES / "parcel_at_door.yaml"
    bad = REFUSED / "yaml_duplicate_key.yaml"
    result = _run("validate", str(good), str(bad))
    assert result.returncode == 1
    assert all(line.startswith(str(bad)) for line in result.stdout.splitlines())


def test_warnings_are_printed_but_do_not_fail(tmp_path: Path) -> None:
    text = (TEMPLATES / "parcel_at_door.yaml").read_text().replace("state: test", "state: on")
    path = tmp_path / "on.yaml"
    path.write_text(text)
    result = _run("validate", str(path))
    assert result.returncode == 0
    assert "WF-STATE-ON (warning)" in result.stdout


def test_missing_file_is_reported(tmp_path: Path) -> None:
    result = _run("validate", str(tmp_path / "absent.yaml"))
    assert result.returncode == 1
    assert "WF-READ" in result.stdout


def test_skills_option_checks_needs() -> None:
    path = TEMPLATES / "parcel_at_door.yaml"
    assert _run("validate", "--skills", "detector,vision_model", str(path)).returncode == 0
    result = _run("validate", "--skills", "detector", str(path))
    assert result.returncode == 1
    assert "WF-SKILL-MISSING" in result.stdout
    assert "vision_model" in result.stdout


def test_tools_and_camera_roles_options_check_the_site() -> None:
    path = Path(__file__).parent / "rfc_night_intrusion.yaml"
    tools = "describe_camera,recent_events,site_lookup,search_footage,ask_person"
    result = _run("validate", "--tools", tools, "--camera-roles", "yard-east,yard-west", str(path))
    assert result.returncode == 0, result.stdout
    assert "WF-ASK-PATH-MISSING (warning)" in result.stdout
    result = _run(
        "validate",
        "--tools",
        "describe_camera,recent_events,site_lookup,ask_person",
        "--camera-roles",
        "yard-east",
        str(path),
    )
    assert result.returncode == 1
    errors = [line for line in result.stdout.splitlines() if "(warning)" not in line]
    assert [line.split(" ")[1] for line in errors] == [
        "WF-CAMERA-ROLE-UNMAPPED",
        "WF-TOOL-NOT-HERE",
    ]
    assert "'yard-west'" in errors[0]
    assert "search_footage" in errors[1]


def test_schema_prints_the_json_schema() -> None:
    result = _run("schema")
    assert result.returncode == 0
    assert json.loads(result.stdout) == load_schema()


def test_format_prints_the_canonical_form(tmp_path: Path) -> None:
    path = TEMPLATES / "camera_offline_triage.yaml"
    result = _run("validate", "--format", str(path))
    assert result.returncode == 0
    assert "cooldown: 30m" in result.stdout
    assert result.stdout.startswith(f"# {path}\ncontract: workflow.v1\n")


def test_usage_error_exits_two() -> None:
    assert _run().returncode == 2
