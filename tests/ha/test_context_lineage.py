"""The context lineage follows Home Assistant's ``parent_id`` links forward, within bounds:
a mark reaches every descendant, an automation that nothing records the start of is
untraced, and what may have been forgotten (past the size limit, past the time limit,
before anything listened) is untraced rather than clean."""

from __future__ import annotations

from homeassistant.core import Context, Event, HomeAssistant
from homeassistant.util.ulid import ulid_at_time

from custom_components.opennvr_workflows.host.runs.lineage import ContextLineage, Origin, made_at


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def fired(lineage: ContextLineage, context: Context, event_type: str = "state_changed") -> None:
    lineage.observe(Event(event_type, {}, context=context))


def child(parent: Context) -> Context:
    """What an automation triggered by something under ``parent`` runs under."""
    return Context(parent_id=parent.id)


def test_a_mark_reaches_every_descendant_and_a_plain_run_only_its_chain() -> None:
    lineage = ContextLineage()
    ai_run, plain_run = Context(), Context()
    lineage.run(ai_run.id, ("a/1",), ai=True)
    lineage.run(plain_run.id, ("b/1",), ai=False)
    for root, ai in ((ai_run, True), (plain_run, False)):
        hop = root
        for _ in range(5):  # automation -> helper -> automation -> ...
            hop = child(hop)
            fired(lineage, hop, "automation_triggered")
        origin = lineage.origin(child(hop))
        assert origin.ai is ai
        assert origin.chain == (("a/1",) if ai else ("b/1",))
        assert origin.traced


def test_the_caller_of_a_look_is_marked_from_then_on() -> None:
    lineage = ContextLineage()
    automation = Context(parent_id=Context().id)
    assert lineage.origin(automation) == Origin()
    lineage.mark(automation.id)
    assert lineage.origin(automation).ai
    assert lineage.origin(child(automation)).ai  # the run_workflow it calls, and below


def test_an_automation_with_no_recorded_start_is_untraced_and_so_is_what_it_sets_off() -> None:
    lineage = ContextLineage()
    timed = Context()  # a time trigger: no parent, no user
    fired(lineage, timed, "automation_triggered")
    assert not lineage.origin(timed).traced
    helper_automation = child(timed)
    fired(lineage, helper_automation, "automation_triggered")
    assert not lineage.origin(helper_automation).traced
    # A device's state change, a person's action, a bare call: traced, clean.
    assert lineage.origin(child(Context())) == Origin()
    assert lineage.origin(Context(user_id="alice")) == Origin()
    assert lineage.origin(Context()) == Origin()


def test_a_context_pushed_out_by_the_limit_is_not_taken_for_clean() -> None:
    clock = Clock(1_000_000.0)
    lineage = ContextLineage(limit=2, clock=clock)
    old = Context(id=ulid_at_time(clock.now))
    lineage.run(old.id, ("a/1",), ai=True)
    clock.now += 10
    for _ in range(2):  # two newer marks push the first out
        lineage.mark(Context(id=ulid_at_time(clock.now)).id)
    origin = lineage.origin(child(old))
    assert not origin.ai
    assert not origin.traced, "forgotten, so untraced: never clean"
    # Something made after the last eviction is known not to have been forgotten.
    clock.now += 10
    assert lineage.origin(Context(id=ulid_at_time(clock.now))).traced


def test_marks_expire_after_a_day_and_the_old_context_counts_as_untraced() -> None:
    clock = Clock(2_000_000.0)
    lineage = ContextLineage(clock=clock, remember_s=3600)
    run = Context(id=ulid_at_time(clock.now))
    lineage.run(run.id, ("a/1",), ai=True)
    delayed = Context(id=ulid_at_time(clock.now + 1), parent_id=run.id)
    fired(lineage, delayed, "automation_triggered")
    clock.now += 1800
    assert lineage.origin(delayed).ai  # a delay inside what is remembered
    clock.now += 3600
    origin = lineage.origin(delayed)
    assert not origin.ai
    assert not origin.traced


def test_a_person_is_never_taken_for_untraced() -> None:
    clock = Clock(3_000_000.0)
    lineage = ContextLineage(clock=clock)
    clock.now += 10
    before = ulid_at_time(clock.now - 20)  # made before anything listened
    assert lineage.origin(Context(id=before, user_id="alice")).traced
    assert not lineage.origin(Context(id=before)).traced


async def test_listening_follows_the_bus_while_anyone_needs_it(hass: HomeAssistant) -> None:
    lineage = ContextLineage()
    run = Context()
    lineage.run(run.id, ("a/1",), ai=True)
    first, second = lineage.async_listen(hass), lineage.async_listen(hass)
    hop = child(run)
    hass.bus.async_fire("automation_triggered", {}, context=hop)
    assert lineage.origin(child(hop)).ai
    first()
    first()  # a release counts once
    hop = child(run)
    hass.bus.async_fire("automation_triggered", {}, context=hop)
    assert lineage.origin(child(hop)).ai, "still listening for the other site"
    second()
    unheard = child(run)
    hass.bus.async_fire("automation_triggered", {}, context=unheard)
    assert not lineage.origin(child(unheard)).ai


def test_a_context_id_tells_when_it_was_made() -> None:
    assert made_at("not a ulid") is None
    assert made_at(ulid_at_time(1234.5)) == 1234.5
