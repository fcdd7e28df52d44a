"""Four small doors, each tried as the attack it closes, in a real Home Assistant.

* A webhook destination that answers with a redirect does not get the body re-posted to
  wherever it points: the step fails, saying where it pointed, and the count shows.
* An event's text (or an AI's, a plate, a person's name) in a Home Assistant notification
  is shown as the characters it is, never as a link beside the real ones; a phone gets it
  as it is.
* Diagnostics never carry a password written into an address, wherever the address sits.
* A symbolic link in the workflow folder (or a folder that is one, or a name with ``..``)
  is never read through nor written through: not on load, export, validate, import,
  overwrite or roll back.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from homeassistant.components import persistent_notification
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.setup import async_setup_component
from markdown_it import MarkdownIt
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service

from custom_components.opennvr_workflows.const import (
    CONF_APPROVERS,
    CONF_CAMERA_ROLES,
    CONF_MQTT_HOST,
    CONF_NATS_URL,
    CONF_OLLAMA_URL,
    CONF_WEBHOOKS,
    DOMAIN,
    WORKFLOW_FOLDER,
)
from custom_components.opennvr_workflows.diagnostics import async_get_config_entry_diagnostics
from custom_components.opennvr_workflows.engine import ActionRequest, NvrEvent, RunContext
from custom_components.opennvr_workflows.engine.render import escape_markdown
from custom_components.opennvr_workflows.host.folder import files as folder_io
from custom_components.opennvr_workflows.host.pages import question_page
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from custom_components.opennvr_workflows.redact import strip_userinfo, strip_userinfo_deep
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .conftest import WEBSOCKET_OPTIONS
from .test_entities import wait_for

PHONE = "mobile_app_alices_phone"
SECRET = "api_password: hunter2-very-secret\n"
#: A workflow that only logs; valid on the simulated site.
PLAIN = """\
contract: workflow.v1
name: {name}
state: test
limits: {{ cooldown: 0s, per_hour: 100 }}
when:
  alert: {{ alert_type: person, cameras: [front_door] }}
then:
  - log: "{name} saw {{camera}}"
"""
#: An alert's title as a camera app could send it: a fake answer link and a raw HTML one.
EVIL = (
    "[Open the gate](https://evil.example/answer) ![x](https://evil.example/p.png) "
    "<a href='https://evil.example'>Approve</a> <https://evil.example/auto>"
)
MARKDOWN = MarkdownIt("commonmark", {"html": True})


@pytest.fixture
def entry_options() -> dict[str, Any]:
    return {
        **WEBSOCKET_OPTIONS,
        CONF_CAMERA_ROLES: {"front_door": "1"},
        CONF_APPROVERS: {"users": [], "notify": [f"notify.{PHONE}"]},
    }


async def set_up(hass: HomeAssistant, entry: MockConfigEntry, **files: str) -> WorkflowHost:
    """The entry set up with exactly these workflow files (no templates copied)."""
    folder = Path(hass.config.path(WORKFLOW_FOLDER))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / folder_io.TEMPLATES_MARKER).write_text("", encoding="utf-8")
    for name, text in files.items():
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    host = entry.runtime_data.workflows
    assert host is not None
    return host


async def act(hass: HomeAssistant, service: str, data: dict[str, Any]) -> Any:
    return await hass.services.async_call(
        DOMAIN, service, data, blocking=True, return_response=True
    )


async def refused(hass: HomeAssistant, service: str, data: dict[str, Any]) -> HomeAssistantError:
    with pytest.raises(HomeAssistantError) as caught:
        await act(hass, service, data)
    assert caught.value.translation_domain == DOMAIN
    return caught.value


def run_ctx(step: str = "then.0") -> RunContext:
    return RunContext(
        workflow_id="door",
        workflow_name="Door",
        version="v1",
        run_id="run1",
        correlation_id="door/run1",
        chain=("door/run1",),
        step_path=step,
        test=False,
        trigger=NvrEvent(kind="alert", source="websocket", time=_now(), camera_id="1"),
    )


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


# ── (11) webhooks never follow a redirect ────────────────────────────────────────────────


@dataclass
class Hooks:
    """A webhook destination that redirects, and where it redirects to."""

    port: int
    hook_hits: int = 0
    stolen: list[str] = field(default_factory=list)
    location: Callable[[int], str] = lambda port: "/stolen"
    status: int = 302

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"


@pytest.fixture
async def hooks(socket_enabled: None) -> AsyncGenerator[Hooks]:
    state = Hooks(port=0)

    async def hook(request: web.Request) -> web.Response:
        state.hook_hits += 1
        await request.read()
        return web.Response(status=state.status, headers={"Location": state.location(state.port)})

    async def stolen(request: web.Request) -> web.Response:
        state.stolen.append(f"{request.method} {await request.text()}")
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/hook", hook)
    app.router.add_route("*", "/stolen", stolen)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    state.port = runner.addresses[0][1]
    yield state
    await runner.cleanup()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize(
    "location",
    [
        pytest.param(lambda port: "/stolen", id="relative"),
        pytest.param(lambda port: f"http://thief:pa55w0rd@127.0.0.1:{port}/stolen", id="absolute"),
    ],
)
async def test_a_webhook_that_redirects_is_a_failed_step_and_nothing_is_sent_on(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hooks: Hooks,
    status: int,
    location: Callable[[int], str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    hooks.status, hooks.location = status, location
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_WEBHOOKS: {"tickets": hooks.url()}}
    )
    host = await set_up(hass, config_entry)
    fx = host.effects
    request = ActionRequest(kind="webhook", params={"to": "tickets", "data": {"gate_code": "4711"}})
    with pytest.raises(HomeAssistantError) as caught:
        await fx.webhook(run_ctx(), request)

    message = str(caught.value)
    assert f"redirected (HTTP {status}) to http://127.0.0.1:{hooks.port}/stolen" in message
    assert "nothing was sent there" in message
    assert "pa55w0rd" not in message
    assert "thief" not in message
    assert hooks.hook_hits == 1
    assert hooks.stolen == []  # never re-posted, never fetched
    assert fx.webhook_redirects == 1
    assert "redirected" in caplog.text
    assert "pa55w0rd" not in caplog.text
    diag = await async_get_config_entry_diagnostics(hass, config_entry)
    assert diag["workflows"]["webhooks"] == {"redirects_refused": 1}


WEBHOOK_FLOW = """\
contract: workflow.v1
name: Ticket
state: on
limits: {{ cooldown: 0s, per_hour: 100 }}
when:
  button: {{}}
then:
  - webhook: {{ to: tickets, data: {{ what: parcel }} }}
  - log: "after"
"""


async def test_a_redirecting_webhook_fails_its_step_in_a_run(
    hass: HomeAssistant, config_entry: MockConfigEntry, hooks: Hooks
) -> None:
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_WEBHOOKS: {"tickets": hooks.url()}}
    )
    host = await set_up(hass, config_entry, ticket=WEBHOOK_FLOW.format())
    assert host.files["ticket"].workflow is not None, host.files["ticket"].report.problems
    host.engine.run_now("ticket")
    await host.engine.idle()
    (run,) = await host.engine.runs("ticket")
    detail = await host.engine.run_detail(run["id"])
    step = next(s for s in detail["steps"] if s["path"] == "then.0")
    assert step["status"] == "failed", step
    assert "redirected (HTTP 302)" in json.dumps(step["result"])
    assert hooks.stolen == []


# ── (12) values are shown literally where Home Assistant renders markdown ───────────────


def notes(hass: HomeAssistant) -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = hass.data[persistent_notification.DOMAIN]
    return data


def tags_of(markdown: str) -> set[str]:
    """The HTML tags a text renders to as markdown, beyond paragraphs and line breaks."""
    html = re.sub(r"</?p>|<br ?/?>", "", MARKDOWN.render(markdown))
    return set(re.findall(r"<([a-z0-9]+)", html))


DOOR_TEXT = """\
contract: workflow.v1
name: Door text
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person, cameras: [front_door] }
then:
  - alert: { severity: low, title: "Person", message: "**Seen** at the door: {title}" }
  - notify: { who: role:household, title: Door, message: "**Seen**: {title}" }
  - home_assistant:
      action: persistent_notification.create
      data: { notification_id: door_text, title: Door, message: "_Seen_: {title}" }
"""


async def test_an_events_text_in_a_notification_is_shown_as_it_is(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    await async_setup_component(hass, persistent_notification.DOMAIN, {})
    phone = async_mock_service(hass, "notify", PHONE)
    host = await set_up(hass, config_entry, door_text=DOOR_TEXT)
    assert host.files["door_text"].workflow is not None, host.files["door_text"].report.problems
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    await sim.emit_alert(1, "person", title=EVIL)
    await wait_for(hass, lambda: host.engine.stats.started == 1)
    await host.engine.idle()
    await hass.async_block_till_done()

    shown = {n["message"] for n in notes(hass).values()}
    alert = f"**Seen** at the door: {escape_markdown(EVIL)}"
    created = f"_Seen_: {escape_markdown(EVIL)}"
    assert alert in shown, shown
    assert created in shown, shown
    assert tags_of(alert) == {"strong"}  # the workflow's own bold, no link, no image
    assert tags_of(created) == {"em"}
    # The phone is not markdown: it shows the text as the camera sent it.
    assert phone[0].data["message"] == f"**Seen**: {EVIL}"


async def test_home_assistants_own_notify_and_the_fallback_escape_values_too(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    host = setup_entry.runtime_data.workflows
    assert host is not None
    fx = host.effects
    # No phone answers here: the message lands in Home Assistant, escaped whole (no
    # markdown rendering came with it).
    await fx.notify(
        run_ctx(), ActionRequest(kind="notify", params={"roles": ["x"], "message": EVIL})
    )
    assert escape_markdown(EVIL) in {n["message"] for n in notes(hass).values()}
    # Home Assistant's own notify service is markdown; the phone is not.
    own = async_mock_service(hass, "notify", "persistent_notification")
    phone = async_mock_service(hass, "notify", PHONE)
    rendered = f"*Hi*: {escape_markdown(EVIL)}"
    await fx.notify(
        run_ctx("then.1"),
        ActionRequest(
            kind="notify",
            params={
                "roles": ["notify.persistent_notification", f"notify.{PHONE}"],
                "message": f"*Hi*: {EVIL}",
            },
            markdown=rendered,
        ),
    )
    assert own[0].data["message"] == rendered
    assert phone[0].data["message"] == f"*Hi*: {EVIL}"


ASK_TEXT = """\
contract: workflow.v1
name: Ask about the door
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person, cameras: [front_door] }
then:
  - ask_person:
      who: role:owner
      message: "Let {title} in?"
      replies: [Yes, No]
      timeout: 1h
      default: No
    Yes: [ log: yes ]
    No: [ log: no ]
"""


async def test_a_question_in_home_assistant_shows_the_event_and_the_name_as_they_are(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    mallory = await hass.auth.async_create_user("[Mallory](https://evil.example/me)")
    hass.config_entries.async_update_entry(
        config_entry,
        options={**config_entry.options, CONF_APPROVERS: {"roles": {"owner": [mallory.id]}}},
    )
    host = await set_up(hass, config_entry, ask=ASK_TEXT)
    assert host.files["ask"].workflow is not None, host.files["ask"].report.problems
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    await sim.emit_alert(1, "person", title=EVIL)
    await wait_for(hass, lambda: bool(host.desk.pending()))
    await hass.async_block_till_done()

    (question,) = [n for n in notes(hass).values() if "Let " in n["message"]]
    assert escape_markdown(f"Let {EVIL} in?") in question["message"]
    assert escape_markdown(mallory.name or "") in question["message"]
    # The one link in it is the integration's own, to the question's page in the panel.
    (ticket,) = host.desk.pending()
    own = f"[Open the question]({question_page(ticket.approval_id)})"
    assert question["message"].count(own) == 1, question["message"]
    body = question["message"].replace(own, "")
    assert tags_of(body) == set(), MARKDOWN.render(body)


# ── (13) diagnostics carry no password written into an address ──────────────────────────


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://u:p@host:11434", "http://host:11434"),
        ("nats://user:pw@h:4222", "nats://h:4222"),
        ("tls://tok@h", "tls://h"),
        ("mqtt://user:pass@broker:1883/topic", "mqtt://broker:1883/topic"),
        ("https://key@hooks.example/T?x=a@b", "https://hooks.example/T?x=a@b"),
        ("HTTP://U:P@ss@H/x", "HTTP://H/x"),  # an unencoded @ in the password
        ("cannot reach ws://a:b@h1:1, nats://c:d@h2:2.", "cannot reach ws://h1:1, nats://h2:2."),
        ("mail me at a@b.example", "mail me at a@b.example"),  # not an address
        ("http://h/path@x", "http://h/path@x"),  # an @ after the host
    ],
)
def test_user_info_is_stripped_from_every_address_in_a_text(text: str, expected: str) -> None:
    assert strip_userinfo(text) == expected


def test_user_info_is_stripped_from_keys_values_and_nested_lists() -> None:
    data = {
        "http://k:v@key.example": {"list": ["tls://t0k@h", ("nats://u:p@h:1", 2)]},
        "set": {"mqtt://a:b@m"},
        "n": 1,
        "none": None,
    }
    assert strip_userinfo_deep(data) == {
        "http://key.example": {"list": ["tls://h", ["nats://h:1", 2]]},
        "set": ["mqtt://m"],
        "n": 1,
        "none": None,
    }


async def test_diagnostics_strip_passwords_from_every_address(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        setup_entry,
        options={
            **setup_entry.options,
            CONF_OLLAMA_URL: "http://ollie:0llama-pw@127.0.0.1:11434",
            CONF_NATS_URL: "nats://natsuser:n4ts-pw@nvr:4222",
            CONF_MQTT_HOST: "mqtt://mq:mq-pw@broker:1883",
            "custom": {"tls://t0ken-pw@h": ["https://hook:h00k-pw@hooks.example/x"]},
        },
    )
    await hass.async_block_till_done()
    host = setup_entry.runtime_data.workflows
    assert host is not None
    # Runtime data with an address in an error text.
    host.model_watch.health = replace(
        host.model_watch.health, detail="Ollama at http://ollie:0llama-pw@10.0.0.2:11434 is down"
    )

    diag = await async_get_config_entry_diagnostics(hass, setup_entry)
    text = json.dumps(diag)
    for secret in ("0llama-pw", "n4ts-pw", "mq-pw", "t0ken-pw", "h00k-pw", "ollie", "natsuser"):
        assert secret not in text, secret
    options = diag["entry"]["options"]
    assert options[CONF_OLLAMA_URL] == "http://127.0.0.1:11434"
    assert options[CONF_NATS_URL] == "nats://nvr:4222"
    assert options[CONF_MQTT_HOST] == "mqtt://broker:1883"
    assert options["custom"] == {"tls://h": ["https://hooks.example/x"]}
    assert diag["workflows"]["model"]["detail"] == "Ollama at http://10.0.0.2:11434 is down"


# ── (14) the workflow folder is read and written only as plain files in it ──────────────


def secrets_file(hass: HomeAssistant) -> Path:
    path = Path(hass.config.path("secrets.yaml"))
    path.write_text(SECRET, encoding="utf-8")
    return path


async def test_a_link_in_the_folder_is_listed_as_invalid_and_never_read(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    secrets = secrets_file(hass)
    elsewhere = Path(hass.config.path("elsewhere"))
    elsewhere.mkdir()
    (elsewhere / "valid.yaml").write_text(PLAIN.format(name="Valid elsewhere"), "utf-8")
    folder = Path(hass.config.path(WORKFLOW_FOLDER))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "secrets.yaml").symlink_to(secrets)
    (folder / "valid.yaml").symlink_to(elsewhere / "valid.yaml")  # even a valid workflow
    (folder / "dangling.yaml").symlink_to(folder / "gone.yaml")
    host = await set_up(hass, config_entry, door=PLAIN.format(name="Door"))

    assert host.files["door"].workflow is not None
    for workflow_id in ("secrets", "valid", "dangling"):
        loaded = host.files[workflow_id]
        assert loaded.workflow is None
        assert loaded.text is None
        (problem,) = loaded.errors
        assert problem.code == folder_io.NOT_IN_FOLDER
        assert "symbolic link" in problem.message
    assert {s.workflow_id for s in host.engine.workflows()} == {"door"}
    assert "hunter2" not in json.dumps(host.summary())

    err = await refused(hass, "export_workflow", {"workflow": "secrets"})
    assert err.translation_key == "file_not_in_folder"
    assert "secrets.yaml" in str(err)
    assert "symbolic link" in str(err)
    assert "hunter2" not in str(err)
    err = await refused(hass, "validate_workflow", {"file": "secrets.yaml"})
    assert err.translation_key == "file_not_in_folder"
    # Overwriting through the link is refused too: the file it points to is untouched.
    err = await refused(
        hass,
        "import_workflow",
        {"yaml": PLAIN.format(name="Secrets"), "file_name": "secrets", "overwrite": True},
    )
    assert err.translation_key == "file_not_in_folder"
    assert secrets.read_text(encoding="utf-8") == SECRET
    assert (folder / "secrets.yaml").is_symlink()


async def test_a_link_swapped_in_after_loading_is_not_followed(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    secrets = secrets_file(hass)
    host = await set_up(hass, config_entry, door=PLAIN.format(name="Door"))
    first = host.engine.workflow_status("door").version
    await act(
        hass,
        "import_workflow",
        {"yaml": PLAIN.format(name="Door v2"), "file_name": "door", "overwrite": True},
    )
    door = host.folder / "door.yaml"
    door.unlink()
    door.symlink_to(secrets)  # swapped in behind the integration's back

    for service, data in (
        ("export_workflow", {"workflow": "door"}),
        ("validate_workflow", {"file": "door.yaml"}),
        ("rollback_workflow", {"workflow": "door", "version": first}),
        (
            "import_workflow",
            {"yaml": PLAIN.format(name="Door v3"), "file_name": "door", "overwrite": True},
        ),
    ):
        err = await refused(hass, service, data)
        assert err.translation_key == "file_not_in_folder", service
        assert "hunter2" not in str(err)
    assert secrets.read_text(encoding="utf-8") == SECRET
    await host.async_reload()
    assert host.files["door"].errors[0].code == folder_io.NOT_IN_FOLDER


@pytest.mark.parametrize(
    "name",
    ["../secrets.yaml", "../secrets", "..", "sub/../../secrets.yaml", "..\\secrets.yaml"],
)
async def test_names_that_lead_out_of_the_folder_are_refused(
    hass: HomeAssistant, config_entry: MockConfigEntry, name: str
) -> None:
    secrets = secrets_file(hass)
    host = await set_up(hass, config_entry)
    err = await refused(
        hass,
        "import_workflow",
        {"yaml": PLAIN.format(name="Out"), "file_name": name, "overwrite": True},
    )
    assert err.translation_key == "bad_file_name"
    assert (await refused(hass, "validate_workflow", {"file": name})).translation_key == (
        "unknown_file"
    )
    assert (await refused(hass, "export_workflow", {"workflow": name})).translation_key == (
        "unknown_workflow"
    )
    assert secrets.read_text(encoding="utf-8") == SECRET
    assert sorted(p.name for p in host.folder.iterdir()) == [folder_io.TEMPLATES_MARKER]


async def test_a_workflow_folder_that_is_a_link_is_not_read_nor_written(
    hass: HomeAssistant, config_entry: MockConfigEntry, caplog: pytest.LogCaptureFixture
) -> None:
    config = Path(hass.config.path())
    (config / "secrets.yaml").write_text(PLAIN.format(name="Secrets"), "utf-8")
    (config / WORKFLOW_FOLDER).symlink_to(config, target_is_directory=True)
    before = sorted(p.name for p in config.glob("*.yaml"))
    with caplog.at_level(logging.ERROR):
        assert await hass.config_entries.async_setup(config_entry.entry_id)
        await hass.async_block_till_done()
    host = config_entry.runtime_data.workflows
    assert host is not None

    assert host.files == {}
    assert host.engine.workflows() == []
    assert "is a symbolic link: no workflow is read from it" in caplog.text
    err = await refused(hass, "import_workflow", {"yaml": PLAIN.format(name="New")})
    assert err.translation_key == "file_not_in_folder"
    assert "workflow folder that is a symbolic link" in str(err)
    err = await refused(hass, "validate_workflow", {"file": "secrets.yaml"})
    assert err.translation_key == "file_not_in_folder"
    assert sorted(p.name for p in config.glob("*.yaml")) == before  # no template, no file
    assert not (config / folder_io.TEMPLATES_MARKER).exists()


def test_the_folder_functions_refuse_paths_out_of_the_folder(tmp_path: Path) -> None:
    """The root check, below the actions' own name rules: what a caller passes in."""
    folder = tmp_path / "flows"
    folder.mkdir()
    outside = tmp_path / "secrets.yaml"
    outside.write_text(SECRET, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    os.symlink(tmp_path / "sub", folder / "sub")
    for path in (
        folder / ".." / "secrets.yaml",
        folder / "sub" / ".." / ".." / "secrets.yaml",
        folder / "sub" / "x.yaml",
        outside,
    ):
        read = folder_io.read_file(folder, path)
        assert (read.text, read.code) == (None, folder_io.NOT_IN_FOLDER), path
        with pytest.raises(folder_io.NotInFolderError):
            folder_io.write_text(folder, path, "x")
    assert outside.read_text(encoding="utf-8") == SECRET
    assert not (tmp_path / "sub" / "x.yaml").exists()
    # A plain file in the folder is read and written as before.
    folder_io.write_text(folder, folder / "door.yaml", "text")
    assert folder_io.read_file(folder, folder / "door.yaml").text == "text"
