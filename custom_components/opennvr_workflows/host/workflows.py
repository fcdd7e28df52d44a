"""The workflows of one config entry: the folder, the validator, the engine, its ports.

:class:`WorkflowHost` is what ``entry.runtime_data.workflows`` holds. It owns the engine's
life (started with the entry, stopped on unload and when Home Assistant stops, so
in-flight step writes are drained), feeds it every deduplicated event from the hub with
the camera's roles filled in, and keeps the workflow files, their validation reports and
their repair issues in step with the folder.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from pyopennvr import Camera, OpenNVRClient, OpenNVRError

from ..ai import IMPLEMENTED_TOOLS, make_llm_client
from ..const import DOMAIN, WORKFLOW_FOLDER
from ..engine import Engine, EngineUpdate, NvrEvent
from ..engine.engine import TaskSpawner
from ..nvr.hub import EventHub
from ..nvr.presence_ha import async_start_presence
from ..nvr.watch import track_watch
from ..workflow import Problem, Report, SiteProfile, Workflow, validate_text
from ..workflow.model import Action, ActionStep, PersonInZoneTrigger
from ..workflow.yaml_loader import load_yaml
from . import issues
from .approvals.desk import ApprovalDesk
from .effects.judge import ActionJudge, cleared_steps, import_hook
from .effects.port import HaEffects
from .folder import files as folder_io
from .model.evidence_store import EvidenceStore
from .model.port import HaAiPort
from .model.watch import ModelWatch
from .permissions import needs_admin_to_turn_on
from .runs.context import SentLedger
from .runs.held import HeldLog
from .settings import HostSettings
from .site_pause import SitePause
from .skills import site_skills

_LOGGER = logging.getLogger(__name__)

#: The AI tools this host implements; a workflow naming another is refused at import.
HOST_TOOLS: Final = frozenset(IMPLEMENTED_TOOLS)
#: Problems that say "not on this site yet" rather than "this file is wrong".
SITE_CODES: Final = frozenset(
    {"WF-CAMERA-ROLE-UNMAPPED", "WF-SITE-LIST-UNKNOWN", "WF-SKILL-MISSING", "WF-TOOL-NOT-HERE"}
)
#: How long Home Assistant's stop (or an unload) lets runs reach a waiting point.
STOP_GRACE_S: Final = 5.0


@dataclass(frozen=True, slots=True)
class WorkflowFile:
    """One file of the folder and what the validator said of it."""

    workflow_id: str
    path: Path
    text: str | None
    report: Report
    #: The name the text gives itself when the file did not load, read with the file in
    #: the executor (:func:`read_declared_name`): every entity of the workflow asks for it
    #: while it is set up, on the event loop.
    declared: str | None = None
    #: What a file this site cannot run (a camera role or a skill missing) describes,
    #: validated without the site, with the file in the executor; None when it loaded, or
    #: when it does not validate anywhere (a typo).
    unrun: Workflow | None = None

    @property
    def workflow(self) -> Workflow | None:
        return self.report.workflow

    @property
    def described(self) -> Workflow | None:
        """The workflow as the file describes it: the loaded one, else the one it would be at
        a site that had what it waits for (None: the file does not validate anywhere). What
        its device has (an AI step's picture and accuracy) follows this, before it can run."""
        return self.report.workflow if self.report.workflow is not None else self.unrun

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.report.problems if p.severity == "error")

    @property
    def declared_name(self) -> str | None:
        """The name the file gives itself, also when this site cannot run it (a workflow
        waiting for a camera role still has the name its author chose, which beats its file
        name wherever a person reads it); None for a file that is unreadable or names none."""
        if self.workflow is not None:
            return self.workflow.name
        return self.declared


def read_declared_name(text: str | None) -> str | None:
    """The ``name:`` a workflow file's text gives, valid or not (None: unreadable, or none).
    Parses YAML: call it in the executor."""
    located, _ = load_yaml(text) if text is not None else (None, [])
    data = located.data if located is not None else None
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name.strip():
        return None
    return name.strip()


class WorkflowHost:
    """The workflow side of one config entry."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry_id: str,
        client: OpenNVRClient,
        hub: EventHub,
        settings: HostSettings,
        *,
        scopes: frozenset[str] | None,
        site_mode: Callable[[], str | None],
        camera_entity: Callable[[str | None], str | None],
        workflow_entity: Callable[[str], str | None],
        site_cameras: Callable[[], Mapping[int, Camera]],
        spawn: TaskSpawner | None = None,
    ) -> None:
        self.hass = hass
        self.entry_id = entry_id
        self.client = client
        self.hub = hub
        self.settings = settings
        self.scopes = scopes
        #: camera id -> its camera entity; workflow id -> its State select (the doors of
        #: :mod:`.permissions` check people against these entities)
        self.camera_entity = camera_entity
        self.workflow_entity = workflow_entity
        #: The site's cameras as OpenNVR lists them now (camera id -> camera).
        self.site_cameras = site_cameras
        self.folder = Path(hass.config.path(WORKFLOW_FOLDER))
        self.db_path = database_path(hass, entry_id)
        self.files: dict[str, WorkflowFile] = {}
        #: Each run's evidence picture on disk, and each workflow's latest in memory
        #: (``evidence``: workflow id -> the last frame one of its AI steps looked at).
        self.evidence_store = EvidenceStore(hass, entry_id, lambda: self.settings.retention)
        self.evidence = self.evidence_store.latest
        self.apps: frozenset[str] = frozenset()
        self._site: SiteProfile | None = None
        self._listeners: list[Callable[[], None]] = []
        self._unsubscribe: list[Callable[[], None]] = []
        # The model's chats go over Home Assistant's shared session (its TLS context, its
        # pool of connections), which Home Assistant closes at its stop.
        session = async_get_clientsession(hass)
        self.ai = HaAiPort(
            client,
            settings,
            make_client=lambda s: make_llm_client(s, session=session),
            on_evidence=self.evidence_store.keep,
            may_send=lambda: self.model_watch.sends_allowed,
        )
        self.effects = HaEffects(
            hass,
            client,
            settings,
            ledger=SentLedger(hass, entry_id),
            scopes=scopes,
            site_mode=site_mode,
            camera_entity=camera_entity,
            workflow_entity=workflow_entity,
            publish=hub.publish,
        )
        self.desk = ApprovalDesk(
            hass,
            entry_id,
            client,
            settings=lambda: self.settings,
            camera_entity=camera_entity,
            workflow_entity=workflow_entity,
            picture_of=self._picture_of,
            scopes=scopes,
        )
        self.effects.desk = self.desk
        self.model_watch = ModelWatch(hass, entry_id, lambda: self.settings)
        self.engine = Engine(
            self.db_path,
            self.effects,
            self.model_watch.observe(self.ai),
            tz=_tz(hass),
            retention_days=settings.retention.runs_days,
            versions_days=settings.retention.versions_days,
            marks_days=settings.retention.marks_days,
            max_chain_depth=settings.max_chain_depth,
            spawn=spawn,
        )
        self._apply_policy()
        # The engine's start may close questions (timeouts that fell while Home Assistant
        # was off) before the desk takes taps: the desk logs those in the run's trace.
        self.desk.engine = self.engine
        #: The site switch that pauses every workflow (:mod:`.site_pause`).
        self.pause = SitePause(hass, entry_id, self.engine, self.desk.texts)
        #: The logbook line of each limit that holds an event back (:mod:`.runs.held`).
        self._held_log = HeldLog(
            hass,
            self.desk.texts,
            workflow_entity,
            self._workflow_name,
            self.effects.contexts.lineage,
        )

    # ── lifecycle ──────────────────────────────────────────────────────

    async def async_start(self) -> None:
        """Copy the templates on first setup, load the folder, open the database (off the
        loop), resume waiting runs, and start taking events."""
        await self.effects.ledger.async_load()
        await self.hass.async_add_executor_job(_make_folders, self.db_path.parent)
        copied = await self.hass.async_add_executor_job(folder_io.install_templates, self.folder)
        if copied:
            _LOGGER.info("Copied the workflow templates into %s: %s", self.folder, copied)
        self.apps = await self._read_apps()
        await self._load_folder()
        await self.desk.async_load()
        await self.pause.async_load()
        await self.evidence_store.async_start()
        if self.settings.ai_enabled:
            # Before the first run: no frame goes to a server that may not have it.
            await self.model_watch.async_check_locality()
        await self.engine.start()
        # Home Assistant's context lineage (the AI mark through automations), followed
        # while this site's workflows run (resumed runs act only after this returns).
        self._unsubscribe.append(self.effects.contexts.lineage.async_listen(self.hass))
        await self.desk.async_start(self.engine)
        self._unsubscribe.append(self.hub.subscribe_durable(self.dispatch_nowait))
        self._unsubscribe.append(self.engine.subscribe(self._on_update))
        self._unsubscribe.append(self.engine.subscribe(self._held_log))
        # The states the engine restored decide which cameras' tracks are read.
        self._watch_tracks()
        # Person-in-zone triggers: the detector's tracks and the site's zones become
        # events, only while a runnable workflow waits for them.
        self._unsubscribe.append(
            await async_start_presence(self.hass, self.client, self.hub, self.dwell_thresholds)
        )
        self._sync_attention_issues()
        await self.model_watch.async_start()

    async def async_stop(self) -> None:
        """Stop taking events, let runs reach a waiting point, drain the writes."""
        await self.model_watch.async_stop()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        await self.engine.stop(STOP_GRACE_S)
        await self.desk.async_stop()
        await self.effects.ledger.async_flush()
        await self.evidence_store.async_stop()

    # ── backups ────────────────────────────────────────────────────────

    async def async_hold_for_backup(self) -> None:
        """Before Home Assistant copies the configuration: write every store now (the
        sent ledger, the questions, the evidence index), then fold the run database's
        WAL into it and keep its writes waiting, so the copy holds one commit's state."""
        await self.effects.ledger.async_flush()
        await self.desk.tickets.async_save()
        await self.evidence_store.async_flush()
        await self.engine.hold_writes()

    def release_after_backup(self) -> None:
        """The copy is taken: the writes that waited go to the database."""
        self.engine.release_writes()

    # ── the folder ─────────────────────────────────────────────────────

    async def async_reload(self) -> dict[str, Any]:
        """Read the folder again and hand the engine what changed."""
        await self._load_folder()
        return self.summary()

    def summary(self) -> dict[str, Any]:
        """Which files loaded and which were refused (the reload action's response)."""
        return {
            "loaded": sorted(w for w, f in self.files.items() if f.workflow is not None),
            "invalid": {
                w: [p.as_dict() for p in f.errors]
                for w, f in sorted(self.files.items())
                if f.workflow is None
            },
        }

    def validate(self, text: str) -> Report:
        """Validate a workflow's text against this site (skills, tools, camera roles)."""
        # Called from the executor too: the site as read on the loop at the last load.
        site = self._site if self._site is not None else self.site_profile()
        return validate_text(text, site=site)

    def site_profile(self) -> SiteProfile:
        """What this site has: its skills, the AI tools this host implements, the
        camera roles mapped in the options, and what its actions really do (read on the
        event loop, then used by the validator wherever it runs)."""
        return SiteProfile(
            skills=site_skills(self.settings, self.scopes, self.apps),
            tools=HOST_TOOLS,
            camera_roles=frozenset(self.settings.roles),
            lists=frozenset(self.settings.site.lists),
            moves_things=import_hook(ActionJudge.of(self.hass, self.settings.moving_webhooks)),
            model_apps=self.settings.model_apps,
            answer_fresh_s=self.settings.answer_fresh_s,
        )

    def needs_admin_to_turn_on(self, workflow: Workflow) -> bool:
        """Whether the workflow moves things here or reads faces or plates, by this host's
        own judgement of each action (:func:`.permissions.needs_admin_to_turn_on`)."""
        return needs_admin_to_turn_on(workflow, self.step_judge())

    def step_judge(self) -> Callable[[ActionStep], str | None]:
        """Why a step moves things on this site now (None: it informs): the judgement
        that also runs before each call (:mod:`.effects.judge`), read on the loop."""
        hook = self.site_profile().moves_things
        return lambda step: hook(step.action) if hook is not None else None

    async def _load_folder(self) -> None:
        # Reading and validating run in the executor: the files, and on first use the
        # contract's JSON Schema, are disk reads, and 50 files are milliseconds of CPU.
        site = self._site = self.site_profile()
        loaded, self.effects.cleared = await self.hass.async_add_executor_job(
            _load_and_clear, self.folder, site
        )
        self.files = loaded
        self.engine.set_workflows(
            {w: f.workflow for w, f in loaded.items() if f.workflow is not None},
            # Each version keeps the text it was saved as, for a rollback to write back.
            {w: f.text for w, f in loaded.items() if f.workflow is not None and f.text},
        )
        self._watch_tracks()
        self._sync_file_issues()
        self._changed()

    def _sync_file_issues(self) -> None:
        """One repair per broken file; one repair for every file that is fine but waits
        for this site (a camera role to map, a skill to add), so a first setup with the
        templates shows one clear to-do instead of a page of errors."""
        keep: set[str] = set()
        waiting: dict[str, list[Problem]] = {}
        for workflow_id, loaded in self.files.items():
            if loaded.workflow is not None:
                continue
            if all(p.code in SITE_CODES for p in loaded.errors):
                waiting[loaded.path.name] = list(loaded.errors)
                continue
            first = loaded.errors[0] if loaded.errors else Problem("WF-UNKNOWN", "invalid")
            issue_id = issues.invalid_file_id(self.entry_id, workflow_id)
            keep.add(issue_id)
            issues.raise_invalid_file(
                self.hass,
                self.entry_id,
                workflow_id,
                loaded.path.name,
                first.line,
                f"{first.code}: {first.message}",
                len(loaded.errors),
            )
            _LOGGER.warning(
                "Workflow file %s is not loaded: %s",
                loaded.path,
                "; ".join(p.format(loaded.path.name) for p in loaded.errors[:5]),
            )
        issues.clear_prefix(self.hass, f"{self.entry_id}_invalid_", keep)
        if waiting:
            issues.raise_waiting_for_site(self.hass, self.entry_id, waiting)
        else:
            issues.clear(self.hass, issues.waiting_id(self.entry_id))

    # ── events and updates ─────────────────────────────────────────────

    @callback
    def submit(self, event: NvrEvent) -> None:
        """Offer an event to the engine with its camera's role filled in.

        A camera may play several roles (the driveway camera is also the gate): the event
        is offered once per role, and the later offers only reach workflows that name
        that role, so a workflow that takes any camera still starts once."""
        first, *others = self._offers(event)
        self.engine.submit(first)
        for offer in others:
            self.engine.submit_for_role(offer)

    async def dispatch(self, event: NvrEvent) -> None:
        """:meth:`submit`, returning once the runs the event starts (or the decision that
        it starts none) are committed: the hub's sources acknowledge the event then."""
        waiter = self.dispatch_nowait(event)
        if waiter is not None:
            await waiter

    def dispatch_nowait(self, event: NvrEvent) -> asyncio.Future[None] | None:
        """:meth:`dispatch` as the hub's durable consumer: what to wait on before the
        event may be acknowledged (None: nothing), without a task per event (see
        :meth:`.engine.Engine.dispatch_nowait`)."""
        first, *others = self._offers(event)
        if not others:
            return self.engine.dispatch_nowait(first)
        self.engine.submit(first)
        for offer in others:
            self.engine.submit_for_role(offer)
        return self.engine.durable_nowait()

    def _offers(self, event: NvrEvent) -> list[NvrEvent]:
        """The event once per role its camera plays (as it is, when it has none)."""
        if event.camera_role is not None or event.camera_id is None:
            return [event]
        try:
            roles = self.settings.roles_of_camera.get(int(event.camera_id), ())
        except ValueError:
            roles = ()
        if not roles:
            return [event]
        return [replace(event, camera_role=role) for role in roles]

    def dwell_thresholds(self) -> frozenset[float]:
        """The ``min_seconds`` of the person-in-zone triggers of workflows in Test or On."""
        runnable = {s.workflow_id for s in self.engine.workflows() if s.state in ("test", "on")}
        return frozenset(
            f.workflow.when.min_s
            for w, f in self.files.items()
            if w in runnable
            and f.workflow is not None
            and isinstance(f.workflow.when, PersonInZoneTrigger)
        )

    def _watch_tracks(self) -> None:
        """Tell the hub which cameras' detector tracks the workflows in Test or On read
        (:mod:`..nvr.watch`): the others' are dropped there, right after parsing."""
        runnable = {s.workflow_id for s in self.engine.workflows() if s.state in ("test", "on")}
        workflows = (
            f.workflow for w, f in self.files.items() if w in runnable and f.workflow is not None
        )
        self.hub.watch_tracks(track_watch(workflows, self.settings.roles))

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` when the set of workflows, a state or a run changes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def update_settings(self, settings: HostSettings) -> None:
        self.settings = settings
        self.ai.update(settings)
        self.effects.settings = settings
        self._apply_policy()
        self._watch_tracks()

    def _apply_policy(self) -> None:
        """Hand the engine what the validator checked files against: the apps whose
        alerts are AI output, how long an answer clears an action, and this host's
        judgement of what an action does (read when a question is asked)."""
        policy = self.engine.policy
        policy.model_apps = self.settings.model_apps
        policy.answer_fresh_s = self.settings.answer_fresh_s
        policy.moves_things = self._moves_here

    def _moves_here(self, action: Action) -> str | None:
        """Why ``action`` moves things on this site now (None: it informs): the judgement
        the import checked the file with (:meth:`site_profile`), read when it is asked."""
        return import_hook(ActionJudge.live(self.hass, self.settings.moving_webhooks))(action)

    @callback
    def _on_update(self, update: EngineUpdate) -> None:
        if update.kind == "workflow_state":
            self._sync_attention_issues()
            self._watch_tracks()
        self._changed()

    def _workflow_name(self, workflow_id: str) -> str | None:
        loaded = self.files.get(workflow_id)
        return loaded.workflow.name if loaded is not None and loaded.workflow else None

    async def _picture_of(self, workflow_id: str, run_id: str) -> bytes | None:
        """The picture the run's AI step looked at (kept per run, also after a restart)."""
        evidence = await self.evidence_store.async_read(run_id)
        return evidence.image if evidence is not None else None

    def _sync_attention_issues(self) -> None:
        keep: set[str] = set()
        for status in self.engine.workflows():
            if status.state != "needs_attention":
                continue
            issue_id = issues.attention_id(self.entry_id, status.workflow_id)
            keep.add(issue_id)
            issues.raise_needs_attention(
                self.hass, self.entry_id, status.workflow_id, status.name, status.reason or ""
            )
        issues.clear_prefix(self.hass, f"{self.entry_id}_attention_", keep)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:
                _LOGGER.exception("Workflow listener failed")

    async def _read_apps(self) -> frozenset[str]:
        """The OpenNVR apps this token can see (a workflow's ``needs`` may name one)."""
        try:
            catalog = await self.client.get_entities()
        except OpenNVRError as err:
            _LOGGER.debug("OpenNVR apps not readable: %s", err)
            return frozenset()
        if catalog is None:
            return frozenset()
        return frozenset(
            str(d.origin).removeprefix("app:") for d in catalog.descriptors if d.origin
        ) - {"core"}


def database_path(hass: HomeAssistant, entry_id: str) -> Path:
    """The run database of an entry (its WAL, shared memory and lock files beside it)."""
    return Path(hass.config.path(".storage", f"{DOMAIN}.{entry_id}.db"))


def load_folder(folder: Path, site: SiteProfile) -> dict[str, WorkflowFile]:
    """Every workflow file of ``folder`` with its validation report (blocking)."""
    loaded: dict[str, WorkflowFile] = {}
    for item in folder_io.read_folder(folder):
        if item.text is None:
            report = Report.of([Problem(item.code, item.error or "unreadable")])
        else:
            report = validate_text(item.text, site=site)
        declared, unrun = None, None
        if report.workflow is None:
            declared = read_declared_name(item.text)
            unrun = validate_text(item.text).workflow if item.text is not None else None
        loaded[item.workflow_id] = WorkflowFile(
            item.workflow_id, item.path, item.text, report, declared, unrun
        )
    return loaded


def _load_and_clear(
    folder: Path, site: SiteProfile
) -> tuple[dict[str, WorkflowFile], dict[str, tuple[re.Pattern[str], ...]]]:
    """The folder's files (:func:`load_folder`) and, for each loaded workflow, the steps
    its import cleared as actuators (:func:`.effects.judge.cleared_steps`): one trip to
    the executor for both (blocking)."""
    loaded = load_folder(folder, site)
    cleared = {
        w: cleared_steps(f.workflow, site) for w, f in loaded.items() if f.workflow is not None
    }
    return loaded, cleared


def _make_folders(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)


def _tz(hass: HomeAssistant) -> Any:
    from homeassistant.util import dt as dt_util

    return dt_util.get_default_time_zone()
