"""A marked run as a case, and which cases measure which workflow (no Home Assistant).

The rules of the expectation a mark gives, the case file the harness then reads, the copy
to share (nothing that names the home), and the plan of a measurement: a shipped case
counts for a workflow whose AI step is exactly its step, a home case for the workflow it
was marked on.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from custom_components.opennvr_workflows.engine.versions import step_hash
from custom_components.opennvr_workflows.evaluation.case_loader import (
    DEFAULT_CASES,
    load_case,
    load_suite,
)
from custom_components.opennvr_workflows.evaluation.case_model import StepCase
from custom_components.opennvr_workflows.evaluation.home_case import (
    HomeCaseError,
    MarkedRun,
    case_data,
    case_text,
    marked_step,
    shared_case,
)
from custom_components.opennvr_workflows.evaluation.per_workflow import (
    Measurement,
    WorkflowFigures,
    plan,
    under_test,
)
from custom_components.opennvr_workflows.workflow import (
    Workflow,
    load_template,
    load_workflow,
    template_text,
    walk_steps,
)
from custom_components.opennvr_workflows.workflow.model import AIStep

GATE = load_template("gate_concierge")


def first_ai_hash(workflow: Workflow) -> str:
    return next(step_hash(s) for _, s in walk_steps(workflow) if isinstance(s, AIStep))


def mark(**changes: Any) -> MarkedRun:
    """A wrong mark on the gate concierge's first step, which said "visitor"."""
    step, body = marked_step(GATE, first_ai_hash(GATE))
    base: dict[str, Any] = {
        "workflow_id": "gate_concierge",
        "workflow_name": GATE.name,
        "site": "entry-1",
        "run_id": "run-1",
        "step_path": "then.0",
        "step": step,
        "body": body,
        "answered_decision": "visitor",
        "answered_fields": {"company": "none"},
        "answered_reason": "a man with a box",
        "model": "m",
        "right": False,
        "marked_at": datetime(2026, 3, 1, 9, 30, tzinfo=UTC),
        "values": {"camera": "gate", "plate": "MU 77 TX", "alert_id": "a-9"},
        "camera": "gate",
        "pictures": ("pictures/x_1.jpg",),
        "cameras": ("4",),
    }
    return MarkedRun(**{**base, **changes})


def written(root: Path, run: MarkedRun) -> StepCase:
    """The case of ``run`` written under ``root`` with its picture, as the harness reads it."""
    data = case_data(run)
    (root / "look").mkdir(exist_ok=True)
    (root / "pictures").mkdir(exist_ok=True)
    shutil.copy(DEFAULT_CASES / "pictures" / "gate_taxi.jpg", root / "pictures" / "x_1.jpg")
    path = root / "look" / f"{data['id']}.yaml"
    path.write_text(case_text(data), encoding="utf-8")
    case = load_case(path, root)
    assert isinstance(case, StepCase)
    return case


def expected(run: MarkedRun) -> tuple[Any, Any]:
    data = case_data(run)
    return data["expect"]["decision"], data["expect"].get("fields")


def test_what_a_mark_expects() -> None:
    options = mark().step.decision
    assert expected(mark(right=True)) == ("visitor", {"company": "none"})
    assert expected(mark(decision="delivery", fields={"company": "food"})) == (
        "delivery",
        {"company": "food"},
    )
    assert expected(mark(fields={"company": "food"})) == ("visitor", {"company": "food"})
    others, fields = expected(mark())
    assert others == [d for d in options if d != "visitor"]
    assert fields is None


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"decision": "burglar"}, "bad_decision"),
        ({"decision": "visitor", "fields": {"company": "none"}}, "same_answer"),
        ({"fields": {"company": "acme"}}, "bad_field"),
        ({"pictures": ()}, "no_picture"),
    ],
)
def test_a_mark_that_cannot_make_a_case_says_why(changes: dict[str, Any], reason: str) -> None:
    with pytest.raises(HomeCaseError) as err:
        case_data(mark(**changes))
    assert err.value.reason == reason


def test_an_investigate_step_makes_no_case() -> None:
    workflow = load_template("investigate_on_request")
    step, body = marked_step(workflow, first_ai_hash(workflow))
    with pytest.raises(HomeCaseError) as err:
        case_data(mark(step=step, body=body))
    assert err.value.reason == "investigate"


def test_the_case_file_is_one_the_harness_reads(tmp_path: Path) -> None:
    case = written(tmp_path, mark(decision="cab", note="a taxi, roof sign lit"))
    assert case.id.startswith("home-gate_concierge-")
    assert case.values == {"camera": "gate", "plate": "MU 77 TX"}  # what the question reads
    assert case.expect.decisions == ("cab",)
    assert case.origin is not None
    assert case.origin.note == "a taxi, roof sign lit"
    assert case.origin.cameras == ("4",)
    assert case.step.spec == mark().step.spec


def test_a_shared_copy_names_no_home() -> None:
    shared = shared_case(case_data(mark(note="a courier")))
    assert "inputs" not in shared
    assert shared["event"] == {"camera": "gate"}
    origin = shared["origin"]
    assert not {"site", "run", "cameras", "marked_at"} & set(origin)
    assert origin["answered"]["decision"] == "visitor"
    assert origin["note"] == "a courier"
    assert "a courier" in origin["pictures"][0]
    assert "MU 77 TX" not in yaml.safe_dump(shared)


def test_a_shipped_case_measures_the_workflows_with_its_very_step(tmp_path: Path) -> None:
    shipped = [c for c in load_suite(DEFAULT_CASES, "look") if isinstance(c, StepCase)]
    text = template_text("gate_concierge")
    copied = under_test("gate_concierge", load_workflow(text))
    edited = under_test("edited", load_workflow(text.replace("or unclear?", "or not clear?")))
    assert edited.hashes != copied.hashes
    home = written(tmp_path, mark())
    measured = plan([copied, edited], shipped, [home])
    gate_cases = {c.id for c in shipped if c.step_label.startswith("gate_concierge[0]")}
    assert len(gate_cases) == 4 * 7  # four cases, each with its six variants
    assert set(measured.by_workflow["gate_concierge"]) == gate_cases | {f"home:{home.id}"}
    assert measured.by_workflow["edited"] == ()  # an edited step asks another question
    assert measured.gate == {c.id for c in shipped}
    assert len(measured.cases) == len(shipped) + 1


def test_a_measurement_reads_back_as_it_was_stored() -> None:
    figures = WorkflowFigures("w", "W", "m", 3, 2, 0.2, 0.9, 0.0, 1.0, 2.0, 1)
    measured = Measurement("m", "2026-03-01T09:30:00+00:00", None, {"w": figures})
    assert Measurement.from_json(yaml.safe_load(yaml.safe_dump(measured.as_json()))) == measured
    assert Measurement.from_json({"model": "m"}) is None
