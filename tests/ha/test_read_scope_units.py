"""Which cameras a run or a workflow touched, worked out from what the engine stored: every
way a camera can be named (a role, a number, ``cam3``, ``camera_3``, "all"), what a name
this site does not know means (every camera), and the stored columns as the engine writes
them (JSON text or mappings, empty values). The doors built on this are tested with a real
Home Assistant in ``test_reads_by_camera.py``; here the rules themselves, on a stand-in
host."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import pytest

from custom_components.opennvr_workflows.engine import UnknownRunError
from custom_components.opennvr_workflows.host import read_scope
from custom_components.opennvr_workflows.host.permissions import Caller
from custom_components.opennvr_workflows.host.read_scope import Touched
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from custom_components.opennvr_workflows.workflow import load_template

ROLES = {"front_door": 1, "drive": 2}


@dataclass
class Person:
    """A caller who may see only the camera entities listed."""

    entities: set[str]
    is_admin: bool = False

    def may_see(self, entity_id: str | None) -> bool:
        return entity_id in self.entities

    def may_see_all(self, entity_ids: Iterable[str | None]) -> bool:
        return all(self.may_see(e) for e in entity_ids)


@dataclass
class Engine:
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)

    async def run_detail(self, run_id: str) -> dict[str, Any]:
        if run_id not in self.runs:
            raise UnknownRunError(run_id)
        return self.runs[run_id]


def host(files: Mapping[str, Any] | None = None, lists: Mapping[str, Any] | None = None) -> Any:
    settings = SimpleNamespace(roles=ROLES, site=SimpleNamespace(lists=dict(lists or {})))
    return SimpleNamespace(
        settings=settings,
        site_cameras=lambda: {1: None, 2: None, 3: None},
        camera_entity=lambda camera_id: f"camera.c{camera_id}",
        files=dict(files or {}),
        engine=Engine(),
    )


def as_host(value: Any) -> WorkflowHost:
    return cast(WorkflowHost, value)


def as_caller(value: Person) -> Caller:
    return cast(Caller, value)


@pytest.mark.parametrize(
    ("name", "camera_id"),
    [
        ("front_door", "1"),
        (" drive ", "2"),
        ("camera_3", "3"),
        ("3", "3"),
        ("cam3", "3"),
        ("garden", None),
        ("cam-x", None),
    ],
)
def test_every_way_a_camera_is_named(name: str, camera_id: str | None) -> None:
    assert read_scope.camera_id_of(as_host(host()), name) == camera_id


def test_one_camera_as_something_names_it() -> None:
    site = as_host(host())
    assert read_scope.camera_touched(site, None) == Touched()
    assert read_scope.camera_touched(site, "") == Touched()
    assert read_scope.camera_touched(site, "all") == Touched(everywhere=True)
    assert read_scope.camera_touched(site, "garden") == Touched(everywhere=True)
    assert read_scope.camera_touched(site, "drive") == Touched(frozenset({"2"}))


def test_a_run_touched_its_trigger_its_steps_its_tools_and_its_questions() -> None:
    site = as_host(host())
    detail = {
        "trigger": json.dumps({"camera_role": "front_door"}),
        "steps": [{"inputs": json.dumps({"camera": "drive"})}, {"inputs": "not json"}],
        "tool_calls": [
            {"kind": "model", "name": "look"},
            {"kind": "tool", "name": "site_lookup", "args_asked": {"name": "family"}},
            {"kind": "tool", "name": "describe_camera", "args_asked": {"camera_ids": [1, ""]}},
        ],
        "approvals": [{"camera_id": None}],
    }
    assert read_scope.run_touched(site, detail) == Touched(frozenset({"1", "2"}))
    across = {**detail, "tool_calls": [{"kind": "tool", "name": "recent_events", "args_asked": {}}]}
    assert read_scope.run_touched(site, across).everywhere, "no camera named: the whole site"
    by_id = {"trigger": {"camera_id": 2}, "approvals": [{"camera_id": "1"}]}
    assert read_scope.run_touched(site, by_id) == Touched(frozenset({"1", "2"}))


async def test_a_run_is_seen_only_by_who_may_see_every_camera_it_touched() -> None:
    site = host()
    site.engine.runs["r1"] = {"trigger": {"camera_id": 1}, "tool_calls": []}
    site.engine.runs["r2"] = {
        "trigger": {"camera_id": 1},
        "tool_calls": [{"kind": "tool", "name": "recent_events", "args_asked": {}}],
    }
    door = as_caller(Person({"camera.c1"}))
    admin = as_caller(Person(set(), is_admin=True))
    assert await read_scope.visible_run(door, as_host(site), "r1") is not None
    assert await read_scope.visible_run(door, as_host(site), "r2") is None
    assert await read_scope.visible_run(admin, as_host(site), "r2") is not None
    assert await read_scope.visible_run(admin, as_host(site), "gone") is None
    assert read_scope.visible_camera_ids(door, as_host(site)) == frozenset({1})


def test_a_workflow_names_its_trigger_its_conditions_and_its_steps_cameras() -> None:
    site = as_host(host())
    parcel = load_template("parcel_at_door")
    touched = read_scope.workflow_touched(site, parcel)
    assert "1" in touched.cameras
    assert read_scope.workflow_touched(site, None) == Touched(everywhere=True)
    door = as_caller(Person({"camera.c1"}))
    nobody = as_caller(Person(set()))
    assert read_scope.may_see_workflow(door, site, parcel) == (not touched.everywhere)
    assert not read_scope.may_see_workflow(nobody, site, parcel)


def test_personal_lists_by_name_and_by_what_is_compared_against_them() -> None:
    files = {
        "gate": SimpleNamespace(workflow=load_template("gate_concierge")),
        "broken": SimpleNamespace(workflow=None),
    }
    site = as_host(host(files, lists={"known_plates": ["AB12"], "couriers": ["DHL"]}))
    personal = read_scope.personal_lists(site)
    assert "known_plates" in personal
    assert "couriers" not in personal
