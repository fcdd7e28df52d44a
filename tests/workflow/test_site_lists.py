"""A workflow naming a site list this site does not have is refused at import, located."""

from __future__ import annotations

import textwrap

import pytest

from custom_components.opennvr_workflows.workflow import SiteProfile, validate_text

HEADER = """\
contract: workflow.v1
name: Lists
state: test
when:
  alert: { app: plates, alert_type: plate_read, cameras: [gate] }
"""

#: Each file names the list ``blocked`` once, at the line ``where`` points to.
FILES = {
    "gate-not-in": (
        """\
        if:
          - list: { value: "{plate}", not_in: blocked }
        then:
          - log: "{plate}"
        """,
        "$.if[0].list.not_in",
    ),
    "gate-in": (
        """\
        if:
          - time: { from: "08:00", to: "18:00" }
          - list: { value: "{plate}", in: blocked }
        then:
          - log: "{plate}"
        """,
        "$.if[1].list.in",
    ),
    "if-step": (
        """\
        then:
          - log: "{plate}"
          - if:
              - list: { value: "{plate}", not_in: blocked }
            then:
              - log: "stranger"
        """,
        "$.then[1].if[0].list.not_in",
    ),
    "if-step-on-a-reply-path": (
        """\
        then:
          - ask_person:
              who: [role:owner]
              message: "{plate} at the gate?"
              replies: [Check, Ignore]
              timeout: 1m
            Check:
              - if:
                  - list: { value: "{plate}", in: blocked }
                then:
                  - log: "blocked"
            Ignore: []
            no_answer: []
        """,
        "$.then[0].Check[0].if[0].list.in",
    ),
    "for-each": (
        """\
        then:
          - for_each: { list: blocked, as: item }
            do:
              - log: "{item}"
        """,
        "$.then[0].for_each.list",
    ),
    "always": (
        """\
        then:
          - log: "{plate}"
        always:
          - for_each: { list: blocked }
            do:
              - log: "{item}"
        """,
        "$.always[0].for_each.list",
    ),
}


def text_of(name: str) -> str:
    return HEADER + textwrap.dedent(FILES[name][0])


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("name", list(FILES))
def test_a_missing_list_is_refused_where_it_is_named(name: str) -> None:
    text = text_of(name)
    report = validate_text(text, site=SiteProfile(lists=frozenset({"household", "staff"})))
    (problem,) = [p for p in report.errors if p.code == "WF-SITE-LIST-UNKNOWN"]
    assert problem.path == FILES[name][1]
    assert problem.line == line_of(text, "blocked")
    assert "'blocked'" in problem.message
    assert "household, staff" in problem.message
    assert not report.ok


@pytest.mark.parametrize("name", list(FILES))
def test_an_existing_list_passes(name: str) -> None:
    report = validate_text(text_of(name), site=SiteProfile(lists=frozenset({"blocked"})))
    assert [p.code for p in report.errors if p.code == "WF-SITE-LIST-UNKNOWN"] == []


@pytest.mark.parametrize("name", list(FILES))
def test_lists_are_not_checked_when_the_site_is_not_known(name: str) -> None:
    for site in (None, SiteProfile()):
        report = validate_text(text_of(name), site=site)
        assert "WF-SITE-LIST-UNKNOWN" not in {p.code for p in report.errors}


def test_a_site_without_lists_says_so() -> None:
    report = validate_text(text_of("gate-not-in"), site=SiteProfile(lists=frozenset()))
    (problem,) = [p for p in report.errors if p.code == "WF-SITE-LIST-UNKNOWN"]
    assert "none yet" in problem.message


def test_every_missing_list_is_named_once_each() -> None:
    text = HEADER + textwrap.dedent("""\
        if:
          - list: { value: "{plate}", not_in: blocked }
          - list: { value: "{plate}", in: expected }
        then:
          - for_each: { list: staff }
            do:
              - log: "{item}"
        """)
    report = validate_text(text, site=SiteProfile(lists=frozenset({"staff"})))
    missing = [p.path for p in report.errors if p.code == "WF-SITE-LIST-UNKNOWN"]
    assert missing == ["$.if[0].list.not_in", "$.if[1].list.in"]


def test_lists_must_be_a_set_of_names() -> None:
    with pytest.raises(TypeError, match="lists"):
        SiteProfile(lists="blocked")  # type: ignore[arg-type]
