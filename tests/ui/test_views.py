"""View keys: compact cards, hiding panels, freeze, refresh interval, quit, sizes, lost GPUs, errors."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import pytest
from textual.command import CommandList
from textual.pilot import Pilot

from gputop.core.model import GpuSample, HostSample
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.help import HelpScreen
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.host_strip import HostStrip

from .factory import HOST, NOW, StaticSource, gpu, make_app, notices, proc, snapshot, two_gpu_snapshot

SIZE = (120, 40)


def card_text(card: GpuCard) -> str:
    return "\n".join("".join(s.text for s in card.render_line(y)) for y in range(card.content_size.height))


async def test_c_toggles_compact_cards() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        cards = list(app.query(GpuCard))
        assert [card.compact for card in cards] == [False, False]
        assert [card.outer_size.height for card in cards] == [5, 5]
        await pilot.press("c")
        await pilot.pause()
        assert [card.compact for card in cards] == [True, True]
        assert [card.outer_size.height for card in cards] == [1, 1]
        await pilot.press("c")
        await pilot.pause()
        assert [card.compact for card in cards] == [False, False]


async def test_many_gpus_at_80x24_are_compact_one_line_each_with_processes_visible() -> None:
    gpus = [gpu(n, [proc(100 + n, n, 1 + n)]) for n in range(8)]
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.apply_snapshot(snapshot(*gpus))
        await pilot.pause()
        cards = list(app.query(GpuCard))
        assert len(cards) == 8 and all(card.compact for card in cards)
        assert all(card.region.height == 1 and card.region.y < 24 for card in cards)
        table = app.processes
        assert table.region.height >= 6
        assert table.pids()[:3] == [107, 106, 105]


async def test_p_hides_and_shows_the_process_panel_and_s_the_host_strip() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("p")
        assert app.processes.display is False
        await pilot.press("p")
        assert app.processes.display is True
        await pilot.press("s")
        assert app.query_one(HostStrip).display is False
        await pilot.press("s")
        assert app.query_one(HostStrip).display is True


async def test_f_freezes_the_display_until_pressed_again() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("f")
        assert "FROZEN" in str(app.query_one("#title-bar").content)
        assert "FROZEN" in app.sub_title
        app.apply_snapshot(two_gpu_snapshot(m203=70))
        await pilot.pause()
        assert app.processes.pids() == [101, 102, 204, 203, 305]
        await pilot.press("f")
        assert app.processes.pids() == [203, 101, 102, 204, 305]
        assert "FROZEN" not in str(app.query_one("#title-bar").content)


async def test_brackets_change_the_interval_down_to_a_tenth_of_a_second() -> None:
    app = make_app(interval_s=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("left_square_bracket")
        assert app.sampling.interval_s == 2.0
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert app.sampling.interval_s == 0.5
        await pilot.press(*["right_square_bracket"] * 4)
        assert app.sampling.interval_s == 0.1
        assert app.sub_title == "every 0.1s"
        assert "every 0.1s" in str(app.query_one("#title-bar").content)


async def test_a_bracket_retimes_the_running_sampler_thread() -> None:
    app = GpuTopApp(Sampler(StaticSource()), RunConfig(interval_s=0.5), start_sampler=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("left_square_bracket")
        assert app.sampling.thread is not None and app.sampling.thread.interval_s == 1.0


async def test_q_f10_and_ctrl_c_quit() -> None:
    for key in ("q", "f10", "ctrl+c"):
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(key)
            await pilot.pause()
            assert not app.is_running, key


async def test_help_lists_every_key() -> None:
    app = make_app()  # one app: each key opens help from the main screen, Esc closes it again
    async with app.run_test(size=SIZE) as pilot:
        for key in ("f1", "question_mark", "h"):
            await pilot.press(key)
            screen = app.screen
            assert isinstance(screen, HelpScreen), key
            await pilot.press("escape")
            assert not isinstance(app.screen, HelpScreen), key
    entries = {description: keys for keys, description in screen.entries}
    assert entries["Help"] == "F1, ?, h"
    assert entries["Filter: text (command, user, PID, container), re:REGEX, or is:idle for idle processes"] == "/, F4"
    assert entries["Sort by idle time"] == "D"
    assert entries["Kill"] == "k, F9"
    assert entries["Sort column left"] == "<" and entries["Sort column right"] == ">"
    assert entries["Alerts"] == "!" and entries["Save settings"] == "S"
    assert entries["Only that GPU's processes"] == "0-9"
    assert entries["Quit"] == "q, F10, Ctrl+C"
    assert entries["GPU detail"] == "g"
    assert entries["The process in full: command, parents, environment, devices, charts"] == "Enter"
    assert entries["Tree: workers under their launcher, GPU memory summed on the parent"] == "t, F5"
    assert entries["Sort by…"] == "F6"
    assert {"Tag process", "Untag all", "Invert sort order", "Freeze", "Compact", "User"} <= set(entries)


async def test_command_palette_reaches_every_action() -> None:
    app = make_app()
    async with app.run_test(size=SIZE):
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Kill", "Filter", "Freeze", "Sort by CPU %", "Only GPU 3", "Slower refresh", "GPU detail"} <= titles


async def _palette_titles(app: GpuTopApp, pilot: Pilot[int], query: str) -> list[str]:
    """The titles the open command palette lists for ``query`` typed into it."""
    await pilot.press(*query)
    for _ in range(40):  # the palette searches in a worker
        await pilot.pause(0.05)
        options = app.screen.query_one(CommandList).options
        titles = [str(option.prompt).split("\n")[0] for option in options]
        if titles and not titles[0].startswith("Align("):
            return titles
    return []


async def test_the_open_palette_finds_gputop_s_actions_and_runs_the_one_chosen() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert "Freeze" in await _palette_titles(app, pilot, "freeze")
        await pilot.press("enter")
        await pilot.pause()
        assert app.frozen is True
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert "Sort by CPU %" in await _palette_titles(app, pilot, "sort by cpu")


async def test_lost_gpu_stays_on_screen_marked_lost() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(snapshot(gpu(0), gpu(1, lost=True)))
        await pilot.pause()
        lost = app.query_one("#gpu-1", GpuCard)
        assert lost.has_class("-lost")
        assert "GPU lost" in card_text(lost)
        assert "LOST" in str(lost.border_title)


async def test_card_shows_memory_utilisation_temperature_power() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for n in range(3):  # a tick a second: the sparklines draw from the history, one point a tick
            app.apply_snapshot(replace(two_gpu_snapshot(m101=30 + 10 * n), timestamp=NOW + n))
        await pilot.pause()
        text = card_text(app.query_one("#gpu-0", GpuCard))
        assert "MEM" in text and "70.5/80.0GiB  88%" in text
        assert "UTIL" in text and "50%" in text
        assert "60°C/87°C" in text and "300W/700W" in text
        assert text.splitlines()[0].rstrip().endswith("▅▆▇")  # the memory sparkline rising


async def test_too_small_terminal_says_so_instead_of_crashing() -> None:
    app = make_app()
    async with app.run_test(size=(20, 5)) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        assert app.query_one("#too-small").display is True
        assert app.query_one("#main").display is False
    app = make_app()
    async with app.run_test(size=(40, 10)) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        assert app.query_one("#too-small").display is False


async def test_sixteen_gpus_reflow_into_two_columns_on_a_wide_terminal() -> None:
    # 8 rows of full cards take 40 lines: at 51 they fit above the panel's 5 rows (at 50 they would
    # scroll a line, and gputop folds them).
    for height, compact in ((51, False), (30, True)):
        app = make_app()
        async with app.run_test(size=(200, height)) as pilot:
            app.apply_snapshot(snapshot(*(gpu(n) for n in range(16))))
            await pilot.pause()
            cards = list(app.query(GpuCard))
            assert len(cards) == 16
            assert len({card.region.x for card in cards}) == 2
            assert all(card.compact is compact for card in cards)
            assert all(card.region.bottom <= height - 1 for card in cards)


class _FailingSource(StaticSource):
    calls = 0  # how many samples failed (counted on the sampler thread)

    def sample(self) -> tuple[GpuSample, ...]:
        self.calls += 1
        raise RuntimeError("NVML went away")

    def sample_host(self) -> HostSample | None:
        return HOST


async def test_sampler_errors_are_notified_once_and_the_app_keeps_running() -> None:
    source = _FailingSource()
    app = GpuTopApp(Sampler(source), RunConfig(interval_s=0.1), start_sampler=True)
    async with app.run_test(size=SIZE) as pilot:
        # Waits on what happened, not on a fixed time: on a busy machine 0.5 s held fewer ticks.
        deadline = time.monotonic() + 20
        while source.calls < 4 or not notices(app):
            assert time.monotonic() < deadline, f"{source.calls} failed samples, notices {notices(app)}"
            await asyncio.sleep(0.05)
        await pilot.pause()
        assert notices(app) == ["RuntimeError: NVML went away"]
        assert app.is_running


async def test_the_first_frame_already_shows_8_gpus_and_128_processes() -> None:
    """The app samples at mount, so the first frame has data; its speed is measured in tests/bench."""
    gpus = tuple(gpu(n, [proc(1000 + 16 * n + k, n, 0.25 + k / 64) for k in range(16)]) for n in range(8))
    app = GpuTopApp(Sampler(StaticSource(gpus)), RunConfig(interval_s=3600), start_sampler=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert len(app.query(GpuCard)) == 8
        assert len(app.processes.rows) == 128


async def test_runs_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app()
    assert app.no_color
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        assert app.processes.pids() == [101, 102, 204, 203, 305]
