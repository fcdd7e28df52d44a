"""Who may do what with a workflow.

Turning On a workflow that moves things (opens, unlocks, arms, calls an actuator) or reads
face or plate data needs an admin user: a household member can try it in Test, but only an
admin lets it act. One function decides, so the select entity, the actions and the panel
apply the same rule.
"""

from __future__ import annotations

from homeassistant.core import Context, HomeAssistant

from ..workflow import Workflow, walk_steps
from ..workflow.model import ActionStep, AIStep, EventTrigger, InvestigateSpec
from ..workflow.vocabulary import is_actuator

#: Tools and events that read who someone is (faces) or which car it is (plates).
PERSONAL_DATA_TOOLS = frozenset({"recognize_faces", "recent_plates"})
PERSONAL_DATA_EVENTS = frozenset({"plate.recognized.v1", "access.decided.v1"})
PERSONAL_DATA_SKILLS = frozenset({"face_recognition", "plate_recognition"})


def needs_admin_to_turn_on(workflow: Workflow) -> bool:
    """Whether turning this workflow On needs an admin (see the module docstring)."""
    if PERSONAL_DATA_SKILLS & set(workflow.needs):
        return True
    if isinstance(workflow.when, EventTrigger) and workflow.when.event in PERSONAL_DATA_EVENTS:
        return True
    for _, step in walk_steps(workflow):
        if isinstance(step, ActionStep) and is_actuator(step):
            return True
        if (
            isinstance(step, AIStep)
            and isinstance(step.spec, InvestigateSpec)
            and PERSONAL_DATA_TOOLS & set(step.spec.tools)
        ):
            return True
    return False


async def is_admin(hass: HomeAssistant, context: Context | None) -> bool:
    """Whether the context's user is an admin (no user: Home Assistant itself, allowed)."""
    if context is None or context.user_id is None:
        return True
    user = await hass.auth.async_get_user(context.user_id)
    return user is not None and user.is_admin


async def may_set_state(
    hass: HomeAssistant, context: Context | None, workflow: Workflow, state: str
) -> bool:
    """Whether the context's user may put ``workflow`` in ``state``."""
    if state != "on" or not needs_admin_to_turn_on(workflow):
        return True
    return await is_admin(hass, context)
