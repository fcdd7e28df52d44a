"""The workflow folder: ``<config>/opennvr_workflows/*.yaml``, one workflow per file.

Files are read and written here, off the event loop (every function in this module is
blocking and runs in the executor), and validated by the contract package against this
site. The file's stem is the workflow's id, so renaming a file is a new workflow and a
user always knows which file a run came from. Writes are atomic (a temporary file, then a
rename), so an import, a save or a rollback never leaves half a file behind.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..workflow.template_library import template_names, template_text

_LOGGER = logging.getLogger(__name__)

SUFFIXES: Final = (".yaml", ".yml")
#: Written once the shipped templates were copied: a template a user deleted stays deleted.
TEMPLATES_MARKER: Final = ".templates_installed"
#: The biggest file read (the contract caps a workflow at 256 KiB; a bit more gets the
#: contract's own located error instead of a silent skip).
MAX_BYTES: Final = 512 * 1024
_ID_CHARS = re.compile(r"[^a-z0-9_]+")


@dataclass(frozen=True, slots=True)
class WorkflowText:
    """One file's text, or why it could not be read."""

    workflow_id: str
    path: Path
    text: str | None
    error: str | None = None


def workflow_id_for(name: str) -> str:
    """The workflow id a file name (or a free name) stands for: lower case, ``_``."""
    stem = Path(name).stem if Path(name).suffix in SUFFIXES else name
    return _ID_CHARS.sub("_", stem.casefold()).strip("_") or "workflow"


def install_templates(folder: Path) -> list[str]:
    """On first setup, copy the shipped templates into ``folder`` in Test state.

    Never overwrites a file, and only runs once per folder (a marker file), so a template
    the user edited or deleted is left as the user left it. Returns the ids copied."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / TEMPLATES_MARKER
    if marker.exists():
        return []
    copied: list[str] = []
    for name in template_names():
        target = folder / f"{name}.yaml"
        if target.exists():
            continue
        write_text(target, template_text(name))  # every template ships in Test state
        copied.append(workflow_id_for(target.name))
    marker.write_text(
        "The shipped templates were copied here once; delete this file to copy "
        "the missing ones again.\n",
        encoding="utf-8",
    )
    return copied


def read_folder(folder: Path) -> list[WorkflowText]:
    """Every workflow file in ``folder`` (not its subfolders), sorted by name."""
    if not folder.is_dir():
        return []
    out: list[WorkflowText] = []
    seen: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix not in SUFFIXES or path.name.startswith(".") or not path.is_file():
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
        out.append(read_file(path, workflow_id))
    return out


def read_file(path: Path, workflow_id: str | None = None) -> WorkflowText:
    """One file's text; an unreadable or oversized file comes back with its error."""
    workflow_id = workflow_id or workflow_id_for(path.name)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return WorkflowText(
                workflow_id, path, None, f"the file is {size} bytes; a workflow is at most 256 KiB"
            )
        return WorkflowText(workflow_id, path, path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:
        return WorkflowText(workflow_id, path, None, f"the file is not UTF-8 text ({err.reason})")
    except OSError as err:
        return WorkflowText(workflow_id, path, None, f"cannot read the file: {err.strerror}")


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (fsynced temporary file, then rename)."""
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
