"""The voice sentences live beside Home Assistant's built-in intents without taking any of
their phrasings.

Installing the sentences file adds its intents to the built-in agent's; a phrasing both
match (with the same score) goes to whichever the agent meets first, so a phrasing of ours
that a built-in intent also takes would hijack it ("who is in the kitchen" is Home
Assistant's presence question, HassGetState). Both directions are checked against the
built-in intents of the installed Home Assistant (``home_assistant_intents``), with a
home's usual names and areas in the lists:

* every sentence ours can say, its open slots filled with those names, is refused by the
  built-in intents;
* every built-in sentence sampled on the same lists is refused by ours.
"""

from __future__ import annotations

from typing import Final

import pytest
import yaml
from hassil import Intents, recognize
from hassil.intents import SlotList, TextSlotList
from hassil.sample import sample_intents
from home_assistant_intents import get_intents

from custom_components.opennvr_workflows.host.sentences import SHIPPED

#: Names and areas a home has, which are also camera roles and names.
PLACES: Final = (
    "kitchen",
    "living room",
    "front door",
    "garden",
    "back yard",
    "driveway",
    "garage door",
    "gate",
)
#: Built-in sentences read per intent (the built-in set has hundreds of thousands).
PER_INTENT: Final = 5000


@pytest.fixture(scope="module")
def built_in() -> Intents:
    return Intents.from_dict(get_intents("en"))


@pytest.fixture(scope="module")
def ours() -> Intents:
    return Intents.from_dict(
        yaml.safe_load((SHIPPED / "en" / "opennvr_workflows.yaml").read_text())
    )


def home_lists() -> dict[str, SlotList]:
    places = TextSlotList.from_strings(PLACES)
    return {"name": places, "area": places, "floor": TextSlotList.from_strings(["upstairs"])}


def our_lists() -> dict[str, SlotList]:
    return {
        "opennvr_camera": TextSlotList.from_strings(PLACES),
        "opennvr_reply": TextSlotList.from_strings(["yes", "open", "keep closed", "on"]),
        "opennvr_workflow": TextSlotList.from_strings(["gate", "kitchen", "lights"]),
        "opennvr_message": TextSlotList.from_strings(
            ["is the garden quiet", "turn on the kitchen light", "what time is it"]
        ),
    }


def test_no_sentence_of_ours_is_a_built_in_phrasing(built_in: Intents, ours: Intents) -> None:
    said = list(
        sample_intents(
            ours, slot_lists=our_lists(), language="en", exclude_sentences_with_wildcards=False
        )
    )
    assert len(said) > 500  # the sampling reached every template
    taken = [
        f"{intent}: {text!r} is also {found.intent.name}"
        for intent, text in said
        if (found := recognize(text, built_in, slot_lists=home_lists())) is not None
    ]
    assert taken == [], "\n".join(taken[:20])


def test_no_built_in_phrasing_is_one_of_ours(built_in: Intents, ours: Intents) -> None:
    said = list(
        sample_intents(
            built_in, slot_lists=home_lists(), max_sentences_per_intent=PER_INTENT, language="en"
        )
    )
    taken = [
        f"{intent}: {text!r} is taken by {found.intent.name}"
        for intent, text in said
        if (found := recognize(text, ours)) is not None
    ]
    assert taken == [], "\n".join(taken[:20])


def test_the_check_sees_a_hijack(built_in: Intents) -> None:
    """The presence question the old sentences took is caught by this check."""
    hijacking = Intents.from_dict(
        {
            "language": "en",
            "intents": {
                "OpenNVRLook": {
                    "data": [{"sentences": ["who is (at|in) the {opennvr_camera:camera}"]}]
                }
            },
            "lists": {"opennvr_camera": {"wildcard": True}},
        }
    )
    text = "who is in the kitchen"
    assert recognize(text, hijacking) is not None
    found = recognize(text, built_in, slot_lists=home_lists())
    assert found is not None
    assert found.intent.name == "HassGetState"
