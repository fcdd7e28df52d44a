"""The semantic checks of workflow.v1: every rule the JSON Schema cannot say.

:func:`check_workflow` runs them all; :mod:`..validate` runs it after the contract and schema
checks, so there is one validator with one entry point. The checks walk the typed model path
by path, carrying what holds on the path so far (a :class:`.scope.Scope`): the placeholders
defined, whether an If or a person's answer stands before, and whether an AI decision chose the
path with no person's answer since. One module per rule family:

* :mod:`.safety`: the safety rule (actions that move things need a plain If or a person's
  answer on their path, only a person's answer clears an AI decision or an If on AI output,
  and AI output among their parameters needs a person's reply to a question that shows it)
  and the severity cap.
* :mod:`.taint`: which values on a path are AI output, and which a person approved as shown;
  an AI step may not reuse a name defined before it; triggers that match AI-raised alerts.
* :mod:`.ai_step`, :mod:`.ai_inputs`, :mod:`.ai_rules`: AI steps (a path per option and
  ``unsure``; known read and ask tools only, at most five, no repeats; inputs that fit the
  mode; no placeholders in instructions; rules that name declared fields, values, outcomes).
* :mod:`.ask_person`: a path per reply and for ``no_answer`` (or a default reply); Call.
* :mod:`.questions`: a question that clears an action that moves things can show what each
  reply does, its answer is fresh, and no AI decision chooses who is asked.
* :mod:`.flow`: nothing after a branching step in the same list; caps on steps and nesting.
* :mod:`.placeholders`: each ``{name}`` is defined by the trigger or an earlier step on its
  path (what a placeholder is, :mod:`..template` decides, for the engine too).
* :mod:`.actions`, :mod:`.conditions`, :mod:`.for_each`, :mod:`.triggers`: what each kind of
  step, condition and trigger reads (a current camera, the message that started the run, ...).
* :mod:`.skills`: what the workflow uses is listed in ``needs``, and the site has it.
* :mod:`.duration_ranges`: durations within the contract's ranges.

Problems carry JSON paths of the file's canonical form, which the caller turns into lines.
"""

from __future__ import annotations

from .actions import action_key
from .context import Locator
from .placeholders import placeholders_in
from .semantic import check_workflow

__all__ = ["Locator", "action_key", "check_workflow", "placeholders_in"]
