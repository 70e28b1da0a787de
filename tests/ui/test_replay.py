"""Record, then replay: the same values on screen; pause, step, speed and jump keys; damage; no kill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.pilot import Pilot

from gputop.cli.main import main
from gputop.core.output.snapshot_json import alert_to_dict
from gputop.core.recording.record import Recorder, read_recording
from gputop.core.recording.replay import Replay, clock_text
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.recorded import ReplaySource
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.help import HelpScreen
from gputop.ui.screens.jump import JumpScreen
from gputop.ui.screens.kill import KillScreen
from gputop.ui.widgets.gpu_card import GpuCard

from .factory import NOW, demo_snapshots, make_app, notices

SIZE = (120, 40)


def replay_app(path: Path, paused: bool = True, speed: float = 1.0) -> GpuTopApp:
    replay = Replay(read_recording(str(path)), speed=speed, paused=paused)
    return GpuTopApp(Sampler(ReplaySource(replay)), RunConfig(), replay=replay)


async def jump(pilot: Pilot[int], text: str) -> None:
    """Press j, wait for the box, type ``text`` and Enter."""
    await pilot.press("j")
    await pilot.pause()
    await pilot.press(*text, "enter")
    await pilot.pause()


def title(app: GpuTopApp) -> str:
    return str(app.query_one("#title-bar").content)


@pytest.fixture
def ten(tmp_path: Path) -> Path:
    """Ten demo snapshots, one a second from NOW."""
    path = tmp_path / "ten.jsonl"
    recorder = Recorder(str(path))
    for one in demo_snapshots(2, 10):
        recorder.write(one)
    recorder.close()
    return path


async def test_gputop_demo_record_then_replay_shows_what_was_recorded(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    assert main(["--demo", "--demo-gpus", "2", "record", str(path), "--duration", "0.5", "--interval", "0.1"]) == 0
    first = json.loads(path.read_text().splitlines()[0])
    assert [g["forecast"] for g in first["gpus"]] == [{"seconds_to_full": None, "growth_rate": None}] * 2
    app = replay_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        recorded = sorted(
            ((p["gpu_memory"], p["pid"]) for g in first["gpus"] for p in g["processes"]), key=lambda m: (-m[0], m[1])
        )
        assert [(row.process.gpu_memory, row.process.pid) for row in app.processes.rows] == recorded
        cards = list(app.query(GpuCard))
        shown = [c.content.gpu for c in cards if c.content]
        assert [(gpu.memory_used, gpu.temperature) for gpu in shown] == [
            (g["memory"]["used"], g["temperature"]["current"]) for g in first["gpus"]
        ]
        assert "REPLAY" in title(app) and "paused" in title(app)


async def test_step_keys_move_one_snapshot_and_pause(ten: Path) -> None:
    # Playing at a quarter of the recorded pace (a tick every 4 s); on a loaded machine one may
    # still come before the key does.
    app = replay_app(ten, paused=False, speed=0.25)
    async with app.run_test(size=SIZE) as pilot:
        assert app.replay is not None
        before = app.replay.position
        await pilot.press("full_stop")
        at = app.replay.position
        assert at == before + 1 and app.replay.paused
        assert f"{at + 1}/10 {clock_text(NOW + at)} +{at}s 0.25x paused" in title(app)
        await pilot.press("full_stop", "full_stop", "full_stop")
        assert app.replay.position == at + 3
        await pilot.press("comma", "comma")
        assert app.replay.position == at + 1
        assert app.snapshot is not None and app.snapshot.timestamp == NOW + at + 1
        await pilot.press(*["comma"] * (at + 2))
        assert app.replay.position == 0
        # On the process panel ← and → scroll the commands (as live); the replay stays where it is.
        await pilot.press("right", "right", "left")
        assert app.replay.position == 0 and app.processes.command.start == 8


async def test_brackets_change_the_speed_between_a_quarter_and_sixteen(ten: Path) -> None:
    app = replay_app(ten)
    async with app.run_test(size=SIZE) as pilot:
        assert app.replay is not None
        await pilot.press("right_square_bracket")
        assert app.replay.speed == 2.0 and " 2x paused" in title(app)
        await pilot.press(*["right_square_bracket"] * 5)
        assert app.replay.speed == 16.0
        await pilot.press(*["left_square_bracket"] * 8)
        assert app.replay.speed == 0.25 and " 0.25x paused" in title(app)


async def test_space_plays_at_the_recorded_pace_and_pauses(ten: Path) -> None:
    app = replay_app(ten)
    async with app.run_test(size=SIZE) as pilot:
        assert app.replay is not None
        await pilot.press(*["right_square_bracket"] * 2)  # 4x: a snapshot every 250 ms
        await pilot.press("space")
        assert not app.replay.paused
        await pilot.pause(0.6)
        await pilot.press("space")
        moved = app.replay.position
        assert app.replay.paused and 1 <= moved <= 8
        await pilot.pause(0.2)
        assert app.replay.position == moved


async def test_playing_to_the_end_pauses_and_says_so(ten: Path) -> None:
    app = replay_app(ten)
    async with app.run_test(size=SIZE) as pilot:
        assert app.replay is not None
        await jump(pilot, "+8s")
        await pilot.press(*["right_square_bracket"] * 4, "space")
        for _ in range(40):
            if app.replay.paused:
                break
            await pilot.pause(0.05)
        assert app.replay.position == 9 and app.replay.paused
        assert notices(app)[-1] == "replay paused at the end of the recording"


async def test_j_jumps_to_a_relative_time_or_a_time_of_day(ten: Path) -> None:
    app = replay_app(ten)
    async with app.run_test(size=SIZE) as pilot:
        assert app.replay is not None
        await pilot.press("j")
        await pilot.pause()
        assert isinstance(app.screen, JumpScreen)
        await pilot.press(*"+5s", "enter")
        assert app.replay.position == 5
        await jump(pilot, "-2s")
        assert app.replay.position == 3
        await jump(pilot, clock_text(NOW + 7))
        assert app.replay.position == 7
        assert app.snapshot is not None and app.snapshot.timestamp == NOW + 7
        assert len(app.history) == 8  # rebuilt from the snapshots before the jump
        await jump(pilot, "+1m")
        assert app.replay.position == 9
        await jump(pilot, "soon")
        assert app.replay.position == 9
        assert notices(app)[-1] == "not a time: 'soon' (use HH:MM:SS, +90s or -2m)"


async def test_a_truncated_recording_replays_up_to_the_damage_and_says_where(ten: Path) -> None:
    lines = ten.read_text().splitlines(keepends=True)
    ten.write_text("".join(lines[:6]) + lines[6][: len(lines[6]) // 2])
    app = replay_app(ten)
    async with app.run_test(size=SIZE) as pilot:
        damage = (
            f"{ten}: the file ends or breaks after line 6 (the last line was cut off); "
            "replaying the 6 snapshots before it"
        )
        assert notices(app)[-1] == damage
        assert "⚠ damaged: ends after snapshot 6" in title(app)
        await pilot.press(*["full_stop"] * 8)
        assert app.replay is not None and app.replay.position == 5
        assert "6/6" in title(app) and "⚠ damaged" in title(app)


async def test_kill_tag_freeze_and_interval_are_gone_in_a_replay(ten: Path) -> None:
    app = replay_app(ten)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("k")
        assert not isinstance(app.screen, KillScreen)
        await pilot.press("space")  # pause/play, not tag
        assert app.processes.tagged == set()
        assert app.replay is not None and not app.replay.paused
        await pilot.press("space", "f", "plus")
        assert not app.frozen and app.sampling.interval_s == 1.0
        described = [description for _keys, description in app.key_control.help_entries()]
        assert "Kill" not in described and "Tag process" not in described and "Freeze" not in described
        assert {"Pause/play", "Step forward", "Step back", "Faster", "Slower", "Jump to a time"} <= set(described)
        palette = [command.title for command in app.get_system_commands(app.screen)]
        assert "Kill" not in palette and "Jump to a time" in palette
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)


async def test_replay_keys_are_absent_from_the_live_app() -> None:
    app = make_app()
    async with app.run_test(size=SIZE):
        described = [description for _keys, description in app.key_control.help_entries()]
        assert "Pause/play" not in described and "Jump to a time" not in described
        assert "Kill" in described


# -- recording while the TUI runs --------------------------------------------------------


async def test_record_writes_each_tick_with_forecast_and_alerts(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    app = make_app()
    app.feed.recorder = Recorder(str(path))
    async with app.run_test(size=SIZE) as pilot:
        for one in demo_snapshots(2, 5):
            app.apply_snapshot(one)
        await pilot.pause()
        assert "● REC" in title(app)
        logged = [alert_to_dict(event) for event in app.feed.watcher.monitor.log]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["timestamp"] for line in lines] == [NOW + step for step in range(5)]
    assert all("forecast" in g for line in lines for g in line["gpus"])
    assert all("growth_rate" in p for line in lines for g in line["gpus"] for p in g["processes"])
    assert [alert for line in lines for alert in line["alerts"]] == logged
    # The demo's idle notebook lands on GPU 1 of a two-GPU demo: idle already, alerted at once. Both GPUs'
    # memory is over 90 % from the start: alerted once that has held 3 s, on the 4th tick.
    assert [[(a["gpu"], a["kind"]) for a in line["alerts"]] for line in lines] == [
        [(1, "idle")], [], [], [(0, "memory"), (1, "memory")], []
    ]
    recording = read_recording(str(path))
    assert [s.timestamp for s in recording.snapshots] == [NOW + step for step in range(5)]
    assert recording.extras[3]["alerts"] == lines[3]["alerts"]


async def test_a_recording_write_error_is_notified_once_and_the_app_goes_on() -> None:
    app = make_app()
    app.feed.recorder = Recorder("/dev/full")
    async with app.run_test(size=SIZE) as pilot:
        for one in demo_snapshots(1, 3):
            app.apply_snapshot(one)
        await pilot.pause()
        stopped = [n for n in notices(app) if "/dev/full" in n]
        assert stopped == ["cannot write /dev/full: No space left on device; gputop goes on without recording"]
        assert app.feed.recorder is None and app.snapshot is not None and app.snapshot.timestamp == NOW + 2


# -- the command line -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "gputop: cannot read {path}: No such file or directory\n"),
        ("", "gputop: {path} holds no snapshots\n"),
        (
            "{not json\n",
            "gputop: nothing to replay: {path}: line 1 is damaged (Expecting property name enclosed in double "
            "quotes: line 1 column 2 (char 1)); replaying the 0 snapshots before it\n",
        ),
    ],
)
def test_replay_of_a_missing_empty_or_broken_file_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "r.jsonl"
    if content is not None:
        path.write_text(content)
    assert main(["replay", str(path)]) == 2
    assert capsys.readouterr().err == message.format(path=path)


def test_record_option_is_refused_with_once_json_and_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--demo", "--record", "x.jsonl", "--json"]) == 2
    assert capsys.readouterr().err == (
        "gputop: --record records the live TUI; use `gputop record FILE` to record without it\n"
    )
