"""What each tick's snapshot feeds before it is shown: the Watcher (the history the sparklines and
charts draw, forecasts, alerts) and the recording. No widgets: the app shows what this yields."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from gputop.core.alerts import AlertEvent
from gputop.core.diagnosis import Diagnoses
from gputop.core.forecast import Forecasts
from gputop.core.foresight import Foresight, Watcher
from gputop.core.model import Snapshot

if TYPE_CHECKING:  # the recorder's module (and gzip, JSON) is imported only by a run that records
    from gputop.core.record import Recorder, RecordingError

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


class SnapshotFeed:
    """Takes each snapshot into the Watcher and (while recording) the recording."""

    def __init__(self, watcher: Watcher, recorder: Recorder | None = None) -> None:
        self.watcher = watcher
        self.recorder = recorder
        self.forecasts: Forecasts | None = None
        self.diagnoses: Diagnoses | None = None

    def take(self, snapshot: Snapshot) -> tuple[Foresight, RecordingError | None]:
        """Feed one snapshot. A recording that cannot be written is stopped, and its error returned."""
        foresight = self.watcher.update(snapshot)
        self.forecasts = foresight.forecasts
        self.diagnoses = foresight.diagnoses
        failure = None
        if self.recorder is not None:
            from gputop.core.record import RecordingError  # imported already: the recorder's own module

            try:
                self.recorder.write(
                    snapshot, forecasts=foresight.forecasts, alerts=foresight.events, diagnoses=foresight.diagnoses
                )
            except RecordingError as error:
                failure = error
                self.stop_recording()
        return foresight, failure

    def forget_past(self) -> None:
        """Drop history, forecasts and alerts (a replay jumping rebuilds them)."""
        self.watcher.reset()

    def stop_recording(self) -> None:
        recorder, self.recorder = self.recorder, None
        if recorder is not None:
            from gputop.core.record import RecordingError

            # A write error, if any, was already reported.
            with contextlib.suppress(RecordingError):
                recorder.close()

    def alert_kinds(self, gpu_index: int) -> tuple[str, ...]:
        """The kinds of alert raised now on a GPU (or one of its MIG devices)."""
        active = {key[0] for key in self.watcher.monitor.active if key[1] == gpu_index}
        return tuple(kind for kind in ALERT_ORDER if kind in active)
