"""Every tick taken in full on the thread that sampled it, and handed to a reader that may fall behind.

``TickFeed`` does for the TUI what ``gputop record`` and ``export`` do in their loops: each snapshot
goes into the Watcher (history, forecasts, diagnoses, alerts) and into the recording on the sampler
thread, whatever the UI is doing. ``Handover`` carries the results to the UI thread, which may be
busy for a while: it keeps the newest tick and gathers what a skipped frame must not lose (the alert
events, a recording that stopped), so the UI skips frames, never data.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.analysis.foresight import Foresight, Watcher
from gputop.core.model import Snapshot

if TYPE_CHECKING:  # the recorder's module (and gzip, JSON) is imported only by a run that records
    from gputop.core.recording.record import Recorder, RecordingError


@dataclass(frozen=True, slots=True)
class Tick:
    """One snapshot and what was judged of it."""

    snapshot: Snapshot
    foresight: Foresight
    # (kind, GPU index) of every alert raised once this tick was taken (a MIG device's under its GPU).
    alerted: frozenset[tuple[str, int]]
    recording_error: RecordingError | None = None  # the recording stopped on this tick
    raised: tuple[AlertEvent, ...] = ()  # those alerts, each as it was raised (its device, its message)


@dataclass(frozen=True, slots=True)
class Delivery:
    """What the UI takes at once: the newest tick, and what the ticks it did not see raised."""

    tick: Tick
    events: tuple[AlertEvent, ...]  # every alert event since the last delivery, oldest first
    recording_error: RecordingError | None
    ticks: int  # how many ticks were taken since the last delivery

    @classmethod
    def of(cls, tick: Tick) -> Delivery:
        """A delivery of one tick alone."""
        return cls(tick, tick.foresight.events, tick.recording_error, 1)


class TickFeed:
    """Takes each snapshot into the Watcher and (while recording) the recording, one tick at a time."""

    def __init__(self, watcher: Watcher, recorder: Recorder | None = None) -> None:
        self.watcher = watcher
        self.recorder = recorder
        # One tick at a time, whichever thread feeds it (the sampler's, or the UI's in a replay), and
        # closing the recording waits for a line being written.
        self._lock = threading.Lock()

    def take(self, snapshot: Snapshot) -> Tick:
        """Feed one snapshot. A recording that cannot be written is stopped, its error in the tick."""
        with self._lock:
            watcher = self.watcher
            foresight = watcher.update(snapshot)
            raised = tuple(watcher.monitor.active.values())
            alerted = frozenset((event.kind, event.gpu_index) for event in raised)
            failure = None
            recorder = self.recorder
            if recorder is not None:
                from gputop.core.recording.record import RecordingError  # imported already: the recorder's own module

                try:
                    recorder.write(
                        snapshot, forecasts=foresight.forecasts, alerts=foresight.events, diagnoses=foresight.diagnoses
                    )
                except RecordingError as error:
                    failure = error
                    self._close_recording()
        return Tick(snapshot, foresight, alerted, failure, raised)

    def reset(self) -> None:
        """Drop history, forecasts and alerts (a replay jumping rebuilds them)."""
        with self._lock:
            self.watcher.reset()

    def stop_recording(self) -> None:
        """Finish the recording (after the line being written, if any)."""
        with self._lock:
            self._close_recording()

    def _close_recording(self) -> None:
        recorder, self.recorder = self.recorder, None
        if recorder is not None:
            from gputop.core.recording.record import RecordingError

            # A write error, if any, was already reported.
            with contextlib.suppress(RecordingError):
                recorder.close()


class Handover:
    """From the thread that takes the ticks to the one that shows them: the newest tick, and every
    alert event and recording error of the ticks in between. Both sides hold its lock for a few
    assignments only."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tick: Tick | None = None
        self._events: list[AlertEvent] = []
        self._error: RecordingError | None = None
        self._count = 0

    def put(self, tick: Tick) -> None:
        """Leave one tick for the reader."""
        with self._lock:
            self._tick = tick
            self._events.extend(tick.foresight.events)
            if self._error is None:
                self._error = tick.recording_error
            self._count += 1

    def take(self) -> Delivery | None:
        """Everything left since the last take; None when nothing was."""
        with self._lock:
            tick = self._tick
            if tick is None:
                return None
            delivery = Delivery(tick, tuple(self._events), self._error, self._count)
            self._tick, self._events, self._error, self._count = None, [], None, 0
        return delivery
