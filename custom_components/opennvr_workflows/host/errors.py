"""The translated errors every door raises, and how they list names and problems.

Every refusal is a :class:`ServiceValidationError` (the caller's data is wrong) or a
:class:`HomeAssistantError` (something outside failed) with a translation key of this
integration, so the frontend shows a specific sentence, never a stack trace. Kept apart
from the doors' entry lookups (:mod:`.action_support`) because the objects an entry holds
raise them too, and those must not depend on the entry (see ``tests/test_import_graph.py``).
"""

from __future__ import annotations

from typing import Any, Final

from homeassistant.exceptions import HomeAssistantError, ServiceValidationError

from ..const import DOMAIN
from ..workflow import Problem

#: How many names an error lists before "...".
_LISTED: Final = 10


def invalid(key: str, **placeholders: Any) -> ServiceValidationError:
    """The caller's data is wrong: a translated, specific error."""
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders={k: str(v) for k, v in placeholders.items()},
    )


def failed(key: str, **placeholders: Any) -> HomeAssistantError:
    """Something outside the caller's data failed (OpenNVR, the disk)."""
    return HomeAssistantError(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders={k: str(v) for k, v in placeholders.items()},
    )


def listed(names: Any) -> str:
    """Names for an error message: ``a, b, c`` (at most ten), or ``none``."""
    items = sorted(str(n) for n in names)
    if not items:
        return "none"
    more = ", ..." if len(items) > _LISTED else ""
    return ", ".join(items[:_LISTED]) + more


def problem_text(problem: Problem) -> str:
    """One problem as the error shows it: where, then what (``line 4: WF-...: ...``)."""
    where = f"line {problem.line}: " if problem.line else ""
    return f"{where}{problem.code}: {problem.message}"
