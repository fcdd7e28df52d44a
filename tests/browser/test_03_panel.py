"""The Workflows panel as the owner uses it, in Chromium on a real Home Assistant with the demo
NVR: the demo workflows in the list (those that do not run yet as a short to-do list under
their own titles, which the repair about waiting workflows opens), a new workflow typed in
the editor with a located problem that appears and goes away, saved in Test, a run started
by a simulator alert that appears live with its steps in words, marked (the mark still shown
when the run is opened again), a version rolled back after the panel asks, every view at its
own URL (Back, links and a reload land on the same view), a Look's run with the picture the
model saw, the gallery offering to replace or copy an installed template and the editor
asking before it takes an existing file's name, and questions answered from the dashboard
card and from the panel's Questions tab (Home Assistant's notification of a question links
to its page). A screenshot per step."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from custom_components.opennvr_workflows.const import WORKFLOW_FOLDER
from custom_components.opennvr_workflows.workflow import template_names
from tests.browser.frontend import Screenshots, assert_translated, call_ws
from tests.browser.services import OWNER, ROOT, Stack
from tests.browser.test_01_add_integration import DOMAIN

PANEL = "opennvr-workflows"
NAME = "Browser test, a person seen"
WORKFLOW = f"""contract: workflow.v1
name: {NAME}
state: test
limits: {{ cooldown: 0s, per_hour: 100 }}
when:
  alert: {{ alert_type: person }}
then:
  - log: "A person on {{camera}}"
"""
#: The same with a placeholder nothing defines: the validator points at its line.
BROKEN = WORKFLOW.replace("{camera}", "{nobody_defines_this}")


@pytest.fixture
def site(stack: Stack) -> Stack:
    assert stack.ha.entries(DOMAIN), "no OpenNVR Workflows entry: test_01_add_integration adds it"
    return stack


def open_panel(page: Page, stack: Stack) -> None:
    page.goto(f"{stack.ha.url}/{PANEL}")
    expect(page.locator("opennvr-workflows-panel")).to_be_attached()


def type_yaml(page: Page, text: str) -> None:
    """Replace the editor's text as a person would: select all, type."""
    editor = page.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)


def test_the_panel_lists_the_demo_workflows(page: Page, site: Stack, shot: Screenshots) -> None:
    open_panel(page, site)
    panel = page.locator("opennvr-workflows-panel")
    rows = panel.locator(".workflow")
    expect(rows).to_have_count(len(template_names()))
    shown = {rows.nth(i).get_attribute("data-workflow") for i in range(rows.count())}
    assert shown == set(template_names())
    # Each demo workflow is either loaded in Test (its Test toggle pressed) or, under its
    # own title, a short to-do list of what this site still lacks for it, the validator's
    # words one click away.
    not_loaded = 0
    for i in range(rows.count()):
        row = rows.nth(i)
        workflow_id = str(row.get_attribute("data-workflow"))
        if row.locator(".state").count():
            expect(row.locator('button[data-state="test"]')).to_have_attribute(
                "aria-pressed", "true"
            )
            continue
        not_loaded += 1
        expect(row.locator(".chip")).to_have_text("Not loaded")
        expect(row.locator("h3")).not_to_have_text(re.compile(rf"{workflow_id}|\.ya?ml"))
        todos = row.locator(".todo")
        expect(todos.first).to_be_visible()
        summaries = [" ".join(t.split()) for t in row.locator(".todo summary").all_inner_texts()]
        assert summaries, workflow_id
        for line in summaries:
            assert re.fullmatch(r"[A-Z][^'`]{8,120}", line), (workflow_id, line)
            assert not re.search(r"Wilson|_model\b|Line \d|WF-", line), (workflow_id, line)
        # The details are closed until asked for, then say the validator's own words.
        details = todos.first.locator("ul")
        expect(details).to_be_hidden()
        todos.first.locator("summary").click()
        expect(details).to_be_visible()
        expect(details.locator("li").first).to_contain_text("Line ")
        todos.first.locator("summary").click()
    assert not_loaded, "the demo site runs every template: no to-do list to see"
    text = assert_translated(panel, "the Workflows panel")
    assert "Not loaded: Line" not in text
    # A role to map reads as the role's name, not its key.
    roles = panel.locator('.todo[data-kind="camera_role"] summary')
    if roles.count():
        role = re.compile(r"^\s*Map a camera to [A-Z][a-z]+( [a-z]+)*\s*$")
        expect(roles.first).to_have_text(role)
    shot(page, "list")
    page.set_viewport_size({"width": 390, "height": 844})
    expect(rows.first).to_be_visible()
    box = rows.first.bounding_box()
    assert box is not None
    assert box["width"] <= 390
    shot(page, "phone-width")


def test_the_waiting_repair_leads_to_the_panel(page: Page, site: Stack, shot: Screenshots) -> None:
    """Settings > Repairs: *Learn more* on the repair listing the workflows that wait for
    this site opens the panel's list in place, where each says what it waits for."""
    page.goto(f"{site.ha.url}/config/repairs")
    page.get_by_text(re.compile(r"\d+ workflows? waits? for this site")).first.click()
    learn = page.get_by_role("link", name="Learn more")
    expect(learn).to_have_attribute("href", f"/{PANEL}")
    shot(page, "repair-learn-more")
    learn.click()
    expect(page).to_have_url(f"{site.ha.url}/{PANEL}")
    expect(page.locator("opennvr-workflows-panel .todo").first).to_be_visible()


def test_a_new_workflow_is_checked_as_typed_saved_in_test_and_runs_live(
    page: Page, site: Stack, shot: Screenshots
) -> None:
    open_panel(page, site)
    page.get_by_role("button", name="New workflow").click()
    expect(page.locator(".cm-content")).to_be_visible()
    page.get_by_role("textbox", name="File name").fill("browser_person")
    type_yaml(page, BROKEN)
    problem = page.locator("li.problem", has_text="WF-PLACEHOLDER-UNDEFINED")
    expect(problem).to_contain_text("WF-PLACEHOLDER-UNDEFINED")
    line = BROKEN.splitlines().index('  - log: "A person on {nobody_defines_this}"') + 1
    expect(problem).to_contain_text(f"Line {line}:")
    expect(page.get_by_role("button", name="Save")).to_be_disabled()
    shot(page, "problem-located")

    type_yaml(page, WORKFLOW)
    expect(page.get_by_text("No problems.")).to_be_visible()
    expect(page.locator("li.problem")).to_have_count(0)
    expect(page.get_by_role("button", name="Save")).to_be_enabled()
    shot(page, "problem-gone")
    page.get_by_role("button", name="Save").click()

    # The workflow's page: in Test, and a scripted person alert starts a run that appears.
    expect(page.get_by_role("heading", name=NAME)).to_be_visible()
    expect(page.locator('button[data-state="test"][aria-pressed="true"]')).to_be_visible()
    run = page.locator(".run").first
    expect(run).to_be_visible(timeout=60_000)
    expect(run).to_contain_text("Test")
    shot(page, "run-appeared")
    run_id = run.get_attribute("data-run")
    run.click()
    # The run at its own address, its step in words: what it did, in Test, when.
    expect(page).to_have_url(f"{site.ha.url}/{PANEL}/run/{run_id}")
    step = page.locator('.step[data-path="then.0"]')
    expect(step.locator(".title")).to_have_text("Wrote to the logbook")
    expect(step).to_contain_text("Would have")
    expect(step.locator(".sent")).to_contain_text("A person on")
    shown = assert_translated(page.locator("opennvr-workflows-panel"), "a run's page")
    assert_in_words(shown)
    page.get_by_role("button", name="Wrong").click()
    expect(page.get_by_text("Marked wrong")).to_be_visible()
    shot(page, "run-marked")

    # Opened again later (a new page), the run still says how it was marked and by whom.
    open_panel(page, site)
    page.get_by_role("link", name=NAME).click()
    page.locator(f'.run[data-run="{run_id}"]').click()
    expect(page.locator(".marked")).to_have_text(f"Marked wrong · {OWNER['name']}")
    expect(page.locator("button.mark-wrong")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("button.mark-right")).to_have_attribute("aria-pressed", "false")
    shot(page, "mark-shown-again")


def test_a_version_is_compared_and_rolled_back(page: Page, site: Stack, shot: Screenshots) -> None:
    open_panel(page, site)
    page.get_by_role("link", name=NAME).click()
    page.get_by_role("button", name="Edit").click()
    type_yaml(page, WORKFLOW.replace("A person on", "Somebody on"))
    expect(page.get_by_text("No problems.")).to_be_visible()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name=NAME)).to_be_visible()
    page.get_by_role("button", name="Versions").click()
    versions = page.locator(".version")
    expect(versions).to_have_count(2)
    page.get_by_role("button", name="Compare with current").click()
    expect(page.locator(".diff .add")).to_contain_text("Somebody on")
    expect(page.locator(".diff .del")).to_contain_text("A person on")
    shot(page, "diff")
    older = page.locator(".version:has(button.rollback)").get_attribute("data-version")
    # A rollback asks first, saying what it replaces; Cancel leaves everything as it was.
    page.get_by_role("button", name="Roll back to this version").click()
    ask = page.get_by_role("alertdialog", name="Roll back to this version?")
    expect(ask).to_contain_text(
        "The workflow file's current text will be replaced by the text this version was "
        "saved with, its comments included."
    )
    shot(page, "rollback-asks")
    ask.get_by_role("button", name="Cancel").click()
    expect(ask).to_have_count(0)
    expect(page.locator(f'.version[data-version="{older}"] .chip')).to_have_count(0)
    page.get_by_role("button", name="Roll back to this version").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Replace the file's text").click()
    # The older version is the current one again (the same content is the same version).
    expect(page.locator(f'.version[data-version="{older}"] .chip')).to_have_text("Current")
    expect(versions).to_have_count(2)
    page.get_by_role("button", name="Edit").click()
    expect(page.locator(".cm-content")).to_contain_text("A person on")
    shot(page, "rolled-back")


def assert_in_words(text: str) -> None:
    """A run's page says what happened in words: no engine tokens, no raw JSON, no ISO
    timestamps or milliseconds past a second, and its times as the user's locale writes
    them (the browser's en-US here: "Dec 1, 2026, 6:37:02 PM")."""
    for token in ("would_have", "pending", '{"', "→", "None", "null"):
        assert token not in text, (token, text)
    assert not re.search(r"\b\d{4}-\d\d-\d\dT\d", text), text
    assert not re.search(r"\b\d{4,} ms\b", text), text
    assert re.search(r"\b[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d:\d\d\s?[AP]M\b", text), text


def test_every_view_has_its_own_url(page: Page, site: Stack, shot: Screenshots) -> None:
    """Lists, a workflow and its tabs, a run and a question each have an address: Back and
    Forward move between them, a reload or a link opened anew shows the same view."""
    base = f"{site.ha.url}/{PANEL}"
    open_panel(page, site)
    expect(page).to_have_url(base)
    page.get_by_role("link", name=NAME).click()
    workflow = f"{base}/workflow/browser_person"
    expect(page).to_have_url(workflow)
    expect(page.get_by_role("heading", name=NAME)).to_be_visible()
    page.locator("button.tab-versions").click()
    expect(page).to_have_url(f"{workflow}/versions")
    expect(page.locator(".version").first).to_be_visible()
    page.go_back()
    expect(page).to_have_url(workflow)
    run = page.locator(".run").first
    expect(run).to_be_visible()
    page.go_back()
    expect(page).to_have_url(base)
    expect(page.locator(".workflow").first).to_be_visible()
    page.go_forward()
    expect(page.get_by_role("heading", name=NAME)).to_be_visible()

    # A run: its link is a real address, which a reload opens again.
    run_id = str(run.get_attribute("data-run"))
    assert run.get_attribute("href") == f"/{PANEL}/run/{run_id}"
    run.click()
    expect(page).to_have_url(f"{base}/run/{run_id}")
    page.reload()
    expect(page.locator('.step[data-path="then.0"]')).to_be_visible()
    shot(page, "run-reloaded")
    # The header's arrow goes up to the run's workflow.
    page.locator("button.back").click()
    expect(page).to_have_url(workflow)
    expect(page.get_by_role("heading", name=NAME)).to_be_visible()

    # Opened from outside: the lists, a workflow's tab, an address that is nothing.
    page.goto(f"{base}/questions")
    expect(page.locator("button.tab-questions")).to_have_class(re.compile(r"\bon\b"))
    page.goto(f"{base}/templates")
    expect(page.locator(".template").first).to_be_visible()
    page.goto(f"{workflow}/versions")
    expect(page.locator(".version").first).to_be_visible()
    page.goto(f"{base}/nothing/here")
    expect(page.locator(".missing")).to_be_visible()
    page.locator("button.back").click()
    expect(page).to_have_url(base)
    shot(page, "back-to-the-list")


LOOK_NAME = "Browser test, a look at a person"
LOOK = f"""contract: workflow.v1
name: {LOOK_NAME}
state: test
needs: [vision_model]
limits: {{ cooldown: 0s, per_hour: 1 }}
when:
  alert: {{ alert_type: person }}
then:
  - ai:
      mode: look
      prompt: Is somebody at this camera?
      input: picture
      decision: [somebody, nobody]
      somebody: [ log: "Somebody there: {{reason}}" ]
      nobody: [ log: "Nobody there" ]
      unsure: [ log: "Not sure" ]
"""


def test_a_looks_run_reads_in_words_with_the_picture_the_model_saw(
    page: Page, site: Stack, shot: Screenshots
) -> None:
    open_panel(page, site)
    saved = call_ws(
        page,
        {"type": f"{DOMAIN}/workflows/save", "yaml": LOOK, "file_name": "browser_look"},
    )
    page.goto(f"{site.ha.url}/{PANEL}/workflow/{saved['workflow_id']}")
    run = page.locator(".run").first
    expect(run).to_be_visible(timeout=60_000)
    run_id = str(run.get_attribute("data-run"))
    wait_run_done(page, run_id)
    run.click()
    look = page.locator('.step[data-path="then.0"]')
    expect(look.locator(".title")).to_have_text("Asked the model")
    expect(look.locator(".outcome")).to_contain_text("Decision:")
    stored = run_page(page, run_id)
    if any(e["kind"] == "frame" for e in stored["evidence"]):
        # The picture the model saw, with the step that looked at it.
        picture = look.locator("img.evidence")
        expect(picture).to_be_visible()
        loaded = picture.evaluate("img => img.complete && img.naturalWidth > 0")
        assert loaded, picture.get_attribute("src")
        expect(look.locator("figcaption")).to_have_text("The picture the model saw")
    else:
        # No picture could be fetched: the step says so, in words.
        source = str(stored["steps"][0].get("confidence_source"))
        assert source.startswith("evidence: "), stored["steps"][0]
        expect(look.locator(".unsure")).to_contain_text(source.removeprefix("evidence: "))
    expect(look.locator(".took")).to_have_text(re.compile(r"^took \d"))
    shown = assert_translated(page.locator("opennvr-workflows-panel"), "a Look's run")
    assert_in_words(shown)
    shot(page, "look-in-words")
    # Marked right once: the list says what one mark proves, the lower bound of the
    # accuracy as "at least", and how many runs it rests on.
    page.get_by_role("button", name="Right").click()
    expect(page.locator(".marked")).to_contain_text("Marked right")
    page.locator("button.back").click()
    page.locator("button.tab-workflows").or_(page.locator("button.back")).first.click()
    page.goto(f"{site.ha.url}/{PANEL}")
    row = page.locator(f'.workflow[data-workflow="{saved["workflow_id"]}"]')
    expect(row.locator(".accuracy")).to_have_text(
        re.compile(r"^\W*Accuracy: at least 21\s?% \(1 run marked, 1 right\)\s*$")
    )
    shot(page, "accuracy-at-least")
    # It took its one run of the hour: off again, so later tests see no more of its runs.
    call_ws(
        page,
        {"type": f"{DOMAIN}/workflows/set_state", "workflow": saved["workflow_id"], "state": "off"},
    )


def test_an_installed_template_is_replaced_or_copied_and_save_never_refused(
    page: Page, site: Stack, shot: Screenshots
) -> None:
    base = f"{site.ha.url}/{PANEL}"
    open_panel(page, site)
    page.get_by_role("button", name="Templates").click()
    expect(page).to_have_url(f"{base}/templates")
    listed = call_ws(page, {"type": f"{DOMAIN}/workflows/templates"})["templates"]
    installed = [tpl for tpl in listed if tpl["installed"]]
    assert installed, "the first setup installs the templates"
    for tpl in installed:
        card = page.locator(f'.template[data-template="{tpl["template"]}"]')
        expect(card.locator(".installed")).to_have_text("Installed")
        expect(card.get_by_role("button", name="Use this template")).to_have_count(0)
        expect(card.get_by_role("button", name="Replace the installed one")).to_be_visible()
    shot(page, "gallery-installed")
    pick = installed[0]
    card = page.locator(f'.template[data-template="{pick["template"]}"]')
    card.get_by_role("button", name="Save a copy").click()
    expect(page).to_have_url(f"{base}/templates/{pick['template']}/copy")
    expect(page.get_by_role("textbox", name="File name")).to_have_value(pick["copy_name"])
    expect(page.locator(".cm-content")).to_contain_text(f"{pick['name']} (copy)")
    shot(page, "template-copy")
    page.go_back()
    page.locator(f'.template[data-template="{pick["template"]}"]').get_by_role(
        "button", name="Replace the installed one"
    ).click()
    expect(page).to_have_url(f"{base}/templates/{pick['template']}/replace")
    # Replacing edits the installed file: its name is fixed, Save overwrites it.
    expect(page.get_by_role("textbox", name="File name")).to_have_count(0)
    expect(page.locator(".chip", has_text=pick["template"])).to_be_visible()

    # A new workflow given a name the folder holds: the editor asks, and a copy is saved.
    page.goto(f"{base}/new")
    page.get_by_role("textbox", name="File name").fill("browser_person")
    type_yaml(page, WORKFLOW.replace(NAME, "Browser test, the copy"))
    expect(page.get_by_text("No problems.")).to_be_visible()
    page.get_by_role("button", name="Save").click()
    conflict = page.locator(".conflict")
    expect(conflict).to_contain_text("browser_person")
    expect(conflict.get_by_role("button", name="Replace it")).to_be_visible()
    shot(page, "name-taken")
    conflict.get_by_role("button", name="Save as a copy").click()
    expect(page).to_have_url(f"{base}/workflow/browser_person_copy")
    expect(page.get_by_role("heading", name="Browser test, the copy")).to_be_visible()
    call_ws(
        page,
        {
            "type": f"{DOMAIN}/workflows/set_state",
            "workflow": "browser_person_copy",
            "state": "off",
        },
    )
    logged = site.ha.process.log.read_text(errors="replace")
    assert "file_exists" not in logged, logged[-3000:]
    assert "already exists" not in logged, logged[-3000:]


COOLDOWN_NAME = "Browser test, an hour between runs"
COOLDOWN = f"""contract: workflow.v1
name: {COOLDOWN_NAME}
state: test
limits: {{ cooldown: 1h, per_hour: 100 }}
when:
  alert: {{ alert_type: person }}
then:
  - log: "A person on {{camera}}"
"""


def test_a_limit_holding_events_back_is_said_with_until_when(
    page: Page, site: Stack, shot: Screenshots
) -> None:
    """One run, then the cooldown holds the next alerts back: the list and the workflow's
    page say which limit and until when, instead of nothing running without a word."""
    open_panel(page, site)
    saved = call_ws(
        page,
        {"type": f"{DOMAIN}/workflows/save", "yaml": COOLDOWN, "file_name": "browser_cooldown"},
    )
    row = page.locator(f'.workflow[data-workflow="{saved["workflow_id"]}"]')
    held = row.locator(".held")
    expect(held).to_contain_text("No new run: the cooldown holds its events back", timeout=90_000)
    expect(held).to_contain_text("until")
    shot(page, "held-in-the-list")
    row.locator("a.name").click()
    expect(page.locator(".held")).to_contain_text("the cooldown")
    assert_translated(page.locator("opennvr-workflows-panel"), "a held workflow's page")
    shot(page, "held-on-its-page")
    call_ws(
        page,
        {"type": f"{DOMAIN}/workflows/set_state", "workflow": saved["workflow_id"], "state": "off"},
    )


# ── questions: the dashboard card and the Questions tab ──────────────────

QUESTION_NAME = "Browser test, somebody at a camera"
#: Two runs at most (each from its own camera: a run that waits joins later alerts of its
#: camera), so two questions wait: one for the card, one for the Questions tab.
QUESTION = f"""contract: workflow.v1
name: {QUESTION_NAME}
state: on
limits: {{ cooldown: 0s, per_hour: 2 }}
when:
  alert: {{ alert_type: person }}
then:
  - ask_person:
      who: role:owner
      message: "Somebody at {{camera}}. Let them in?"
      replies: [Let in, Keep closed]
      timeout: 30m
      default: Keep closed
    Let in: [ log: "Let in by {{answered_by}}" ]
    Keep closed: [ log: "Kept closed" ]
"""
#: A second person asked with the owner (who else was asked); never logs in.
NEIGHBOUR = "Sam Neighbour"
BOARD = "opennvr-questions"
STRINGS = ROOT / "custom_components" / DOMAIN / "strings.json"


def panel_text(key: str) -> str:
    """A panel text in English, as strings.json has it."""
    exceptions = json.loads(STRINGS.read_text(encoding="utf-8"))["exceptions"]
    return str(exceptions[f"panel_{key}"]["message"])


def set_approvers(stack: Stack, roles: str) -> None:
    """The options' Approvers page through Home Assistant's options-flow API: ``roles`` as
    typed there, nobody for every role. Saving reloads the entry."""
    (entry,) = stack.ha.entries(DOMAIN)
    base = "/api/config/config_entries/options/flow"
    flow = stack.ha.request("POST", base, {"handler": entry["entry_id"]})
    form = stack.ha.request("POST", f"{base}/{flow['flow_id']}", {"next_step_id": "approvers"})
    assert form["step_id"] == "approvers", form
    done = stack.ha.request(
        "POST", f"{base}/{flow['flow_id']}", {"users": [], "roles": roles, "notify": []}
    )
    assert done["type"] == "create_entry", done


def add_card_to_a_dashboard(page: Page) -> None:
    """A dashboard of its own (storage mode) with the questions card, as a person adds one."""
    call_ws(
        page,
        {
            "type": "lovelace/dashboards/create",
            "url_path": BOARD,
            "title": "Questions",
            "icon": "mdi:account-question",
            "show_in_sidebar": True,
            "require_admin": False,
            "mode": "storage",
        },
    )
    call_ws(
        page,
        {
            "type": "lovelace/config/save",
            "url_path": BOARD,
            "config": {
                "views": [
                    {
                        "title": "Questions",
                        "path": "waiting",
                        "cards": [{"type": "custom:opennvr-approvals-card"}],
                    }
                ]
            },
        },
    )


def questions(page: Page) -> dict[str, dict[str, Any]]:
    """The open questions the owner is asked, by id (what the card and the tab list)."""
    listed = call_ws(page, {"type": f"{DOMAIN}/approvals/list"})
    return {row["approval_id"]: row for row in listed["approvals"]}


def run_page(page: Page, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = call_ws(page, {"type": f"{DOMAIN}/workflows/run", "run_id": run_id})
    return found


def wait_run_done(page: Page, run_id: str) -> dict[str, Any]:
    """The run once it ended (it continues after the answer, off the answer's request)."""
    page.wait_for_function(
        """async ([type, run_id]) => {
          const hass = document.querySelector("home-assistant").hass;
          return (await hass.callWS({ type, run_id })).status === "done";
        }""",
        arg=[f"{DOMAIN}/workflows/run", run_id],
        polling=500,
        timeout=30_000,
    )
    return run_page(page, run_id)


def shows_its_picture(question: Locator) -> None:
    picture = question.locator("img")
    expect(picture).to_be_visible()
    page_loaded = picture.evaluate("img => img.complete && img.naturalWidth > 0")
    assert page_loaded, f"the question's picture did not load: {picture.get_attribute('src')}"


def test_questions_are_answered_from_the_card_and_the_questions_tab(
    page: Page, site: Stack, shot: Screenshots
) -> None:
    page.goto(f"{site.ha.url}/{PANEL}")
    expect(page.locator("opennvr-workflows-panel")).to_be_attached()
    created = call_ws(
        page,
        {"type": "config/auth/create", "name": NEIGHBOUR, "group_ids": ["system-users"]},
    )
    assert created["user"]["name"] == NEIGHBOUR
    # The workflow lands in the folder, then the Approvers page is saved: the entry
    # reloads, reading the folder with it, and the question's role names two people.
    folder = site.ha.config_dir / WORKFLOW_FOLDER
    (folder / "browser_question.yaml").write_text(QUESTION, encoding="utf-8")
    set_approvers(site, f"owner: {OWNER['name']}, {NEIGHBOUR}")
    add_card_to_a_dashboard(page)

    # The card picker's entry is in the user's language (the integration's texts).
    page.goto(f"{site.ha.url}/{BOARD}/waiting")
    page.wait_for_function(
        """(name) => (window.customCards || []).some(
             (c) => c.type === "opennvr-approvals-card" && c.name === name)""",
        arg=panel_text("card_name"),
    )
    described = page.evaluate(
        """() => window.customCards.find((c) => c.type === "opennvr-approvals-card")
             .description"""
    )
    assert described == panel_text("card_description")

    # Two alerts from two cameras: two questions wait, newest first, each with its
    # picture, the replies, and who else was asked.
    card = page.locator("opennvr-approvals-card")
    expect(card.get_by_role("heading", name=panel_text("card_title"))).to_be_visible()
    waiting = card.locator(".approval")
    expect(waiting).to_have_count(2, timeout=90_000)
    asked = questions(page)
    assert len(asked) == 2, asked
    first = waiting.first
    approval_id = first.get_attribute("data-approval")
    assert approval_id in asked
    row = asked[str(approval_id)]
    assert row["workflow_name"] == QUESTION_NAME
    expect(first.get_by_role("heading")).to_have_text(row["message"])
    assert re.fullmatch(r"Somebody at \S.*\. Let them in\?", row["message"]), row["message"]
    shows_its_picture(first)
    replies = first.get_by_role("button")
    expect(replies).to_have_text(["Let in", "Keep closed"])
    expect(replies.first).to_be_enabled()
    expect(first).to_contain_text(f"Asked: {OWNER['name']}, {NEIGHBOUR}")
    assert_translated(card, "the questions card")
    shot(page, "card-two-questions")

    # Answered on the card: it says so, the question leaves, the run goes on "Let in".
    first.get_by_role("button", name="Let in").click()
    expect(card.get_by_role("status")).to_have_text("Answered: Let in")
    expect(waiting).to_have_count(1)
    expect(card.locator(f'.approval[data-approval="{approval_id}"]')).to_have_count(0)
    shot(page, "card-answered")
    run_id = str(row["run_id"])
    done = wait_run_done(page, run_id)
    steps = [(s["path"], s["status"], s["outcome"]) for s in done["steps"]]
    assert steps == [("then.0", "done", "Let in"), ("then.0.Let in.0", "done", "done")], steps
    (answered,) = done["approvals"]
    assert (answered["reply"], answered["answered_by"]) == ("Let in", OWNER["name"])
    # The panel shows the run going on past the question.
    page.goto(f"{site.ha.url}/{PANEL}")
    page.get_by_role("link", name=QUESTION_NAME).click()
    page.locator(f'.run[data-run="{run_id}"]').click()
    asked_step = page.locator('.step[data-path="then.0"]')
    expect(asked_step.locator(".title")).to_have_text("Asked a person")
    expect(asked_step.locator(".outcome")).to_have_text(f"Reply: Let in · {OWNER['name']}")
    # The question's picture, with the question that showed it.
    shows_its_picture(asked_step)
    expect(page.locator('.step[data-path="then.0.Let in.0"]')).to_contain_text("Done")
    assert_in_words(assert_translated(page.locator("opennvr-workflows-panel"), "a run's page"))
    shot(page, "card-run-went-on")

    # The other question, in the panel's Questions tab, opened at its own address (which
    # links to its run) and answered there.
    (other_id,) = set(asked) - {approval_id}
    # Home Assistant's notification of the other question links to its page (what a
    # phone's card opens too), which shows it.
    link = f"/{PANEL}/question/{other_id}"
    notes = call_ws(page, {"type": "persistent_notification/get"})
    assert [n for n in notes if f"]({link})" in str(n["message"])], notes
    page.goto(f"{site.ha.url}{link}")
    expect(
        page.locator(f'.approval[data-approval="{other_id}"]').get_by_role("heading")
    ).to_have_text(asked[other_id]["message"])
    open_panel(page, site)
    page.locator("button.tab-questions").click()
    expect(page).to_have_url(f"{site.ha.url}/{PANEL}/questions")
    other = page.locator(f'.approval[data-approval="{other_id}"]')
    expect(other.get_by_role("heading")).to_have_text(asked[other_id]["message"])
    shows_its_picture(other)
    expect(other).to_contain_text(f"Asked: {OWNER['name']}, {NEIGHBOUR}")
    shot(page, "tab-question")
    other.locator("a.open-question").click()
    expect(page).to_have_url(f"{site.ha.url}/{PANEL}/question/{other_id}")
    expect(page.locator(".approval")).to_have_count(1)
    other_run = str(asked[other_id]["run_id"])
    expect(other.locator("a.open-run")).to_have_attribute("href", f"/{PANEL}/run/{other_run}")
    page.reload()
    expect(other.get_by_role("heading")).to_have_text(asked[other_id]["message"])
    other.get_by_role("button", name="Keep closed").click()
    expect(page.get_by_role("status")).to_have_text("Answered: Keep closed")
    expect(page.get_by_text(panel_text("question_closed"))).to_be_visible()
    # A closed question's page (where an old phone card or notification leads) links to
    # its run.
    expect(page.locator("a.open-run")).to_have_attribute("href", f"/{PANEL}/run/{other_run}")
    shot(page, "question-answered")
    page.go_back()
    expect(page).to_have_url(f"{site.ha.url}/{PANEL}/questions")
    expect(page.get_by_text(panel_text("questions_none"))).to_be_visible()
    shot(page, "tab-answered")
    later = wait_run_done(page, str(asked[other_id]["run_id"]))
    steps = [(s["path"], s["outcome"]) for s in later["steps"]]
    assert steps == [("then.0", "Keep closed"), ("then.0.Keep closed.0", "done")], steps
    assert questions(page) == {}
    # The logbook says where each answer was given: the card's, and the panel's (the
    # recorder commits each second, so the last answer's line may take a moment).
    wanted = ["“Let in” (dashboard card)", "“Keep closed” (panel)"]
    said: list[str] = []
    for _ in range(40):
        logged = call_ws(
            page, {"type": "logbook/get_events", "start_time": "2000-01-01T00:00:00+00:00"}
        )
        said = [str(e.get("message", "")) for e in logged if e.get("domain") == DOMAIN]
        if all(any(w in m for m in said) for w in wanted):
            break
        page.wait_for_timeout(250)
    assert all(any(w in m for m in said) for w in wanted), said
