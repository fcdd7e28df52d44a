"""Workflows the engine tests run, built on the workflow.v1 model."""

from __future__ import annotations

import datetime as dt

from custom_components.opennvr_workflows.workflow import model as m


def simple(**kw: object) -> m.Workflow:
    """Yard alert -> log."""
    return m.Workflow(
        name="Log yard alerts",
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        then=(m.ActionStep(m.LogAction("alert on {camera}")),),
        state=kw.pop("state", "on"),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def gate(state: str = "on") -> m.Workflow:
    """The multi-step run the restart tests kill at every boundary:
    notify, AI look, ask a person, on "Let in" open the gate (an actuator),
    then always log."""
    return m.Workflow(
        name="Gate concierge",
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        state=state,  # type: ignore[arg-type]
        then=(
            m.ActionStep(m.NotifyAction(roles=("owner",), message="Someone at {camera}")),
            m.AIStep(
                spec=m.LookSpec(prompt="Who is at the gate?"),
                decision=("delivery", "visitor"),
                paths={
                    "delivery": (
                        m.AskPersonStep(
                            roles=("owner",),
                            message="Delivery at the gate. Let in?",
                            replies=("Let in", "Ignore"),
                            timeout_s=60,
                            paths={
                                "Let in": (
                                    m.ActionStep(m.AppAction(app="gate", action="open")),
                                    m.ActionStep(m.LogAction("opened for {answered_by}")),
                                ),
                                "Ignore": (),
                                "no_answer": (),
                            },
                        ),
                    ),
                    "visitor": (m.ActionStep(m.LogAction("visitor")),),
                    "unsure": (),
                },
            ),
        ),
        always=(m.ActionStep(m.LogAction("done with {camera}")),),
    )


def ask_flood(state: str = "on") -> m.Workflow:
    return m.Workflow(
        name="Ask on yard alert",
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        state=state,  # type: ignore[arg-type]
        then=(
            m.AskPersonStep(
                roles=("owner",),
                message="Someone in the yard?",
                replies=("Yes", "No"),
                timeout_s=120,
                paths={
                    "Yes": (m.ActionStep(m.AlertAction("high", "Yard")),),
                    "No": (),
                    "no_answer": (),
                },
            ),
        ),
    )


def echo(name: str) -> m.Workflow:
    """Raises an alert whenever an alert arrives on the yard camera."""
    return m.Workflow(
        name=name,
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1000),
        then=(m.ActionStep(m.AlertAction("low", f"{name} saw {{title}}")),),
    )


def daily(at: dt.time, state: str = "on") -> m.Workflow:
    return m.Workflow(
        name="Morning report",
        when=m.ScheduleTrigger(at=(at,)),
        state=state,  # type: ignore[arg-type]
        then=(m.ActionStep(m.LogAction("report")),),
    )
