"""The entry's options as the workflow host reads them: one typed, validated object.

Options are saved by the options flow as plain JSON; everything that runs a workflow reads
them through :class:`HostSettings`, so a malformed or outdated option is handled once, here
(ignored with a debug line), and never deep inside a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..ai import SiteRules
from ..ai.context import DEFAULT_FLOOR
from ..const import (
    CONF_AI_ENABLED,
    CONF_APPROVERS,
    CONF_CAMERA_ROLES,
    CONF_DEFAULT_LIMITS,
    CONF_EMBEDDING_MODEL,
    CONF_FULL_TEXT_TO,
    CONF_HARDWARE,
    CONF_MODEL_ALLOW_LIST,
    CONF_MODEL_APPS,
    CONF_MODEL_GATE,
    CONF_MOVING_WEBHOOKS,
    CONF_OLLAMA_ANYWHERE,
    CONF_OLLAMA_URL,
    CONF_REMOVE_WORKFLOW_FILES,
    CONF_RETENTION,
    CONF_SITE_FACTS,
    CONF_SITE_LISTS,
    CONF_TEXT_MODEL,
    CONF_TOOL_POLICY,
    CONF_TRUSTED_STARTS,
    CONF_VISION_MODEL,
    CONF_WEBHOOKS,
    DEFAULT_OLLAMA_URL,
    HARDWARE_CPU,
    HARDWARE_GPU,
)
from ..evaluation.gate import GateResult
from ..workflow.vocabulary import ANSWER_FRESH_S


@dataclass(frozen=True, slots=True)
class Retention:
    """How long the integration keeps what it stores (the options' *Data kept* page).

    Runs, versions and marks are in the run database; the evidence pictures (the frame
    each run's AI step looked at) in a folder beside it, bounded by age and by size."""

    #: ended runs, with their steps, tool calls, questions and AI decisions
    runs_days: int = 30
    #: workflow versions no workflow runs and no kept run used (how far a rollback reaches)
    versions_days: int = 90
    #: people's right/wrong marks (the AI steps' accuracy)
    marks_days: int = 365
    #: the evidence pictures, at most this old and this many megabytes together
    evidence_days: int = 30
    evidence_mb: int = 200

    #: Each setting's bounds, for the options form and for reading stored values.
    RANGES: ClassVar[Mapping[str, tuple[int, int]]] = {
        "runs_days": (1, 3650),
        "versions_days": (1, 3650),
        "marks_days": (1, 3650),
        "evidence_days": (0, 3650),
        "evidence_mb": (0, 100_000),
    }

    @classmethod
    def from_option(cls, value: Any) -> Retention:
        """The stored mapping; a setting missing or out of shape keeps its default."""
        stored = _mapping(value)
        defaults = cls()
        return cls(
            **{
                key: _int(stored.get(key), getattr(defaults, key), low, high)
                for key, (low, high) in cls.RANGES.items()
            }
        )

    def as_option(self) -> dict[str, int]:
        return {key: getattr(self, key) for key in self.RANGES}


@dataclass(frozen=True, slots=True)
class HostSettings:
    """What a workflow run needs to know about this home."""

    #: camera role -> OpenNVR camera id
    roles: Mapping[str, int] = field(default_factory=dict)
    #: the people who answer a question addressed to a role with no people of its own
    approver_users: tuple[str, ...] = ()
    #: role -> the Home Assistant user ids that answer questions addressed to that role
    approver_roles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: notify services of the approvers' phones ("notify.mobile_app_x")
    approver_phones: tuple[str, ...] = ()
    site: SiteRules = field(default_factory=SiteRules)
    ai_enabled: bool = True
    ollama_url: str = DEFAULT_OLLAMA_URL
    #: an admin let pictures and texts go to an Ollama outside the local network
    ollama_anywhere: bool = False
    vision_model: str = ""
    text_model: str = ""
    #: the evaluation gate's stored result (None: never measured)
    model_gate: GateResult | None = None
    #: the embedding model of the history search ("": search by words only)
    embedding_model: str = ""
    hardware: str = HARDWARE_CPU
    #: webhook destination name -> URL, approved by an admin in the options
    webhooks: Mapping[str, str] = field(default_factory=dict)
    #: webhook destinations an admin marked as moving things (actuators); the rest inform
    moving_webhooks: frozenset[str] = frozenset()
    #: models an admin may name in the look / investigate actions
    model_allow_list: tuple[str, ...] = ()
    #: OpenNVR apps that run a model themselves: their alerts are AI output
    model_apps: frozenset[str] = frozenset()
    #: how long a person's answer clears an action that moves things (then: ask again)
    answer_fresh_s: float = ANSWER_FRESH_S
    max_chain_depth: int = 3
    #: model calls an hour for what runs outside a workflow (the AI Task): the options'
    #: default ``ai_per_hour``, the allowance a workflow without limits of its own gets
    ai_per_hour: int = 60
    #: workflows an admin marked as started only by trusted triggers (see
    #: :func:`.runs.ai_mark.start_mark`)
    trusted_starts: frozenset[str] = frozenset()
    retention: Retention = field(default_factory=Retention)
    #: removing the integration deletes the workflow files too (off: they are kept)
    remove_workflow_files: bool = False
    #: notify services an admin lets carry the full text out of the house
    full_text_to: frozenset[str] = frozenset()

    #: OpenNVR camera id -> the roles mapped to it, in the options' order (derived from
    #: ``roles`` once: every event reads it).
    roles_of_camera: Mapping[int, tuple[str, ...]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        by_camera: dict[int, list[str]] = {}
        for role, camera_id in self.roles.items():
            by_camera.setdefault(camera_id, []).append(role)
        object.__setattr__(
            self,
            "roles_of_camera",
            {camera_id: tuple(roles) for camera_id, roles in by_camera.items()},
        )

    @property
    def approvers(self) -> frozenset[str]:
        """Everyone named on the options' Approvers page: the people of every role and the
        people who answer any role (they may mark runs right or wrong)."""
        return frozenset(self.approver_users).union(*self.approver_roles.values())

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> HostSettings:
        """Read the options; anything of the wrong shape is left at its default."""
        approvers = _mapping(options.get(CONF_APPROVERS))
        limits = _mapping(options.get(CONF_DEFAULT_LIMITS))
        hardware = options.get(CONF_HARDWARE)
        return cls(
            roles=_roles(options.get(CONF_CAMERA_ROLES)),
            approver_users=_strs(approvers.get("users")),
            approver_phones=_strs(approvers.get("notify")),
            approver_roles={
                str(role): _strs(users)
                for role, users in _mapping(approvers.get("roles")).items()
                if _strs(users)
            },
            site=SiteRules(
                facts=str(options.get(CONF_SITE_FACTS) or ""),
                lists={
                    str(name): _strs(items)
                    for name, items in _mapping(options.get(CONF_SITE_LISTS)).items()
                },
                tool_policy={
                    str(k): str(v) for k, v in _mapping(options.get(CONF_TOOL_POLICY)).items()
                },
                floor=DEFAULT_FLOOR,
            ),
            ai_enabled=bool(options.get(CONF_AI_ENABLED, True)),
            ollama_url=str(options.get(CONF_OLLAMA_URL) or DEFAULT_OLLAMA_URL),
            ollama_anywhere=bool(options.get(CONF_OLLAMA_ANYWHERE, False)),
            vision_model=str(options.get(CONF_VISION_MODEL) or ""),
            text_model=str(options.get(CONF_TEXT_MODEL) or ""),
            model_gate=GateResult.from_option(options.get(CONF_MODEL_GATE)),
            embedding_model=str(options.get(CONF_EMBEDDING_MODEL) or ""),
            hardware=hardware if hardware in (HARDWARE_CPU, HARDWARE_GPU) else HARDWARE_CPU,
            webhooks={
                str(k): str(v)
                for k, v in _mapping(options.get(CONF_WEBHOOKS)).items()
                if str(v).startswith(("http://", "https://"))
            },
            moving_webhooks=frozenset(_strs(options.get(CONF_MOVING_WEBHOOKS))),
            model_allow_list=_strs(options.get(CONF_MODEL_ALLOW_LIST)),
            model_apps=frozenset(_strs(options.get(CONF_MODEL_APPS))),
            answer_fresh_s=60.0
            * _int(limits.get("answer_fresh_minutes"), int(ANSWER_FRESH_S // 60), 1, 1_440),
            max_chain_depth=_int(limits.get("chain_depth"), 3, 1, 10),
            ai_per_hour=_int(limits.get("ai_per_hour"), 60, 0, 3_600),
            trusted_starts=frozenset(_strs(options.get(CONF_TRUSTED_STARTS))),
            retention=Retention.from_option(options.get(CONF_RETENTION)),
            remove_workflow_files=bool(options.get(CONF_REMOVE_WORKFLOW_FILES, False)),
            full_text_to=frozenset(_strs(options.get(CONF_FULL_TEXT_TO))),
        )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _strs(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value if v not in (None, ""))
    return ()


def _roles(value: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for role, camera in _mapping(value).items():
        try:
            out[str(role)] = int(camera)
        except (TypeError, ValueError):
            continue
    return out


def _int(value: Any, default: int, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return min(max(number, low), high)
