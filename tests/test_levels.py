"""One set of colour cut-offs: what the cards, ``--once`` and the cluster view call fine, a warning and an alarm."""

from __future__ import annotations

from gputop.core.analysis.levels import Level, load_level, temperature_level


def test_a_load_warns_from_70_percent_and_alarms_from_90() -> None:
    assert [load_level(p) for p in (None, 0.0, 69.9, 70.0, 89.9, 90.0, 120.0)] == [
        None, Level.OK, Level.OK, Level.WARN, Level.WARN, Level.ALARM, Level.ALARM
    ]


def test_a_temperature_warns_within_15_degrees_of_slowdown_and_alarms_within_5() -> None:
    assert [temperature_level(t, 87.0) for t in (None, 71.9, 72.0, 81.9, 82.0)] == [
        None, Level.OK, Level.WARN, Level.WARN, Level.ALARM
    ]
    # No slowdown temperature from the driver: 85 °C is assumed.
    assert [temperature_level(t, None) for t in (69.9, 70.0, 80.0)] == [Level.OK, Level.WARN, Level.ALARM]
