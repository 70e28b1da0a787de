"""The process screen: Enter on a process shows it in full, with charts over the session; kill from there."""

from __future__ import annotations

import re

import pytest
from textual.pilot import Pilot

from gputop.core.host.procdetail import ProcessDetail, Readable, Relative
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.screens.kill import KillScreen
from gputop.ui.screens.process import ProcessScreen
from gputop.ui.widgets.history_chart import HistoryChart

from .factory import NOW, SIGTERM, RecordingSource, kill_targets, make_app, notices, screen_text, two_gpu_snapshot

LONG_COMMAND = (
    "python -m vllm.entrypoints.openai.api_server --model mistralai/Mistral-7B-Instruct-v0.3 "
    "--tensor-parallel-size 1 --max-model-len 32768 --gpu-memory-utilization 0.92 --port 8000 --served-model-name m7"
)
VLLM = (102, NOW - 7200)
DETAIL = ProcessDetail(
    102,
    arguments=tuple(LONG_COMMAND.split()),
    user="bob",
    cwd=Readable(("/srv/vllm",)),
    ancestors=(Relative(2011, "containerd-shim", "containerd-shim-runc-v2 -id abc123", "root"),
               Relative(1, "systemd", "/sbin/init", "root")),
    children=(Relative(150, "python", "python -c from multiprocessing.spawn import spawn_main", "bob"),),
    environment=Readable(reason="not readable (owned by bob: only bob or root may read it; gputop runs as alice)"),
    devices=Readable(("/dev/nvidia0", "/dev/nvidia-uvm", "/dev/nvidiactl")),
)


def source_with_detail() -> RecordingSource:
    source = RecordingSource()
    source.details[VLLM] = DETAIL
    return source


async def open_vllm(app: GpuTopApp, pilot: Pilot[int], ticks: int = 40) -> ProcessScreen:
    for n in range(ticks):
        app.apply_snapshot(replace_time(n))
    await pilot.pause()
    await pilot.press("down")  # 102, the second row by GPU memory
    assert app.processes.cursor_row is not None and app.processes.cursor_row.process.pid == 102
    await pilot.press("enter")
    screen = app.screen
    assert isinstance(screen, ProcessScreen)
    await app.workers.wait_for_complete()
    await pilot.pause()
    return screen


def replace_time(n: int):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    return replace(two_gpu_snapshot(m102=20 + n / 10), timestamp=NOW + n)


async def read_all_facts(app: GpuTopApp, pilot: Pilot[int]) -> str:
    """The facts as a user reads them: the screen, then PgDn until nothing new shows."""
    seen = screen_text(app)
    for _ in range(6):
        await pilot.press("pagedown")
        seen += "\n" + screen_text(app)
    return seen


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_whole_command_and_every_fact_are_shown(size: tuple[int, int]) -> None:
    app = make_app(source_with_detail())
    async with app.run_test(size=size) as pilot:
        screen = await open_vllm(app, pilot)
        first = screen_text(app)
        assert first.splitlines()[0].startswith(" PID 102  python  bob  GPU 0")
        # Wrapped, never cut: the whole command line is on the first screen, word after word.
        facts_lines = [line.strip(" │╭╮╰╯─▁▂▃▄▅▆▇█") for line in first.splitlines()[2:12]]
        assert LONG_COMMAND in " ".join(line.removeprefix("Command").strip() for line in facts_lines)
        # Nothing of the facts is cut (the border's hint of the facts out of sight may be).
        assert "…" not in "".join(line for line in first.splitlines() if line.startswith("│"))
        seen = " ".join(re.sub("[│╭╮╰╯─▁▂▃▄▅▆▇█]", " ", await read_all_facts(app, pilot)).split())
        for expected in (
            "User bob",
            "GPU 0 23.9GiB of 80.0GiB (30%) · SM 50% · type C",
            "Host CPU 150.0% · memory 2.0GiB",
            "Container docker:abc123 · its name is not known here",
            "Directory /srv/vllm",
            "Parents 2011 (root) containerd-shim-runc-v2 -id abc123",
            "1 (root) /sbin/init",
            "Children 150 (bob) python -c from multiprocessing.spawn",
            "Devices /dev/nvidia0",
            "/dev/nvidia-uvm",
        ):
            assert expected in seen, expected
        assert "Environment not readable (owned by bob: only bob or root may read it;" in seen
        # Four charts, at least 6 rows each, over the 40 ticks seen.
        charts = list(screen.query(HistoryChart))
        assert len(charts) == 4 and all(chart.size.height >= 6 for chart in charts)
        assert len(app.history.process(VLLM).timestamps) == 40


async def test_k_on_the_process_screen_asks_then_signals_that_process() -> None:
    source = source_with_detail()
    app = make_app(source)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_vllm(app, pilot, ticks=3)
        await pilot.press("k")
        dialog = app.screen
        assert isinstance(dialog, KillScreen)
        assert "PID 102" in kill_targets(app) and "python -m vllm serve" in kill_targets(app)
        await pilot.press("enter")  # SIGTERM, the first choice
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert source.sent == [(VLLM, SIGTERM)]
        assert isinstance(app.screen, ProcessScreen)


async def test_k_in_readonly_says_why_nothing_is_sent() -> None:
    source = source_with_detail()
    app = make_app(source, readonly=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_vllm(app, pilot, ticks=3)
        assert "k Kill" not in screen_text(app).splitlines()[-1]
        await pilot.press("k")
        await pilot.pause()
        assert isinstance(app.screen, ProcessScreen)
        assert notices(app)[-1] == "read-only (--readonly): gputop sends no signals"
        assert source.sent == []


async def test_g_opens_the_gpu_of_the_process_and_esc_comes_back() -> None:
    app = make_app(source_with_detail())
    async with app.run_test(size=(120, 40)) as pilot:
        await open_vllm(app, pilot, ticks=3)
        await pilot.press("g")
        assert isinstance(app.screen, DetailScreen) and app.screen.index == 0
        await pilot.press("escape")
        assert isinstance(app.screen, ProcessScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, ProcessScreen)


async def test_a_process_that_exits_keeps_its_last_figures_and_says_so() -> None:
    from dataclasses import replace

    app = make_app(source_with_detail())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_vllm(app, pilot, ticks=5)
        without = two_gpu_snapshot()
        gpu0 = replace(without.gpus[0], processes=without.gpus[0].processes[:1])
        app.apply_snapshot(replace(without, gpus=(gpu0, without.gpus[1]), timestamp=NOW + 5))
        await pilot.pause()
        assert screen.exited
        assert "exited: gone from the GPU lists" in screen_text(app).splitlines()[0]
        assert "Command      python -m vllm.entrypoints" in screen_text(app)
        await pilot.press("k")
        assert notices(app)[-1] == "PID 102 has exited: nothing to signal"


async def test_enter_on_the_gpu_detail_screen_opens_the_process_selected_there() -> None:
    source = source_with_detail()
    app = make_app(source)
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("g")  # the selected process, 101, is on GPU 0
        assert isinstance(app.screen, DetailScreen)
        await pilot.press("down", "enter")  # 102 on GPU 0's own list
        screen = app.screen
        assert isinstance(screen, ProcessScreen) and screen.identity == VLLM
