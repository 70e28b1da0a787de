"""History, forecasts, diagnoses and alerts fed together, one snapshot at a time.

The TUI, ``gputop record`` and ``--json`` all look ahead the same way: the
snapshot goes into the history, the forecaster reads the history, the
diagnoser reads the snapshot against what it kept, and the alert monitor
reads all of them.

The TUI feeds its Watcher on the sampler thread and reads the history from the UI thread (sparklines,
charts): ``lock`` is held while the history changes, and by a reader that needs its series to agree.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from gputop.core.analysis.alerts import AlertEvent, AlertMonitor
from gputop.core.analysis.diagnosis import Diagnoser, Diagnoses
from gputop.core.analysis.forecast import Forecaster, ForecastParams, Forecasts
from gputop.core.analysis.history import History
from gputop.core.analysis.hold import HOLD, HoldTimes
from gputop.core.analysis.marks import MarkHolder
from gputop.core.model import Snapshot
from gputop.core.settings import Thresholds


@dataclass(frozen=True, slots=True)
class Foresight:
    """What one snapshot says about trouble coming."""

    forecasts: Forecasts
    diagnoses: Diagnoses  # each GPU's with the verdict marks its card shows, held by time (``held``)
    events: tuple[AlertEvent, ...]  # alerts raised or cleared by this snapshot


class Watcher:
    """Keeps the history, forecaster and alert monitor of one stream of snapshots."""

    def __init__(
        self, thresholds: Thresholds | None = None, history: History | None = None, hold: HoldTimes = HOLD
    ) -> None:
        """``hold``: how long an alert's condition must hold (``IMMEDIATE`` for a one-off report)."""
        self.thresholds = Thresholds() if thresholds is None else thresholds
        self.hold = hold
        self.history = History() if history is None else history
        self.forecaster = Forecaster(ForecastParams(horizon_s=self.thresholds.horizon_s))
        self.diagnoser = Diagnoser(self.thresholds)
        self.monitor = AlertMonitor(self.thresholds, hold=hold)
        self.marks = MarkHolder(hold)
        # Held only while the history changes (a few hundred microseconds a tick): the forecaster,
        # diagnoser and monitor are read and written by the feeding thread alone.
        self.lock = threading.Lock()

    def update(self, snapshot: Snapshot) -> Foresight:
        """Add ``snapshot`` and return its forecasts and alert events."""
        with self.lock:
            self.history.add(snapshot)
        forecasts = self.forecaster.update(self.history, snapshot)
        diagnoses = self.diagnoser.update(snapshot)
        events = self.monitor.update(snapshot, forecasts, diagnoses)
        judged = {gpu.index for gpu in snapshot.gpus if gpu.answering and not gpu.lost}
        diagnoses = self.marks.update(snapshot.timestamp, diagnoses, judged)
        return Foresight(forecasts, diagnoses, tuple(events))

    def reset(self) -> None:
        """Forget everything seen (a replay jumped): history, fits and alerts."""
        with self.lock:
            self.history.clear()
        self.forecaster = Forecaster(self.forecaster.params)
        self.diagnoser = Diagnoser(self.thresholds)
        self.monitor = AlertMonitor(self.thresholds, hold=self.hold)
        self.marks = MarkHolder(self.hold)
