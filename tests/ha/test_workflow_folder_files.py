"""Reading and writing the workflow folder, on disk: only plain files directly in it are
workflows; a linked folder, a pipe, two files naming one workflow, a file that is not
UTF-8 or is far too big each come back with why, and a write that fails leaves nothing
half-written behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.host.folder import files


def test_a_linked_or_missing_folder_holds_no_workflow(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "door.yaml").write_text("name: Door\n", encoding="utf-8")
    linked = tmp_path / "linked"
    linked.symlink_to(real)
    assert files.read_folder(linked) == []
    assert files.read_folder(tmp_path / "nowhere") == []


def test_two_files_naming_one_workflow_and_what_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "door.yaml").write_text("name: Door\n", encoding="utf-8")
    (tmp_path / "door.yml").write_text("name: Door again\n", encoding="utf-8")
    (tmp_path / "folder.yaml").mkdir()
    (tmp_path / ".hidden.yaml").write_text("name: Hidden\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a workflow\n", encoding="utf-8")
    found = {text.workflow_id: text for text in files.read_folder(tmp_path)}
    assert set(found) == {"door", "door_yml"}
    assert found["door"].text == "name: Door\n"
    assert found["door_yml"].text is None
    assert found["door_yml"].error is not None
    assert "names the same workflow as door.yaml" in found["door_yml"].error


def test_a_pipe_a_file_that_is_not_text_and_one_far_too_big(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe.yaml"
    os.mkfifo(pipe)
    read = files.read_file(tmp_path, pipe)
    assert (read.text, read.code) == (None, files.NOT_IN_FOLDER)
    assert read.error is not None
    assert "is not a regular file" in read.error

    latin = tmp_path / "latin.yaml"
    latin.write_bytes("name: Caf\xe9\n".encode("latin-1"))
    read = files.read_file(tmp_path, latin)
    assert read.error is not None
    assert read.error.startswith("the file is not UTF-8 text")

    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (files.MAX_BYTES + 1))
    read = files.read_file(tmp_path, big)
    assert read.error == f"the file is {files.MAX_BYTES + 1} bytes; a workflow is at most 256 KiB"

    windows = tmp_path / "windows.yaml"
    windows.write_bytes(b"name: Door\r\nstate: off\r")
    assert files.read_file(tmp_path, windows).text == "name: Door\nstate: off\n"


def test_a_write_that_fails_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    folder = tmp_path / "workflows"
    folder.mkdir()
    monkeypatch.setattr(files.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        files.write_text(folder, folder / "door.yaml", "name: Door\n")
    assert list(folder.iterdir()) == []
    with pytest.raises(files.NotInFolderError):
        files.write_text(folder, folder / ".." / "door.yaml", "x")
