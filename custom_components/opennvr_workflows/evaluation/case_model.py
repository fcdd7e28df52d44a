"""The typed model of an eval case, as the loader builds it from a case file.

A step case (suites ``look`` and ``investigate``) fixes everything but the model: the AI step
(a shipped template's, or one written in the case), the trigger's values, the pictures a
snapshot returns, what the NVR answers each read tool with, the site's rules and the run's
time. What a good run gives is in :class:`Expectation`. A draft case (suite ``draft``) is a
sentence and the workflow a good draft of it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from ..ai import CameraHealth, LiveDetections, StoredEvent
from ..workflow import Workflow
from ..workflow.model import AIStep, LookSpec

type Suite = Literal["look", "investigate", "draft"]
SUITES: tuple[Suite, ...] = ("look", "investigate", "draft")
#: The suites the runner drives through the AI step library.
STEP_SUITES: tuple[Suite, ...] = ("look", "investigate")


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Picture:
    """One picture file and what is really in it (``shows``), the truth a reader checks
    the case's expectation against."""

    path: Path
    shows: str

    def read(self) -> bytes:
        return self.path.read_bytes()


@dataclass(frozen=True)
class Fixtures:
    """What the NVR answers, so the tool side of a case is the same on every run.

    ``captions`` is the NVR's own caption per camera (a camera without one is described by
    the vision model from its picture); ``ping`` says whether a fresh frame can be fetched."""

    cameras: tuple[str, ...] = ()
    captions: Mapping[str, str] = field(default_factory=_empty)
    detections: Mapping[str, LiveDetections] = field(default_factory=_empty)
    events: tuple[StoredEvent, ...] = ()
    search: tuple[StoredEvent, ...] = ()
    health: Mapping[str, CameraHealth] = field(default_factory=_empty)
    ping: Mapping[str, bool] = field(default_factory=_empty)
    event_pictures: Mapping[int, Picture] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Expectation:
    """What a good run gives: one of ``decisions``, these ``fields``, every tool in ``tools``
    run and working, and each keyword group (any one of its words) in the reason."""

    decisions: tuple[str, ...]
    fields: Mapping[str, str] = field(default_factory=_empty)
    tools: tuple[str, ...] = ()
    keywords: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class CaseOrigin:
    """Where a home's own case came from (``origin:`` in its file): the workflow and the
    step (its place, ``then.0``, and its content hash then) whose run a person marked,
    the site and the cameras the run touched (who may read the case), and what the model
    answered. A shipped case has none."""

    workflow: str
    step: str
    workflow_name: str = ""
    step_hash: str = ""
    site: str = ""
    run: str = ""
    cameras: tuple[str, ...] = ()
    all_cameras: bool = False
    marked: str = ""
    marked_at: str = ""
    model: str = ""
    answered: Mapping[str, Any] = field(default_factory=_empty)
    note: str = ""


@dataclass(frozen=True)
class StepCase:
    """A ``look`` or ``investigate`` case. ``step_label`` names the step for people
    (``gate_concierge[0]`` or ``inline``); ``values`` are the run's placeholder values (the
    event's and the text inputs); ``judge`` is the rubric when the row opts in to the LLM
    judge; ``xfail`` the reason of a known, tracked gap."""

    id: str
    suite: Suite
    about: str
    file: Path
    step: AIStep
    step_label: str
    expect: Expectation
    values: Mapping[str, Any] = field(default_factory=_empty)
    camera: str | None = None
    pictures: Mapping[str, tuple[Picture, ...]] = field(default_factory=_empty)
    fixtures: Fixtures = field(default_factory=Fixtures)
    facts: str = ""
    lists: Mapping[str, tuple[str, ...]] = field(default_factory=_empty)
    now: datetime | None = None
    ask_person: str | None = None
    judge: str | None = None
    xfail: str | None = None
    #: a shipped case as a camera delivers it: the case it was made from, and how
    variant_of: str | None = None
    variant_kind: str | None = None
    #: a home's own case: the marked run it came from
    origin: CaseOrigin | None = None

    @property
    def question(self) -> str:
        """The step's question or goal, for reports and the judge."""
        spec = self.step.spec
        return spec.prompt if isinstance(spec, LookSpec) else spec.goal


@dataclass(frozen=True)
class DraftCase:
    """A ``draft`` case: ``sentence`` in, ``expected`` (a valid workflow.v1 model) out.
    ``match`` lists the JSON paths a draft must match field by field (empty: all of it);
    ``camera_roles`` and ``skills`` describe the site the draft is written for."""

    id: str
    about: str
    file: Path
    sentence: str
    expected: Workflow
    expected_template: str | None = None
    match: tuple[str, ...] = ()
    camera_roles: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    facts: str = ""
    xfail: str | None = None
    suite: Suite = "draft"


type Case = StepCase | DraftCase
