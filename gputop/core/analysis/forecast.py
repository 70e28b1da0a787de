"""Out-of-memory forecasts and per-process memory growth.

The estimator is the same for GPUs, MIG devices and processes:

1. Take the points of the last ``window_s`` seconds (None values skipped) and
   keep at most ``max_points`` of them, evenly spread by index.
2. Slope: Theil–Sen, the median of the slopes between every pair of kept
   points. Intercept: the median of ``value - slope * (t - t_last)``, i.e. a
   robust estimate of the value now.
3. The trend counts as *steady* only when the median absolute residual about
   that line is at most ``max_residual_ratio`` (10 %) of the rise the line
   makes over the window. A steady climb has small residuals; a single step
   (flat, jump, flat) leaves residuals of about a quarter of the jump, and a
   flat noisy series has residuals as large as its fitted "rise". Both fail.
4. ``growth_rate`` is the slope when the trend is steady and the data span at
   least ``min_span_s`` (30 s); None (not known yet) while they span less, so
   a first look says nothing rather than a false 0; otherwise 0.0. So a one-off allocation reads
   as no growth, not as a rate of (jump / window).
5. ``seconds_to_full = (total - value_now) / slope``, given only when the
   growth is steady and positive and the result is within ``horizon_s``
   (30 min).
6. Hysteresis: once a device's forecast is shown, it stays while memory still
   climbs: the fit then only needs to pass a looser gate
   (``hold_residual_ratio``, 40 %) and a longer horizon (``hold_horizon_ratio``
   times ``horizon_s``). Noise on a real climb no longer makes the forecast
   come and go between ticks; it goes when the slope is no longer positive,
   the fit no longer explains the data, or memory stops changing.
7. Rising now: a device's time to full is given only while its memory climbs
   now. The fit of the last ``recent_s`` seconds (30 s) must rise clearly
   above its noise (the rise over the window more than three times its
   standard error, the noise read from the median absolute residual; once
   shown, more than once: a climb that levels off does not flicker), and the newest
   reading must not have fallen below that fit by more than five times the
   noise (at least ``fall_ratio`` of the total, 0.5 %). A job that frees
   memory clears its forecast on the next tick, where the two-minute fit
   alone would go on saying "full in ~0s" for most of a minute.
8. Full: a device whose memory in use shows as 100 % (``full_ratio``,
   99.5 %) is ``full``: it has no time to full, it is full now.
9. Quiet: once a device's forecast has gone, none is given for ``quiet_s``
   (30 s, the span a first forecast needs anyway), so a climb that levels
   off in noise does not bring "full in" back every other tick.
10. After a fall: where memory fell within the window (a sawtooth's reset,
   126 GiB to 80 GiB), only the points since the fall are fitted, so no
   "full in" is given until the new climb spans ``min_span_s`` (30 s), and
   then at the new climb's pace. A fall is a drop of more than eight times
   the points' noise and at least ``fall_ratio`` of the total.

Cost is bounded by ``max_points`` (pairs grow as its square; 24 for devices,
8 for processes), and a series whose memory has not changed within the
window is answered without reading it (see ``MemorySeries.last_memory_change``).
``Forecaster`` also spreads process refits over ticks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from gputop.core.analysis.history import History, MemorySeries, MigKey, ProcessHistory
from gputop.core.analysis.trend import MAD_TO_SIGMA, fit_trend, kept_points, median
from gputop.core.model import ProcessIdentity, Snapshot

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ForecastParams:
    """Windows and gates of the estimator; the defaults are documented above."""

    window_s: float = 120.0
    min_span_s: float = 30.0
    horizon_s: float = 1800.0
    max_points: int = 24
    max_residual_ratio: float = 0.1
    hold_residual_ratio: float = 0.4
    hold_horizon_ratio: float = 1.25
    process_window_s: float = 120.0
    process_max_points: int = 8
    # 1 MiB/s is 3.5 GiB an hour: below that a leak takes most of a day to
    # matter on a data-centre GPU, and allocator jitter stays under it.
    process_growth_threshold: float = 1.0 * MIB
    recent_s: float = 30.0
    fall_ratio: float = 0.005
    full_ratio: float = 0.995
    quiet_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_points < 2 or self.process_max_points < 2:
            raise ValueError("a fit needs at least 2 points")


DEFAULT_PARAMS = ForecastParams()



@dataclass(frozen=True, slots=True)
class Forecast:
    """When a GPU (or MIG device) runs out of memory at its steady growth rate."""

    seconds_to_full: float | None
    growth_rate: float | None  # bytes/s; 0.0 unless the growth is steady; None: under min_span_s of history
    full: bool = False  # memory in use shows as 100 %: full now, not "full in ~0s"


@dataclass(frozen=True, slots=True)
class ProcessGrowth:
    """How fast one process's GPU memory grows."""

    growth_rate: float | None  # bytes/s; 0.0 unless the growth is steady; None: under min_span_s of history
    is_growing: bool  # steady growth at or above the threshold


NO_FORECAST = Forecast(seconds_to_full=None, growth_rate=0.0)
NOT_GROWING = ProcessGrowth(growth_rate=0.0, is_growing=False)
# Under ``min_span_s`` of history (or after a fall, of the climb since): whether memory grows is not known yet.
FORECAST_NOT_YET = Forecast(seconds_to_full=None, growth_rate=None)
GROWTH_NOT_YET = ProcessGrowth(growth_rate=None, is_growing=False)


@dataclass(frozen=True, slots=True)
class Forecasts:
    """Every forecast for one snapshot, keyed like the History."""

    gpus: Mapping[int, Forecast]
    migs: Mapping[MigKey, Forecast]
    processes: Mapping[ProcessIdentity, ProcessGrowth]




def rising_now(
    timestamps: Sequence[float],
    memory_used: Sequence[int | None],
    memory_total: int | None,
    params: ForecastParams = DEFAULT_PARAMS,
    shown: bool = False,
) -> bool:
    """Memory climbs now: the last ``recent_s`` seconds rise clearly, and the newest reading has not
    fallen below them (see the module docstring, step 7); ``shown``: its forecast was shown last tick."""
    if not timestamps:
        return False
    newest = memory_used[-1]
    trend = fit_trend(timestamps, memory_used, params.recent_s, params.max_points)
    if newest is None or trend is None or trend.slope <= 0.0:
        return False
    noise = MAD_TO_SIGMA * trend.residual
    if newest < trend.value_now - max(5.0 * noise, params.fall_ratio * (memory_total or 0)):
        return False  # fallen from where the recent climb had it: memory was freed
    # For points spread evenly over the window, the standard error of its rise is noise * sqrt(12 / n).
    standard_error = noise * math.sqrt(12.0 / trend.points)
    return trend.slope * trend.span_s > (1.0 if shown else 3.0) * standard_error


# A fall of memory counts as a reset (a sawtooth) when it is this many times the points' noise.
_FALL_NOISES = 8.0


def last_fall(
    timestamps: Sequence[float],
    memory_used: Sequence[int | None],
    memory_total: int | None,
    params: ForecastParams = DEFAULT_PARAMS,
) -> float | None:
    """When the climb of now began, if memory fell within the window (see step 10): the time of the
    first kept point after the last fall, else None.

    A fall is a point that stands above a later one by more than eight times the points' noise and
    at least ``fall_ratio`` of the total; the noise is read from the spread of the steps between
    kept points, so a slope does not count as noise."""
    times, points = kept_points(timestamps, memory_used, params.window_s, params.max_points)
    if len(points) < 3:
        return None
    steps = sorted(b - a for a, b in zip(points, points[1:], strict=False))
    middle = median(steps)
    spread = median(sorted(abs(step - middle) for step in steps))
    noise = MAD_TO_SIGMA * spread / math.sqrt(2.0)  # a step is the difference of two noisy points
    threshold = max(_FALL_NOISES * noise, params.fall_ratio * (memory_total or 0))
    lowest_after = points[-1]
    for index in range(len(points) - 2, -1, -1):
        if points[index] - lowest_after > threshold:
            return times[index + 1]
        lowest_after = min(lowest_after, points[index])
    return None


def _flat(series: MemorySeries | ProcessHistory, window_s: float) -> bool:
    """True when memory has not changed within the window, so the fit is known to be flat."""
    changed = series.last_memory_change
    timestamps = series.timestamps
    return changed is None or not timestamps or changed < timestamps[-1] - window_s


def forecast_memory(
    timestamps: Sequence[float],
    memory_used: Sequence[int | None],
    memory_total: int | None,
    params: ForecastParams = DEFAULT_PARAMS,
) -> Forecast:
    """Forecast when memory fills, from parallel series of times and memory in use."""
    trend = fit_trend(
        timestamps, memory_used, params.window_s, params.max_points, params.max_residual_ratio
    )
    if trend is None or trend.span_s < params.min_span_s:
        return FORECAST_NOT_YET
    if not trend.steady:
        return NO_FORECAST
    growth_rate = trend.slope
    if growth_rate <= 0.0 or not memory_total:
        return Forecast(seconds_to_full=None, growth_rate=growth_rate)
    seconds_to_full = max(0.0, (memory_total - trend.value_now) / growth_rate)
    if seconds_to_full > params.horizon_s:
        return Forecast(seconds_to_full=None, growth_rate=growth_rate)
    return Forecast(seconds_to_full=seconds_to_full, growth_rate=growth_rate)


def forecast_device(
    series: MemorySeries,
    memory_total: int | None,
    params: ForecastParams = DEFAULT_PARAMS,
    shown: bool = False,
) -> Forecast:
    """Forecast for a GPU or MIG history; ``shown``: its last forecast gave a time to full (hysteresis)."""
    timestamps = series.timestamps
    if not timestamps or timestamps[-1] - timestamps[0] < params.min_span_s:
        return FORECAST_NOT_YET
    if _flat(series, params.window_s):
        return NO_FORECAST
    fell = last_fall(series.timestamps, series.memory, memory_total, params)
    if fell is not None:
        # Only the climb since the fall is fitted: across a sawtooth's reset, the points before it
        # would put the line's "now" near the old peak, and "full in" far too soon.
        params = replace(params, window_s=series.timestamps[-1] - fell)
    forecast = forecast_memory(series.timestamps, series.memory, memory_total, params)
    if forecast.seconds_to_full is None and shown:
        held = replace(
            params,
            horizon_s=params.horizon_s * params.hold_horizon_ratio,
            max_residual_ratio=params.hold_residual_ratio,
        )
        forecast = forecast_memory(series.timestamps, series.memory, memory_total, held)
    if forecast.seconds_to_full is not None and not rising_now(
        series.timestamps, series.memory, memory_total, params, shown
    ):
        return replace(forecast, seconds_to_full=None)
    return forecast


def is_full(memory_used: int | None, memory_total: int | None, params: ForecastParams = DEFAULT_PARAMS) -> bool:
    """Memory in use shows as 100 % (``full_ratio`` of the total or more)."""
    if memory_used is None or not memory_total:
        return False
    return memory_used >= params.full_ratio * memory_total


def _device_forecast(
    series: MemorySeries, used: int | None, total: int | None, params: ForecastParams, shown: bool
) -> Forecast:
    """``forecast_device``, or ``full`` (no time to full) when the memory is full now."""
    if is_full(used, total, params):
        return Forecast(seconds_to_full=None, growth_rate=0.0, full=True)
    return forecast_device(series, total, params, shown)


def process_growth(
    timestamps: Sequence[float],
    gpu_memory: Sequence[int | None],
    params: ForecastParams = DEFAULT_PARAMS,
) -> ProcessGrowth:
    """Steady growth of one process's GPU memory, from parallel series."""
    trend = fit_trend(
        timestamps,
        gpu_memory,
        params.process_window_s,
        params.process_max_points,
        params.max_residual_ratio,
    )
    if trend is None or trend.span_s < params.min_span_s:
        return GROWTH_NOT_YET
    if not trend.steady:
        return NOT_GROWING
    return ProcessGrowth(
        growth_rate=trend.slope,
        is_growing=trend.slope >= params.process_growth_threshold,
    )


class Forecaster:
    """Forecasts for every device and process, tick after tick, at a bounded cost.

    GPUs and MIG devices are refitted every tick. A process is refitted every
    ``process_stride`` ticks (staggered by identity, so the work spreads over
    the ticks), and at once when it has no result yet: its growth over a
    two-minute window barely moves in a few seconds, and 1024 processes whose
    memory all changes every tick would otherwise cost ~10 ms a tick. A
    process whose memory is flat over the window, or whose history is shorter
    than ``min_span_s``, costs nothing.
    """

    def __init__(self, params: ForecastParams = DEFAULT_PARAMS, process_stride: int = 4) -> None:
        if process_stride < 1:
            raise ValueError("process_stride must be at least 1")
        self.params = params
        self.process_stride = process_stride
        self._tick = 0
        self._fitted: dict[ProcessIdentity, ProcessGrowth] = {}
        # Devices whose forecast gave a time to full last tick: they are held (see the docstring).
        self._shown: set[int | MigKey] = set()
        # Devices whose forecast went (memory stopped rising, fell or filled): none again before then,
        # so a climb that levels off does not bring "full in" back and forth.
        self._quiet_until: dict[int | MigKey, float] = {}
        # No process fitted (each flat over the window, or under min_span_s): the history, its process
        # figures' version then, the oldest first point of one under min_span_s, and the processes' forecasts.
        self._unmoved: tuple[History, int, float, Mapping[ProcessIdentity, ProcessGrowth]] | None = None

    def _device(
        self, key: int | MigKey, series: MemorySeries, used: int | None, total: int | None, now: float
    ) -> Forecast:
        """One device's forecast, held (see the docstring) and kept quiet after it went."""
        shown = key in self._shown
        forecast = _device_forecast(series, used, total, self.params, shown)
        if forecast.seconds_to_full is None:
            if shown:
                self._quiet_until[key] = now + self.params.quiet_s
            return forecast
        if now < self._quiet_until.get(key, now):
            return replace(forecast, seconds_to_full=None)
        self._quiet_until.pop(key, None)
        return forecast

    def _kept_processes(self, history: History, now: float) -> Mapping[ProcessIdentity, ProcessGrowth] | None:
        """Last tick's process forecasts when they hold still: no process was fitted, each has been given the
        same figures since (a flat one is flat still: its newest change only grows older), none under
        min_span_s reaches it now, and no full history's span (its oldest point moved on) fell under it."""
        unmoved = self._unmoved
        if unmoved is None or unmoved[0] is not history or unmoved[1] != history.process_figures_version:
            return None
        if now - unmoved[2] >= self.params.min_span_s:  # the loop's test, for the one to reach it first
            return None
        # A process's points are the newest of the history's (it leaves the history when a snapshot lacks it):
        # a full one spans its last process_maxlen, which a shorter interval shortens.
        stamps, full = history.timestamps, history.process_maxlen
        if len(stamps) >= full and stamps[-1] - stamps[-full] < self.params.min_span_s:
            return None
        return unmoved[3]

    def update(self, history: History, snapshot: Snapshot) -> Forecasts:
        """Every forecast for ``snapshot``, which must be the one last added to ``history``."""
        params = self.params
        gpus: dict[int, Forecast] = {}
        migs: dict[MigKey, Forecast] = {}
        now = snapshot.timestamp
        for gpu in snapshot.gpus:
            gpu_history = history.gpus.get(gpu.index)
            if gpu_history is not None:
                gpus[gpu.index] = self._device(gpu.index, gpu_history, gpu.memory_used, gpu.memory_total, now)
            for mig in gpu.mig_devices:
                key = (gpu.index, mig.index)
                mig_history = history.migs.get(key)
                if mig_history is not None:
                    migs[key] = self._device(key, mig_history, mig.memory_used, mig.memory_total, now)
        shown: set[int | MigKey] = {index for index, f in gpus.items() if f.seconds_to_full is not None}
        self._shown = shown | {key for key, f in migs.items() if f.seconds_to_full is not None}

        self._tick += 1
        kept = self._kept_processes(history, now)
        if kept is not None:
            return Forecasts(gpus=MappingProxyType(gpus), migs=MappingProxyType(migs), processes=kept)
        tick, stride = self._tick, self.process_stride
        window_s, min_span_s = params.process_window_s, params.min_span_s
        cached = self._fitted
        fitted: dict[ProcessIdentity, ProcessGrowth] = {}
        processes: dict[ProcessIdentity, ProcessGrowth] = {}
        # The oldest first point of a process under min_span_s (infinity: none is under it; NaN: one's
        # history is full, so its first point moves on).
        oldest = math.inf
        full = history.process_maxlen
        for identity, process_history in history.processes.items():
            timestamps = process_history.timestamps
            newest = timestamps[-1]
            if newest - timestamps[0] < min_span_s:
                processes[identity] = GROWTH_NOT_YET
                oldest = math.nan if len(timestamps) >= full else min(oldest, timestamps[0])
                continue
            # _flat, written out: asked of every process every tick, and most are flat.
            changed = process_history.last_memory_change
            if changed is None or changed < newest - window_s:
                processes[identity] = NOT_GROWING
                continue
            growth = cached.get(identity)
            if growth is None or (tick + identity[0]) % stride == 0:
                growth = process_growth(timestamps, process_history.memory, params)
            processes[identity] = fitted[identity] = growth
        # Rebuilt each tick, so vanished processes leave the cache with the history.
        self._fitted = fitted
        kept = MappingProxyType(processes)
        unmoved = not fitted and oldest == oldest and history.gpu_maxlen >= full
        self._unmoved = (history, history.process_figures_version, oldest, kept) if unmoved else None
        return Forecasts(gpus=MappingProxyType(gpus), migs=MappingProxyType(migs), processes=kept)
