"""The Workflows panel's addresses, for links made outside the panel: a question's phone
card and Home Assistant notification, a repair about a workflow.

Each is a path relative to Home Assistant (``/opennvr-workflows/question/<id>``), so it
opens wherever Home Assistant itself is reached (the companion app away from home, a
browser at home); it carries only the id the page is about, never a token, and the page
itself shows what its logged-in user may see (:mod:`..panel.api`). The segments are
written as the panel writes them (``frontend/src/panel.ts``, ``pathOf``): an id is
escaped as ``encodeURIComponent`` does, but for ``:``.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import quote

#: The panel's place under Home Assistant (its ``frontend_url_path``).
PANEL_PATH: Final = "opennvr-workflows"
#: What ``encodeURIComponent`` leaves as it is, besides letters, digits and ``_.-~``; and
#: ``:``, which the panel leaves in a question's id.
_KEPT: Final = "!*'():"
#: A repair's *Learn more* link that Home Assistant opens in its own page, not a new tab.
IN_APP: Final = "homeassistant://"


def _segment(part: str) -> str:
    return quote(part, safe=_KEPT)


def panel_page() -> str:
    """The panel's list of workflows."""
    return f"/{PANEL_PATH}"


def workflow_page(workflow_id: str) -> str:
    """A workflow's page: its runs, and what to do first when it does not run."""
    return f"/{PANEL_PATH}/workflow/{_segment(workflow_id)}"


def run_page(run_id: str) -> str:
    """A run's page: its steps in words."""
    return f"/{PANEL_PATH}/run/{_segment(run_id)}"


def question_page(approval_id: str) -> str:
    """A question's page: the question, its picture and a button per reply."""
    return f"/{PANEL_PATH}/question/{_segment(approval_id)}"


def in_app(path: str) -> str:
    """``path`` as a repair's ``learn_more_url`` that Home Assistant opens in place."""
    return IN_APP + path.removeprefix("/")
