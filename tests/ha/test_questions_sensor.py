"""The *Questions waiting* sensor's attributes stay small however many questions are open:
the soonest deadlines listed, the rest counted (the panel and the card list them all)."""

from __future__ import annotations

from dataclasses import dataclass

from custom_components.opennvr_workflows.host.approvals.tickets import Ticket
from custom_components.opennvr_workflows.sensor import QUESTIONS_LISTED, _questions
from tests.ha.test_tickets_store import NOW, ticket


@dataclass
class Desk:
    """What the sensor reads of the questions desk: the open questions, soonest first."""

    tickets: list[Ticket]

    def pending(self) -> list[Ticket]:
        return sorted(self.tickets, key=lambda t: t.expires_at)


def asked(n: int) -> Ticket:
    question = ticket(f"q{n:02d}")
    question.expires_at = NOW + 60 * n
    return question


def test_a_few_questions_are_all_listed() -> None:
    attrs = _questions(Desk([asked(n) for n in (3, 1, 2)]))  # type: ignore[arg-type]
    assert [q["approval_id"] for q in attrs["questions"]] == ["q01", "q02", "q03"]
    assert attrs["not_listed"] == 0


def test_many_questions_list_the_soonest_and_count_the_rest() -> None:
    many = QUESTIONS_LISTED + 7
    attrs = _questions(Desk([asked(n) for n in reversed(range(many))]))  # type: ignore[arg-type]
    listed = [q["approval_id"] for q in attrs["questions"]]
    assert listed == [f"q{n:02d}" for n in range(QUESTIONS_LISTED)]
    assert attrs["not_listed"] == 7
    assert all("token" not in key for q in attrs["questions"] for key in q)
