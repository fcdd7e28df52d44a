"""One entry's own evaluation: its kept cases and its measurements.

:class:`HomeEvaluation` is what the actions, the options, the *Accuracy* sensor and the
State doors reach through ``entry.runtime_data.evaluation``; it is started with the entry
(:func:`..setup.async_start_home_evaluation`). The cases' bounds (the retention period and
the size cap) are applied when a case is kept, when the entry starts, and every six hours,
so cases age out even when nobody marks runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from ...evaluation.per_workflow import WorkflowFigures
from ...workflow import Workflow
from .measurements import Measurements, check_turn_on
from .store import HomeCases, HomeCaseSettings

PRUNE_EVERY: Final = timedelta(hours=6)


@dataclass(frozen=True)
class HomeEvaluation:
    """An entry's kept cases, its measurements, and the options' page that bounds them."""

    cases: HomeCases
    measurements: Measurements
    settings: Callable[[], HomeCaseSettings]

    def figures(self, workflow_id: str, model: str) -> WorkflowFigures | None:
        """The workflow's measured figures on ``model`` (the vision model its steps run
        on); None when it was not measured there."""
        return self.measurements.figures(workflow_id, model)

    def check_turn_on(
        self, model: str, workflow_id: str, workflow: Workflow | None, state: str
    ) -> None:
        """:func:`.measurements.check_turn_on` with this entry's measurements and its
        *Require a measured bound* setting."""
        check_turn_on(
            self.measurements, self.settings().require_measured, model, workflow_id, workflow, state
        )
