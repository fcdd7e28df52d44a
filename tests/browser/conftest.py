"""The browser suite's fixtures: one Home Assistant, demo NVR and Ollama fake for the session,
onboarded; one Chromium, logged in as the owner; a screenshot folder.

The suite runs in its own pytest process without the Home Assistant test plugin
(``-p no:homeassistant``, as ``scripts/test`` runs it): that plugin blocks sockets and patches
the event loop and time for in-process ``hass`` tests, while here Home Assistant is a real
process and the test talks to it over HTTP. Chromium is the operating system's (Debian's
``chromium``), never a downloaded build; without it the suite fails and says how to get it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.browser.frontend import Screenshots, assert_translated, log_in
from tests.browser.services import (
    OWNER,
    ROOT,
    HomeAssistant,
    Ollama,
    ServiceError,
    Simulator,
    Stack,
)

#: Where every step's screenshot goes (a CI artifact; git-ignored; README, "Development").
SCREENSHOTS = ROOT / "tests" / "browser" / "screenshots"
CHROMIUM_CANDIDATES = ("chromium", "chromium-browser")
#: Scripted simulator alerts per second: one every two seconds, round-robin over cameras.
ALERT_RATE = 0.5


def chromium_executable() -> str:
    """The OS's Chromium: ``$CHROMIUM``, else ``chromium`` on PATH. Fails, never skips."""
    if explicit := os.environ.get("CHROMIUM"):
        if not Path(explicit).is_file():
            pytest.fail(f"CHROMIUM={explicit} does not exist", pytrace=False)
        return explicit
    for name in CHROMIUM_CANDIDATES:
        if found := shutil.which(name):
            return found
    pytest.fail(
        "The browser tests need Chromium from the operating system and found none on PATH "
        "(chromium, chromium-browser). Install it (Debian/Ubuntu: apt-get install chromium; "
        "scripts/test does this when run as root) or set CHROMIUM=/path/to/chromium.",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    if request.config.pluginmanager.has_plugin("homeassistant"):
        pytest.fail(
            "tests/browser runs in its own pytest, without the Home Assistant test plugin: "
            "python -m pytest -p no:homeassistant tests/browser (scripts/test does this)",
            pytrace=False,
        )
    workdir = tmp_path_factory.mktemp("browser")
    started: list[Simulator | Ollama | HomeAssistant] = []
    try:
        sim = Simulator.start(workdir, ALERT_RATE)
        started.append(sim)
        ollama = Ollama.start(workdir)
        started.append(ollama)
        ha = HomeAssistant.start(workdir)
        started.append(ha)
        ha.onboard()
    except ServiceError as err:
        for service in reversed(started):
            service.process.stop()
        pytest.fail(str(err), pytrace=False)
    yield Stack(ha, sim, ollama, workdir)
    for service in reversed(started):
        service.process.stop()


@pytest.fixture(scope="session")
def screenshots_folder() -> Path:
    """The artifacts folder, emptied at the start of a run."""
    if SCREENSHOTS.exists():
        shutil.rmtree(SCREENSHOTS)
    SCREENSHOTS.mkdir(parents=True)
    return SCREENSHOTS


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    executable = chromium_executable()
    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def logged_in(browser: Browser, stack: Stack, screenshots_folder: Path) -> Iterator[BrowserContext]:
    """A browser context whose owner logged in through Home Assistant's login page."""
    expect.set_options(timeout=30_000)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    context.set_default_timeout(30_000)
    page = context.new_page()
    log_in(page, stack.ha.url, OWNER["username"], OWNER["password"])
    assert_translated(page, "the dashboard after logging in")
    Screenshots(screenshots_folder, "session")(page, "logged-in")
    page.close()
    yield context
    context.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
    """Keep each phase's report on the item, so ``page`` can screenshot a failure."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def shot(request: pytest.FixtureRequest, screenshots_folder: Path) -> Screenshots:
    """``shot(page, "step")`` saves the screen as ``<test>-NN-step.png``."""
    return Screenshots(screenshots_folder, request.node.name)


@pytest.fixture
def page(
    logged_in: BrowserContext, request: pytest.FixtureRequest, shot: Screenshots
) -> Iterator[Page]:
    """A new tab of the logged-in browser; on failure its screen is saved too."""
    tab = logged_in.new_page()
    yield tab
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        shot(tab, "failed")
    tab.close()
