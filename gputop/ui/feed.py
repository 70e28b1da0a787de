"""Which of the alerts the ticks raised are announced, and how; which a card names. No widgets.

Each tick is taken (history, forecasts, diagnoses, alerts, recording) on the sampler thread, by
``core.analysis.tick_feed``; the app announces what the ticks it receives raised, the ones it skipped included."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.analysis.tick_feed import Tick

# Alert kinds in the order a card's title names them.
ALERT_ORDER = ("lost", "memory", "forecast", "thermal")
# Alerts that warn of trouble coming (or of a GPU held idle); the others say it is here.
WARNING_KINDS = frozenset({"memory", "forecast", "idle"})


# How long a notification stays (the app's timeout for them), unless a key dismisses it first.
NOTICE_S = 10.0
# Alerts raised this soon after the first tick describe the machine as gputop found it: the title
# counts them (``⚠ 3``, ``!`` lists them), no notification covers the screen at start.
QUIET_START_S = 10.0

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
    """Which new alert gets a notification: one at a time, never one found at start, never a repeat.

    The title bar counts every alert raised; the log (``!``) has them all. A notification is for news:
    an alert raised QUIET_START_S or more after the first snapshot, whose (kind, GPU, device, subject)
    had none before in this run, while no other is on screen and no dialog is open. Several new in one
    delivery share one ("and 2 more").
    """

    def __init__(self, quiet_start_s: float = QUIET_START_S) -> None:
        self.quiet_start_s = quiet_start_s
        self._started: float | None = None  # the first snapshot's timestamp
        self._said: set[tuple[object, ...]] = set()  # the keys of the alerts raised so far

    def announce(
        self, events: Sequence[AlertEvent], now: float, *, on_screen: bool = False, blocked: bool = False
    ) -> Notice | None:
        """The notification to show for ``events``, if any; ``now``: the newest snapshot's timestamp.

        ``on_screen``: the last notification is still shown; ``blocked``: a dialog is open. Either way
        the alerts are not said (the title counts them) and stay news for no later notification.
        """
        if self._started is None:
            self._started = now
        raised = [event for event in events if not event.cleared and not event.updated]
        new = [event for event in raised if event.key not in self._said]
        self._said.update(event.key for event in raised)
        news = [event for event in new if event.time - self._started >= self.quiet_start_s]
        if not news or on_screen or blocked:
            return None
        notices = alert_notices(news)
        severity: Severity = "error" if any(level == "error" for _, level in notices) else "warning"
        message = notices[0][0]
        if len(notices) > 1:
            message += f"\nand {len(notices) - 1} more: ! opens the alert log"
        return ("Alert", message, severity)


def alert_kinds(tick: Tick, gpu_index: int) -> tuple[str, ...]:
    """The kinds of alert raised after ``tick`` on a GPU (or one of its MIG devices), in a card's order."""
    return tuple(kind for kind in ALERT_ORDER if (kind, gpu_index) in tick.alerted)
