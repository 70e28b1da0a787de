"""Which of the alerts the ticks raised are announced, and how; which a card names. No widgets.

Each tick is taken (history, forecasts, diagnoses, alerts, recording) on the sampler thread, by
``core.analysis.tick_feed``; the app announces what the ticks it receives raised, the ones it skipped included."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Literal

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.analysis.tick_feed import Tick

# Alert kinds in the order a card's title names them.
ALERT_ORDER = ("lost", "memory", "forecast", "thermal")
# Alerts that warn of trouble coming (or of a GPU held idle); the others say it is here.
WARNING_KINDS = frozenset({"memory", "forecast", "idle"})


# Alert notifications on screen at once, at most: more would stack over the process panel (a machine
# with several problems raises them all in its first ticks). The log (``!``) has every alert.
MAX_NOTICES = 3
# How long a notification stays (the app's timeout for them).
NOTICE_S = 10.0
# How many alerts a notification that gathers several names; it counts the rest.
NAMED_IN_SUMMARY = 2

Severity = Literal["warning", "error"]
Notice = tuple[str, str, Severity]  # title, message, severity


def alert_notices(events: Sequence[AlertEvent]) -> list[tuple[str, Severity]]:
    """(message, severity) of each alert a tick raised. A clearing is not announced: its card loses
    the mark, and the log (``!``) has it; nor is an update of an alert still raised (the log shows it)."""
    return [
        (event.message, "warning" if event.kind in WARNING_KINDS else "error") for event in events
        if not event.cleared and not event.updated
    ]


class AlertAnnouncer:
    """Which notifications the alerts raised each tick get, never more than MAX_NOTICES on screen.

    Alerts get one each while there is room, the last place kept for one that gathers the alerts
    that found none ("5 alerts": two named, the rest counted); alerts that find no place at all wait
    for one, and are said when a notification has gone.
    """

    def __init__(self) -> None:
        self._shown: deque[float] = deque()  # when each notification on screen was shown
        self._waiting: list[tuple[str, Severity]] = []

    def announce(self, events: Sequence[AlertEvent], now: float) -> list[Notice]:
        """The notifications to show now (``now``: monotonic seconds), for this tick's ``events``."""
        while self._shown and now - self._shown[0] >= NOTICE_S:
            self._shown.popleft()
        notices: list[Notice] = []
        for message, severity in alert_notices(events):
            if not self._waiting and len(self._shown) < MAX_NOTICES - 1:
                notices.append(("Alert", message, severity))
                self._shown.append(now)
            else:
                self._waiting.append((message, severity))
        if self._waiting and len(self._shown) < MAX_NOTICES:
            notices.append(_gathered(self._waiting))
            self._shown.append(now)
            self._waiting = []
        return notices


def _gathered(alerts: Sequence[tuple[str, Severity]]) -> Notice:
    if len(alerts) == 1:
        return ("Alert", *alerts[0])
    named = [message for message, _ in alerts[:NAMED_IN_SUMMARY]]
    rest = len(alerts) - len(named)
    lines = [*named, f"and {rest} more: ! opens the alert log"] if rest else named
    severity: Severity = "error" if any(severity == "error" for _, severity in alerts) else "warning"
    return (f"{len(alerts)} alerts", "\n".join(lines), severity)


def alert_kinds(tick: Tick, gpu_index: int) -> tuple[str, ...]:
    """The kinds of alert raised after ``tick`` on a GPU (or one of its MIG devices), in a card's order."""
    return tuple(kind for kind in ALERT_ORDER if (kind, gpu_index) in tick.alerted)
