"""What the site decides about AI output and approvals, read by the engine at run time.

The validator checks a file against the same settings (:class:`~..workflow.site.SiteProfile`);
the host sets both from the integration's options, so the engine holds at run time what the
import promised:

* ``model_apps``: the OpenNVR apps that run a language or vision-language model themselves
  (OpenNVR publishes no catalog saying which; an admin lists them in the options). Their
  alerts are AI output: a run one starts is AI-derived (:mod:`.taint`).
* ``answer_fresh_s``: how long a person's answer clears an action that moves things. Past it
  the engine does not act on the old answer; it asks again (:mod:`.freshness`).
* ``moves_things``: the host's judgement of what an action does here (a notify service
  behind a speaker, a webhook an admin marked as moving), so a question lists such a step
  among what a reply will do (:mod:`.reply_plans`), as the validator counted it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..workflow.site import MovesThings
from ..workflow.vocabulary import ANSWER_FRESH_S

__all__ = ["SafetyPolicy"]


@dataclass(slots=True)
class SafetyPolicy:
    """The site's settings for AI output and approvals; the host updates them in place."""

    model_apps: frozenset[str] = frozenset()
    answer_fresh_s: float = ANSWER_FRESH_S
    moves_things: MovesThings | None = None
