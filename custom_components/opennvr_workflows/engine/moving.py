"""Whether an action moves things, worked out once per action.

The contract decides (:func:`~..workflow.vocabulary.action_moves_things`: a site mode change,
an app action, a Home Assistant action outside the read/notify allow-list); the site's own
judgement (:class:`.policy.SafetyPolicy`) may add steps the host found moving. Such actions
run at most once, wait for a fresh answer (:mod:`.freshness`), and are listed on the
question before them (:mod:`.reply_plans`).
"""

from __future__ import annotations

from typing import Final

from ..workflow import model
from ..workflow.vocabulary import action_moves_things
from .per_object import PerObject
from .policy import SafetyPolicy

__all__ = ["moves_here", "moves_things"]


def moves_things(action: model.Action) -> bool:
    """Whether an action moves things (the contract decides): such actions run at most
    once. Worked out once per action (a Home Assistant action is matched against the
    allow-list's patterns)."""
    return _moves_things(action)


_moves_things: Final = PerObject(action_moves_things)


def moves_here(action: model.Action, policy: SafetyPolicy) -> bool:
    """Whether an action moves things on this site: the contract says so, or the host's
    judgement of what it does here names a reason."""
    judge = policy.moves_things
    return moves_things(action) or (judge is not None and judge(action) is not None)
