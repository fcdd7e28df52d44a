"""A read-only Home Assistant user (a wall tablet, a guest: Home Assistant's read-only
group) in Chromium, as the README's "Who may do what" has it: the Workflows panel shows
them the workflows, their runs and versions, and offers no control that changes anything;
and every route their own login reaches from the browser (the frontend's actions, the
panel's websocket commands, the REST API with the page's token) is refused, with nothing
changed afterwards as the owner reads it: the workflow's state and versions, its file on
disk, its runs, the mark of a run, the question it waits on, the site mode.

The owner (the session's login) sets the scene: the site (added here when test_01 did not
run first), a button workflow in two versions, turned On, run once and waiting on a
question the owner is asked. The last test answers that question as the owner: the route
the read-only user was refused works for the person it is for.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from custom_components.opennvr_workflows.const import SITE_MODES, WORKFLOW_FOLDER
from tests.browser.frontend import Screenshots, assert_translated, call_ws, log_in
from tests.browser.services import ROOT, Stack
from tests.browser.test_01_add_integration import DOMAIN

PANEL: Final = "opennvr-workflows"
STRINGS: Final = ROOT / "custom_components" / DOMAIN / "strings.json"
#: The read-only user, as an owner adds one in Settings > People.
READER: Final = {"name": "Hall Tablet", "username": "hall-tablet", "password": "quiet-hall-73"}
READ_ONLY_GROUP: Final = "system-read-only"
FILE: Final = "read_only_gate"
NAME: Final = "Read-only check, the gate"
QUESTION: Final = "Open the gate for the read-only check?"
WORKFLOW: Final = f"""contract: workflow.v1
name: {NAME}
state: test
limits: {{ cooldown: 0s, per_hour: 100 }}
when:
  button: {{}}
then:
  - ask_person:
      who: role:owner
      message: "{QUESTION}"
      replies: [Open, Keep closed]
      timeout: 30m
      default: Keep closed
    Open: [ log: "Opened by {{answered_by}}" ]
    Keep closed: [ log: "Kept closed" ]
"""
#: The first version: the one a rollback would bring back.
FIRST: Final = WORKFLOW.replace('log: "Kept closed"', 'log: "Left closed"')
#: What the read-only user tries to write over the workflow, and as a new file.
TAMPERED: Final = WORKFLOW.replace(QUESTION, "Opened without asking")
INTRUDER_FILE: Final = "read_only_intruder"
INTRUDER: Final = WORKFLOW.replace(NAME, "Written by the tablet")

#: A refusal by Home Assistant itself (an entity the user may not control).
HA_UNAUTHORIZED: Final = re.compile(r"unauthori[sz]ed", re.IGNORECASE)
#: Websocket codes a refused action call answers with: Home Assistant's ``call_service``
#: sends an ``Unauthorized`` raised by the action as ``home_assistant_error`` with the
#: action's own translated sentence; a refused command answers ``unauthorized``.
REFUSED_CALL_CODES: Final = ("unauthorized", "home_assistant_error")


def text(key: str, **placeholders: str) -> str:
    """An English text of the integration's ``exceptions``, as strings.json has it."""
    exceptions = json.loads(STRINGS.read_text(encoding="utf-8"))["exceptions"]
    message = str(exceptions[key]["message"])
    for name, value in placeholders.items():
        message = message.replace(f"{{{name}}}", value)
    return message


def error_text(key: str, **placeholders: str) -> str:
    """The sentence of an error, as Home Assistant sends it (its final full stop dropped)."""
    return text(key, **placeholders).removesuffix(".")


def says(message: object, sentence: str) -> bool:
    """Whether an error's message is ``sentence`` (with or without its full stop)."""
    return str(message).removesuffix(".") == sentence.removesuffix(".")


def not_allowed(door: str) -> str:
    """The sentence a door refuses with (``door`` without its kind: ``reload``,
    ``opennvr_workflows/workflows/save``)."""
    return error_text("not_allowed", door=door)


def wait_for[T](what: str, probe: Callable[[], T | None], timeout: float = 60) -> T:
    """Poll ``probe`` until it returns something; fail saying ``what`` did not happen."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found is not None:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {timeout:.0f} s", pytrace=False)
        time.sleep(0.5)


# ── what the browser can do with its own login ───────────────────────────


_CALL_SERVICE = """async ([domain, service, data, target, returnResponse]) => {
  const hass = document.querySelector("home-assistant").hass;
  try {
    // notifyOnError false: the answer is read here, not shown as a toast.
    const result = await hass.callService(
      domain, service, data, target ?? undefined, false, returnResponse
    );
    return { ok: true, result };
  } catch (err) {
    return { ok: false, code: err?.code ?? null, message: err?.message ?? String(err) };
  }
}"""

_CALL_WS = """async (message) => {
  const hass = document.querySelector("home-assistant").hass;
  try {
    return { ok: true, result: await hass.callWS(message) };
  } catch (err) {
    return { ok: false, code: err?.code ?? null, message: err?.message ?? String(err) };
  }
}"""

_REST = """async ([path, body]) => {
  const hass = document.querySelector("home-assistant").hass;
  const res = await fetch(path, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${hass.auth.data.access_token}`,
      "Content-Type": "application/json",
    },
    body: JSON.stringify(body),
  });
  return { ok: res.ok, status: res.status, message: await res.text() };
}"""


def call_service(
    page: Page,
    domain: str,
    service: str,
    data: dict[str, Any],
    *,
    target: dict[str, Any] | None = None,
    response: bool = False,
) -> dict[str, Any]:
    """``hass.callService`` of the page's frontend: ``{ok, result}`` or ``{ok, code,
    message}``."""
    answer: dict[str, Any] = page.evaluate(_CALL_SERVICE, [domain, service, data, target, response])
    return answer


def try_ws(page: Page, message: dict[str, Any]) -> dict[str, Any]:
    """``hass.callWS`` of the page's frontend: ``{ok, result}`` or ``{ok, code, message}``."""
    answer: dict[str, Any] = page.evaluate(_CALL_WS, message)
    return answer


def rest_post(page: Page, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """A POST to Home Assistant's REST API with the page's own access token:
    ``{ok, status, message}``."""
    answer: dict[str, Any] = page.evaluate(_REST, [path, body])
    return answer


# ── the scene the owner sets ─────────────────────────────────────────────


@dataclass
class Scene:
    """What the owner set up, as the owner read it before the read-only user came."""

    workflow_id: str
    path: Path
    file_text: str
    folder_files: frozenset[str]
    versions: tuple[str, ...]
    current: str
    older: str
    state_select: str
    run_now: str
    site_mode_select: str
    site_mode: str
    run_id: str
    approval_id: str
    listed: frozenset[str]


def add_the_site(stack: Stack) -> None:
    """The site as test_01 adds it (events websocket, local AI on the Ollama fake), through
    the config-flow API, unless test_01 already did in this session."""
    if stack.ha.entries(DOMAIN):
        return
    answers: dict[str, dict[str, Any]] = {
        "user": {"url": stack.sim.url, "token": stack.sim.token, "verify_ssl": True},
        "transport": {"transport": "websocket"},
        "ollama": {"ollama_url": stack.ollama.url, "skip_ai": False},
        "models": {},
    }
    base = "/api/config/config_entries/flow"
    step = stack.ha.request("POST", base, {"handler": DOMAIN, "show_advanced_options": False})
    for _ in range(len(answers) + 1):
        if step["type"] != "form":
            break
        assert step["step_id"] in answers, step
        assert not step.get("errors"), step
        step = stack.ha.request("POST", f"{base}/{step['flow_id']}", answers[step["step_id"]])
    assert step["type"] == "create_entry", step
    wait_for(
        "the site's entry did not load",
        lambda: [e for e in stack.ha.entries(DOMAIN) if e["state"] == "loaded"] or None,
    )


def open_panel(page: Page, stack: Stack) -> Locator:
    page.goto(f"{stack.ha.url}/{PANEL}")
    panel = page.locator("opennvr-workflows-panel")
    expect(panel).to_be_attached()
    return panel


def workflow_rows(page: Page) -> dict[str, dict[str, Any]]:
    listed = call_ws(page, {"type": f"{DOMAIN}/workflows/list"})
    return {row["workflow_id"]: row for row in listed["workflows"]}


def run_ids(page: Page, workflow_id: str) -> set[str]:
    runs = call_ws(page, {"type": f"{DOMAIN}/workflows/runs", "workflow": workflow_id})
    return {str(run["run_id"]) for run in runs["runs"]}


def versions_of(page: Page, workflow_id: str) -> list[dict[str, Any]]:
    found = call_ws(page, {"type": f"{DOMAIN}/workflows/versions", "workflow": workflow_id})
    versions: list[dict[str, Any]] = found["versions"]
    return versions


def open_questions(page: Page) -> dict[str, dict[str, Any]]:
    listed = call_ws(page, {"type": f"{DOMAIN}/approvals/list"})
    return {row["approval_id"]: row for row in listed["approvals"]}


def entity_id(page: Page, what: str, match: Callable[[dict[str, Any]], bool]) -> str:
    """The entity of the integration ``match`` picks, from the registry the frontend reads."""

    def probe() -> str | None:
        for entry in call_ws(page, {"type": "config/entity_registry/list"}):
            if entry["platform"] == DOMAIN and match(entry):
                return str(entry["entity_id"])
        return None

    return wait_for(f"{what} was not registered", probe)


def folder_files(folder: Path) -> frozenset[str]:
    return frozenset(p.name for p in folder.iterdir())


@pytest.fixture(scope="module")
def owner(logged_in: BrowserContext, stack: Stack) -> Iterator[Page]:
    """A tab of the owner's browser, on the Workflows panel (its ``hass`` ready)."""
    add_the_site(stack)
    tab = logged_in.new_page()
    open_panel(tab, stack)
    yield tab
    tab.close()


@pytest.fixture(scope="module")
def scene(owner: Page, stack: Stack) -> Scene:
    """The owner's workflow in two versions, On, run once and waiting on the owner's answer."""
    saved = call_ws(owner, {"type": f"{DOMAIN}/workflows/save", "yaml": FIRST, "file_name": FILE})
    workflow_id = str(saved["workflow_id"])
    call_ws(
        owner,
        {
            "type": f"{DOMAIN}/workflows/save",
            "yaml": WORKFLOW,
            "file_name": FILE,
            "overwrite": True,
        },
    )
    call_ws(
        owner, {"type": f"{DOMAIN}/workflows/set_state", "workflow": workflow_id, "state": "on"}
    )
    state_select = entity_id(
        owner,
        "the workflow's State select",
        lambda e: str(e["unique_id"]).endswith(f"_workflow_{workflow_id}_state")
        and str(e["entity_id"]).startswith("select."),
    )
    run_now = entity_id(
        owner,
        "the workflow's Run now button",
        lambda e: str(e["unique_id"]).endswith(f"_workflow_{workflow_id}_run_now"),
    )
    site_mode_select = entity_id(
        owner,
        "the site mode select",
        lambda e: e["translation_key"] == "site_mode" and str(e["entity_id"]).startswith("select."),
    )
    wait_for(
        "the State select did not say On",
        lambda: stack.ha.state(state_select)["state"] == "on" or None,
    )

    def known_mode() -> str | None:
        mode = str(stack.ha.state(site_mode_select)["state"])
        return mode if mode in SITE_MODES else None

    site_mode = wait_for("the site mode is not known", known_mode)

    started = call_service(owner, DOMAIN, "run_workflow", {"workflow": workflow_id})
    assert started["ok"], f"the owner could not run the workflow: {started}"
    asked = wait_for(
        "the run's question did not reach the owner",
        lambda: next(
            (q for q in open_questions(owner).values() if q["workflow_id"] == workflow_id), None
        ),
    )
    assert asked["message"] == QUESTION, asked
    assert asked["may_answer"], f"the owner is not asked the question: {asked}"
    runs = run_ids(owner, workflow_id)
    assert runs == {asked["run_id"]}, f"one run, the one waiting: {runs}, {asked}"

    versions = versions_of(owner, workflow_id)
    assert len(versions) == 2, versions
    (current,) = (v["version"] for v in versions if v["current"])
    (older,) = (v["version"] for v in versions if not v["current"])
    folder = stack.ha.config_dir / WORKFLOW_FOLDER
    path = folder / str(saved["file"])
    return Scene(
        workflow_id=workflow_id,
        path=path,
        file_text=path.read_text(encoding="utf-8"),
        folder_files=folder_files(folder),
        versions=tuple(v["version"] for v in versions),
        current=str(current),
        older=str(older),
        state_select=state_select,
        run_now=run_now,
        site_mode_select=site_mode_select,
        site_mode=str(site_mode),
        run_id=str(asked["run_id"]),
        approval_id=str(asked["approval_id"]),
        listed=frozenset(workflow_rows(owner)),
    )


@pytest.fixture(scope="module")
def reader(browser: Browser, owner: Page, stack: Stack) -> Iterator[BrowserContext]:
    """The read-only user, added by the owner as Settings > People does (a user in Home
    Assistant's read-only group, then a username and password), logged in through the login
    page in a browser of their own."""
    created = call_ws(
        owner,
        {
            "type": "config/auth/create",
            "name": READER["name"],
            "group_ids": [READ_ONLY_GROUP],
            "local_only": False,
        },
    )
    user = created["user"]
    assert user["group_ids"] == [READ_ONLY_GROUP], user
    call_ws(
        owner,
        {
            "type": "config/auth_provider/homeassistant/create",
            "user_id": user["id"],
            "username": READER["username"],
            "password": READER["password"],
        },
    )
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    context.set_default_timeout(30_000)
    tab = context.new_page()
    log_in(tab, stack.ha.url, READER["username"], READER["password"])
    logged = tab.evaluate("() => document.querySelector('home-assistant').hass.user")
    assert (logged["name"], logged["is_admin"]) == (READER["name"], False), logged
    tab.close()
    yield context
    context.close()


@pytest.fixture
def tablet(
    reader: BrowserContext, request: pytest.FixtureRequest, shot: Screenshots
) -> Iterator[Page]:
    """A new tab of the read-only user's browser; on failure its screen is saved too."""
    tab = reader.new_page()
    yield tab
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        shot(tab, "failed")
    tab.close()


# ── what the panel offers ────────────────────────────────────────────────

_ENABLED_BUTTONS = """(buttons) => buttons
  .filter((b) => !b.disabled && b.getClientRects().length > 0)
  .map((b) => (b.getAttribute("aria-label") || b.textContent || "").trim())"""

#: What a read-only person may press: moving between views, comparing versions, paging.
READING_CONTROLS: Final = frozenset(
    text(f"panel_{key}")
    for key in (
        "back",
        "menu",
        "tab_workflows",
        "tab_questions",
        "runs",
        "versions",
        "diff",
        "more",
    )
)


def enabled_buttons(panel: Locator) -> list[str]:
    """The names of the buttons the panel lets the user press now (shadow roots included)."""
    names: list[str] = panel.locator("button").evaluate_all(_ENABLED_BUTTONS)
    return names


def assert_offers_nothing_that_changes(panel: Locator, where: str) -> None:
    changing = [name for name in enabled_buttons(panel) if name not in READING_CONTROLS]
    assert not changing, f"{where}: a read-only user is offered {changing}"
    expect(panel.locator("opennvr-workflow-editor")).to_have_count(0)
    state_buttons = panel.locator("button[data-state]")
    for i in range(state_buttons.count()):
        expect(state_buttons.nth(i)).to_be_disabled()


def test_the_read_only_user_sees_the_workflows_and_no_control(
    tablet: Page, owner: Page, scene: Scene, stack: Stack, shot: Screenshots
) -> None:
    tablet.goto(f"{stack.ha.url}/")
    # The panel is in their sidebar, and opens from there.
    tablet.locator("ha-sidebar").get_by_text(text("panel_title"), exact=True).click()
    tablet.wait_for_url(re.compile(rf"/{PANEL}$"))
    panel = tablet.locator("opennvr-workflows-panel")
    rows = panel.locator(".workflow")
    expect(rows).to_have_count(len(scene.listed))
    shown = {rows.nth(i).get_attribute("data-workflow") for i in range(rows.count())}
    assert shown == set(scene.listed), "the read-only user sees every workflow the owner does"
    mine = panel.locator(f'.workflow[data-workflow="{scene.workflow_id}"]')
    expect(mine.locator("h3")).to_have_text(NAME)
    expect(mine.locator('button[data-state="on"]')).to_have_attribute("aria-pressed", "true")
    expect(panel.get_by_text(text("panel_read_only"))).to_be_visible()
    expect(panel.get_by_role("button", name=text("panel_new"))).to_have_count(0)
    expect(panel.get_by_role("button", name=text("panel_templates"))).to_have_count(0)
    assert panel.locator("button[data-state]").count() >= 3
    assert_offers_nothing_that_changes(panel, "the list")
    assert_translated(panel, "the Workflows panel of a read-only user")
    mine.scroll_into_view_if_needed()
    shot(tablet, "list")

    # The workflow's page: its runs, no Edit, no Try, the state switch disabled.
    panel.get_by_role("link", name=NAME).click()
    expect(panel.get_by_role("heading", name=NAME)).to_be_visible()
    expect(panel.locator(f'.run[data-run="{scene.run_id}"]')).to_be_visible()
    expect(panel.locator("button.edit")).to_have_count(0)
    expect(panel.locator("button.tab-try")).to_have_count(0)
    expect(panel.locator('button[data-state="on"]')).to_have_attribute("aria-pressed", "true")
    assert_offers_nothing_that_changes(panel, "the workflow's page")
    assert_translated(panel, "a workflow's page for a read-only user")
    shot(tablet, "workflow")

    # Its versions: compared, never rolled back.
    panel.locator("button.tab-versions").click()
    versions = panel.locator(".version")
    expect(versions).to_have_count(len(scene.versions))
    expect(panel.locator("button.rollback")).to_have_count(0)
    panel.get_by_role("button", name=text("panel_diff")).click()
    expect(panel.locator(".diff .del")).to_contain_text("Left closed")
    expect(panel.locator(".diff .add")).to_contain_text("Kept closed")
    assert_offers_nothing_that_changes(panel, "the versions")
    assert_translated(panel, "the versions for a read-only user")
    shot(tablet, "versions")

    # The Questions tab: the owner's question is not theirs, and is not shown to them.
    panel.get_by_role("button", name=text("panel_back")).click()
    panel.locator("button.tab-questions").click()
    expect(panel.get_by_text(text("panel_questions_none"))).to_be_visible()
    expect(panel.locator(".approval")).to_have_count(0)
    assert call_ws(tablet, {"type": f"{DOMAIN}/approvals/list"}) == {"approvals": []}
    assert scene.approval_id in open_questions(owner), "the owner's question is still open"
    assert_offers_nothing_that_changes(panel, "the Questions tab")
    assert_translated(panel, "the Questions tab for a read-only user")
    shot(tablet, "questions")


def test_the_run_page_offers_no_marking(
    tablet: Page, owner: Page, scene: Scene, stack: Stack, shot: Screenshots
) -> None:
    panel = open_panel(tablet, stack)
    panel.get_by_role("link", name=NAME).click()
    panel.locator(f'.run[data-run="{scene.run_id}"]').click()
    expect(panel.locator(".step").first).to_be_visible()
    assert_translated(panel, "a run's page for a read-only user")
    shot(tablet, "run")
    marks = [
        name
        for name in enabled_buttons(panel)
        if name in (text("panel_mark_right"), text("panel_mark_wrong"))
    ]
    if marks:
        # Offered: pressing it is refused, and the run stays unmarked.
        panel.get_by_role("button", name=marks[0], exact=True).click()
        refusal = panel.get_by_role("alert")
        expect(refusal).to_have_text(re.compile(re.escape(not_allowed(f"{DOMAIN}/workflows/mark"))))
        shot(tablet, "mark-refused")
        run = call_ws(owner, {"type": f"{DOMAIN}/workflows/run", "run_id": scene.run_id})
        assert run["mark"] is None, f"a read-only user's press marked the run: {run['mark']}"
    assert not marks, (
        f"the run's page offers a read-only user {marks}, which only admins and approvers "
        "may use (workflows/mark refuses them)"
    )
    assert_offers_nothing_that_changes(panel, "a run's page")


# ── every route the browser reaches with the read-only login ─────────────


@dataclass(frozen=True)
class Attempt:
    """One route tried, and how it must be refused."""

    route: str
    call: Callable[[Page], dict[str, Any]]
    refused: Callable[[dict[str, Any]], bool]
    #: The integration's door that must be the one refusing (its log line names it), or
    #: None where Home Assistant refuses first or the approvals desk answers.
    door: str | None = None


def our_door(door: str) -> Callable[[dict[str, Any]], bool]:
    """Refused by the integration's own door, with its sentence."""
    return lambda a: (
        not a["ok"] and a["code"] in REFUSED_CALL_CODES and says(a["message"], not_allowed(door))
    )


def ws_door(door: str) -> Callable[[dict[str, Any]], bool]:
    """A websocket command refused by its door: ``unauthorized`` and the door's sentence."""
    return lambda a: (
        not a["ok"] and a["code"] == "unauthorized" and says(a["message"], not_allowed(door))
    )


def by_home_assistant(answer: dict[str, Any]) -> bool:
    """Refused by Home Assistant's entity permissions before the entity is asked."""
    return (
        not answer["ok"]
        and answer["code"] in REFUSED_CALL_CODES
        and bool(HA_UNAUTHORIZED.search(str(answer["message"])))
    )


def http_refused(answer: dict[str, Any]) -> bool:
    return not answer["ok"] and answer["status"] in (401, 403)


def attempts(scene: Scene) -> list[Attempt]:
    wid = scene.workflow_id
    other_mode = next(mode for mode in SITE_MODES if mode != scene.site_mode)
    not_asked = error_text("approval_refused_not_addressee", name=READER["name"])
    services = f"/api/services/{DOMAIN}"

    def action(
        service: str, data: dict[str, Any], *, response: bool = False
    ) -> Callable[[Page], dict[str, Any]]:
        return lambda p: call_service(p, DOMAIN, service, data, response=response)

    def entity(
        domain: str, service: str, target: str, data: dict[str, Any]
    ) -> Callable[[Page], dict[str, Any]]:
        return lambda p: call_service(p, domain, service, data, target={"entity_id": target})

    def ws(message: dict[str, Any]) -> Callable[[Page], dict[str, Any]]:
        return lambda p: try_ws(p, message)

    def rest(path: str, body: dict[str, Any]) -> Callable[[Page], dict[str, Any]]:
        return lambda p: rest_post(p, path, body)

    variables = {"camera_id": "1", "plate": "TABLET1", "note": "open up"}
    return [
        # The integration's actions, as the frontend calls them.
        Attempt(
            "callService set_workflow_state",
            action("set_workflow_state", {"workflow": wid, "state": "off"}),
            our_door("set_workflow_state"),
            door="action:set_workflow_state",
        ),
        Attempt(
            "callService run_workflow with variables",
            action("run_workflow", {"workflow": wid, "variables": variables}),
            our_door("run_workflow"),
            door="action:run_workflow",
        ),
        Attempt(
            "callService run_workflow with a message",
            action("run_workflow", {"workflow": wid, "message": "open the gate"}),
            our_door("run_workflow"),
            door="action:run_workflow",
        ),
        Attempt(
            "callService import_workflow (a new file)",
            action("import_workflow", {"yaml": INTRUDER, "file_name": INTRUDER_FILE}),
            our_door("import_workflow"),
            door="action:import_workflow",
        ),
        Attempt(
            "callService import_workflow (over the workflow)",
            action("import_workflow", {"yaml": TAMPERED, "file_name": FILE, "overwrite": True}),
            our_door("import_workflow"),
            door="action:import_workflow",
        ),
        Attempt(
            "callService rollback_workflow",
            action("rollback_workflow", {"workflow": wid, "version": scene.older}),
            our_door("rollback_workflow"),
            door="action:rollback_workflow",
        ),
        Attempt(
            "callService try_workflow",
            action("try_workflow", {"workflow": wid, "count": 1}, response=True),
            our_door("try_workflow"),
            door="action:try_workflow",
        ),
        Attempt(
            "callService mark_run",
            action("mark_run", {"run_id": scene.run_id, "right": True}),
            our_door("mark_run"),
            door="action:mark_run",
        ),
        Attempt(
            "callService reload", action("reload", {}), our_door("reload"), door="action:reload"
        ),
        Attempt(
            "callService describe_workflow (saving)",
            action(
                "describe_workflow",
                {
                    "sentence": "When the doorbell rings, open the gate",
                    "save": True,
                    "file_name": INTRUDER_FILE,
                },
                response=True,
            ),
            our_door("describe_workflow"),
            door="action:describe_workflow",
        ),
        Attempt(
            "callService answer_approval",
            action("answer_approval", {"approval_id": scene.approval_id, "reply": "Open"}),
            lambda a: (
                not a["ok"]
                and a["code"] == "service_validation_error"
                and not_asked in str(a["message"])
            ),
        ),
        # The entities that change something, as their more-info dialogs call them.
        Attempt(
            "callService select.select_option on the workflow's State",
            entity("select", "select_option", scene.state_select, {"option": "off"}),
            by_home_assistant,
        ),
        Attempt(
            "callService select.select_next on the workflow's State",
            entity("select", "select_next", scene.state_select, {}),
            by_home_assistant,
        ),
        Attempt(
            "callService select.select_option on the site mode",
            entity("select", "select_option", scene.site_mode_select, {"option": other_mode}),
            by_home_assistant,
        ),
        Attempt(
            "callService button.press on Run now",
            entity("button", "press", scene.run_now, {}),
            by_home_assistant,
        ),
        # The panel's own websocket commands.
        Attempt(
            "callWS workflows/save (over the workflow)",
            ws(
                {
                    "type": f"{DOMAIN}/workflows/save",
                    "yaml": TAMPERED,
                    "file_name": FILE,
                    "overwrite": True,
                }
            ),
            ws_door(f"{DOMAIN}/workflows/save"),
            door=f"ws:{DOMAIN}/workflows/save",
        ),
        Attempt(
            "callWS workflows/save (a new file)",
            ws(
                {
                    "type": f"{DOMAIN}/workflows/save",
                    "yaml": INTRUDER,
                    "file_name": INTRUDER_FILE,
                }
            ),
            ws_door(f"{DOMAIN}/workflows/save"),
            door=f"ws:{DOMAIN}/workflows/save",
        ),
        Attempt(
            "callWS workflows/set_state",
            ws({"type": f"{DOMAIN}/workflows/set_state", "workflow": wid, "state": "off"}),
            ws_door(f"{DOMAIN}/workflows/set_state"),
            door=f"ws:{DOMAIN}/workflows/set_state",
        ),
        Attempt(
            "callWS workflows/rollback",
            ws({"type": f"{DOMAIN}/workflows/rollback", "workflow": wid, "version": scene.older}),
            ws_door(f"{DOMAIN}/workflows/rollback"),
            door=f"ws:{DOMAIN}/workflows/rollback",
        ),
        Attempt(
            "callWS workflows/try",
            ws({"type": f"{DOMAIN}/workflows/try", "workflow": wid, "count": 1}),
            ws_door(f"{DOMAIN}/workflows/try"),
            door=f"ws:{DOMAIN}/workflows/try",
        ),
        Attempt(
            "callWS workflows/mark",
            ws({"type": f"{DOMAIN}/workflows/mark", "run_id": scene.run_id, "right": False}),
            ws_door(f"{DOMAIN}/workflows/mark"),
            door=f"ws:{DOMAIN}/workflows/mark",
        ),
        Attempt(
            "callWS approvals/answer",
            ws(
                {
                    "type": f"{DOMAIN}/approvals/answer",
                    "approval_id": scene.approval_id,
                    "reply": "Open",
                }
            ),
            lambda a: not a["ok"]
            and a["code"] == "not_addressee"
            and says(a["message"], not_asked),
        ),
        # The REST API, with the page's own access token.
        Attempt(
            "REST set_workflow_state",
            rest(f"{services}/set_workflow_state", {"workflow": wid, "state": "off"}),
            http_refused,
            door="action:set_workflow_state",
        ),
        Attempt(
            "REST run_workflow",
            rest(f"{services}/run_workflow", {"workflow": wid, "variables": variables}),
            http_refused,
            door="action:run_workflow",
        ),
        Attempt(
            "REST import_workflow",
            rest(f"{services}/import_workflow", {"yaml": INTRUDER, "file_name": INTRUDER_FILE}),
            http_refused,
            door="action:import_workflow",
        ),
        Attempt(
            "REST rollback_workflow",
            rest(f"{services}/rollback_workflow", {"workflow": wid, "version": scene.older}),
            http_refused,
            door="action:rollback_workflow",
        ),
        Attempt(
            "REST try_workflow",
            rest(f"{services}/try_workflow?return_response", {"workflow": wid, "count": 1}),
            http_refused,
            door="action:try_workflow",
        ),
        Attempt(
            "REST mark_run",
            rest(f"{services}/mark_run", {"run_id": scene.run_id, "right": True}),
            http_refused,
            door="action:mark_run",
        ),
        Attempt("REST reload", rest(f"{services}/reload", {}), http_refused, door="action:reload"),
        Attempt(
            "REST answer_approval",
            rest(
                f"{services}/answer_approval", {"approval_id": scene.approval_id, "reply": "Open"}
            ),
            lambda a: not a["ok"] and a["status"] == 400 and not_asked in str(a["message"]),
        ),
        Attempt(
            "REST select.select_option on the workflow's State",
            rest(
                "/api/services/select/select_option",
                {"entity_id": scene.state_select, "option": "off"},
            ),
            http_refused,
        ),
        Attempt(
            "REST select.select_option on the site mode",
            rest(
                "/api/services/select/select_option",
                {"entity_id": scene.site_mode_select, "option": other_mode},
            ),
            http_refused,
        ),
        Attempt(
            "REST button.press on Run now",
            rest("/api/services/button/press", {"entity_id": scene.run_now}),
            http_refused,
        ),
    ]


def what_changed(owner: Page, stack: Stack, scene: Scene) -> list[str]:
    """What differs from the scene, as the owner reads it (empty: nothing)."""
    changed: list[str] = []
    rows = workflow_rows(owner)
    row = rows.get(scene.workflow_id)
    if row is None or (row["state"], row["version"]) != ("on", scene.current):
        changed.append(f"the workflow's row: {row}")
    if set(rows) != scene.listed:
        changed.append(f"the workflows listed: {sorted(set(rows) ^ scene.listed)}")
    versions = tuple(v["version"] for v in versions_of(owner, scene.workflow_id))
    if versions != scene.versions:
        changed.append(f"the versions: {versions}, were {scene.versions}")
    if scene.path.read_text(encoding="utf-8") != scene.file_text:
        changed.append(f"the file {scene.path.name} on disk")
    files = folder_files(scene.path.parent)
    if files != scene.folder_files:
        changed.append(f"the workflow folder: {sorted(files ^ scene.folder_files)}")
    runs = run_ids(owner, scene.workflow_id)
    if runs != {scene.run_id}:
        changed.append(f"the runs: {sorted(runs - {scene.run_id})} new")
    run = call_ws(owner, {"type": f"{DOMAIN}/workflows/run", "run_id": scene.run_id})
    if run["mark"] is not None:
        changed.append(f"the run's mark: {run['mark']}")
    question = open_questions(owner).get(scene.approval_id)
    if question is None:
        changed.append("the question is no longer open")
    if (state := stack.ha.state(scene.state_select)["state"]) != "on":
        changed.append(f"the State select: {state}")
    if (mode := stack.ha.state(scene.site_mode_select)["state"]) != scene.site_mode:
        changed.append(f"the site mode: {mode}, was {scene.site_mode}")
    return changed


def test_every_route_refuses_the_read_only_user_and_nothing_changes(
    tablet: Page, owner: Page, scene: Scene, stack: Stack, shot: Screenshots
) -> None:
    panel = open_panel(tablet, stack)
    expect(panel.locator(f'.workflow[data-workflow="{scene.workflow_id}"]')).to_be_visible()
    # The page's login works for what a read-only user may do: reading, over each route.
    listed = try_ws(tablet, {"type": f"{DOMAIN}/workflows/runs", "workflow": scene.workflow_id})
    assert listed["ok"], listed
    assert {r["run_id"] for r in listed["result"]["runs"]} == {scene.run_id}, listed
    read = call_service(tablet, DOMAIN, "get_runs", {"workflow": scene.workflow_id}, response=True)
    assert read["ok"], f"the read-only user may read the runs: {read}"
    checked = rest_post(
        tablet,
        f"/api/services/{DOMAIN}/validate_workflow?return_response",
        {"yaml": WORKFLOW},
    )
    assert checked["ok"], f"the page's token works on the REST API: {checked}"
    assert json.loads(checked["message"])["service_response"]["valid"], checked

    tried = attempts(scene)
    answers = {attempt.route: attempt.call(tablet) for attempt in tried}
    let_through = [
        f"{attempt.route}: {answers[attempt.route]}"
        for attempt in tried
        if not attempt.refused(answers[attempt.route])
    ]
    # A refused run would not show at once: give a started one time to appear.
    time.sleep(2)
    changed = what_changed(owner, stack, scene)
    # Each route of the integration was refused by its own door (its log line), not
    # turned away for another reason on the way.
    log = stack.ha.process.log.read_text(errors="replace")
    doors = Counter(attempt.door for attempt in tried if attempt.door is not None)
    logged = {door: log.count(f"Refused {door} to {READER['name']}") for door in doors}
    not_by_door = [
        f"{door}: {logged[door]} of {n}" for door, n in doors.items() if logged[door] < n
    ]

    panel = open_panel(tablet, stack)
    mine = panel.locator(f'.workflow[data-workflow="{scene.workflow_id}"]')
    expect(mine).to_be_visible()
    mine.scroll_into_view_if_needed()
    shot(tablet, "after-every-route")
    assert not let_through, "not refused as they should be:\n" + "\n".join(let_through)
    assert not changed, "changed by a read-only user:\n" + "\n".join(changed)
    assert not not_by_door, (
        f"refusals the doors did not log ({stack.ha.process.log}): {not_by_door}"
    )
    # The panel, opened again, still shows the workflow On.
    expect(mine.locator('button[data-state="on"]')).to_have_attribute("aria-pressed", "true")
    assert_translated(panel, "the panel after the refused attempts")


def test_the_asked_owner_answers_the_question_the_tablet_could_not(
    owner: Page, scene: Scene, stack: Stack, shot: Screenshots
) -> None:
    answered = try_ws(
        owner,
        {"type": f"{DOMAIN}/approvals/answer", "approval_id": scene.approval_id, "reply": "Open"},
    )
    assert answered["ok"], f"the owner, who is asked, could not answer: {answered}"

    def done() -> dict[str, Any] | None:
        run: dict[str, Any] = call_ws(
            owner, {"type": f"{DOMAIN}/workflows/run", "run_id": scene.run_id}
        )
        return run if run["status"] == "done" else None

    run = wait_for("the run did not go on after the owner's answer", done, timeout=30)
    steps = [(s["path"], s["outcome"]) for s in run["steps"]]
    assert steps[0] == ("then.0", "Open"), steps
    open_panel(owner, stack)
    owner.get_by_role("link", name=NAME).click()
    owner.locator(f'.run[data-run="{scene.run_id}"]').click()
    expect(owner.locator('.step[data-path="then.0"]')).to_contain_text("Open")
    shot(owner, "owner-answered")
