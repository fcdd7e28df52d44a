"""The AI step: Look and Investigate on a local Ollama model, through ``opennvr_app_sdk.agent``.

No Home Assistant imports. The host builds an :class:`AIStepContext` (the model client from
:func:`make_llm_client`, an :class:`NvrReadPort` such as :class:`PyOpenNvrReadPort`, the
workflow's :class:`AIBudget`, the site's rules) and calls :func:`run_ai_step`; a step that
asks a person comes back as :class:`AISuspended`, which :func:`resume_ai_step` continues.
The config flow checks a model with :func:`check_model`; the workflow validator is handed
:data:`IMPLEMENTED_TOOLS`, the tools an AI step here can really be given.
"""

from .budget import BudgetedClient, BudgetSpentError, FixedBudget, UnlimitedBudget
from .context import DEFAULT_FLOOR, SAMPLES, AIStepContext, Hardware, SiteRules
from .executor import decision_spec, resume_ai_step, run_ai_step, step_limits, tool_modes
from .images import DEFAULT_IMAGE_SIZE, ImageError, prepare_image
from .model_check import ModelCheck, check_model, list_models
from .nvr_pyopennvr import PyOpenNvrReadPort
from .ollama_client import OllamaLLMClient, OllamaSettings, make_llm_client
from .ports import (
    AIBudget,
    CameraHealth,
    LiveDetections,
    NvrReadError,
    NvrReadPort,
    StoredEvent,
)
from .result import AIStepResult, AISuspended
from .rules import RuleRow, first_match
from .step_calls import CallLimitError, StepCalls, max_model_calls
from .tool_policy import (
    ASK_TOOLS,
    DEFAULT_SITE_POLICY,
    IMPLEMENTED_TOOLS,
    READ_TOOLS,
    site_policy,
    step_mode,
)

__all__ = [
    "ASK_TOOLS",
    "DEFAULT_FLOOR",
    "DEFAULT_IMAGE_SIZE",
    "DEFAULT_SITE_POLICY",
    "IMPLEMENTED_TOOLS",
    "READ_TOOLS",
    "SAMPLES",
    "AIBudget",
    "AIStepContext",
    "AIStepResult",
    "AISuspended",
    "BudgetSpentError",
    "BudgetedClient",
    "CallLimitError",
    "CameraHealth",
    "FixedBudget",
    "Hardware",
    "ImageError",
    "LiveDetections",
    "ModelCheck",
    "NvrReadError",
    "NvrReadPort",
    "OllamaLLMClient",
    "OllamaSettings",
    "PyOpenNvrReadPort",
    "RuleRow",
    "SiteRules",
    "StepCalls",
    "StoredEvent",
    "UnlimitedBudget",
    "check_model",
    "decision_spec",
    "first_match",
    "list_models",
    "make_llm_client",
    "max_model_calls",
    "prepare_image",
    "resume_ai_step",
    "run_ai_step",
    "site_policy",
    "step_limits",
    "step_mode",
    "tool_modes",
]
