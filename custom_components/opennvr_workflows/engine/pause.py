"""The site's pause: every workflow stops starting runs, and waiting runs stay waiting.

A household leaving the house to a sitter, or a model that misbehaves, needs one switch
that stops everything without losing anything. While paused:

* an event, a schedule, a button or a named start that would start a run starts none;
  it is counted (``dropped:paused`` in the workflow's hourly counters, and
  :attr:`Pause.not_run` for the switch), not queued: nothing runs late on resume;
* a run that would go on (its ``wait`` is over, its question was answered or timed out,
  a restart resumes it) is held where it is, still waiting, and goes on at resume;
* a run already executing a step finishes what it is doing (a step cut in the middle
  could leave an action half done).

Trials (try_workflow) still run: they only read and record what they would have done.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .records import ActiveRun


@dataclass(slots=True)
class Pause:
    """Whether the site is paused, the runs held meanwhile, and the starts refused."""

    paused: bool = False
    #: run id -> a run that would have gone on, held until the resume
    held: dict[str, ActiveRun] = field(default_factory=dict)
    #: triggers that matched a workflow and started nothing, since the pause began
    not_run: int = 0

    def hold(self, run: ActiveRun) -> bool:
        """Keep ``run`` waiting when the site is paused (a trial is never held)."""
        if not self.paused or run.trial:
            return False
        self.held[run.run_id] = run
        return True

    def release(self) -> list[ActiveRun]:
        """Unpause; returns the runs to go on with."""
        self.paused = False
        self.not_run = 0
        runs, self.held = list(self.held.values()), {}
        return runs
