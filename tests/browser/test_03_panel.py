"""The Workflows panel as the owner uses it, in Chromium on a real Home Assistant with the
demo NVR: the demo workflows in the list, a new workflow typed in the editor with a located
problem that appears and goes away, saved in Test, a run started by a simulator alert that
appears live with its steps, marked, and a version rolled back. A screenshot per step."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from custom_components.opennvr_workflows.workflow import template_names
from tests.browser.frontend import Screenshots, assert_translated
from tests.browser.services import Stack
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
    # Each demo workflow is either loaded in Test (its Test toggle pressed) or says in red
    # why it is not loaded (what this site still lacks for it).
    for i in range(rows.count()):
        row = rows.nth(i)
        if row.locator(".state").count():
            expect(row.locator('button[data-state="test"]')).to_have_attribute(
                "aria-pressed", "true"
            )
        else:
            expect(row.locator(".attention")).to_contain_text("Not loaded: Line ")
    assert_translated(panel, "the Workflows panel")
    shot(page, "list")
    page.set_viewport_size({"width": 390, "height": 844})
    expect(rows.first).to_be_visible()
    box = rows.first.bounding_box()
    assert box is not None
    assert box["width"] <= 390
    shot(page, "phone-width")


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
    run.click()
    expect(page.locator('.step[data-path="then.0"]')).to_contain_text("log")
    expect(page.locator('.step[data-path="then.0"]')).to_contain_text("Would have")
    page.get_by_role("button", name="Wrong").click()
    expect(page.get_by_text("Marked wrong")).to_be_visible()
    shot(page, "run-marked")


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
    page.get_by_role("button", name="Roll back to this version").click()
    # The older version is the current one again (the same content is the same version).
    expect(page.locator(f'.version[data-version="{older}"] .chip')).to_have_text("Current")
    expect(versions).to_have_count(2)
    page.get_by_role("button", name="Edit").click()
    expect(page.locator(".cm-content")).to_contain_text("A person on")
    shot(page, "rolled-back")
