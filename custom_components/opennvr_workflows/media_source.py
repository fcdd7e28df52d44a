"""The pictures the AI looked at, in Home Assistant's Media panel: by workflow, then by day.

Each run's AI step keeps the frame it decided on (the host's evidence, per run; the AI
Task's Looks are kept the same way under *AI Task*). This source lists them so a homeowner
can find "what did the model see at 23:14": *Media* > *OpenNVR Workflows* > the workflow >
the day > the time and camera. The site comes first only when several are set up.

Browsing and opening are reading doors (``media:browse``, ``media:resolve``): every person
logged in, each seeing only pictures of cameras they may read, of workflows they may see
(the same decisions as the panel, :mod:`.host.read_scope`); a hidden picture, workflow or
day answers exactly like one that does not exist. Home Assistant hands a media source no
user, so the viewer is the person of the websocket connection or the HTTP request making
the call (the way Home Assistant's own path signing finds them); with neither, Home
Assistant itself. Opening a picture gives a link signed for a few minutes, served by the
evidence view only on that signature (:mod:`.panel.evidence`); the grid's thumbnails,
which the Media panel loads with the viewer's own login, come from a reading door of their
own (:mod:`.panel.thumbnail`). Who may see which picture is decided in one place
(:mod:`.host.model.evidence_scope`).

The listing reads the host's evidence through one function
(:meth:`.host.model.evidence_store.EvidenceStore.listed`), whatever keeps the pictures.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from homeassistant.components import websocket_api
from homeassistant.components.http import KEY_HASS_USER
from homeassistant.components.media_player import BrowseError, MediaClass
from homeassistant.components.media_source import (
    BrowseMediaSource,
    MediaSource,
    MediaSourceItem,
    PlayMedia,
    Unresolvable,
)
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.http import current_request
from homeassistant.util import dt as dt_util

from .const import DOMAIN
from .host.model.evidence_scope import visible_evidence, visible_picture
from .host.model.evidence_store import Kept
from .host.model.task_look import AI_TASK_RUNS
from .host.permissions import Caller, allow, async_caller
from .host.read_scope import camera_id_of
from .host.workflows import WorkflowHost
from .panel.evidence import evidence_link
from .panel.hosts import loaded_hosts
from .panel.thumbnail import thumbnail_path

#: How long an opened picture's link lasts.
LINK_S: Final = 600.0
_JPEG: Final = "image/jpeg"


async def async_get_media_source(hass: HomeAssistant) -> MediaSource:
    """Home Assistant's media_source platform hook."""
    return EvidenceSource(hass)


@dataclass(frozen=True, slots=True)
class _Path:
    """An identifier ``entry/workflow/day/run``, read as far as it goes."""

    entry_id: str | None = None
    workflow_id: str | None = None
    day: str | None = None
    run_id: str | None = None

    @classmethod
    def parse(cls, identifier: str | None) -> _Path:
        parts = [p for p in (identifier or "").split("/") if p]
        if len(parts) > 4:
            raise ValueError(identifier)
        return cls(*parts)


class EvidenceSource(MediaSource):
    """The evidence pictures of every loaded site."""

    name = "OpenNVR Workflows"

    def __init__(self, hass: HomeAssistant) -> None:
        super().__init__(DOMAIN)
        self.hass = hass

    async def async_resolve_media(self, item: MediaSourceItem) -> PlayMedia:
        caller = await _viewer(self.hass, "media:resolve")
        path = _path(item.identifier, Unresolvable)
        host = _host(self.hass, path.entry_id)
        url: str | None = None
        if host is not None and path.run_id is not None:
            row = visible_picture(caller, host, path.run_id)
            if row is not None and row.workflow_id == path.workflow_id:
                url = evidence_link(self.hass, host, caller, row.run_id, row.camera, LINK_S)
        if url is None:
            raise Unresolvable(
                translation_domain=DOMAIN,
                translation_key="media_unknown",
                translation_placeholders={"item": item.identifier},
            )
        return PlayMedia(url, _JPEG)

    async def async_browse_media(self, item: MediaSourceItem) -> BrowseMediaSource:
        caller = await _viewer(self.hass, "media:browse")
        path = _path(item.identifier, BrowseError)
        hosts = loaded_hosts(self.hass)
        if path.entry_id is None:
            if len(hosts) == 1:
                return self._workflows(caller, hosts[0], root=True)
            return self._folder(None, self.name or DOMAIN, [self._site(h) for h in hosts])
        host = _host(self.hass, path.entry_id)
        if host is None or path.run_id is not None:
            raise _unknown(item.identifier)
        if path.workflow_id is None:
            return self._workflows(caller, host, root=False)
        rows = [r for r in visible_evidence(caller, host) if r.workflow_id == path.workflow_id]
        if not rows:
            raise _unknown(item.identifier)
        title = _workflow_title(host, path.workflow_id)
        if path.day is None:
            days = sorted({_day(r) for r in rows}, reverse=True)
            children = [
                self._folder(f"{host.entry_id}/{path.workflow_id}/{day}", day, []) for day in days
            ]
            return self._folder(f"{host.entry_id}/{path.workflow_id}", title, children)
        pictures = [r for r in rows if _day(r) == path.day]
        if not pictures:
            raise _unknown(item.identifier)
        children = [self._picture(host, r) for r in reversed(pictures)]
        return self._folder(
            f"{host.entry_id}/{path.workflow_id}/{path.day}", f"{title} {path.day}", children
        )

    # ── the nodes ──────────────────────────────────────────────────────

    def _workflows(self, caller: Caller, host: WorkflowHost, *, root: bool) -> BrowseMediaSource:
        seen = {r.workflow_id for r in visible_evidence(caller, host)}
        children = [
            self._folder(f"{host.entry_id}/{workflow_id}", _workflow_title(host, workflow_id), [])
            for workflow_id in sorted(seen, key=lambda w: _workflow_title(host, w).casefold())
        ]
        title = self.name or DOMAIN if root else _site_title(self.hass, host)
        return self._folder(None if root else host.entry_id, title, children)

    def _site(self, host: WorkflowHost) -> BrowseMediaSource:
        return self._folder(host.entry_id, _site_title(self.hass, host), [])

    def _picture(self, host: WorkflowHost, row: Kept) -> BrowseMediaSource:
        when = dt_util.as_local(datetime.fromtimestamp(row.at, UTC)).strftime("%H:%M:%S")
        return BrowseMediaSource(
            domain=DOMAIN,
            identifier=f"{host.entry_id}/{row.workflow_id}/{_day(row)}/{row.run_id}",
            media_class=MediaClass.IMAGE,
            media_content_type=_JPEG,
            title=f"{when} {_camera_title(host, row.camera)}",
            can_play=True,
            can_expand=False,
            thumbnail=thumbnail_path(host.entry_id, row.run_id),
        )

    @staticmethod
    def _folder(
        identifier: str | None, title: str, children: list[BrowseMediaSource]
    ) -> BrowseMediaSource:
        return BrowseMediaSource(
            domain=DOMAIN,
            identifier=identifier,
            media_class=MediaClass.DIRECTORY,
            media_content_type="",
            title=title,
            can_play=False,
            can_expand=True,
            children=children,
            children_media_class=(children[0].media_class if children else MediaClass.DIRECTORY),
        )


# ── who is looking, and what they may see ───────────────────────────────────────────────


async def _viewer(hass: HomeAssistant, door: str) -> Caller:
    """The person browsing (see the module docstring), let through ``door``."""
    user = None
    if (connection := websocket_api.current_connection.get()) is not None:
        user = connection.user
    elif (request := current_request.get()) is not None:
        user = request.get(KEY_HASS_USER)
        if user is None:
            return allow(door, None)  # a request without a person: refused
    else:
        return allow(door, Caller(None))  # Home Assistant itself (an automation)
    user_id = user.id if user is not None else None
    return allow(door, await async_caller(hass, Context(user_id=user_id)), user_id)


# ── names ───────────────────────────────────────────────────────────────────────────────


def _path(identifier: str | None, error: type[HomeAssistantError]) -> _Path:
    try:
        return _Path.parse(identifier)
    except ValueError as err:
        raise error(
            translation_domain=DOMAIN,
            translation_key="media_unknown",
            translation_placeholders={"item": identifier or ""},
        ) from err


def _unknown(identifier: str | None) -> BrowseError:
    return BrowseError(
        translation_domain=DOMAIN,
        translation_key="media_unknown",
        translation_placeholders={"item": identifier or ""},
    )


def _host(hass: HomeAssistant, entry_id: str | None) -> WorkflowHost | None:
    return next((h for h in loaded_hosts(hass) if h.entry_id == entry_id), None)


def _day(row: Kept) -> str:
    return dt_util.as_local(datetime.fromtimestamp(row.at, UTC)).date().isoformat()


def _site_title(hass: HomeAssistant, host: WorkflowHost) -> str:
    entry = hass.config_entries.async_get_entry(host.entry_id)
    return entry.title if entry is not None else host.entry_id


def _workflow_title(host: WorkflowHost, workflow_id: str) -> str:
    if workflow_id == AI_TASK_RUNS:
        return host.desk.texts("media_ai_task", {})
    loaded = host.files.get(workflow_id)
    return (loaded.declared_name if loaded is not None else None) or workflow_id


def _camera_title(host: WorkflowHost, camera: str | None) -> str:
    """The camera's name in OpenNVR, else the name the step used."""
    if camera is None:
        return ""
    camera_id = camera_id_of(host, camera)
    found = host.site_cameras().get(int(camera_id)) if camera_id is not None else None
    return found.name if found is not None else camera
