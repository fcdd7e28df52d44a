"""Numbers that cannot be held (thousands of digits, overflow, NaN) are located refusals,
never a traceback; a validator failure is its own problem and its own exit status."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.workflow import validate as validate_module
from custom_components.opennvr_workflows.workflow import validate_data, validate_text
from custom_components.opennvr_workflows.workflow.yaml_writer import canonical_yaml

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "custom_components" / "opennvr_workflows" / "workflow" / "templates"

BASE = "contract: workflow.v1\nname: Numbers\nwhen:\n  button: {}\nthen:\n  - log: hi\n"
HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (f"limits: {{ per_hour: {HUGE} }}", "WF-NUMBER-TOO-LARGE"),
        (f"limits: {{ per_hour: -{HUGE} }}", "WF-NUMBER-TOO-LARGE"),
        (f"limits: {{ per_hour: 0x{'f' * 5000} }}", "WF-NUMBER-TOO-LARGE"),
        (f"limits: {{ per_hour: 0o{'7' * 5000} }}", "WF-NUMBER-TOO-LARGE"),
        (f"limits: {{ per_hour: 0x{'f' * 40} }}", "WF-NUMBER-TOO-LARGE"),
        (f"limits: {{ per_hour: {'0' * 5000}1 }}", "WF-NUMBER-TOO-LARGE"),
        (f"limits: {{ per_hour: {2**53} }}", "WF-NUMBER-TOO-LARGE"),
        ("limits: { per_hour: 1e999 }", "WF-NUMBER-TOO-LARGE"),
        ("limits: { per_hour: -1e999 }", "WF-NUMBER-TOO-LARGE"),
        ("limits: { per_hour: .nan }", "WF-YAML-NUMBER"),
        ("limits: { per_hour: .inf }", "WF-YAML-NUMBER"),
        # YAML keys are at most 1024 characters; longer ones are a syntax error.
        (f"{'9' * 1000}: x", "WF-NUMBER-TOO-LARGE"),
        (f"0x{'a' * 1000}: x", "WF-NUMBER-TOO-LARGE"),
        (f"{'9' * 20}: x", "WF-NUMBER-TOO-LARGE"),
        ("1e999: x", "WF-NUMBER-TOO-LARGE"),
        (f"description: [{HUGE}]", "WF-NUMBER-TOO-LARGE"),
    ],
    ids=lambda value: value[:30] if isinstance(value, str) else None,
)
def test_numbers_that_cannot_be_held_are_located_refusals(line: str, code: str) -> None:
    report = validate_text(BASE + line + "\n")
    assert not report.ok
    found = [p for p in report.errors if p.code == code]
    assert found, [p.format() for p in report.problems]
    assert found[0].line == 7
    assert all(len(p.message) < 400 for p in report.problems)


def test_a_long_duration_is_refused_before_it_is_converted() -> None:
    text = BASE.replace("  - log: hi\n", f"  - wait: {'9' * 5000}s\n")
    assert [p.code for p in validate_text(text).errors] == ["WF-DURATION"]


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (10**5000, "WF-NUMBER-TOO-LARGE"),
        (-(10**5000), "WF-NUMBER-TOO-LARGE"),
        (math.nan, "WF-YAML-NUMBER"),
        (math.inf, "WF-YAML-NUMBER"),
        (object(), "WF-DATA-TYPE"),
    ],
    ids=["huge", "huge-negative", "nan", "inf", "object"],
)
def test_data_given_in_code_is_guarded_too(value: object, code: str) -> None:
    data = {
        "contract": "workflow.v1",
        "name": "Numbers",
        "when": {"button": {}},
        "then": [{"log": "hi"}],
        "limits": {"per_hour": value},
    }
    report = validate_data(data)
    assert [(p.code, p.path) for p in report.errors] == [(code, "$.limits.per_hour")]


def test_keys_that_are_not_text_and_cycles_in_data_are_refused() -> None:
    data: dict[object, object] = {"contract": "workflow.v1", 10**5000: 1}
    assert [p.code for p in validate_data(data).errors] == ["WF-YAML-KEY"]
    cyclic: dict[str, object] = {"contract": "workflow.v1"}
    cyclic["then"] = [cyclic]
    assert "WF-YAML-TOO-DEEP" in [p.code for p in validate_data(cyclic).errors]


def test_text_that_spells_a_huge_number_is_quoted_when_written() -> None:
    assert canonical_yaml({"name": HUGE}).strip() in (f"name: '{HUGE}'", f'name: "{HUGE}"')


def test_a_failing_check_is_a_validator_crash_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")

    monkeypatch.setattr(validate_module, "check_workflow", broken)
    report = validate_text(
        (TEMPLATES / sorted(p.name for p in TEMPLATES.glob("*.yaml"))[0]).read_text()
    )
    assert [p.code for p in report.problems] == ["WF-VALIDATOR-CRASH"]
    assert report.workflow is None
    assert "ValueError" in report.problems[0].message


def test_the_command_line_exits_two_on_a_crash_and_checks_the_next_file(tmp_path: Path) -> None:
    first = tmp_path / "a.yaml"
    second = tmp_path / "b.yaml"
    first.write_text(BASE)
    second.write_text(BASE + "limits: { per_hour: 1e999 }\n")
    script = (
        "import sys\n"
        "from custom_components.opennvr_workflows.workflow import cli, validate\n"
        "def broken(*a, **k):\n    raise RuntimeError('boom')\n"
        "validate.check_workflow = broken\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, "validate", str(first), str(second)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{first}:0:0 WF-VALIDATOR-CRASH")
    assert any(line.startswith(f"{second}:7:") and "WF-NUMBER-TOO-LARGE" in line for line in lines)
