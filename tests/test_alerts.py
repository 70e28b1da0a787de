"""Alerts fire once per crossing and clear with hysteresis."""

from __future__ import annotations

from gputop.core.analysis.alerts import AlertEvent, AlertMonitor
from gputop.core.analysis.forecast import NO_FORECAST, Forecast, Forecasts
from gputop.core.model import GpuSample, HostSample, MigSample, Snapshot
from gputop.core.settings import Thresholds

GIB = 1 << 30
TOTAL = 80 * GIB


def snapshot(t: float, *gpus: GpuSample) -> Snapshot:
    return Snapshot(timestamp=t, hostname="h", host=HostSample(), gpus=gpus)


def gpu(index: int = 1, percent: float = 50.0, **fields: object) -> GpuSample:
    used = int(TOTAL * percent / 100)
    return GpuSample(index=index, memory_total=TOTAL, memory_used=used, **fields)  # type: ignore[arg-type]


def forecasts(seconds: float | None, index: int = 1, rate: float = GIB / 60) -> Forecasts:
    forecast = Forecast(seconds_to_full=seconds, growth_rate=rate if seconds else 0.0)
    return Forecasts(gpus={index: forecast}, migs={}, processes={})


def feed(monitor: AlertMonitor, values: list[float], **fields: object) -> list[list[AlertEvent]]:
    return [
        monitor.update(snapshot(float(t), gpu(percent=v, **fields))) for t, v in enumerate(values)
    ]


def test_memory_alert_fires_once_when_crossing_90_percent() -> None:
    monitor = AlertMonitor()
    ticks = feed(monitor, [80.0, 89.9, 93.0, 95.0, 94.0])
    assert ticks[:2] == [[], []]
    assert ticks[2] == [
        AlertEvent(
            time=2.0, gpu_index=1, mig_index=None, kind="memory", message="GPU 1 memory at 93% (74.4GiB / 80.0GiB)"
        )
    ]
    assert ticks[3:] == [[], []]
    assert list(monitor.active) == [("memory", 1, None, None)]


def test_memory_bouncing_around_90_percent_does_not_refire_until_below_88() -> None:
    monitor = AlertMonitor()
    ticks = feed(monitor, [91.0, 89.0, 90.5, 88.5, 91.0, 87.9, 89.0, 90.0])
    kinds = [[(e.kind, e.cleared) for e in events] for events in ticks]
    assert kinds == [
        [("memory", False)],
        [],
        [],
        [],
        [],
        [("memory", True)],
        [],
        [("memory", False)],
    ]
    assert ticks[5][0].message == "GPU 1 memory back down to 88% (70.3GiB / 80.0GiB)"
    assert ticks[5][0].time == 5.0


def test_mig_devices_have_their_own_memory_alert() -> None:
    monitor = AlertMonitor()
    mig = MigSample(index=2, memory_total=10 * GIB, memory_used=int(9.5 * GIB))
    events = monitor.update(snapshot(0.0, gpu(mig_devices=(mig,))))
    assert events == [
        AlertEvent(
            time=0.0, gpu_index=1, mig_index=2, kind="memory", message="GPU 1 MIG 2 memory at 95% (9.5GiB / 10.0GiB)"
        )
    ]


def test_unknown_memory_neither_raises_nor_clears() -> None:
    monitor = AlertMonitor()
    monitor.update(snapshot(0.0, gpu(percent=95.0)))
    assert monitor.update(snapshot(1.0, GpuSample(index=1, memory_total=TOTAL))) == []
    assert ("memory", 1, None, None) in monitor.active


def test_thermal_alert_within_5c_of_slowdown_with_2c_hysteresis() -> None:
    monitor = AlertMonitor()
    temps = [80.0, 85.0, 84.0, 83.5, 82.9, 88.0, 92.0]
    ticks = [
        monitor.update(snapshot(float(t), gpu(temperature=c, temperature_slowdown=90.0)))
        for t, c in enumerate(temps)
    ]
    assert ticks[0] == []
    assert ticks[1] == [
        AlertEvent(
            time=1.0,
            gpu_index=1,
            mig_index=None,
            kind="thermal",
            message="GPU 1 at 85 °C, 5 °C below its slowdown temperature (90 °C)",
        )
    ]
    assert ticks[2:4] == [[], []]
    assert ticks[4] == [
        AlertEvent(time=4.0, gpu_index=1, mig_index=None, kind="thermal", message="GPU 1 cooled to 83 °C", cleared=True)
    ]
    assert [e.message for e in ticks[5]] == [
        "GPU 1 at 88 °C, 2 °C below its slowdown temperature (90 °C)"
    ]
    assert ticks[6] == []


def test_no_thermal_alert_when_the_slowdown_temperature_is_unknown() -> None:
    monitor = AlertMonitor()
    assert monitor.update(snapshot(0.0, gpu(temperature=120.0))) == []


def test_forecast_alert_fires_when_full_within_5_minutes() -> None:
    monitor = AlertMonitor()
    assert monitor.update(snapshot(0.0, gpu()), forecasts(400.0)) == []
    assert monitor.update(snapshot(1.0, gpu()), forecasts(250.0)) == [
        AlertEvent(
            time=1.0, gpu_index=1, mig_index=None, kind="forecast", message="GPU 1 memory full in ~4m10s at +1.0GiB/min"
        )
    ]
    assert monitor.update(snapshot(2.0, gpu()), forecasts(240.0)) == []


def test_a_forecast_that_drops_out_briefly_does_not_clear_the_alert() -> None:
    monitor = AlertMonitor()
    monitor.update(snapshot(0.0, gpu()), forecasts(200.0))
    # Gone for 10 s, back, gone for 14 s, back: never cleared.
    timeline = [(t, None) for t in range(1, 11)] + [(11, 190.0)]
    timeline += [(t, None) for t in range(12, 26)] + [(26, 180.0)]
    for t, seconds in timeline:
        assert monitor.update(snapshot(float(t), gpu()), forecasts(seconds)) == []
    assert ("forecast", 1, None, None) in monitor.active


def test_a_forecast_alert_clears_after_15_s_without_a_close_forecast() -> None:
    monitor = AlertMonitor()
    monitor.update(snapshot(0.0, gpu()), forecasts(200.0))
    events = {
        t: monitor.update(snapshot(float(t), gpu()), forecasts(500.0 if t % 2 else None))
        for t in range(1, 17)
    }
    assert all(events[t] == [] for t in range(1, 16))
    assert events[16] == [
        AlertEvent(
            time=16.0,
            gpu_index=1,
            mig_index=None,
            kind="forecast",
            message="GPU 1 memory no longer forecast to fill within 5m00s",
            cleared=True,
        )
    ]
    assert monitor.active == {}


def test_a_forecast_between_300_and_360_s_keeps_an_alert_but_does_not_raise_one() -> None:
    monitor = AlertMonitor()
    assert monitor.update(snapshot(0.0, gpu()), forecasts(330.0)) == []
    monitor.update(snapshot(1.0, gpu()), forecasts(290.0))
    for t in range(2, 40):
        assert monitor.update(snapshot(float(t), gpu()), forecasts(350.0)) == []
    assert ("forecast", 1, None, None) in monitor.active


def test_mig_forecasts_alert_per_mig_device() -> None:
    monitor = AlertMonitor()
    mig = MigSample(index=0, memory_total=10 * GIB, memory_used=GIB)
    fc = Forecasts(
        gpus={1: NO_FORECAST},
        migs={(1, 0): Forecast(seconds_to_full=30.0, growth_rate=GIB / 60)},
        processes={},
    )
    events = monitor.update(snapshot(0.0, gpu(mig_devices=(mig,))), fc)
    assert [e.message for e in events] == ["GPU 1 MIG 0 memory full in ~30s at +1.0GiB/min"]


def test_a_lost_gpu_alerts_once_and_clears_when_it_answers_again() -> None:
    monitor = AlertMonitor()
    monitor.update(snapshot(0.0, gpu(index=0), gpu(index=3)))
    lost = GpuSample(index=3, lost=True)
    assert monitor.update(snapshot(1.0, gpu(index=0), lost)) == [
        AlertEvent(
            time=1.0, gpu_index=3, mig_index=None, kind="lost", message="GPU 3 is lost: it stopped answering the driver"
        )
    ]
    assert monitor.update(snapshot(2.0, gpu(index=0), lost)) == []
    assert monitor.update(snapshot(3.0, gpu(index=0), gpu(index=3))) == [
        AlertEvent(time=3.0, gpu_index=3, mig_index=None, kind="lost", message="GPU 3 is answering again", cleared=True)
    ]


def test_a_gpu_missing_from_the_snapshot_counts_as_lost() -> None:
    monitor = AlertMonitor()
    monitor.update(snapshot(0.0, gpu(index=0), gpu(index=1)))
    assert monitor.update(snapshot(1.0, gpu(index=0))) == [
        AlertEvent(
            time=1.0, gpu_index=1, mig_index=None, kind="lost", message="GPU 1 is lost: it is no longer reported"
        )
    ]
    assert monitor.update(snapshot(2.0, gpu(index=0))) == []


def test_thresholds_come_from_settings() -> None:
    monitor = AlertMonitor(Thresholds(memory_percent=50.0, forecast_seconds=60.0))
    events = monitor.update(snapshot(0.0, gpu(percent=60.0)), forecasts(100.0))
    assert [e.kind for e in events] == ["memory"]


def test_the_log_keeps_the_latest_events_with_their_times() -> None:
    monitor = AlertMonitor(log_length=3)
    feed(monitor, [95.0, 80.0, 95.0, 80.0, 95.0])
    assert [(e.time, e.cleared) for e in monitor.log] == [(2.0, False), (3.0, True), (4.0, False)]
    assert len(monitor.log) == 3
