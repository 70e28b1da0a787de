"""The OOM forecast: steady climbs are forecast, steps and noise are not."""

from __future__ import annotations

import random

import pytest

from gputop.core.analysis.forecast import (
    FORECAST_NOT_YET,
    GROWTH_NOT_YET,
    NO_FORECAST,
    NOT_GROWING,
    Forecast,
    Forecaster,
    ForecastParams,
    fit_trend,
    forecast_memory,
    process_growth,
)
from gputop.core.analysis.history import History
from gputop.core.model import GpuSample, HostSample, MigSample, ProcessSample, Snapshot

GIB = 1 << 30
MIB = 1 << 20
TOTAL = 80 * GIB
SEEDS = [0, 1, 2, 3, 4]
RATE = 50 * MIB  # a climb of 50 MiB/s with 320 MiB of noise: the bare estimator flickers on it
SIGMA = 320 * MIB


def noisy(rng: random.Random, value: float, sigma: float) -> int:
    return int(min(TOTAL, max(0.0, value + rng.gauss(0.0, sigma))))


def forecasts_over(values: list[int], interval_s: float = 1.0) -> list[tuple[float, Forecast]]:
    """The forecast after each tick, fed one point at a time like the sampler does."""
    timestamps: list[float] = []
    memory: list[int | None] = []
    out = []
    for tick, value in enumerate(values):
        timestamps.append(1_000_000.0 + tick * interval_s)
        memory.append(value)
        out.append((tick * interval_s, forecast_memory(timestamps, memory, TOTAL)))
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("seconds_to_fill", [300.0, 600.0, 1500.0])
@pytest.mark.parametrize("interval_s", [1.0, 2.0])
def test_a_noisy_linear_climb_is_forecast_within_15_percent_once_30s_exist(
    seed: int, seconds_to_fill: float, interval_s: float
) -> None:
    rng = random.Random(seed)
    start = 10 * GIB
    slope = (TOTAL - start) / seconds_to_fill
    ticks = int(seconds_to_fill / interval_s)
    values = [noisy(rng, start + slope * k * interval_s, 64 * MIB) for k in range(ticks)]
    checked = 0
    for elapsed, forecast in forecasts_over(values, interval_s):
        truth = seconds_to_fill - elapsed
        if elapsed < 30.0 or truth < interval_s:
            continue
        assert forecast.seconds_to_full is not None, f"no forecast at {elapsed} s"
        # In the last half minute noise of a few tens of MiB is seconds of
        # error, so there the bound is absolute.
        tolerance = 0.15 * truth if truth >= 30.0 else 3.0
        assert abs(forecast.seconds_to_full - truth) <= tolerance, (elapsed, forecast)
        assert forecast.growth_rate == pytest.approx(slope, rel=0.15)
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("jump", [1 * GIB, 10 * GIB, 50 * GIB])
@pytest.mark.parametrize("step_at_s", [40.0, 90.0, 150.0, 200.0])
def test_a_single_step_up_is_never_forecast(seed: int, jump: int, step_at_s: float) -> None:
    rng = random.Random(seed)
    values = [noisy(rng, 20 * GIB + (jump if k >= step_at_s else 0), 16 * MIB) for k in range(400)]
    for elapsed, forecast in forecasts_over(values):
        assert forecast.seconds_to_full is None, (elapsed, forecast)
        # Not known under 30 s of history; then no growth, never a rate of (jump / window).
        assert forecast.growth_rate == (None if elapsed < 30 else 0.0), (elapsed, forecast)


def test_a_single_step_without_noise_reads_as_no_growth() -> None:
    values = [20 * GIB + (30 * GIB if k >= 100 else 0) for k in range(300)]
    assert all(f == (FORECAST_NOT_YET if t < 30 else NO_FORECAST) for t, f in forecasts_over(values))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("sigma", [1 * MIB, 64 * MIB, 1 * GIB])
def test_a_flat_noisy_series_is_never_forecast(seed: int, sigma: float) -> None:
    rng = random.Random(seed)
    values = [noisy(rng, 40 * GIB, sigma) for _ in range(400)]
    for elapsed, forecast in forecasts_over(values):
        assert forecast.seconds_to_full is None, (elapsed, forecast)
        # Not known under 30 s of history; then no growth, never a rate of (jump / window).
        assert forecast.growth_rate == (None if elapsed < 30 else 0.0), (elapsed, forecast)


def test_a_staircase_of_regular_allocations_is_a_steady_climb() -> None:
    # 512 MiB every 10 s: how a caching allocator grows under a leak.
    values = [20 * GIB + (k // 10) * 512 * MIB for k in range(300)]
    results = forecasts_over(values)
    elapsed, forecast = results[200]
    assert forecast.seconds_to_full is not None
    truth = (TOTAL - values[200]) / (512 * MIB / 10)
    assert forecast.seconds_to_full == pytest.approx(truth, rel=0.15)


def test_no_forecast_before_30_seconds_of_history() -> None:
    values = [10 * GIB + 200 * MIB * k for k in range(60)]
    results = forecasts_over(values)
    assert all(f.seconds_to_full is None for elapsed, f in results if elapsed < 30.0)
    assert results[30][1].seconds_to_full is not None


def test_a_fill_beyond_the_horizon_gives_a_rate_but_no_time() -> None:
    # 10 MiB/s from 10 GiB: full in about 2 hours, past the 30 min horizon.
    values = [10 * GIB + 10 * MIB * k for k in range(200)]
    forecast = forecasts_over(values)[-1][1]
    assert forecast.seconds_to_full is None
    assert forecast.growth_rate == pytest.approx(10 * MIB)


def test_the_horizon_is_a_parameter() -> None:
    values = [10 * GIB + 10 * MIB * k for k in range(200)]
    timestamps = [float(k) for k in range(200)]
    params = ForecastParams(horizon_s=4 * 3600.0)
    forecast = forecast_memory(timestamps, list(values), TOTAL, params)
    assert forecast.seconds_to_full == pytest.approx((TOTAL - values[-1]) / (10 * MIB))


def test_a_steady_decline_has_a_negative_rate_and_no_forecast() -> None:
    values = [60 * GIB - 100 * MIB * k for k in range(120)]
    forecast = forecasts_over(values)[-1][1]
    assert forecast.seconds_to_full is None
    assert forecast.growth_rate == pytest.approx(-100 * MIB)


def test_memory_already_full_forecasts_zero_seconds() -> None:
    values = [TOTAL - 100 * MIB * (60 - k) for k in range(61)] + [TOTAL] * 0
    forecast = forecasts_over(values)[-1][1]
    assert forecast.seconds_to_full == pytest.approx(0.0, abs=1e-6)


def test_missing_values_and_unknown_total_are_tolerated() -> None:
    timestamps = [float(k) for k in range(100)]
    memory: list[int | None] = [
        None if k % 3 == 0 else 10 * GIB + 100 * MIB * k for k in range(100)
    ]
    assert forecast_memory(timestamps, memory, None) == Forecast(None, pytest.approx(100 * MIB))
    assert forecast_memory(timestamps, [None] * 100, TOTAL) == FORECAST_NOT_YET  # no reading at all
    assert forecast_memory([], [], TOTAL) == FORECAST_NOT_YET


def test_fit_trend_estimates_slope_and_value_now_from_the_window_only() -> None:
    # Old points outside the 120 s window climb fast; the window itself is flat-ish.
    timestamps = [float(k) for k in range(300)]
    values = [float(1000 * k) if k < 150 else 150_000.0 + 2.0 * (k - 150) for k in range(300)]
    trend = fit_trend(timestamps, values, window_s=120.0, max_points=24)
    assert trend is not None
    assert trend.slope == pytest.approx(2.0)
    assert trend.value_now == pytest.approx(values[-1])
    assert trend.span_s == 120.0
    assert trend.steady


def test_process_growth_is_steady_growth_above_1_mib_per_s() -> None:
    timestamps = [float(k) for k in range(120)]
    growing = [1 * GIB + 2 * MIB * k for k in range(120)]
    slow = [1 * GIB + MIB // 2 * k for k in range(120)]
    stepped = [1 * GIB + (4 * GIB if k >= 60 else 0) for k in range(120)]
    assert process_growth(timestamps, growing) == pytest.approx(
        type(NOT_GROWING)(growth_rate=2 * MIB, is_growing=True)
    )
    assert process_growth(timestamps, slow).is_growing is False
    assert process_growth(timestamps, slow).growth_rate == pytest.approx(MIB / 2)
    assert process_growth(timestamps, stepped) == NOT_GROWING
    assert process_growth(timestamps[:20], growing[:20]) == GROWTH_NOT_YET  # 20 s: not known yet, not 0


def make_snapshot(t: float, gpus: int, processes_per_gpu: int, rng: random.Random) -> Snapshot:
    samples = []
    for g in range(gpus):
        procs = tuple(
            ProcessSample(
                pid=10_000 + g * 1000 + p,
                gpu_index=g,
                type="C",
                started=500.0 + p,
                gpu_memory=int(GIB + 2 * MIB * t * (p % 4) + rng.gauss(0, MIB)),
            )
            for p in range(processes_per_gpu)
        )
        samples.append(
            GpuSample(
                index=g,
                memory_total=TOTAL,
                memory_used=int(10 * GIB + 100 * MIB * t + rng.gauss(0, 16 * MIB)),
                processes=procs,
            )
        )
    return Snapshot(timestamp=t, hostname="h", host=HostSample(), gpus=tuple(samples))


def test_a_forecast_covers_every_gpu_mig_and_process() -> None:
    history = History()
    for k in range(60):
        mig = MigSample(index=0, memory_total=10 * GIB, memory_used=GIB + 50 * MIB * k)
        gpu = GpuSample(
            index=3,
            memory_total=TOTAL,
            memory_used=10 * GIB,
            mig_devices=(mig,),
            processes=(ProcessSample(pid=7, gpu_index=3, type="C", started=1.0, gpu_memory=GIB),),
        )
        snapshot = Snapshot(timestamp=float(k), hostname="h", host=HostSample(), gpus=(gpu,))
        history.add(snapshot)
    forecasts = Forecaster(process_stride=1).update(history, snapshot)
    assert forecasts.gpus == {3: NO_FORECAST}
    mig_forecast = forecasts.migs[(3, 0)]
    assert mig_forecast.growth_rate == pytest.approx(50 * MIB)
    assert mig_forecast.seconds_to_full == pytest.approx(
        (10 * GIB - (GIB + 50 * MIB * 59)) / (50 * MIB)
    )
    assert forecasts.processes == {(7, 1.0): NOT_GROWING}


def test_the_staggered_forecaster_agrees_with_a_full_refit_at_8_gpus_and_128_processes() -> None:
    # Each process is refitted on its own (tick + PID) % stride, whatever their number: 16 a GPU cover
    # every PID residue and every rate class (p % 4) on each of the 8 GPUs (1024 cost 8x the time).
    rng = random.Random(0)
    history = History()
    forecaster = Forecaster()
    snapshots = [make_snapshot(float(k), 8, 16, rng) for k in range(160)]
    for snapshot in snapshots:
        history.add(snapshot)
        forecasts = forecaster.update(history, snapshot)
    assert len(forecasts.processes) == 128
    assert sum(g.is_growing for g in forecasts.processes.values()) == 96
    fresh = Forecaster(process_stride=1).update(history, snapshots[-1])  # every process fitted afresh
    assert forecasts.gpus == fresh.gpus
    assert {i: g.is_growing for i, g in forecasts.processes.items()} == {
        i: g.is_growing for i, g in fresh.processes.items()
    }


def test_the_forecaster_refits_each_process_every_stride_ticks() -> None:
    forecaster = Forecaster(process_stride=3)
    history = History()
    rates = []
    for k in range(60):
        # The process grows at 2 MiB/s, then at 8 MiB/s from t=40.
        memory = GIB + 2 * MIB * k + (6 * MIB * (k - 40) if k > 40 else 0)
        process = ProcessSample(pid=9, gpu_index=0, type="C", started=5.0, gpu_memory=memory)
        gpu = GpuSample(index=0, memory_total=TOTAL, memory_used=TOTAL // 2, processes=(process,))
        snapshot = Snapshot(timestamp=float(k), hostname="h", host=HostSample(), gpus=(gpu,))
        history.add(snapshot)
        rates.append(forecaster.update(history, snapshot).processes[(9, 5.0)].growth_rate)
    assert rates[:30] == [None] * 30  # under 30 s of history: not known yet
    assert rates[30] == pytest.approx(2 * MIB)  # first fit at once
    # Afterwards the value changes at most once every 3 ticks.
    changes = [k for k in range(31, 60) if rates[k] != rates[k - 1]]
    assert changes
    assert all(b - a >= 3 for a, b in zip(changes, changes[1:], strict=False))


def test_a_fit_needs_at_least_two_points() -> None:
    with pytest.raises(ValueError):
        ForecastParams(process_max_points=1)


def climb_then_plateau(seed: int, mig: bool) -> tuple[list[float | None], list[float | None]]:
    """A GPU (or MIG device) climbing at RATE with SIGMA of noise for 400 s, then flat with the
    same noise: the forecast after each tick from the Forecaster, and from the bare estimator."""
    rng = random.Random(seed)
    history = History()
    forecaster = Forecaster()
    held: list[float | None] = []
    bare: list[float | None] = []
    for k in range(600):
        memory = int(20 * GIB + RATE * min(k, 400) + rng.gauss(0.0, SIGMA))
        if mig:
            device = MigSample(index=1, memory_total=TOTAL, memory_used=memory)
            gpu = GpuSample(index=0, memory_total=2 * TOTAL, memory_used=TOTAL, mig_devices=(device,))
        else:
            gpu = GpuSample(index=0, memory_total=TOTAL, memory_used=memory)
        snapshot = Snapshot(timestamp=1_000_000.0 + k, hostname="h", host=HostSample(), gpus=(gpu,))
        history.add(snapshot)
        forecasts = forecaster.update(history, snapshot)
        held.append((forecasts.migs[(0, 1)] if mig else forecasts.gpus[0]).seconds_to_full)
        series = history.mig(0, 1) if mig else history.gpu(0)
        bare.append(forecast_memory(series.timestamps, series.memory, TOTAL).seconds_to_full)
    return held, bare


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("mig", [False, True])
def test_on_a_noisy_climb_a_forecast_once_shown_stays_until_the_growth_stops(seed: int, mig: bool) -> None:
    held, bare = climb_then_plateau(seed, mig)
    first = next(k for k, seconds in enumerate(held) if seconds is not None)
    assert first < 60
    # The bare estimator comes and goes on this noise; the held forecast does not.
    assert any(seconds is None for seconds in bare[first:400])
    assert all(seconds is not None for seconds in held[first:400])
    for k in range(90, 400):  # once a minute and a half of the climb is in the window
        truth = (TOTAL - (20 * GIB + RATE * k)) / RATE
        assert abs(held[k] - truth) <= 0.25 * truth, (k, held[k], truth)  # type: ignore[operator]
    # Growth stopped at 400 s: the forecast goes within the two-minute window, and stays gone.
    gone = next(k for k in range(400, 600) if held[k] is None)
    assert gone <= 520
    assert held[gone:] == [None] * (600 - gone)
