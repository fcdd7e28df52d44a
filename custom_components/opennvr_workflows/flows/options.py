"""Options: how this home uses its site. Saving any page reloads the entry.

Camera roles (workflows name cameras by role, never by id), approvers, site rules (facts and
named lists the AI steps read), the AI tool policy, default limits, how long what the
integration stores is kept, and the event transport and Ollama settings chosen when the
site was added.
"""

from __future__ import annotations

import asyncio
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

import probatio as vol
from homeassistant.config_entries import (
    ConfigEntryState,
    ConfigFlowResult,
    OptionsFlowWithReload,
)
from homeassistant.helpers.selector import (
    BooleanSelector,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
)

from ..ai.tool_policy import MODES, site_policy
from ..const import (
    CONF_AI_ENABLED,
    CONF_APPROVERS,
    CONF_CAMERA_ROLES,
    CONF_DEFAULT_LIMITS,
    CONF_FULL_TEXT_TO,
    CONF_MODEL_ALLOW_LIST,
    CONF_MODEL_APPS,
    CONF_MODEL_GATE,
    CONF_MOVING_WEBHOOKS,
    CONF_REMOVE_WORKFLOW_FILES,
    CONF_RETENTION,
    CONF_SITE_FACTS,
    CONF_SITE_LISTS,
    CONF_TOOL_POLICY,
    CONF_TRUSTED_STARTS,
    CONF_WEBHOOKS,
    LOGGER,
    SITE_FACTS_MAX_WORDS,
)
from ..evaluation.per_workflow import Measurement
from ..host import sentences
from ..host.approvals.people import people as active_people
from ..host.effects.judge import ActionJudge
from ..host.effects.privacy import leaves_the_house
from ..host.settings import Retention
from ..workflow import Workflow, template_names, template_text, validate_text
from ..workflow.vocabulary import ANSWER_FRESH_S
from ..workflow.walk import camera_roles_in
from .home_cases import home_cases_option, home_cases_schema
from .model_gate import CONF_RUN_EVALUATION, async_measure, gate_placeholders, workflow_lines
from .steps import TransportAndAISteps, merge_options

ROLE_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,31}")
LIST_NAME_PATTERN = ROLE_PATTERN
#: The spec's defaults (RFC section 2): cooldown 1 min, 30 runs an hour, 60 AI calls an
#: hour, chain depth 3.
DEFAULT_LIMITS: dict[str, int] = {
    "cooldown_seconds": 60,
    "per_hour": 30,
    "ai_per_hour": 60,
    "chain_depth": 3,
    "answer_fresh_minutes": int(ANSWER_FRESH_S // 60),
}
LIMIT_RANGES: dict[str, tuple[int, int]] = {
    "cooldown_seconds": (0, 86_400),
    "per_hour": (1, 3_600),
    "ai_per_hour": (0, 3_600),
    "chain_depth": (1, 10),
    "answer_fresh_minutes": (1, 1_440),
}
CONF_USERS = "users"
CONF_NOTIFY = "notify"
CONF_ROLES = "roles"
CONF_FACTS = "facts"
CONF_LISTS = "lists"


def _multiline() -> TextSelector:
    return TextSelector(TextSelectorConfig(multiline=True))


def parse_names(text: str) -> list[str]:
    """Names separated by commas, spaces or lines, each once, in the order given."""
    return list(dict.fromkeys(n for n in re.split(r"[\s,]+", text) if n))


def roles_wanted(
    files: Sequence[tuple[Workflow | None, str | None]], mapped: set[str]
) -> list[str]:
    """The camera roles the workflow folder's files name (the templates', for an empty
    folder), those no camera plays yet first: what the Camera roles page offers, so a
    first setup maps ``front_door`` and ``gate``, the roles its workflows wait for. A file
    refused for this site (a role not mapped yet) is read against the contract alone.
    Runs in the executor: it reads the templates and validates."""
    texts = [text for workflow, text in files if workflow is None and text]
    if not files:
        texts = [template_text(name) for name in template_names()]
    workflows = [w for w, _ in files if w is not None]
    workflows += [w for text in texts if (w := validate_text(text).workflow) is not None]
    roles = list(dict.fromkeys(r for w in workflows for r in camera_roles_in(w)))
    return sorted(roles, key=lambda r: r in mapped)


def parse_roles(text: str) -> list[str]:
    """``"door, porch"`` -> ``["door", "porch"]`` (lower-cased, blanks dropped)."""
    return [role.strip().lower() for role in text.split(",") if role.strip()]


#: What a role or list name may hold, in the words the problems use.
NAME_RULE = "lower-case letters, digits, - and _, starting with a letter, no spaces"
_NAME_CHARACTERS = frozenset(string.ascii_lowercase + string.digits + "-_")


def name_problem(name: str, kind: str) -> str | None:
    """Why ``name`` (as typed) is not a role or list name (``kind``), naming what is
    wrong with it first: a space, a character it may not hold, a wrong first character,
    its length. None when it is one (lower-cased)."""
    lowered = name.lower()
    if LIST_NAME_PATTERN.fullmatch(lowered):
        return None
    if any(ch.isspace() for ch in name):
        why = "it has a space"
    elif not lowered:
        why = "it is empty"
    elif bad := sorted({ch for ch in lowered if ch not in _NAME_CHARACTERS}):
        why = f"it has {', '.join(repr(ch) for ch in bad)}"
    elif lowered[0] not in string.ascii_lowercase:
        why = "it does not start with a letter"
    else:
        why = "it is longer than 32 characters"
    return f"'{name}' is not a {kind} name ({why}): use {NAME_RULE}"


def camera_roles(
    typed: Mapping[str, str], cameras: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """Role -> camera id from each camera field's text (``cameras``: field -> camera
    id), and the form errors, each on the field that has the problem: ``role_invalid``
    where a role is not a role name, ``role_duplicate`` on every field naming a role that
    another camera also has. The error texts name no role: a form has one set of
    placeholders, so a role named there would show under every field in error."""
    errors: dict[str, str] = {}
    owners: dict[str, list[str]] = {}
    for field, text in typed.items():
        field_roles = parse_roles(text)
        if any(not ROLE_PATTERN.fullmatch(role) for role in field_roles):
            errors[field] = "role_invalid"
        for role in dict.fromkeys(field_roles):
            owners.setdefault(role, []).append(field)
    for fields in owners.values():
        if len(fields) > 1:
            for field in fields:
                errors.setdefault(field, "role_duplicate")
    roles = {role: cameras[fields[0]] for role, fields in owners.items()}
    return roles, errors


def parse_site_lists(text: str) -> tuple[dict[str, list[str]], str | None]:
    """One list per line, ``name: item, item``. Returns the lists, or the first problem as
    ``"line N: ..."`` so the form can say where it is and what is wrong."""
    lists: dict[str, list[str]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        typed, sep, items = line.partition(":")
        if not sep:
            return {}, f"line {number}: write it as 'name: item, item' (the colon is missing)"
        if problem := name_problem(typed.strip(), "list"):
            return {}, f"line {number}: {problem}"
        name = typed.strip().lower()
        if name in lists:
            return {}, f"line {number}: the list '{name}' is already defined"
        lists[name] = [item.strip() for item in items.split(",") if item.strip()]
    return lists, None


def parse_approver_roles(
    text: str, people: Mapping[str, str]
) -> tuple[dict[str, list[str]], str | None]:
    """One role per line, ``role: Name, Name`` (Home Assistant users by name). Returns
    role -> user ids, or the first problem as ``"line N: ..."``."""
    by_name = {name.casefold(): uid for uid, name in people.items()}
    roles: dict[str, list[str]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.lower().startswith("role:"):
            line = line[len("role:") :].strip()
        role, sep, names = line.partition(":")
        role = role.strip().lower()
        if not sep or not role:
            return {}, f"line {number}: write it as 'role: Name, Name'"
        if problem := name_problem(role, "role"):
            return {}, f"line {number}: {problem}"
        if role in roles:
            return {}, f"line {number}: the role '{role}' is already given"
        ids: list[str] = []
        for name in (n.strip() for n in names.split(",")):
            if not name:
                continue
            uid = by_name.get(name.casefold())
            if uid is None:
                return {}, f"line {number}: there is no Home Assistant user named '{name}'"
            ids.append(uid)
        if not ids:
            return {}, f"line {number}: name at least one person for '{role}'"
        roles[role] = ids
    return roles, None


def format_approver_roles(roles: Mapping[str, list[str]], people: Mapping[str, str]) -> str:
    return "\n".join(
        f"{role}: {', '.join(people.get(uid, uid) for uid in ids)}" for role, ids in roles.items()
    )


def format_site_lists(lists: Mapping[str, list[str]]) -> str:
    return "\n".join(f"{name}: {', '.join(items)}" for name, items in lists.items())


#: The mark after a webhook's address that says the destination moves things (a gate, a
#: relay): a workflow step sending to it is an actuator. Without it a destination informs.
MOVES_MARK = "!moves"


def parse_webhooks(text: str) -> tuple[dict[str, str], str | None]:
    """One destination per line, ``name: https://...``, with ``!moves`` after the address
    when the destination moves things. Returns the destinations, or the first problem as
    ``"line N: ..."`` (:func:`moving_webhooks` reads the marks)."""
    hooks, _moving, problem = _parse_webhooks(text)
    return hooks, problem


def moving_webhooks(text: str) -> list[str]:
    """The destinations of ``text`` marked ``!moves``, in order."""
    return _parse_webhooks(text)[1]


def format_webhooks(hooks: Mapping[str, str], moving: Sequence[str]) -> str:
    return "\n".join(
        f"{name}: {url} {MOVES_MARK}" if name in moving else f"{name}: {url}"
        for name, url in hooks.items()
    )


def _parse_webhooks(text: str) -> tuple[dict[str, str], list[str], str | None]:
    hooks: dict[str, str] = {}
    moving: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, url = line.partition(":")
        name, url = name.strip().lower(), url.strip()
        address, _, mark = url.partition(" ")
        if mark.strip().lower() == MOVES_MARK:
            url = address
            moving.append(name)
        elif mark.strip():
            return {}, [], f"line {number}: after the address, only '{MOVES_MARK}' may follow"
        if not sep or not LIST_NAME_PATTERN.fullmatch(name):
            return {}, [], f"line {number}: write it as 'name: https://host/path'"
        if not url.startswith(("http://", "https://")) or len(url.split("//", 1)[1]) < 1:
            return {}, [], f"line {number}: the address must start with http:// or https://"
        if name in hooks:
            return {}, [], f"line {number}: the destination '{name}' is already defined"
        hooks[name] = url
    return hooks, moving, None


#: The destinations page's examples, as description placeholders (Home Assistant's rules
#: keep addresses out of translated text).
DESTINATION_EXAMPLES: Mapping[str, str] = {
    "webhook_example": "name: https://host/path",
    "moving_example": f"name: https://host/path {MOVES_MARK}",
}


class OpenNVRWorkflowsOptionsFlow(TransportAndAISteps, OptionsFlowWithReload):
    """A menu of option pages; each page saves all options and reloads the entry."""

    def __init__(self) -> None:
        self._collected: dict[str, Any] = {}
        self._models: dict[str, tuple[str, ...]] = {}
        self._evaluation: asyncio.Task[Measurement] | None = None
        self._evaluation_error = ""

    @property
    def _options(self) -> dict[str, Any]:
        return dict(self.config_entry.options)

    def _save(self, changes: Mapping[str, Any]) -> ConfigFlowResult:
        return self.async_create_entry(data=merge_options(self._options, changes))

    async def async_step_init(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        return self.async_show_menu(
            step_id="init",
            menu_options=[
                "camera_roles",
                "approvers",
                "site_rules",
                "tool_policy",
                "destinations",
                "trusted_starts",
                "limits",
                "retention",
                "privacy",
                "home_cases",
                "transport",
                "ollama",
                "voice_sentences",
            ],
        )

    # ── camera roles ─────────────────────────────────────────────────────

    async def async_step_camera_roles(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """One field per camera (labelled with its name): the roles it plays."""
        if self.config_entry.state is not ConfigEntryState.LOADED:
            # The cameras come from the running entry; without it there is nothing to map.
            return self.async_abort(reason="not_loaded")
        cameras = self.config_entry.runtime_data.cameras.data
        labels = {f"{cam.name} ({cid})": str(cid) for cid, cam in sorted(cameras.items())}
        current: dict[str, str] = self._options.get(CONF_CAMERA_ROLES, {})
        errors: dict[str, str] = {}
        typed: dict[str, str] = {}
        if user_input is not None:
            # A field left blank is missing from the input: it is "no roles".
            typed = {label: str(user_input.get(label) or "") for label in labels}
            roles, errors = camera_roles(typed, labels)
            if not errors:
                return self._save({CONF_CAMERA_ROLES: roles})
        schema = vol.Schema(
            {
                vol.Optional(
                    label,
                    description={
                        "suggested_value": ", ".join(
                            sorted(r for r, c in current.items() if c == camera_id)
                        )
                    },
                ): str
                for label, camera_id in labels.items()
            }
        )
        if typed:
            # What was typed stays on the form, mistakes included, for the person to fix.
            schema = self.add_suggested_values_to_schema(schema, typed)
        host = self.config_entry.runtime_data.workflows
        files = [] if host is None else [(f.workflow, f.text) for f in host.files.values()]
        wanted = await self.hass.async_add_executor_job(roles_wanted, files, set(current))
        return self.async_show_form(
            step_id="camera_roles",
            data_schema=schema,
            errors=errors,
            description_placeholders={"roles": ", ".join(wanted)},
        )

    # ── approvers ────────────────────────────────────────────────────────

    async def async_step_approvers(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Who answers a workflow's question: people for any role, people per role, and
        the phones (companion app) that get alerts; a question goes to each addressee's
        own phones, and to Home Assistant's notifications with answer links."""
        errors: dict[str, str] = {}
        placeholders: dict[str, str] = {"problem": ""}
        people = {uid: user.name or uid for uid, user in (await active_people(self.hass)).items()}
        phones = sorted(
            f"notify.{service}"
            for service in self.hass.services.async_services_for_domain("notify")
            if service.startswith("mobile_app_")
        )
        if user_input is not None:
            roles, problem = parse_approver_roles(user_input.get(CONF_ROLES, ""), people)
            if problem:
                errors[CONF_ROLES] = "approver_roles_invalid"
                placeholders["problem"] = problem
            else:
                return self._save(
                    {
                        CONF_APPROVERS: {
                            CONF_USERS: list(user_input.get(CONF_USERS, [])),
                            CONF_NOTIFY: list(user_input.get(CONF_NOTIFY, [])),
                            CONF_ROLES: roles,
                        }
                    }
                )
        current = self._options.get(CONF_APPROVERS, {})
        schema = vol.Schema(
            {
                vol.Optional(CONF_USERS, default=current.get(CONF_USERS, [])): SelectSelector(
                    SelectSelectorConfig(
                        options=[
                            SelectOptionDict(value=uid, label=name) for uid, name in people.items()
                        ],
                        multiple=True,
                    )
                ),
                vol.Optional(
                    CONF_ROLES,
                    description={
                        "suggested_value": format_approver_roles(
                            current.get(CONF_ROLES, {}), people
                        )
                    },
                ): _multiline(),
                vol.Optional(CONF_NOTIFY, default=current.get(CONF_NOTIFY, [])): SelectSelector(
                    SelectSelectorConfig(
                        options=phones, multiple=True, mode=SelectSelectorMode.DROPDOWN
                    )
                ),
            }
        )
        if user_input is not None:
            schema = self.add_suggested_values_to_schema(schema, user_input)
        return self.async_show_form(
            step_id="approvers",
            data_schema=schema,
            errors=errors,
            description_placeholders=placeholders,
        )

    # ── site rules ───────────────────────────────────────────────────────

    async def async_step_site_rules(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Facts every AI step reads (about 300 words at most), and named lists."""
        errors: dict[str, str] = {}
        placeholders: dict[str, str] = {"max_words": str(SITE_FACTS_MAX_WORDS)}
        if user_input is not None:
            facts = user_input.get(CONF_FACTS, "").strip()
            words = len(facts.split())
            lists, problem = parse_site_lists(user_input.get(CONF_LISTS, ""))
            if words > SITE_FACTS_MAX_WORDS:
                errors[CONF_FACTS] = "facts_too_long"
                placeholders["words"] = str(words)
            if problem:
                errors[CONF_LISTS] = "lists_invalid"
                placeholders["problem"] = problem
            if not errors:
                return self._save(
                    {
                        CONF_SITE_FACTS: facts,
                        CONF_SITE_LISTS: lists,
                        CONF_MODEL_APPS: parse_names(user_input.get(CONF_MODEL_APPS, "")),
                    }
                )
        options = self._options
        schema = vol.Schema(
            {
                vol.Optional(
                    CONF_FACTS, description={"suggested_value": options.get(CONF_SITE_FACTS, "")}
                ): _multiline(),
                vol.Optional(
                    CONF_LISTS,
                    description={
                        "suggested_value": format_site_lists(options.get(CONF_SITE_LISTS, {}))
                    },
                ): _multiline(),
                vol.Optional(
                    CONF_MODEL_APPS,
                    description={"suggested_value": ", ".join(options.get(CONF_MODEL_APPS, []))},
                ): TextSelector(),
            }
        )
        if user_input is not None:
            schema = self.add_suggested_values_to_schema(schema, user_input)
        return self.async_show_form(
            step_id="site_rules",
            data_schema=schema,
            errors=errors,
            description_placeholders=placeholders,
        )

    # ── destinations ─────────────────────────────────────────────────────

    async def async_step_destinations(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Where workflows may send things: the webhook destinations an admin approved
        (a workflow names one, never a URL), and the models the look and investigate
        actions may be asked to use besides the configured ones."""
        errors: dict[str, str] = {}
        placeholders: dict[str, str] = dict(DESTINATION_EXAMPLES)
        if user_input is not None:
            hooks, problem = parse_webhooks(user_input.get(CONF_WEBHOOKS, ""))
            if problem:
                errors[CONF_WEBHOOKS] = "webhooks_invalid"
                placeholders["problem"] = problem
            else:
                models = [
                    m.strip()
                    for m in user_input.get(CONF_MODEL_ALLOW_LIST, "").replace(",", "\n").split()
                    if m.strip()
                ]
                return self._save(
                    {
                        CONF_WEBHOOKS: hooks,
                        CONF_MOVING_WEBHOOKS: moving_webhooks(user_input.get(CONF_WEBHOOKS, "")),
                        CONF_MODEL_ALLOW_LIST: models,
                    }
                )
        options = self._options
        schema = vol.Schema(
            {
                vol.Optional(
                    CONF_WEBHOOKS,
                    description={
                        "suggested_value": format_webhooks(
                            options.get(CONF_WEBHOOKS, {}), options.get(CONF_MOVING_WEBHOOKS, [])
                        )
                    },
                ): _multiline(),
                vol.Optional(
                    CONF_MODEL_ALLOW_LIST,
                    description={
                        "suggested_value": "\n".join(options.get(CONF_MODEL_ALLOW_LIST, []))
                    },
                ): _multiline(),
            }
        )
        if user_input is not None:
            schema = self.add_suggested_values_to_schema(schema, user_input)
        return self.async_show_form(
            step_id="destinations",
            data_schema=schema,
            errors=errors,
            description_placeholders=placeholders,
        )

    # ── trusted starts ───────────────────────────────────────────────────

    async def async_step_trusted_starts(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The workflows an admin marks as started only by trusted triggers. An automation
        whose start Home Assistant does not record (a time trigger) may carry AI output
        read from an entity, so a workflow that moves things treats such a start as
        AI-derived, unless it is marked here (:func:`..host.runs.ai_mark.start_mark`)."""
        if user_input is not None:
            return self._save({CONF_TRUSTED_STARTS: list(user_input.get(CONF_TRUSTED_STARTS, []))})
        current: list[str] = list(self._options.get(CONF_TRUSTED_STARTS, []))
        labels = {workflow_id: workflow_id for workflow_id in current}
        host = (
            self.config_entry.runtime_data.workflows
            if self.config_entry.state is ConfigEntryState.LOADED
            else None
        )
        for workflow_id, loaded in (host.files if host is not None else {}).items():
            if loaded.workflow is not None:
                labels[workflow_id] = f"{loaded.workflow.name} ({workflow_id})"
        schema = vol.Schema(
            {
                vol.Optional(CONF_TRUSTED_STARTS, default=current): SelectSelector(
                    SelectSelectorConfig(
                        options=[
                            SelectOptionDict(value=workflow_id, label=label)
                            for workflow_id, label in sorted(labels.items())
                        ],
                        multiple=True,
                    )
                ),
            }
        )
        return self.async_show_form(step_id="trusted_starts", data_schema=schema)

    # ── tool policy ──────────────────────────────────────────────────────

    async def async_step_tool_policy(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Per AI tool this integration can run: auto, ask a person first, or unavailable.
        A workflow step may make a tool stricter, never looser. The defaults shown are the
        policy the AI steps apply (``ai.tool_policy.site_policy``)."""
        if user_input is not None:
            return self._save({CONF_TOOL_POLICY: dict(user_input)})
        policy = site_policy(self._options.get(CONF_TOOL_POLICY, {}))
        selector = SelectSelector(
            SelectSelectorConfig(
                options=list(MODES),
                translation_key="tool_mode",
                mode=SelectSelectorMode.DROPDOWN,
            )
        )
        schema = vol.Schema(
            {vol.Required(tool, default=mode): selector for tool, mode in sorted(policy.items())}
        )
        return self.async_show_form(step_id="tool_policy", data_schema=schema)

    # ── limits ───────────────────────────────────────────────────────────

    async def async_step_limits(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Defaults for workflows that set no limits of their own."""
        if user_input is not None:
            return self._save({CONF_DEFAULT_LIMITS: {k: int(v) for k, v in user_input.items()}})
        current = {**DEFAULT_LIMITS, **self._options.get(CONF_DEFAULT_LIMITS, {})}
        schema = vol.Schema(
            {
                vol.Required(key, default=current[key]): NumberSelector(
                    NumberSelectorConfig(min=low, max=high, step=1, mode=NumberSelectorMode.BOX)
                )
                for key, (low, high) in LIMIT_RANGES.items()
            }
        )
        return self.async_show_form(step_id="limits", data_schema=schema)

    # ── data kept ────────────────────────────────────────────────────────

    async def async_step_retention(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """How long runs, versions, marks and evidence pictures are kept, and whether
        removing the integration deletes the workflow files too."""
        if user_input is not None:
            kept = Retention.from_option({k: user_input.get(k) for k in Retention.RANGES})
            return self._save(
                {
                    CONF_RETENTION: kept.as_option(),
                    CONF_REMOVE_WORKFLOW_FILES: bool(user_input.get(CONF_REMOVE_WORKFLOW_FILES)),
                }
            )
        current = Retention.from_option(self._options.get(CONF_RETENTION))
        fields: dict[Any, Any] = {
            vol.Required(key, default=getattr(current, key)): NumberSelector(
                NumberSelectorConfig(min=low, max=high, step=1, mode=NumberSelectorMode.BOX)
            )
            for key, (low, high) in Retention.RANGES.items()
        }
        fields[
            vol.Required(
                CONF_REMOVE_WORKFLOW_FILES,
                default=bool(self._options.get(CONF_REMOVE_WORKFLOW_FILES, False)),
            )
        ] = BooleanSelector()
        return self.async_show_form(step_id="retention", data_schema=vol.Schema(fields))

    # ── own cases and measuring ──────────────────────────────────────────

    async def async_step_home_cases(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Whether marked runs are kept as the home's own cases (pictures included), how
        long and within what size, and whether a workflow that investigates needs its own
        measured bound before it goes On (:mod:`.home_cases`)."""
        if user_input is not None:
            return self._save(home_cases_option(user_input))
        return self.async_show_form(
            step_id="home_cases", data_schema=home_cases_schema(self._options)
        )

    # ── what leaves the house ────────────────────────────────────────────

    async def async_step_privacy(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The notify services that may carry a notification's full text (plates, names,
        the model's words) although they may leave the house; the others get it without
        (:mod:`..host.effects.privacy`)."""
        if user_input is not None:
            return self._save({CONF_FULL_TEXT_TO: list(user_input.get(CONF_FULL_TEXT_TO, []))})
        judge = ActionJudge.of(self.hass)
        leaving = sorted(
            f"notify.{name}"
            for name in self.hass.services.async_services_for_domain("notify")
            if name != "send_message" and leaves_the_house(judge, name)
        )
        current = list(self._options.get(CONF_FULL_TEXT_TO, []))
        schema = vol.Schema(
            {
                vol.Optional(CONF_FULL_TEXT_TO, default=current): SelectSelector(
                    SelectSelectorConfig(
                        options=sorted({*leaving, *current}),
                        multiple=True,
                        custom_value=True,
                        mode=SelectSelectorMode.DROPDOWN,
                    )
                )
            }
        )
        return self.async_show_form(step_id="privacy", data_schema=schema)

    # ── voice sentences ──────────────────────────────────────────────────

    async def async_step_voice_sentences(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Copy the shipped Assist sentences into the configuration (no option changes:
        the entry is not reloaded)."""
        errors: dict[str, str] = {}
        if user_input is not None:
            try:
                await sentences.async_install(self.hass)
            except OSError as err:
                LOGGER.warning("Could not install the Assist sentences: %s", err)
                errors["base"] = "sentences_write_failed"
            else:
                return self.async_abort(reason="sentences_installed")
        return self.async_show_form(
            step_id="voice_sentences", data_schema=vol.Schema({}), errors=errors
        )

    # ── transport and Ollama (TransportAndAISteps) ───────────────────────

    def _step_defaults(self) -> Mapping[str, Any]:
        return self._options

    async def _transport_done(self) -> ConfigFlowResult:
        return self._save(self._collected)

    async def _ai_done(self) -> ConfigFlowResult:
        if self._collected.get(CONF_AI_ENABLED):
            return await self.async_step_evaluate()
        return self._save(self._collected)

    # ── the evaluation gate (after the models page) ──────────────────────

    async def async_step_evaluate(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Offer to measure the chosen vision model on the shipped look cases; its stored
        result opens Investigate steps and Describe it (Wilson lower bound at 0.80 or more)."""
        settings = {**self._options, **self._collected}
        if user_input is not None:
            if user_input.get(CONF_RUN_EVALUATION):
                return await self.async_step_evaluate_run()
            return self._save(self._collected)
        return self.async_show_form(
            step_id="evaluate",
            data_schema=vol.Schema(
                {vol.Required(CONF_RUN_EVALUATION, default=False): BooleanSelector()}
            ),
            description_placeholders=gate_placeholders(settings),
        )

    async def async_step_evaluate_run(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The look suite runs in the background; the bar follows its cases."""
        if self._evaluation is None:
            settings = {**self._options, **self._collected}
            self._evaluation = self.hass.async_create_task(
                async_measure(self.hass, settings, self.async_update_progress, self.config_entry),
                "opennvr_workflows model evaluation",
            )
            # Shown once even if the task is already done: the next step must not get the
            # form's input that started the run.
            return self.async_show_progress(
                step_id="evaluate_run",
                progress_action="evaluate",
                progress_task=self._evaluation,
            )
        if not self._evaluation.done():
            return self.async_show_progress(
                step_id="evaluate_run",
                progress_action="evaluate",
                progress_task=self._evaluation,
            )
        if self._evaluation.cancelled() or self._evaluation.exception() is not None:
            err = None if self._evaluation.cancelled() else self._evaluation.exception()
            LOGGER.warning("The model evaluation did not finish: %r", err)
            self._evaluation_error = str(err or "cancelled") or repr(err)
            return self.async_show_progress_done(next_step_id="evaluate_failed")
        return self.async_show_progress_done(next_step_id="evaluate_done")

    async def async_step_evaluate_done(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Show the measurement (the gate's, then each workflow's); saving stores the
        gate with the model settings and each workflow's figures beside them."""
        assert self._evaluation is not None
        measured = self._evaluation.result()
        gate = {CONF_MODEL_GATE: measured.gate.as_option()} if measured.gate else {}
        if user_input is not None:
            if self.config_entry.state is ConfigEntryState.LOADED and (
                evaluation := self.config_entry.runtime_data.evaluation
            ):
                await evaluation.measurements.async_save(measured)
            return self._save({**self._collected, **gate})
        settings = {**self._options, **self._collected, **gate}
        return self.async_show_form(
            step_id="evaluate_done",
            data_schema=vol.Schema({}),
            description_placeholders={
                **gate_placeholders(settings),
                "workflows": workflow_lines(measured),
            },
        )

    async def async_step_evaluate_failed(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The evaluation could not run: say why; saving keeps the models, not a result."""
        if user_input is not None:
            return self._save(self._collected)
        return self.async_show_form(
            step_id="evaluate_failed",
            data_schema=vol.Schema({}),
            description_placeholders={"error": self._evaluation_error},
        )
