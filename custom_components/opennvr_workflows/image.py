"""The last picture an AI step of each workflow looked at: what the model saw when it
decided, so a person can check a decision against its evidence (only a workflow with an AI
step has one)."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.image import ImageEntity, infer_image_type
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .coordinator import OpenNVRConfigEntry
from .engine import EngineUpdate
from .entity import WorkflowEntity, add_workflow_entities, has_ai_steps
from .host.model.port import Evidence
from .workflow_views import WorkflowViews

PARALLEL_UPDATES = 0
#: OpenNVR snapshots are JPEG; a picture whose first bytes say otherwise gets its own type.
DEFAULT_CONTENT_TYPE = "image/jpeg"


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    add_workflow_entities(
        hass,
        entry,
        async_add_entities,
        lambda views, wid: [WorkflowEvidenceImage(views, wid)] if has_ai_steps(views, wid) else [],
    )


class WorkflowEvidenceImage(WorkflowEntity, ImageEntity):
    """The workflow's last evidence frame (each run's is kept on disk, so the last one
    shows again after a restart, until the options' *Data kept* bounds remove it).
    Checked when a run waits or ends, the points at which an AI step has finished
    looking."""

    _attr_translation_key = "workflow_evidence"
    _attr_content_type = DEFAULT_CONTENT_TYPE
    update_kinds = frozenset({"run_waiting", "run_ended"})
    per_run = True

    def __init__(self, views: WorkflowViews, workflow_id: str) -> None:
        WorkflowEntity.__init__(self, views, workflow_id, "evidence")
        ImageEntity.__init__(self, views.hass)
        self._shown: Evidence | None = None
        self._take(views.host.evidence.get(workflow_id))

    def _take(self, evidence: Evidence | None) -> bool:
        if evidence is None or evidence is self._shown:
            return False
        self._shown = evidence
        self._attr_image_last_updated = evidence.at
        self._attr_content_type = infer_image_type(evidence.image) or DEFAULT_CONTENT_TYPE
        return True

    @callback
    def handle(self, update: EngineUpdate) -> bool:
        changed = self._take(self.views.host.evidence.get(self.workflow_id))
        return changed or update.kind not in self.update_kinds

    async def async_image(self) -> bytes | None:
        return self._shown.image if self._shown is not None else None

    @property
    @override
    def entity_picture(self) -> str | None:
        """No link before the first picture: Home Assistant's image proxy answers a
        picture-less entity with HTTP 500, which every device page would request; without
        a link the page shows the entity's icon."""
        return super().entity_picture if self._shown is not None else None

    @property
    def extra_state_attributes(self) -> dict[str, Any] | None:
        if self._shown is None:
            return None
        return {"run_id": self._shown.run_id, "camera": self._shown.camera}
