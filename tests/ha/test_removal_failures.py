"""Removing the integration when what it kept resists: a run database that is not one, a
file or folder that cannot be deleted. Each failure is logged and the rest of the removal
goes on (it never leaves Home Assistant half-way through deleting an entry)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.host import removal


def test_a_database_that_is_not_one_ends_no_runs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert removal._end_runs(tmp_path / "missing.db") == 0
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING):
        assert removal._end_runs(garbage) == 0
    assert f"Could not end the runs in {garbage}" in caplog.text


def test_what_cannot_be_deleted_is_logged_and_the_rest_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    stuck = tmp_path / "stuck.json"
    stuck.write_text("{}", encoding="utf-8")
    gone = tmp_path / "gone.json"
    gone.write_text("{}", encoding="utf-8")
    folder = tmp_path / "pictures"
    folder.mkdir()
    linked = tmp_path / "linked"
    linked.symlink_to(folder)
    real_unlink = Path.unlink

    def unlink(self: Path, missing_ok: bool = False) -> None:
        if self == stuck:
            raise PermissionError(13, "Permission denied")
        real_unlink(self, missing_ok=missing_ok)

    def rmtree(path: Path) -> None:
        raise OSError(16, "Device or resource busy")

    monkeypatch.setattr(Path, "unlink", unlink)
    monkeypatch.setattr(shutil, "rmtree", rmtree)
    with caplog.at_level(logging.WARNING):
        removal._delete([stuck, gone], [linked, tmp_path / "never", folder])
    assert stuck.exists()
    assert not gone.exists()
    assert f"Could not delete {stuck}" in caplog.text
    assert f"Could not delete {folder}" in caplog.text
    assert linked.exists(), "a linked folder is never followed"
