"""Driving Home Assistant's frontend the way a person does, and reading what it shows.

The frontend is built of web components: most text lives in shadow roots, which
``innerText`` does not reach. :func:`visible_text` walks them (through slots, as the
browser renders them), so an assertion reads what is on the screen. Playwright's role and
text locators pierce open shadow roots by themselves.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, expect

#: Text the frontend shows when a translation is broken or missing: its ICU parse error,
#: and a raw key where a string was missing (``component.<domain>.config.step...``).
BROKEN_TEXT = (
    re.compile(r"Translation error"),
    re.compile(r"component\.opennvr_workflows\."),
    re.compile(r"\b(?:config|options)\.(?:step|error|abort)\."),
    re.compile(r"\bui\.panel\.\S+"),
    re.compile(r"\bstate_attributes\.\S+"),
)

_DEEP_TEXT = """(root) => {
  const skip = new Set(["STYLE", "SCRIPT", "TEMPLATE", "NOSCRIPT"]);
  const out = [];
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) {
      const text = node.textContent.trim();
      if (text) out.push(text);
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE && node.nodeType !== Node.DOCUMENT_FRAGMENT_NODE) {
      return;
    }
    if (node.nodeType === Node.ELEMENT_NODE) {
      if (skip.has(node.tagName)) return;
      const style = getComputedStyle(node);
      if (style.display === "none" || style.visibility === "hidden") return;
      if (node.tagName === "SLOT") {
        const assigned = node.assignedNodes({ flatten: true });
        for (const child of assigned.length ? assigned : node.childNodes) walk(child);
        return;
      }
      if (node.shadowRoot) {
        walk(node.shadowRoot);
        return;
      }
    }
    for (const child of node.childNodes) walk(child);
  };
  walk(root);
  return out.join("\\n");
}"""


#: How many ``ha-markdown-element``s under a root have not drawn their text yet (the
#: frontend renders markdown in a web worker, after the rest of a form).
_MARKDOWN_PENDING = """(root) => {
  let pending = 0;
  const walk = (node) => {
    if (node.tagName === "HA-MARKDOWN-ELEMENT" && !node.innerHTML.trim()) pending += 1;
    if (node.shadowRoot) walk(node.shadowRoot);
    for (const child of node.children || []) walk(child);
  };
  walk(root);
  return pending;
}"""


def visible_text(target: Page | Locator) -> str:
    """The text ``target`` renders, shadow roots included, one text node a line."""
    if isinstance(target, Page):
        return str(target.evaluate(f"({_DEEP_TEXT})(document.body)"))
    return str(target.evaluate(_DEEP_TEXT))


def broken_translations(text: str) -> list[str]:
    """The lines of ``text`` that show a translation error or a raw translation key."""
    return [line for line in text.splitlines() if any(p.search(line) for p in BROKEN_TEXT)]


def settled_text(target: Page | Locator, quiet_ms: int = 300, within_s: float = 10.0) -> str:
    """The text ``target`` renders once it has stopped changing for ``quiet_ms``.

    The frontend draws a form's labels first and its descriptions later (``ha-markdown``
    renders in a web worker), so a page read as soon as a label shows may lack them."""
    page = target if isinstance(target, Page) else target.page
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline and _markdown_pending(target):
        page.wait_for_timeout(50)
    text = visible_text(target)
    while time.monotonic() < deadline:
        page.wait_for_timeout(quiet_ms)
        again = visible_text(target)
        if again == text:
            return text
        text = again
    return text


def _markdown_pending(target: Page | Locator) -> int:
    if isinstance(target, Page):
        return int(target.evaluate(f"({_MARKDOWN_PENDING})(document.body)"))
    return int(target.evaluate(_MARKDOWN_PENDING))


def assert_translated(target: Page | Locator, where: str) -> str:
    """Fail when ``target`` shows a translation error or a raw key; returns its text once
    it has settled (see :func:`settled_text`)."""
    text = settled_text(target)
    broken = broken_translations(text)
    assert not broken, f"{where}: untranslated or broken text on screen: {broken}"
    return text


class Screenshots:
    """One numbered PNG per step of a test, in the artifacts folder."""

    def __init__(self, folder: Path, test_name: str) -> None:
        self.folder = folder
        self.test_name = test_name
        self.count = 0

    def __call__(self, page: Page, step: str) -> Path:
        self.count += 1
        name = re.sub(r"[^a-z0-9]+", "-", f"{self.test_name}-{self.count:02d}-{step}".lower())
        path = self.folder / f"{name.strip('-')}.png"
        page.screenshot(path=path, full_page=False)
        return path


# ── pages and dialogs ────────────────────────────────────────────────────


def log_in(page: Page, base_url: str, username: str, password: str) -> None:
    """The login form, as a person fills it; waits for the dashboard."""
    page.goto(f"{base_url}/")
    page.get_by_role("textbox", name="Username").fill(username)
    page.get_by_role("textbox", name="Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/(home|lovelace)(/|$)"))
    expect(page.locator("home-assistant-main")).to_be_attached()


def flow_dialog(page: Page) -> Locator:
    """The open config- or options-flow dialog."""
    return page.locator("dialog-data-entry-flow")


def field(dialog: Locator, label: str) -> Locator:
    """A text field of a flow form by its visible label."""
    return dialog.get_by_role("textbox", name=label, exact=False)


def submit(dialog: Locator, name: str = "Submit") -> None:
    dialog.get_by_role("button", name=name, exact=True).click()


def wait_step(dialog: Locator, title: str) -> None:
    """Wait until the dialog shows the step titled ``title``."""
    expect(dialog.get_by_text(title, exact=True).first).to_be_visible()


def start_adding(page: Page, base_url: str, search: str, name: str) -> Locator:
    """Settings > Devices & services > Add integration, search, pick ``name``."""
    page.goto(f"{base_url}/config/integrations/dashboard")
    page.get_by_role("button", name="Add integration").click()
    picker = page.locator("dialog-add-integration")
    picker.get_by_role("textbox").first.fill(search)
    picker.get_by_text(name, exact=True).first.click()
    return flow_dialog(page)


def toggle(dialog: Locator, label: str) -> Locator:
    """A form's on/off switch by its label (the switch itself has no accessible name)."""
    row = dialog.locator("ha-selector-boolean, ha-form-boolean").filter(has_text=label)
    return row.get_by_role("switch")


def call_ws(page: Page, message: dict[str, object]) -> Any:
    """A websocket command on the frontend's own connection (as the logged-in user)."""
    return page.evaluate(
        "(message) => document.querySelector('home-assistant').hass.callWS(message)", message
    )


_FIELD_ERROR = """(input) => {
  // Home Assistant's ha-form puts a field's error in an ha-alert just before the field's
  // element; climb from the input to that element (stopping at the form itself).
  let node = input;
  while (node && node.tagName !== "HA-FORM") {
    const before = node.previousElementSibling;
    if (before && before.tagName === "HA-ALERT") return before.textContent.trim();
    node = node.assignedSlot || node.parentElement ||
      (node.parentNode instanceof ShadowRoot ? node.parentNode.host : null);
  }
  return null;
}"""


def field_error(input_box: Locator) -> str | None:
    """The error shown on this field itself (not on the form), or None."""
    found = input_box.evaluate(_FIELD_ERROR)
    return None if found is None else str(found)


def open_options(page: Page, base_url: str, domain: str) -> Locator:
    """The integration's page, then its entry's Configure button: the options dialog."""
    page.goto(f"{base_url}/config/integrations/integration/{domain}")
    page.get_by_role("button", name="Configure").first.click()
    return flow_dialog(page)


def choices(dialog: Locator, label: str) -> list[str]:
    """Open a form's drop-down by its label; return what it offers, then pick the first
    (closing the menu without leaving the dialog)."""
    dialog.get_by_text(re.compile(rf"^{re.escape(label)}")).first.click()
    menu = dialog.get_by_role("menu").first
    expect(menu).to_be_visible()
    # The items are the select's own (slotted) children, not the menu's: the open one's
    # are those that are visible.
    items = dialog.get_by_role("menuitem").filter(visible=True)
    expect(items.first).to_be_visible()
    offered = [" ".join(visible_text(item).split()) for item in items.all()]
    if offered:
        items.first.click()
    expect(menu).not_to_have_class(re.compile(r"\bshow\b"))
    return offered
