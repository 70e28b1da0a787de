"""Alerts: memory nearly full, running hot, filling soon, GPU lost, and the diagnoses.

``AlertMonitor.update`` is called once a tick with the snapshot and its
forecasts. It returns only the events of that tick: one when a condition
starts, one (``cleared=True``) when it ends, nothing while it holds. So that
a value wobbling around a threshold does not fire every tick, each alert is
held by level and by time.

By level, each alert clears at a lower bar than the one that raised it:

- memory: raised at ``memory_percent`` (90 %) of total, cleared below
  ``memory_percent - 2`` (88 %);
- thermal (only when the GPU reports its slowdown temperature): raised at
  ``slowdown - thermal_margin_c`` (5 °C below), cleared below a further 2 °C;
- forecast: raised when the forecast says full within ``forecast_seconds``
  (300 s); cleared when there is no forecast or one at least 20 % further
  out (360 s);
- lost: raised when the GPU is marked lost or a GPU seen before is missing
  from the snapshot; cleared when it is back and answering.

By time (``core.analysis.hold``, with the snapshots' timestamps as the clock):
memory, thermal, forecast and throttle alerts are raised only once their
condition has held for 3 s over at least 2 ticks, and every one of those and
the stall and busy alerts (whose diagnoses already wait their own while before
they start) clears only once its condition has stayed clear for 15 s. A GPU
lost, a health problem and an idle process are facts the driver or the
diagnoser already judged over time: raised and cleared at once. A one-off
report (``--once``) uses ``IMMEDIATE``: the conditions as they are now.

A value that is not available (None) neither raises nor clears an alert, and
while a GPU is lost its other alerts stay as they were. The alerts the
diagnoses call for (idle, throttle, stall, health) are decided in
``core.analysis.diagnosis.alerts`` and applied here the same way.

A condition that worsens while it holds (an error counter that climbs) keeps
its one alert: the alert is updated in place (the log keeps when it started
and shows the latest message), and an event with ``updated=True`` carries the
update to the recording and ``--json`` at most once every
``UPDATE_INTERVAL_S`` per alert. Only a new kind of problem raises a new alert.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.diagnosis.alerts import DiagnosisKind, Words, diagnosis_changes
from gputop.core.analysis.forecast import Forecast, Forecasts
from gputop.core.analysis.hold import HOLD, IMMEDIATE, Holder, HoldTimes, clear_held
from gputop.core.format import fmt_bytes, fmt_duration, fmt_growth
from gputop.core.model import Snapshot
from gputop.core.settings import Thresholds

AlertKind = Literal["memory", "thermal", "forecast", "lost"] | DiagnosisKind
# (kind, gpu index, MIG device index or None, subject: a process or health problem, or None)
AlertKey = tuple[AlertKind, int, "int | None", "str | None"]

MEMORY_HYSTERESIS_PERCENT = 2.0
THERMAL_HYSTERESIS_C = 2.0
FORECAST_CLEAR_FACTOR = 1.2
# Alerts on a level that wobbles: held on the way up and down.
HELD_KINDS = frozenset({"memory", "thermal", "forecast", "throttle"})
# Alerts whose diagnosis already waited before it started: held on the way down only.
CLEAR_HELD_KINDS = frozenset({"stall", "busy"})
DEFAULT_LOG_LENGTH = 500
UPDATE_INTERVAL_S = 60.0

GIB = 1024**3


@dataclass(frozen=True, slots=True)
class AlertEvent:
    """An alert starting, or (``cleared``) ending."""

    time: float  # seconds since the epoch: the snapshot's timestamp
    gpu_index: int
    mig_index: int | None
    kind: AlertKind
    message: str
    cleared: bool = False
    subject: str | None = None
    # An update of an alert still raised (its message now says more); ``started``: when it was raised.
    updated: bool = False
    started: float | None = None

    @property
    def key(self) -> AlertKey:
        return (self.kind, self.gpu_index, self.mig_index, self.subject)


class AlertLog:
    """The most recent alert events, oldest first, at most ``maxlen`` of them."""

    def __init__(self, maxlen: int = DEFAULT_LOG_LENGTH) -> None:
        self._events: deque[AlertEvent] = deque(maxlen=maxlen)

    def extend(self, events: list[AlertEvent]) -> None:
        for event in events:
            if event.updated:
                self.update(event)
            else:
                self._events.append(event)

    def update(self, event: AlertEvent) -> None:
        """Put an update in place of the entry of the alert it updates (appended if that entry is gone)."""
        for position in range(len(self._events) - 1, -1, -1):
            entry = self._events[position]
            if entry.key == event.key and not entry.cleared:
                self._events[position] = event
                return
        self._events.append(event)

    def clear(self) -> None:
        self._events.clear()

    def __iter__(self) -> Iterator[AlertEvent]:
        return iter(self._events)

    def __len__(self) -> int:
        return len(self._events)

    @property
    def events(self) -> tuple[AlertEvent, ...]:
        return tuple(self._events)


def _device(gpu_index: int, mig_index: int | None) -> str:
    return f"GPU {gpu_index}" if mig_index is None else f"GPU {gpu_index} MIG {mig_index}"


def _lost_words(gpu_index: int) -> Words:
    return lambda: (f"GPU {gpu_index} is lost: it stopped answering the driver", f"GPU {gpu_index} is answering again")


def _gone_words(gpu_index: int) -> Words:
    return lambda: (f"GPU {gpu_index} is lost: it is no longer reported", "")


class AlertMonitor:
    """Turns snapshots and forecasts into alert events, one per crossing."""

    def __init__(
        self, thresholds: Thresholds | None = None, log_length: int = DEFAULT_LOG_LENGTH, hold: HoldTimes = HOLD
    ) -> None:
        self.thresholds = Thresholds() if thresholds is None else thresholds
        self.hold = hold
        self._clear_held = clear_held(hold)  # made once: asked for each condition of each GPU each tick
        self._holder: Holder[AlertKey] = Holder()
        self.log = AlertLog(log_length)
        self._active: dict[AlertKey, AlertEvent] = {}
        self._seen_gpus: set[int] = set()
        # Alert key -> when an update of it was last carried as an event; and the updates not carried yet.
        self._update_sent: dict[AlertKey, float] = {}
        self._update_pending: set[AlertKey] = set()

    @property
    def active(self) -> Mapping[AlertKey, AlertEvent]:
        """The alerts now raised, each with the event that raised it."""
        return MappingProxyType(self._active)

    def update(
        self, snapshot: Snapshot, forecasts: Forecasts | None = None, diagnoses: Diagnoses | None = None
    ) -> list[AlertEvent]:
        """The events this snapshot starts or ends (also appended to ``log``)."""
        now = snapshot.timestamp
        events: list[AlertEvent] = []
        present: set[int] = set()
        for gpu in snapshot.gpus:
            present.add(gpu.index)
            self._set(events, now, ("lost", gpu.index, None, None), gpu.lost, _lost_words(gpu.index))
            if gpu.lost:
                # Its figures are gone with it: other alerts stay as they were.
                continue
            self._memory(events, now, gpu.index, None, gpu.memory_used, gpu.memory_total)
            for mig in gpu.mig_devices:
                self._memory(events, now, gpu.index, mig.index, mig.memory_used, mig.memory_total)
            self._thermal(events, now, gpu.index, gpu.temperature, gpu.temperature_slowdown)
            if forecasts is not None:
                self._forecast(events, now, gpu.index, None, forecasts.gpus.get(gpu.index))
                for mig in gpu.mig_devices:
                    forecast = forecasts.migs.get((gpu.index, mig.index))
                    self._forecast(events, now, gpu.index, mig.index, forecast)
        for index in sorted(self._seen_gpus - present):
            self._set(events, now, ("lost", index, None, None), True, _gone_words(index))
        self._seen_gpus |= present
        if diagnoses is not None:
            self._diagnoses(events, now, snapshot, diagnoses)
        self._send_pending_updates(events, now)
        self._holder.sweep()
        self.log.extend(events)
        return events

    def _times(self, kind: AlertKind) -> HoldTimes:
        """How long ``kind``'s condition must hold before it is raised or cleared."""
        if kind in HELD_KINDS:
            return self.hold
        if kind in CLEAR_HELD_KINDS:
            return self._clear_held
        return IMMEDIATE

    def _set(
        self,
        events: list[AlertEvent],
        now: float,
        key: AlertKey,
        condition: bool | None,
        words: Words,
    ) -> None:
        """Raise or clear the alert ``key`` once ``condition`` has held long enough for its kind; None leaves it
        as it is. ``words()``: the messages it is raised and cleared with, written only then."""
        kind, gpu_index, mig_index, subject = key
        if not self._holder.step(key, key in self._active, condition, now, self._times(kind)):
            return
        message, cleared_message = words()
        if key not in self._active:
            event = AlertEvent(
                time=now, gpu_index=gpu_index, mig_index=mig_index, kind=kind, message=message, subject=subject
            )
            self._active[key] = event
            events.append(event)
        else:
            del self._active[key]
            self._update_sent.pop(key, None)
            self._update_pending.discard(key)
            events.append(
                AlertEvent(
                    time=now,
                    gpu_index=gpu_index,
                    mig_index=mig_index,
                    kind=kind,
                    message=cleared_message,
                    cleared=True,
                    subject=subject,
                )
            )

    def _diagnoses(self, events: list[AlertEvent], now: float, snapshot: Snapshot, diagnoses: Diagnoses) -> None:
        active = [key for key in self._active if key[0] in ("idle", "throttle", "stall", "health", "busy")]
        for change in diagnosis_changes(snapshot, diagnoses, active):  # type: ignore[arg-type]
            key: AlertKey = change.key
            if change.update and change.condition and key in self._active:
                self._update(events, now, key, change.words()[0])
                continue
            if change.silent and change.condition is False and key in self._active:
                del self._active[key]
                self._update_pending.discard(key)
            if not change.silent:
                self._set(events, now, key, change.condition, change.words)

    def _update(self, events: list[AlertEvent], now: float, key: AlertKey, message: str) -> None:
        """The raised alert ``key`` now says ``message``: updated in place (the log too), and carried as an
        event at most once every UPDATE_INTERVAL_S."""
        raised = self._active[key]
        if raised.message == message:
            return
        kind, gpu_index, mig_index, subject = key
        started = raised.time if raised.started is None else raised.started
        event = AlertEvent(
            time=now,
            gpu_index=gpu_index,
            mig_index=mig_index,
            kind=kind,
            message=message,
            subject=subject,
            updated=True,
            started=started,
        )
        self._active[key] = event
        self.log.update(event)
        self._update_pending.add(key)

    def _send_pending_updates(self, events: list[AlertEvent], now: float) -> None:
        """Carry each update not carried yet as an event, once UPDATE_INTERVAL_S has passed since the last."""
        for key in sorted(self._update_pending, key=str):
            raised = self._active[key]
            started = raised.time if raised.started is None else raised.started
            if now - self._update_sent.get(key, started) >= UPDATE_INTERVAL_S:
                self._update_sent[key] = now
                self._update_pending.discard(key)
                events.append(dataclasses.replace(raised, time=now))

    def _memory(
        self,
        events: list[AlertEvent],
        now: float,
        gpu_index: int,
        mig_index: int | None,
        used: int | None,
        total: int | None,
    ) -> None:
        if used is None or not total:
            return
        percent = 100.0 * used / total
        key: AlertKey = ("memory", gpu_index, mig_index, None)
        raise_at = self.thresholds.memory_percent
        condition = (
            percent >= raise_at
            if key not in self._active
            else percent >= raise_at - MEMORY_HYSTERESIS_PERCENT
        )

        def words() -> tuple[str, str]:
            device = _device(gpu_index, mig_index)
            figures = f"{percent:.0f}% ({fmt_bytes(used)} / {fmt_bytes(total)})"
            return f"{device} memory at {figures}", f"{device} memory back down to {figures}"

        self._set(events, now, key, condition, words)

    def _thermal(
        self,
        events: list[AlertEvent],
        now: float,
        gpu_index: int,
        temperature: float | None,
        slowdown: float | None,
    ) -> None:
        if temperature is None or slowdown is None:
            return
        key: AlertKey = ("thermal", gpu_index, None, None)
        raise_at = slowdown - self.thresholds.thermal_margin_c
        condition = (
            temperature >= raise_at
            if key not in self._active
            else temperature >= raise_at - THERMAL_HYSTERESIS_C
        )

        def words() -> tuple[str, str]:
            below = slowdown - temperature
            where = (
                f"{below:.0f} °C below" if below >= 0 else f"{-below:.0f} °C above"
            ) + f" its slowdown temperature ({slowdown:.0f} °C)"
            cooled = f"GPU {gpu_index} cooled to {temperature:.0f} °C"
            return f"GPU {gpu_index} at {temperature:.0f} °C, {where}", cooled

        self._set(events, now, key, condition, words)

    def _forecast(
        self,
        events: list[AlertEvent],
        now: float,
        gpu_index: int,
        mig_index: int | None,
        forecast: Forecast | None,
    ) -> None:
        key: AlertKey = ("forecast", gpu_index, mig_index, None)
        limit = self.thresholds.forecast_seconds
        seconds = None if forecast is None else forecast.seconds_to_full
        # Raised within the limit; once raised, kept while the forecast stays within 1.2 times it.
        within = limit if key not in self._active else limit * FORECAST_CLEAR_FACTOR
        condition = seconds is not None and (seconds <= within if key not in self._active else seconds < within)

        def words() -> tuple[str, str]:
            device = _device(gpu_index, mig_index)
            message = ""
            if forecast is not None and seconds is not None:
                message = f"{device} memory full in ~{fmt_duration(seconds)} at {fmt_growth(forecast.growth_rate)}"
            return message, f"{device} memory no longer forecast to fill within {fmt_duration(limit)}"

        self._set(events, now, key, condition, words)
