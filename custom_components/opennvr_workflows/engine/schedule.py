"""When a schedule trigger fires next, and whether a time window holds.

Schedules are due-time rows in the run database, not timers: the next fire
time is computed here, stored, and the row survives a restart. A fire that was
due while the engine was down runs once when it comes back (never once per
missed occurrence), then the next time is computed from the present.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

from ..workflow import model

_WEEKDAYS: Final[tuple[model.Weekday, ...]] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def weekday(day: dt.date) -> model.Weekday:
    return _WEEKDAYS[day.weekday()]


def next_fire(trigger: model.ScheduleTrigger, after: dt.datetime) -> dt.datetime | None:
    """The first fire time strictly after ``after`` (aware, in the site's
    time zone), or None if the trigger can never fire."""
    if trigger.every_s is not None:
        if trigger.every_s <= 0:
            return None
        candidate = after + dt.timedelta(seconds=trigger.every_s)
        for _ in range(8 * 24 * 3600 // max(1, int(trigger.every_s)) + 8):
            if not trigger.days or weekday(candidate.date()) in trigger.days:
                return candidate
            candidate += dt.timedelta(seconds=trigger.every_s)
        return None
    if not trigger.at:
        return None
    tz = after.tzinfo
    for offset in range(8):
        day = after.date() + dt.timedelta(days=offset)
        if trigger.days and weekday(day) not in trigger.days:
            continue
        for at in sorted(trigger.at):
            candidate = dt.datetime.combine(day, at, tzinfo=tz)
            if candidate > after:
                return candidate
    return None


def in_window(cond: model.TimeCondition, now: dt.datetime) -> bool:
    """Whether local ``now`` is in ``[start, end)``; a window whose end is not
    after its start wraps midnight, and its day is the day it started."""
    t = now.time().replace(tzinfo=None)
    if cond.start < cond.end:
        inside = cond.start <= t < cond.end
        started = now.date()
    else:
        inside = t >= cond.start or t < cond.end
        started = now.date() if t >= cond.start else now.date() - dt.timedelta(days=1)
    if not inside:
        return False
    return not cond.days or weekday(started) in cond.days
