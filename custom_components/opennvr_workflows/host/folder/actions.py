"""The workflow file actions: validate, import, export, roll back.

Each checks against this site (the host's validator: skills, tools, camera roles), writes
atomically in the executor, reads the folder again, and leaves a logbook line with the
user who made the change. Responses:

* ``validate_workflow`` -> ``{valid, problems}``;
* ``import_workflow`` -> ``{workflow_id, file, written, replaced, state}`` plus the preview
  (:func:`.preview.preview`: name, description, problems, needs, triggers,
  actuators, needs_admin_to_turn_on);
* ``export_workflow`` -> ``{workflow_id, file, yaml}``;
* ``rollback_workflow`` -> ``{workflow_id, file, version, state}``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse

from ...engine import UnknownVersionError, UnknownWorkflowError
from ...engine.versions import VersionDecodeError
from ...workflow import Workflow, dump_workflow, template_names, template_text
from ...workflow.model import State
from ..action_support import host_of, log_change, workflow_file
from ..errors import failed, invalid, listed, problem_text
from ..read_scope import action_caller, visible_workflow
from ..workflows import WorkflowHost
from . import files as folder_io
from .preview import in_state, in_test_state, preview

#: The engine's states a file can hold (needs_attention is not one).
_FILE_STATES: Final[dict[str, State]] = {"off": "off", "test": "test", "on": "on"}
#: A file name an action may create: a plain name in the folder, no path, no dot first.
_FILE_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}(\.ya?ml)?$")


async def async_validate(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Check YAML text, or a file of the folder as it is on disk now."""
    host = host_of(hass, call)
    text = await _text_of(hass, call, host, source="file")
    report = await hass.async_add_executor_job(host.validate, text)
    problems: list[Any] = [p.as_dict() for p in report.problems]
    return {"valid": report.ok, "problems": problems}


async def async_import(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Validate, preview, and (unless a dry run) write the workflow in Test state."""
    host = host_of(hass, call)
    data = call.data
    text = await _text_of(hass, call, host, source="template")
    report = await hass.async_add_executor_job(host.validate, text)
    if report.workflow is None or not report.ok:
        raise invalid("workflow_invalid", problem=problem_text(report.errors[0]))
    name = data.get("file_name") or data.get("template")
    path = _target(host, name or folder_io.workflow_id_for(report.workflow.name))
    workflow_id = folder_io.workflow_id_for(path.name)
    exists = workflow_id in host.files or await hass.async_add_executor_job(path.exists)
    if exists and not data.get("overwrite"):
        raise invalid("file_exists", file=path.name)
    text, workflow = await hass.async_add_executor_job(
        in_test_state, text, report.workflow, host.validate
    )
    response = {
        "workflow_id": workflow_id,
        "file": path.name,
        "written": False,
        "replaced": exists,
        "state": "test",
        **preview(workflow, report, host.step_judge()),
    }
    if data.get("dry_run"):
        return response
    await _write(hass, host, path, text)
    await host.async_reload()
    if _engine_state(host, workflow_id) not in (None, "test"):
        host.engine.set_workflow_state(workflow_id, "test")  # a replaced file keeps no state
    source = f"the template {data['template']}" if data.get("template") else "YAML"
    log_change(call, hass, workflow.name, f"imported from {source} into {path.name}, in Test")
    response["written"] = True
    return response


async def async_export(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """The workflow file's text, as it is on disk: for a caller who may see every camera
    it names (:mod:`..read_scope`; a hidden one answers like an unknown one)."""
    host = host_of(hass, call)
    caller = await action_caller(hass, call)
    loaded = visible_workflow(caller, host, call.data["workflow"])
    text = await _read(hass, host, loaded.path)
    return {"workflow_id": loaded.workflow_id, "file": loaded.path.name, "yaml": text}


async def async_rollback(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Write a version the engine recorded back to the workflow's file, in the state the
    workflow is in now, and reload.

    The file gets the text that version was saved as, the author's comments and layout
    included, with only its ``state:`` line set to the current state. A version recorded
    before texts were kept (or one whose text no longer reads back as that version) is
    written in the canonical form, with a first comment that says so."""
    host = host_of(hass, call)
    loaded = workflow_file(host, call.data["workflow"])
    workflow_id, version = loaded.workflow_id, call.data["version"]
    known = [v["version"] for v in await host.engine.versions(workflow_id)]
    if version not in known:
        raise invalid(
            "unknown_version", workflow=workflow_id, version=version, versions=listed(known)
        )
    try:
        old = await host.engine.version_workflow(workflow_id, version)
        saved = await host.engine.version_text(workflow_id, version)
    except (UnknownVersionError, VersionDecodeError) as err:
        raise failed("version_unreadable", version=version, error=err) from err
    state = _current_state(host, workflow_id, loaded.workflow)
    restored = replace(old, state=state)
    text = await hass.async_add_executor_job(_restored_text, host, saved, restored, version)
    report = await hass.async_add_executor_job(host.validate, text)
    if not report.ok:
        raise invalid(
            "version_invalid_here", version=version, problem=problem_text(report.errors[0])
        )
    await _write(hass, host, loaded.path, text)
    await host.async_reload()
    log_change(call, hass, restored.name, f"rolled back to version {version}")
    return {
        "workflow_id": workflow_id,
        "file": loaded.path.name,
        "version": host.engine.workflow_status(workflow_id).version,
        "state": state,
    }


# ── helpers ─────────────────────────────────────────────────────────────────────────────


def _restored_text(host: WorkflowHost, saved: str | None, restored: Workflow, version: str) -> str:
    """The text a rollback writes: ``saved`` (the version's file as its author saved it) in
    the restored state, when it reads back as exactly that version here; else the canonical
    form, saying why the comments are gone (runs in the executor: it validates)."""
    if saved is not None:
        report = host.validate(saved)
        if report.workflow is not None:
            text, workflow = in_state(saved, report.workflow, restored.state, host.validate)
            if workflow == restored:
                return text
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"# Rolled back to version {version} on {stamp}, rebuilt from the version's record\n"
        "# (its file's text was not kept, so its comments and layout could not be restored).\n"
        f"{dump_workflow(restored)}"
    )


async def _text_of(hass: HomeAssistant, call: ServiceCall, host: WorkflowHost, source: str) -> str:
    """The YAML the call gives, or the named ``file`` (validate) / ``template`` (import):
    exactly one of the two."""
    yaml_text: str | None = call.data.get("yaml")
    named: str | None = call.data.get(source)
    if yaml_text is not None:
        if named is not None:
            raise invalid(f"yaml_or_{source}")
        return yaml_text
    if named is None:
        raise invalid(f"yaml_or_{source}")
    if source == "template":
        names = await hass.async_add_executor_job(template_names)  # reads the package
        if named not in names:
            raise invalid("unknown_template", template=named, templates=listed(names))
        return await hass.async_add_executor_job(template_text, named)
    loaded = host.files.get(named) or host.files.get(folder_io.workflow_id_for(named))
    if loaded is not None:
        path = loaded.path
    elif _FILE_NAME.fullmatch(named):  # a plain name: never a path out of the folder
        path = host.folder / (named if named.endswith(folder_io.SUFFIXES) else f"{named}.yaml")
    else:
        raise invalid("unknown_file", file=named)
    if not await hass.async_add_executor_job(_is_file_or_link, path):
        raise invalid("unknown_file", file=named)
    return await _read(hass, host, path)


def _is_file_or_link(path: Path) -> bool:
    """Whether ``path`` names a file, or a link (refused by name when read)."""
    return path.is_symlink() or path.is_file()


async def _read(hass: HomeAssistant, host: WorkflowHost, path: Path) -> str:
    """The text of a workflow file of the folder; a link, or a file elsewhere, is refused
    with where it is (never read), an unreadable file with why."""
    read = await hass.async_add_executor_job(folder_io.read_file, host.folder, path)
    if read.code == folder_io.NOT_IN_FOLDER:
        raise failed("file_not_in_folder", file=path.name, folder=host.folder, reason=read.error)
    if read.text is None:
        raise failed("file_unreadable", file=path.name, error=read.error)
    return read.text


def _target(host: WorkflowHost, name: str) -> Path:
    """Where an import writes: the existing file of that workflow, else ``<name>.yaml``."""
    if not _FILE_NAME.fullmatch(name):
        raise invalid("bad_file_name", file=name)
    loaded = host.files.get(folder_io.workflow_id_for(name))
    if loaded is not None:
        return loaded.path
    file_name = name if name.endswith(folder_io.SUFFIXES) else f"{name}.yaml"
    return host.folder / file_name


def _engine_state(host: WorkflowHost, workflow_id: str) -> str | None:
    try:
        return host.engine.workflow_status(workflow_id).state
    except UnknownWorkflowError:
        return None


def _current_state(host: WorkflowHost, workflow_id: str, current: Workflow | None) -> State:
    """The state a rollback keeps: the engine's, or the file's while it needs attention."""
    fallback: State = current.state if current is not None else "test"
    return _FILE_STATES.get(_engine_state(host, workflow_id) or "", fallback)


async def _write(hass: HomeAssistant, host: WorkflowHost, path: Path, text: str) -> None:
    """Write a workflow file of the folder; never through a link or out of the folder."""
    try:
        await hass.async_add_executor_job(folder_io.write_text, host.folder, path, text)
    except folder_io.NotInFolderError as err:
        raise failed(
            "file_not_in_folder", file=path.name, folder=host.folder, reason=err.reason
        ) from err
    except OSError as err:
        raise failed("file_write_failed", file=path.name, error=err.strerror or err) from err
