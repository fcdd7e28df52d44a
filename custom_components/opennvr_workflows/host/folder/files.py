"""The workflow folder: ``<config>/opennvr_workflows/*.yaml``, one workflow per file.

Files are read and written here, off the event loop (every function in this module is
blocking and runs in the executor), and validated by the contract package against this
site. The file's stem is the workflow's id, so renaming a file is a new workflow and a
user always knows which file a run came from. Writes are atomic (a temporary file, then a
rename), so an import, a save or a rollback never leaves half a file behind.

Only plain files directly in the folder are workflow files: every read and write here
refuses a symbolic link, a name that leads out of the folder (``..``), anything whose real
path is elsewhere, and a folder that is itself a symbolic link (:func:`why_not_in_folder`).
Otherwise a link placed in the folder would let anyone who may export a workflow read the
file it points to (``secrets.yaml``), and an import or a rollback write through it.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ...workflow.template_library import template_names, template_text

_LOGGER = logging.getLogger(__name__)

SUFFIXES: Final = (".yaml", ".yml")
#: Written once the shipped templates were copied: a template a user deleted stays deleted.
TEMPLATES_MARKER: Final = ".templates_installed"
#: The biggest file read (the contract caps a workflow at 256 KiB; a bit more gets the
#: contract's own located error instead of a silent skip).
MAX_BYTES: Final = 512 * 1024
_ID_CHARS = re.compile(r"[^a-z0-9_]+")
#: The problem code of a file that is not a plain file in the folder (a link, or elsewhere).
NOT_IN_FOLDER: Final = "WF-FILE-NOT-IN-FOLDER"
#: The problem code of a file that could not be read.
UNREADABLE: Final = "WF-FILE-UNREADABLE"
#: Opens never follow a link in the last step of the path (a link swapped in after the check).
_NO_FOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


class NotInFolderError(Exception):
    """A workflow file path that is not a plain file directly in the workflow folder;
    ``reason`` says why and what is read instead, after "the file"."""

    def __init__(self, path: Path, why: str) -> None:
        self.path = path
        self.reason = refusal(why)
        super().__init__(f"{path.name}: {self.reason}")


def refusal(why: str) -> str:
    """The whole sentence of a refusal, from :func:`why_not_in_folder`'s reason."""
    return f"the file {why}, and only a plain file directly in the workflow folder is read"


@dataclass(frozen=True, slots=True)
class WorkflowText:
    """One file's text, or why it could not be read (``code``: which kind of why)."""

    workflow_id: str
    path: Path
    text: str | None
    error: str | None = None
    code: str = UNREADABLE


def why_not_in_folder(folder: Path, path: Path) -> str | None:
    """Why ``path`` may not be read or written as a workflow file of ``folder`` (a reason
    that follows the file's name), or None when it is a plain file directly in it or does
    not exist yet there. Blocking."""
    if folder.is_symlink():
        return "is in a workflow folder that is a symbolic link"
    if Path(os.path.abspath(path)).parent != Path(os.path.abspath(folder)):
        return "is not directly in the workflow folder"
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if not stat.S_ISREG(mode):
        return "is not a regular file"
    if path.resolve().parent != folder.resolve():
        return "resolves to a place outside the workflow folder"
    return None


def check_in_folder(folder: Path, path: Path) -> None:
    """Raise :class:`NotInFolderError` unless ``path`` may be a workflow file of ``folder``."""
    if (reason := why_not_in_folder(folder, path)) is not None:
        raise NotInFolderError(path, reason)


def workflow_id_for(name: str) -> str:
    """The workflow id a file name (or a free name) stands for: lower case, ``_``."""
    stem = Path(name).stem if Path(name).suffix in SUFFIXES else name
    return _ID_CHARS.sub("_", stem.casefold()).strip("_") or "workflow"


def install_templates(folder: Path) -> list[str]:
    """On first setup, copy the shipped templates into ``folder`` in Test state.

    Never overwrites a file, and only runs once per folder (a marker file), so a template
    the user edited or deleted is left as the user left it. Returns the ids copied. A
    folder that is a symbolic link gets nothing (:func:`read_folder` says why)."""
    if folder.is_symlink():
        return []
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / TEMPLATES_MARKER
    if marker.exists():
        return []
    copied: list[str] = []
    for name in template_names():
        target = folder / f"{name}.yaml"
        if target.exists() or target.is_symlink():
            continue
        write_text(folder, target, template_text(name))  # every template ships in Test
        copied.append(workflow_id_for(target.name))
    marker.write_text(
        "The shipped templates were copied here once; delete this file to copy "
        "the missing ones again.\n",
        encoding="utf-8",
    )
    return copied


def read_folder(folder: Path) -> list[WorkflowText]:
    """Every workflow file in ``folder`` (not its subfolders), sorted by name; a link
    among them comes back unread, with why. A folder that is a link is not read."""
    if folder.is_symlink():
        _LOGGER.error(
            "The workflow folder %s is a symbolic link: no workflow is read from it. "
            "Make it a plain folder and put the workflow files in it",
            folder,
        )
        return []
    if not folder.is_dir():
        return []
    out: list[WorkflowText] = []
    seen: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix not in SUFFIXES or path.name.startswith("."):
            continue
        if not path.is_symlink() and not path.is_file():
            continue
        workflow_id = workflow_id_for(path.name)
        if workflow_id in seen:
            out.append(
                WorkflowText(
                    workflow_id + "_" + path.suffix.lstrip("."),
                    path,
                    None,
                    f"{path.name} names the same workflow as {seen[workflow_id].name}; "
                    "rename one of them",
                )
            )
            continue
        seen[workflow_id] = path
        out.append(read_file(folder, path, workflow_id))
    return out


def read_file(folder: Path, path: Path, workflow_id: str | None = None) -> WorkflowText:
    """The text of the workflow file ``path`` of ``folder``; a file that is not a plain
    file in it (code :data:`NOT_IN_FOLDER`), or is unreadable or oversized, comes back
    with why and no text."""
    workflow_id = workflow_id or workflow_id_for(path.name)
    if (reason := why_not_in_folder(folder, path)) is not None:
        return WorkflowText(workflow_id, path, None, refusal(reason), NOT_IN_FOLDER)
    try:
        text = _read_plain(path)
    except UnicodeDecodeError as err:
        return WorkflowText(workflow_id, path, None, f"the file is not UTF-8 text ({err.reason})")
    except _TooBigError as err:
        return WorkflowText(
            workflow_id, path, None, f"the file is {err} bytes; a workflow is at most 256 KiB"
        )
    except OSError as err:
        return WorkflowText(workflow_id, path, None, f"cannot read the file: {err.strerror}")
    return WorkflowText(workflow_id, path, text)


class _TooBigError(Exception):
    """The file is over :data:`MAX_BYTES` (its size is the message)."""


def _read_plain(path: Path) -> str:
    """Read a regular file as text (newlines as ``Path.read_text`` gives them) without
    following a link (one swapped in after the check fails to open) and without waiting
    on a pipe."""
    fd = os.open(path, os.O_RDONLY | _NO_FOLLOW | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file")
        if info.st_size > MAX_BYTES:
            raise _TooBigError(info.st_size)
        text = handle.read(MAX_BYTES + 1).decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def write_text(folder: Path, path: Path, text: str) -> None:
    """Write ``text`` to the workflow file ``path`` of ``folder`` atomically (fsynced
    temporary file, then rename); :class:`NotInFolderError` when ``path`` is not a plain
    file in it."""
    check_in_folder(folder, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
