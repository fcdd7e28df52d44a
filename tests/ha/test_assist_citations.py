"""The citation check on its own: markers in tool results, kept and stripped markers, and
the filter for answers that arrive in pieces."""

from __future__ import annotations

from custom_components.opennvr_workflows.assist.citations import (
    Citations,
    StreamFilter,
    cite,
    markers_in,
)


def test_markers_are_read_from_cite_fields_at_any_depth_and_nowhere_else() -> None:
    data = {
        "events": [{"event_id": 4, "cite": cite("event", 4)}],
        "run": {"cite": cite("run", "01J9Z"), "trigger": {"cite": cite("alert", "alrt_ab")}},
        "note": "[^event:77] in free text is not a fact's marker",
    }
    assert markers_in(data) == {"event:4", "run:01J9Z", "alert:alrt_ab"}


def test_an_answer_keeps_returned_markers_and_loses_invented_ones_with_their_space() -> None:
    citations = Citations()
    citations.record({"cite": "[^event:4]"})
    checked = citations.check("A person came [^event:4]. A fox too [^event:5], twice [^run:x].")
    assert checked.text == "A person came [^event:4]. A fox too, twice."
    assert checked.valid == ["event:4"]
    assert checked.invented == ["event:5", "run:x"]


def test_an_answer_without_markers_is_unchanged() -> None:
    checked = Citations().check("I can only help with this site's cameras.")
    assert checked.text == "I can only help with this site's cameras."
    assert (checked.valid, checked.invented) == ([], [])


def test_a_streamed_answer_holds_back_only_an_unclosed_marker() -> None:
    citations = Citations()
    citations.record({"cite": "[^event:4]"})
    stream = StreamFilter(citations)
    pieces = ["A person [", "^event:4] and a fox [^eve", "nt:9]. Done [maybe"]
    shown = [stream.feed(p) for p in pieces]
    assert shown == ["A person", " [^event:4] and a fox", ". Done"]
    assert stream.flush() == " [maybe"
