"""Unique ids of the entities and devices a workflow gets (one place, so the effects can
find a workflow's entity for the logbook and the platforms create the same ids)."""

from __future__ import annotations

from ..const import DOMAIN


def workflow_device_identifier(site_id: str, workflow_id: str) -> tuple[str, str]:
    """The device registry identifier of a workflow's device."""
    return (DOMAIN, f"{site_id}_workflow_{workflow_id}")


def workflow_unique_id(site_id: str, workflow_id: str, key: str) -> str:
    """The unique id of a workflow's entity ``key`` (``state``, ``last_outcome``, ...)."""
    return f"{site_id}_workflow_{workflow_id}_{key}"


def camera_unique_id(site_id: str, camera_id: int | str) -> str:
    """The unique id of a camera's camera entity (see ``entity.OpenNVRCameraEntity``)."""
    return f"{site_id}_{camera_id}_camera"
