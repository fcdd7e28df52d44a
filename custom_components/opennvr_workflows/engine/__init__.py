"""The durable workflow engine (no Home Assistant imports).

Events in (:class:`NvrEvent`), runs out through the host's :class:`Effects`
and the :class:`AiPort`; every run, step, tool call and approval in one SQLite
file. :mod:`.testing` holds in-memory fakes of the ports that the engine's
tests, the benchmark and the Home Assistant tests share.
"""

from .engine import Engine
from .errors import (
    EngineError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreVersionError,
    UnknownApprovalError,
    UnknownRunError,
    UnknownVersionError,
    UnknownWorkflowError,
)
from .events import NvrEvent
from .limits import Allowance, LimitSettings
from .policy import SafetyPolicy
from .ports import (
    ActionRequest,
    AiBudget,
    AiContext,
    AiPort,
    AiResult,
    AiSuspended,
    AlertRequest,
    ApprovalRequest,
    Clock,
    Effects,
    PlannedAction,
    ProviderUnavailable,
    ReplyPlan,
    RunContext,
    SiteCameras,
    SystemClock,
)
from .records import ApprovalRecord, EngineStats, EngineUpdate, HeldBack, WorkflowStatus
from .starting import Started, trigger_event
from .trust import Accuracy, cap_severity, wilson_interval

__all__ = [
    "Accuracy",
    "ActionRequest",
    "AiBudget",
    "AiContext",
    "AiPort",
    "AiResult",
    "AiSuspended",
    "AlertRequest",
    "Allowance",
    "ApprovalRecord",
    "ApprovalRequest",
    "Clock",
    "Effects",
    "Engine",
    "EngineError",
    "EngineStats",
    "EngineUpdate",
    "HeldBack",
    "LimitSettings",
    "NvrEvent",
    "PlannedAction",
    "ProviderUnavailable",
    "ReplyPlan",
    "RunContext",
    "SafetyPolicy",
    "SiteCameras",
    "Started",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "StoreVersionError",
    "SystemClock",
    "UnknownApprovalError",
    "UnknownRunError",
    "UnknownVersionError",
    "UnknownWorkflowError",
    "WorkflowStatus",
    "cap_severity",
    "trigger_event",
    "wilson_interval",
]
