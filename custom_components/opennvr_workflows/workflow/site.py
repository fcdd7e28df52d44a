"""What a site has, handed to the validator so a file is checked against the home it runs in.

The contract alone says whether a file is well formed; only the site knows whether it can run
it: the skills installed (a vision model, the plate app), the AI tools this host implements,
and the camera roles mapped to cameras in the options. A workflow that names something the
site lacks is refused at import with the name, rather than failing at run time. Each part is
optional: None means "not known here, do not check" (the command line checking a shared file,
CI), so one validator serves both a site and a bare contract check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .model import Action

__all__ = ["MovesThings", "SiteProfile"]

#: Why an action moves things on this site (None: it only informs here).
type MovesThings = Callable[[Action], str | None]


@dataclass(frozen=True, slots=True)
class SiteProfile:
    """The site a workflow is checked against; every part None (the default) checks nothing.

    ``skills``: the skill names this site has (``vision_model``, ``detector``, an app's name
    such as ``gate_controller``); what a workflow needs and uses must be among them.
    ``tools``: the AI tool names this host really implements; an Investigate step listing
    another is refused. ``camera_roles``: the camera roles mapped to a camera in the options;
    a workflow naming another role is refused. ``moves_things``: the host's judgement of
    what an action does here (which integration is behind ``notify.x``, whether a webhook
    destination moves things); an action it names a reason for is an actuator to the safety
    rule, like one the contract itself calls so. ``lists``: the names of the site lists set in
    the options (Site rules); a condition or a ``for_each`` on another list is refused, since
    an unknown list would read as empty and ``not_in`` it would hold for everything.
    ``model_apps``: the OpenNVR apps that themselves run a language or vision-language model
    (set in the options: OpenNVR publishes no catalog saying so); their alerts are AI output,
    so an ``alert`` trigger that may match them reads tainted values. ``answer_fresh_s``: how
    long a person's answer clears an action that moves things (None: the contract's
    default, :data:`~.vocabulary.ANSWER_FRESH_S`); a longer ``wait`` between the answer and
    the action is a warning, and the engine asks again.
    """

    skills: frozenset[str] | None = None
    tools: frozenset[str] | None = None
    camera_roles: frozenset[str] | None = None
    moves_things: MovesThings | None = None
    lists: frozenset[str] | None = None
    model_apps: frozenset[str] | None = None
    answer_fresh_s: float | None = None

    def __post_init__(self) -> None:
        # A bare string would be read as a set of letters; refuse it where the mistake is made.
        for name in ("skills", "tools", "camera_roles", "lists", "model_apps"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, frozenset):
                raise TypeError(f"SiteProfile.{name} is a frozenset of names or None")
