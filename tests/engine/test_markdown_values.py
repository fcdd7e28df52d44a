"""Values from outside never become markdown: an event's title, a plate or an AI's words
rendered into a text Home Assistant shows as markdown are escaped, the workflow's own
text is not, and plain-text surfaces (a phone) get the value as it is.

The attack: an alert whose title is a fake ``[Open](https://...)`` link (or an image, a
``<a href>``, an autolink) beside the real answer links of a notification."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from custom_components.opennvr_workflows.engine.render import (
    escape_markdown,
    render,
    render_markdown,
)
from custom_components.opennvr_workflows.engine.testing import FakeEffects, event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory

#: Every kind of markdown and HTML an outside value might carry.
ATTACKS = (
    "[Open](https://evil.example/answer)",
    "![pic](https://evil.example/p.png)",
    '<a href="https://evil.example">Approve</a>',
    "<img src=x onerror=alert(1)>",
    "<https://evil.example/autolink>",
    "*bold* _em_ **strong** __strong__ ~~gone~~",
    "`code` and ```fence```",
    "# Heading\n## Another",
    "- item\n+ item\n1. item\n> quote\n---\n| a | b |",
    "[ref]: https://evil.example\n[ref]",
    "&lt;b&gt; &amp; &#91;x&#93;",
    "back\\slash \\[x\\](y)",
    "www.evil.example and https://evil.example and mail@evil.example",
)
#: CommonMark with raw HTML on: the strictest reading of what a value could turn into.
MARKDOWN = MarkdownIt("commonmark", {"html": True})
#: The tags plain text renders to (paragraphs and the line breaks between lines).
_PLAIN_TAGS = re.compile(r"</?p>|<br ?/?>|\n")


def rendered_tags(text: str) -> set[str]:
    """The HTML tags ``text`` renders to as markdown, beyond plain paragraphs."""
    html = _PLAIN_TAGS.sub("", MARKDOWN.render(text))
    return set(re.findall(r"<([a-z0-9]+)", html))


def shown_text(text: str) -> str:
    """What a reader sees of ``text`` rendered as markdown (the words, no markup)."""
    html = MARKDOWN.render(text)
    words = re.sub(r"<[^>]+>", "", html)
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&amp;", "&")):
        words = words.replace(entity, char)
    return words


@pytest.mark.parametrize("value", ATTACKS)
def test_an_escaped_value_renders_as_the_characters_it_is(value: str) -> None:
    escaped = escape_markdown(value)
    assert rendered_tags(escaped) == set(), MARKDOWN.render(escaped)
    # Every character is still there, as a reader sees it.
    assert re.sub(r"\s+", " ", shown_text(escaped)).strip() == re.sub(r"\s+", " ", value)
    # No bare link a GitHub-style renderer would make one of.
    assert re.search(r"[a-z]://", escaped) is None
    assert "www." not in escaped


def test_the_authors_markdown_stays_and_only_values_are_escaped() -> None:
    template = "**Seen** at the [door](https://nvr.local/door): {title} ({missing})"
    values = {"title": ATTACKS[0]}
    text = render_markdown(template, values)
    assert text.startswith("**Seen** at the [door](https://nvr.local/door): ")
    assert rendered_tags(text) == {"strong", "a"}  # the author's, not the value's
    assert 'href="https://evil.example' not in MARKDOWN.render(text)
    assert "{missing}" in text  # an undefined placeholder stays as written
    # Plain rendering is untouched: a phone shows the value as it came.
    assert render(template, values).endswith(f": {ATTACKS[0]} ({{missing}})")


def test_nothing_to_escape_is_left_as_it_is() -> None:
    assert escape_markdown("Parcel at the front door") == "Parcel at the front door"
    assert render_markdown("No placeholders, *mine*", {"x": "[y](z)"}) == (
        "No placeholders, *mine*"
    )


EVIL = "[Open](https://evil.example/answer) <a href='https://evil.example'>Approve</a>"


def alert_flow(*then: m.Step) -> m.Workflow:
    return m.Workflow(name="Yard", when=m.AlertTrigger(), then=then, state="on")


async def test_the_engine_hands_the_host_a_markdown_text_with_escaped_values(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    wf = alert_flow(
        m.ActionStep(m.AlertAction(severity="low", title="Yard: {title}", message="**{title}**")),
        m.ActionStep(m.NotifyAction(roles=("owner",), title="Yard", message="_Seen_: {title}")),
        m.ActionStep(
            m.HomeAssistantAction(
                action="persistent_notification.create",
                data={"title": "{title}", "message": "Seen: {title}"},
            )
        ),
        m.ActionStep(
            m.HomeAssistantAction(
                action="notify.persistent_notification", data={"message": "{title}"}
            )
        ),
        m.ActionStep(
            m.HomeAssistantAction(action="notify.mobile_app_phone", data={"message": "{title}"})
        ),
    )
    engine = make_engine()
    engine.set_workflows({"yard": wf})
    await engine.start()
    engine.submit(event(severity="high", title=EVIL))
    await engine.idle()

    (alert,) = effects.of("alert")
    assert alert.request.message == f"**{EVIL}**"  # plain, for phones
    assert alert.request.markdown == f"**{escape_markdown(EVIL)}**"
    assert rendered_tags(alert.request.markdown) == {"strong"}
    (told,) = effects.of("notify")
    assert told.request.params["message"] == f"_Seen_: {EVIL}"
    assert told.request.markdown == f"_Seen_: {escape_markdown(EVIL)}"
    created, note, phone = effects.of("call_action")
    assert created.request.params["data"]["message"] == f"Seen: {escape_markdown(EVIL)}"
    assert created.request.params["data"]["title"] == EVIL  # a title is shown as text
    assert note.request.params["data"]["message"] == escape_markdown(EVIL)
    assert phone.request.params["data"]["message"] == EVIL  # a phone is not markdown
