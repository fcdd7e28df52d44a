"""Errors the engine raises to its host, each naming what is wrong."""

from __future__ import annotations

from pathlib import Path


class EngineError(Exception):
    """Base class of the engine's own errors."""


class StoreError(EngineError):
    """The run database cannot be used. Always names the file."""

    def __init__(self, path: Path | str, message: str) -> None:
        self.path = Path(path)
        super().__init__(f"{self.path}: {message}")


class StoreCorruptError(StoreError):
    """The file is not a usable SQLite database (damaged or not a database).

    The engine refuses to start rather than start over on an empty file and
    lose every run and approval; the host should tell the user to restore or
    move the file."""


class StoreLockedError(StoreError):
    """Another process holds the database (a second Home Assistant on the same
    config folder, or a tool with the file open)."""


class StoreVersionError(StoreError):
    """The file was written by a newer version of the integration."""


class UnknownApprovalError(EngineError):
    """An answer names an approval that does not exist or is already closed."""


class UnknownRunError(EngineError):
    """A mark or query names a run that does not exist."""


class UnknownWorkflowError(EngineError):
    """A state change names a workflow the engine does not have."""


class UnknownVersionError(EngineError):
    """A rollback names a version the engine never recorded for that workflow."""
