"""The replay position: pace, steps, speeds and jump targets, without a clock."""

from __future__ import annotations

import re
import time

import pytest

from gputop.core.model import HostSample, Snapshot
from gputop.core.recording.record import Recording
from gputop.core.recording.replay import MAX_GAP_S, Replay

T0 = 1_700_000_000.0


def recording(*offsets: float) -> Recording:
    host = HostSample()
    return Recording(snapshots=[Snapshot(timestamp=T0 + o, hostname="h", host=host, gpus=()) for o in offsets])


def test_delay_is_the_recorded_gap_over_the_speed_and_none_when_paused_or_at_the_end() -> None:
    replay = Replay(recording(0, 2, 3, 3600))
    assert replay.delay_s() == 2.0
    replay.faster()
    assert replay.delay_s() == 1.0
    replay.paused = True
    assert replay.delay_s() is None
    replay.paused = False
    replay.step(2)
    assert replay.delay_s() == MAX_GAP_S / 2  # an hour's gap is shortened
    replay.advance()
    assert replay.at_end and replay.delay_s() is None and replay.advance() is False


def test_speeds_go_from_a_quarter_to_sixteen() -> None:
    replay = Replay(recording(0))
    assert [replay.faster() for _ in range(6)] == [2.0, 4.0, 8.0, 16.0, 16.0, 16.0]
    assert [replay.slower() for _ in range(8)] == [8.0, 4.0, 2.0, 1.0, 0.5, 0.25, 0.25, 0.25]


def test_steps_stop_at_either_end() -> None:
    replay = Replay(recording(0, 1, 2))
    assert replay.step(5) == 2
    assert replay.step(-1) == 1
    assert replay.step(-9) == 0


@pytest.mark.parametrize(
    ("start", "text", "position"),
    [(0, "+90s", 3), (0, "+1m30s", 3), (3, "-2m", 0), (1, "+1h", 4), (0, "+30", 1), (4, "-61s", 1)],
)
def test_relative_jumps(start: int, text: str, position: int) -> None:
    replay = Replay(recording(0, 30, 60, 90, 120))
    replay.position = start
    assert replay.seek_time(replay.jump_target(text)) == position


def test_a_time_of_day_jumps_to_the_snapshot_taken_then_or_just_before() -> None:
    replay = Replay(recording(0, 30, 60, 90, 120))
    target = time.strftime("%H:%M:%S", time.localtime(T0 + 75))
    assert replay.seek_time(replay.jump_target(target)) == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("soon", "not a time: 'soon' (use HH:MM:SS, +90s or -2m)"),
        ("25:00", "not a time of day: '25:00'"),
    ],
)
def test_bad_jumps_say_why(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Replay(recording(0)).jump_target(text)


def test_a_time_outside_the_recording_is_refused() -> None:
    replay = Replay(recording(0, 60))
    outside = time.strftime("%H:%M:%S", time.localtime(T0 - 3600))
    with pytest.raises(ValueError, match="is outside the recording"):
        replay.jump_target(outside)


def test_json_carries_a_null_forecast_and_growth_without_history(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from gputop.cli.main import main

    assert main(["--demo", "--demo-gpus", "4", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    no_forecast = {"seconds_to_full": None, "growth_rate": None}  # two samples: growth not known yet, not 0
    assert [gpu["forecast"] for gpu in document["gpus"]] == [no_forecast] * 4
    assert [mig["forecast"] for mig in document["gpus"][2]["mig_devices"]] == [no_forecast] * 3
    assert {p["growth_rate"] for gpu in document["gpus"] for p in gpu["processes"]} == {None}
    # The alerts raised now: the demo's GPU 1 always runs at 94% of its memory.
    assert ("memory", 1) in [(a["kind"], a["gpu"]) for a in document["alerts"]]
    keys = ("time", "gpu", "mig_device", "kind", "message", "cleared", "subject", "updated")
    assert {tuple(a) for a in document["alerts"]} == {keys}
    assert not any(a["cleared"] for a in document["alerts"])
