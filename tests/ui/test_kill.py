"""Kill: the dialog, tags, simulated and real signals, refused PIDs, permission denied, read-only."""

from __future__ import annotations

# The signal is sent while the test acts as another user (os.seteuid), who cannot read this Python's files:
# what a running gputop has loaded by then (the worker threads' pool, Rich's tables of character widths, its
# traceback for an error) is loaded beforehand.
import concurrent.futures.thread  # noqa: F401
import os
import shutil
import subprocess
from collections.abc import Iterator

import psutil
import pytest
import rich.traceback  # noqa: F401
from rich.cells import cell_len

from gputop.ui.app import GpuTopApp
from gputop.ui.screens.help import HelpScreen
from gputop.ui.screens.kill import KillScreen

from .factory import (
    SIGKILL,
    SIGTERM,
    RecordingSource,
    StaticSource,
    gpu,
    kill_targets,
    make_app,
    notices,
    proc,
    snapshot,
    two_gpu_snapshot,
)

SIZE = (120, 40)


async def test_k_names_the_selected_process_and_enter_sends_sigterm() -> None:
    source = RecordingSource()
    app = make_app(source)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("k")
        screen = app.screen
        assert isinstance(screen, KillScreen)
        text = kill_targets(app)
        assert text.split() == ["PID", "101", "alice", "GPU", "0", "40.0GiB", "python", "train.py", "--bs", "16"]
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert source.sent == [((101, 1_700_000_000.0 - 3600), SIGTERM)]
        assert notices(app) == ["SIGTERM sent to PID 101 (test)"]
        assert not isinstance(app.screen, KillScreen)


async def test_escape_cancels_the_kill() -> None:
    source = RecordingSource()
    app = make_app(source)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("f9")
        assert isinstance(app.screen, KillScreen)
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        assert source.sent == []
        assert not isinstance(app.screen, KillScreen)


async def test_space_tags_and_kill_targets_every_tagged_process_with_sigkill() -> None:
    source = RecordingSource()
    app = make_app(source)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        table = app.processes
        await pilot.press("space", "down", "space")  # tags 101, skips 102, tags 204
        assert [row.process.pid for row in table.tagged_rows()] == [101, 204]
        assert table.cursor_row is not None and table.cursor_row.process.pid == 203
        rendered = ["".join(s.text for s in table.render_line(1 + n)) for n in range(3)]
        assert [text.startswith("●") for text in rendered] == [True, False, True]
        assert "tagged: 2" in str(table.border_title)
        await pilot.press("k")
        screen = app.screen
        assert isinstance(screen, KillScreen)
        listed = kill_targets(app).splitlines()
        assert [entry.split()[1] for entry in listed] == ["101", "204"]
        await pilot.press("down", "enter")  # SIGKILL
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [(identity[0], number) for identity, number in source.sent] == [(101, SIGKILL), (204, SIGKILL)]
        assert notices(app) == ["SIGKILL sent to PIDs 101, 204 (test)"]  # one message for the signal
        # Untagged at once, marks and the title's count, not a tick later.
        assert table.tagged_rows() == [] and "tagged" not in str(table.border_title)
        rendered = ["".join(s.text for s in table.render_line(1 + n)) for n in range(3)]
        assert not any(text.startswith("●") for text in rendered)


async def test_U_untags_everything() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("space", "space", "U")
        assert app.processes.tagged_rows() == []


async def test_dialog_shows_hostile_command_lines_as_plain_escaped_text() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        command = "evil\x1b[2J [bold red]boom[/] \x07"
        app.apply_snapshot(snapshot(gpu(0, [proc(9, 0, 1, "m[i]a", command)])))
        await pilot.pause()
        await pilot.press("k")
        assert isinstance(app.screen, KillScreen)
        text = kill_targets(app)
        assert "evil\\x1b[2J [bold red]boom[/] \\x07" in text
        assert "m[i]a" in text
        row_text = "".join(s.text for s in app.processes.render_line(1))
        # Escaped in the row too (cut in the middle at this width: GROWTH keeps its room).
        assert "evil\\x1b[2J [bold " in row_text and "]boom[/] \\x07" in row_text and "\x1b" not in row_text


# -- real processes --------------------------------------------------------------------


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "600"])
    yield process
    if process.poll() is None:
        process.kill()
        process.wait()


def real_app(pid: int, started: float) -> GpuTopApp:
    app = make_app(StaticSource())
    app.apply_snapshot(snapshot(gpu(0, [proc(pid, 0, 8, "someone", "sleep 600", started=started)])))
    return app


async def test_real_process_is_terminated(sleeper: subprocess.Popen[bytes]) -> None:
    app = real_app(sleeper.pid, psutil.Process(sleeper.pid).create_time())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("k", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert sleeper.wait(timeout=5) == -15
        assert notices(app) == [f"SIGTERM sent to PID {sleeper.pid}"]


async def test_reused_pid_is_refused_and_left_alive(sleeper: subprocess.Popen[bytes]) -> None:
    started_long_ago = psutil.Process(sleeper.pid).create_time() - 100
    app = real_app(sleeper.pid, started_long_ago)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("k", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert sleeper.poll() is None
        assert notices(app) == [f"refused: PID {sleeper.pid} now belongs to another process: not signalled"]
        assert [note.severity for note in app.messages.shown()] == ["error"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to start a process as nobody")
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
async def test_permission_denied_names_the_owner() -> None:
    target = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "600"])
    try:
        # setpriv execs sleep in place: same PID; wait until it has become sleep.
        for _ in range(100):
            if psutil.Process(target.pid).name() == "sleep":
                break
            await __import__("asyncio").sleep(0.01)
        app = real_app(target.pid, psutil.Process(target.pid).create_time())
        cell_len("SIGTERM …")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("k")
            os.seteuid(1234)  # the sender is now an ordinary user
            try:
                await pilot.press("enter")
                await app.workers.wait_for_complete()
            finally:
                os.seteuid(0)
            await pilot.pause()
            assert target.poll() is None
            assert notices(app) == [
                f"SIGTERM to PID {target.pid}: permission denied (owned by nobody: only nobody or root may signal it;"
                " gputop runs as uid 1234)"
            ]
            assert app.is_running
    finally:
        target.kill()
        target.wait()


async def test_readonly_has_no_kill_anywhere() -> None:
    source = RecordingSource()
    app = make_app(source, readonly=True)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("k", "f9", "space")
        assert not isinstance(app.screen, KillScreen)
        assert app.processes.tagged == set()
        footer_keys = [key.description for key in app.query("FooterKey")]
        assert "Kill" not in footer_keys and "Filter" in footer_keys
        palette = [command.title for command in app.get_system_commands(app.screen)]
        assert "Kill" not in palette and "Tag process" not in palette and "Freeze" in palette
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        described = [description for _keys, description in app.screen.entries]
        assert "Kill" not in described and "Tag process" not in described and "Untag all" not in described
        assert source.sent == []
        assert "read-only" in str(app.query_one("#title-bar").content)
