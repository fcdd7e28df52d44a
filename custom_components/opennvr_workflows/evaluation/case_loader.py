"""Read eval case files: YAML, checked against ``case.schema.json``, then against the step.

Every problem is located (``FILE:LINE:COL $.path: message``) and every problem of a suite is
reported at once, so a broken case is fixed in one pass and never silently skipped. Beyond
the schema the loader checks what only the step knows: the expected decision is one of the
step's options (or ``unsure``), expected fields and values are the step's, needed tools are
tools the step offers, a Look on pictures has a camera with pictures, and picture files
exist inside the cases folder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

import jsonschema

from ..ai import CameraHealth, LiveDetections, StoredEvent
from ..workflow import (
    load_template,
    template_names,
    validate_data,
    workflow_to_data,
)
from ..workflow.model import AIStep, InvestigateSpec, LookSpec
from ..workflow.paths import PathPart, format_path
from ..workflow.yaml_loader import Located, load_yaml
from .case_model import (
    SUITES,
    Case,
    CaseOrigin,
    DraftCase,
    Expectation,
    Fixtures,
    Picture,
    StepCase,
    Suite,
)
from .case_steps import StepError, resolve_step
from .draft_scoring import MISSING, value_at

#: Where the shipped cases live: one folder per suite, pictures in ``pictures/``.
DEFAULT_CASES = Path(__file__).parent / "cases"


@dataclass(frozen=True)
class CaseProblem:
    """One thing wrong with a case file, where it is."""

    file: Path
    message: str
    path: str = "$"
    line: int = 0
    column: int = 0

    def format(self) -> str:
        return f"{self.file}:{self.line}:{self.column} {self.path}: {self.message}"


class CaseError(ValueError):
    """Case files that cannot be used; ``problems`` lists every one, located."""

    def __init__(self, problems: Sequence[CaseProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(p.format() for p in self.problems))


@cache
def case_schema() -> dict[str, Any]:
    """The case files' JSON Schema (Draft 2020-12)."""
    text = resources.files(__package__).joinpath("case.schema.json").read_text("utf-8")
    return cast(dict[str, Any], json.loads(text))


def case_files(root: Path, suite: Suite) -> list[Path]:
    """The case files of ``suite`` under ``root``, in name order."""
    folder = root / suite
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


def load_suite(root: Path, suite: Suite) -> list[Case]:
    """Every case of ``suite``; raises :class:`CaseError` with every problem of every file
    (and ids used twice) when any is wrong."""
    cases: list[Case] = []
    problems: list[CaseProblem] = []
    seen: dict[str, Path] = {}
    for path in case_files(root, suite):
        try:
            case = load_case(path, root)
        except CaseError as err:
            problems.extend(err.problems)
            continue
        if case.suite != suite:
            problems.append(
                CaseProblem(path, f"a {case.suite} case in the {suite} folder", "$.suite")
            )
        elif case.id in seen:
            problems.append(
                CaseProblem(path, f"case id {case.id!r} is also used by {seen[case.id]}", "$.id")
            )
        else:
            seen[case.id] = path
            cases.append(case)
    if problems:
        raise CaseError(problems)
    return cases


def load_case(path: Path, root: Path = DEFAULT_CASES) -> Case:
    """One case file; pictures are resolved under ``root``. Raises :class:`CaseError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise CaseError([CaseProblem(path, f"cannot read the file: {err}")]) from err
    located, yaml_problems = load_yaml(text)
    if located is None or yaml_problems:
        raise CaseError(
            [CaseProblem(path, p.message, p.path, p.line, p.column) for p in yaml_problems]
            or [CaseProblem(path, "the file is empty")]
        )
    return _Reader(path, root, located).case()


class _Reader:
    """One file's data, with what locates its problems."""

    def __init__(self, path: Path, root: Path, located: Located) -> None:
        self.path = path
        self.root = root
        self.located = located
        self.problems: list[CaseProblem] = []

    def problem(self, message: str, parts: tuple[PathPart, ...] = ()) -> None:
        mark = self.located.locate(parts)
        self.problems.append(
            CaseProblem(self.path, message, format_path(parts), mark.line, mark.column)
        )

    def fail(self) -> CaseError:
        return CaseError(self.problems)

    def case(self) -> Case:
        data = self.located.data
        if not isinstance(data, dict):
            self.problem("a case file is a mapping (id, suite, about, ...)")
            raise self.fail()
        validator = jsonschema.Draft202012Validator(
            case_schema(), format_checker=jsonschema.FormatChecker()
        )
        for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
            parts = _error_parts(error, data)
            self.problem(_schema_message(error, parts), parts)
        if self.problems:
            raise self.fail()
        built = self.draft(data) if data["suite"] == "draft" else self.step_case(data)
        if self.problems or built is None:
            raise self.fail()
        return built

    # ── look and investigate ────────────────────────────────────────────────────────

    def step_case(self, data: dict[str, Any]) -> StepCase | None:
        try:
            step, label, _ = resolve_step(data["step"])
        except StepError as err:
            parts = tuple(p for p in err.path.removeprefix("$.").split(".") if p)
            self.problem(str(err), parts)
            return None
        suite = cast(Suite, data["suite"])
        if step.mode != suite:
            self.problem(f"the step is a {step.mode} step; this is a {suite} case", ("step",))
            return None
        event = dict(data.get("event") or {})
        inputs = data.get("inputs") or {}
        values: dict[str, Any] = {**event, **(inputs.get("text") or {})}
        camera = event.get("camera")
        pictures = {
            str(cam): tuple(
                self.picture(p, ("inputs", "pictures", cam, i)) for i, p in enumerate(rows)
            )
            for cam, rows in (inputs.get("pictures") or {}).items()
        }
        fixtures = self.fixtures(data.get("fixtures") or {})
        site = data.get("site") or {}
        expect = self.expectation(step, data["expect"])
        self.check_inputs(step, camera, pictures, fixtures)
        return StepCase(
            id=data["id"],
            suite=suite,
            about=data["about"],
            file=self.path,
            step=step,
            step_label=label,
            expect=expect,
            values=MappingProxyType(values),
            camera=str(camera) if camera is not None else None,
            pictures=MappingProxyType(pictures),
            fixtures=fixtures,
            facts=str(site.get("facts") or ""),
            lists=MappingProxyType(
                {str(k): tuple(str(e) for e in v) for k, v in (site.get("lists") or {}).items()}
            ),
            now=datetime.fromisoformat(data["now"]) if "now" in data else None,
            ask_person=data.get("ask_person"),
            judge=data.get("judge"),
            xfail=data.get("xfail"),
            variant_of=(data.get("variant") or {}).get("of"),
            variant_kind=(data.get("variant") or {}).get("kind"),
            origin=_origin(data["origin"]) if "origin" in data else None,
        )

    def picture(self, data: Mapping[str, Any], parts: tuple[PathPart, ...]) -> Picture:
        root = self.root.resolve()
        path = (root / str(data["file"])).resolve()
        if not path.is_relative_to(root):
            self.problem(f"picture {data['file']!r} is outside the cases folder", (*parts, "file"))
        elif not path.is_file():
            self.problem(f"no picture file {data['file']!r} under {self.root}", (*parts, "file"))
        return Picture(path=path, shows=str(data["shows"]))

    def fixtures(self, data: Mapping[str, Any]) -> Fixtures:
        health = data.get("health") or {}
        return Fixtures(
            cameras=tuple(str(c) for c in data.get("cameras") or ()),
            captions=MappingProxyType(dict(data.get("captions") or {})),
            detections=MappingProxyType(
                {
                    str(cam): LiveDetections(
                        camera=str(cam),
                        objects=MappingProxyType(dict(d.get("objects") or {})),
                        frame_at=d.get("frame_at"),
                        stale=d.get("stale"),
                        online=d.get("online"),
                        motion=d.get("motion"),
                    )
                    for cam, d in (data.get("detections") or {}).items()
                }
            ),
            events=tuple(_event(e) for e in data.get("events") or ()),
            search=tuple(_event(e) for e in data.get("search") or ()),
            health=MappingProxyType(
                {
                    str(cam): CameraHealth(
                        camera=str(cam),
                        online=h.get("online"),
                        active=h.get("active"),
                        status=h.get("status"),
                        recording_state=h.get("recording_state"),
                        last_frame_at=h.get("last_frame_at"),
                        stale=h.get("stale"),
                    )
                    for cam, h in health.items()
                }
            ),
            ping=MappingProxyType(
                {str(cam): bool(h["ping"]) for cam, h in health.items() if "ping" in h}
            ),
            event_pictures=MappingProxyType(
                {
                    int(k): self.picture(v, ("fixtures", "event_pictures", k))
                    for k, v in (data.get("event_pictures") or {}).items()
                }
            ),
        )

    def expectation(self, step: AIStep, data: Mapping[str, Any]) -> Expectation:
        raw = data["decision"]
        decisions = (raw,) if isinstance(raw, str) else tuple(raw)
        for d in decisions:
            if d not in step.outcomes:
                self.problem(
                    f"{d!r} is not an outcome of the step; outcomes: {', '.join(step.outcomes)}",
                    ("expect", "decision"),
                )
        fields = {str(k): str(v) for k, v in (data.get("fields") or {}).items()}
        for name, value in fields.items():
            allowed = step.fields.get(name)
            if allowed is None:
                self.problem(
                    f"the step has no field {name!r}; fields: {', '.join(step.fields) or 'none'}",
                    ("expect", "fields", name),
                )
            elif value not in allowed:
                self.problem(
                    f"{name} cannot be {value!r}; it is one of {', '.join(allowed)}",
                    ("expect", "fields", name),
                )
        tools = tuple(str(t) for t in data.get("tools") or ())
        offered = step.spec.tools if isinstance(step.spec, InvestigateSpec) else ()
        for tool in tools:
            if tool not in offered:
                self.problem(
                    f"a needed tool the step does not offer: {tool!r}; it offers "
                    f"{', '.join(offered) or 'none'}",
                    ("expect", "tools"),
                )
        keywords = tuple(
            (k,) if isinstance(k, str) else tuple(str(w) for w in k)
            for k in data.get("keywords") or ()
        )
        return Expectation(
            decisions=decisions,
            fields=MappingProxyType(fields),
            tools=tools,
            keywords=keywords,
        )

    def check_inputs(
        self,
        step: AIStep,
        camera: Any,
        pictures: Mapping[str, tuple[Picture, ...]],
        fixtures: Fixtures,
    ) -> None:
        spec = step.spec
        if isinstance(spec, LookSpec) and spec.input in ("picture", "frames"):
            cam = spec.camera or camera
            if cam is None:
                self.problem("a Look at a picture needs a camera: set event.camera", ("event",))
            elif str(cam) not in pictures:
                self.problem(
                    f"the step looks at camera {cam!r}: give its pictures in inputs.pictures.{cam}",
                    ("inputs",),
                )
        if isinstance(spec, InvestigateSpec) and not (fixtures.cameras or pictures or camera):
            self.problem("an Investigate case names its cameras (fixtures.cameras)", ())

    # ── draft ───────────────────────────────────────────────────────────────────────

    def draft(self, data: dict[str, Any]) -> DraftCase | None:
        expect = data["expect"]
        wanted = expect["workflow"]
        template = wanted.get("template")
        if template is not None:
            if template not in template_names():
                self.problem(
                    f"no template named {template!r}; templates: {', '.join(template_names())}",
                    ("expect", "workflow", "template"),
                )
                return None
            workflow = load_template(template)
        else:
            report = validate_data(wanted)
            if report.workflow is None:
                for p in report.errors:
                    self.problem(
                        f"the expected workflow is not valid: {p.message} ({p.path})",
                        ("expect", "workflow"),
                    )
                return None
            workflow = report.workflow
        known = workflow_to_data(workflow)
        for i, path in enumerate(expect.get("match") or ()):
            if not _resolves(known, path):
                self.problem(f"{path} is not in the expected workflow", ("expect", "match", i))
        site = data.get("site") or {}
        return DraftCase(
            id=data["id"],
            about=data["about"],
            file=self.path,
            sentence=data["sentence"],
            expected=workflow,
            expected_template=template,
            match=tuple(expect.get("match") or ()),
            camera_roles=tuple(site.get("camera_roles") or ()),
            skills=tuple(site.get("skills") or ()),
            facts=str(site.get("facts") or ""),
            xfail=data.get("xfail"),
        )


def _resolves(data: Any, path: str) -> bool:
    """Whether the JSON path ``path`` (``$.then[0].ai.decision``) names a value in ``data``."""
    return value_at(data, path) is not MISSING


def _origin(data: Mapping[str, Any]) -> CaseOrigin:
    answered = data.get("answered") or {}
    return CaseOrigin(
        workflow=str(data["workflow"]),
        step=str(data["step"]),
        workflow_name=str(data.get("workflow_name") or ""),
        step_hash=str(data.get("step_hash") or ""),
        site=str(data.get("site") or ""),
        run=str(data.get("run") or ""),
        cameras=tuple(str(c) for c in data.get("cameras") or ()),
        all_cameras=bool(data.get("all_cameras", False)),
        marked=str(data.get("marked") or ""),
        marked_at=str(data.get("marked_at") or ""),
        model=str(data.get("model") or ""),
        answered=MappingProxyType(dict(answered)),
        note=str(data.get("note") or ""),
    )


def _event(data: Mapping[str, Any]) -> StoredEvent:
    return StoredEvent(
        id=int(data["id"]),
        camera=str(data["camera"]),
        label=str(data["label"]),
        started_at=str(data["started_at"]),
        score=data.get("score"),
        plate=data.get("plate"),
        caption=data.get("caption"),
    )


def _error_parts(error: jsonschema.ValidationError, data: Any) -> tuple[PathPart, ...]:
    """Where the error is. jsonschema reports a key a suite forbids (a ``false`` schema)
    at the mapping holding it; the key is the forbidden one whose value the error holds."""
    parts: tuple[PathPart, ...] = tuple(error.absolute_path)
    schema_path = list(error.schema_path)
    if error.validator is not None or not schema_path or schema_path[-1] != "properties":
        return parts
    node: Any = case_schema()
    for step in schema_path:
        node = node[step]
    holder = data
    for part in parts:
        holder = holder[part]
    for key, subschema in node.items():
        if subschema is False and isinstance(holder, dict) and holder.get(key) == error.instance:
            return (*parts, key)
    return parts


def _schema_message(error: jsonschema.ValidationError, where: tuple[PathPart, ...]) -> str:
    """The schema's complaint in words a case author acts on."""
    if error.validator == "minLength" and where and where[-1] == "xfail":
        return "xfail needs its reason: say why the row is expected to fail"
    if error.validator == "type" and where and where[-1] == "xfail":
        return "xfail is a reason (text), not a flag: say why the row is expected to fail"
    if error.validator == "required":
        return f"missing {error.message.split(' is a required')[0]}"
    if error.validator is None or error.validator_value is False:
        return f"{where[-1] if where else 'this key'} does not belong in this suite's cases"
    if error.validator == "additionalProperties":
        return error.message.replace("Additional properties", "unknown key(s)")
    return error.message


__all__ = [
    "DEFAULT_CASES",
    "SUITES",
    "CaseError",
    "CaseProblem",
    "case_files",
    "case_schema",
    "load_case",
    "load_suite",
]
