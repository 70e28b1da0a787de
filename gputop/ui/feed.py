"""What each tick's snapshot feeds before it is shown: the Watcher (the history the sparklines and
charts draw, forecasts, alerts) and the recording. No widgets: the app shows what this yields."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Literal

from gputop.core.alerts import AlertEvent
from gputop.core.diagnosis import Diagnoses
from gputop.core.forecast import Forecasts
from gputop.core.foresight import Foresight, Watcher
from gputop.core.model import Snapshot
from gputop.core.record import Recorder, RecordingError

# Alert kinds in the order a card's title names them.
ALERT_ORDER = ("lost", "memory", "forecast", "thermal")
# Alerts that warn of trouble coming (or of a GPU held idle); the others say it is here.
WARNING_KINDS = frozenset({"memory", "forecast", "idle"})


def alert_notices(events: Sequence[AlertEvent]) -> list[tuple[str, Literal["warning", "error"]]]:
    """(message, severity) of each alert a tick raised. One clearing is not announced: its card
    loses the mark, and the log (``!``) has it."""
    return [
        (event.message, "warning" if event.kind in WARNING_KINDS else "error") for event in events if not event.cleared
    ]


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
            # A write error, if any, was already reported.
            with contextlib.suppress(RecordingError):
                recorder.close()

    def alert_kinds(self, gpu_index: int) -> tuple[str, ...]:
        """The kinds of alert raised now on a GPU (or one of its MIG devices)."""
        active = {key[0] for key in self.watcher.monitor.active if key[1] == gpu_index}
        return tuple(kind for kind in ALERT_ORDER if kind in active)
