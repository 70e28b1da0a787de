"""Keys and footers: the footer matches what has the focus, keys are named alike everywhere, help
lists the keys that move, n / F3 go from match to match, k in read-only mode says why, a filter's
error is shown whole, and notifications never cover the filter box."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from gputop.ui.app import GpuTopApp
from gputop.ui.screens.help import HelpScreen
from gputop.ui.screens.kill import KillScreen
from gputop.ui.widgets.message_line import MessageLine

from .factory import make_app, notices, screen_text, two_gpu_snapshot

SIZES = [(80, 24), (120, 40)]


def footer(app: GpuTopApp) -> str:
    return " ".join(screen_text(app).splitlines()[-1].replace("▏", " ").split())


async def footer_when(app: GpuTopApp, pilot, check: Callable[[str], bool]) -> str:  # type: ignore[no-untyped-def]
    """The footer once ``check`` holds: Textual rebuilds a footer a few messages after the focus or
    the screen changes, later than a key press returns on a busy machine (it read empty then)."""
    deadline = time.monotonic() + 10
    while not check(shown := footer(app)):
        assert time.monotonic() < deadline, f"the footer stayed {shown!r}"
        await pilot.pause(0.02)
    return shown


async def started(app: GpuTopApp, pilot) -> None:  # type: ignore[no-untyped-def]
    app.apply_snapshot(two_gpu_snapshot())
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
async def test_the_footer_follows_the_focus_and_names_keys_alike(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await started(app, pilot)
        main = await footer_when(app, pilot, lambda shown: shown != "")
        assert main.startswith("F1 Help / Filter <> Sort k Kill Enter Process ! Alerts")
        assert main.endswith("Ctrl+P palette")
        await pilot.press("slash")
        assert await footer_when(app, pilot, lambda shown: shown.startswith("Enter")) == "Enter Apply Esc Clear filter"
        await pilot.press("enter", "k")
        assert isinstance(app.screen, KillScreen)
        assert await footer_when(app, pilot, lambda shown: "Cancel" in shown) == "Enter Choose Esc Cancel"
        await pilot.press("escape", "enter")  # the process screen: its own keys, never the panel's
        process = await footer_when(app, pilot, lambda shown: shown.startswith("Esc Back"))
        # r (read again) is in help, not the footer: at 80 columns the palette would cover F1 Help.
        assert process.startswith("Esc Back k Kill g GPU e Environment F1 Help ! Alerts")
        assert process.endswith("Ctrl+P palette")
        assert "Sort" not in process and "Filter" not in process
        await pilot.press("escape", "tab")  # the GPU cards
        cards = await footer_when(app, pilot, lambda shown: shown.startswith("Enter GPU"))
        assert cards.startswith("Enter GPU detail Esc Processes F1 Help")


async def test_help_lists_the_keys_that_move_and_every_name_has_one_case() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("f1")
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        entries = dict((description, keys) for keys, description in screen.entries)
        assert entries["Move the focus between the process panel and the GPU cards"] == "Tab, Shift+Tab"
        assert "PgUp PgDn, Home End" in entries[
            "Move the process cursor (choose a card while the cards have the focus; ← → too)"
        ]
        assert entries["Next match of the filter"] == "n, F3"
        keys = " ".join(entries.values())
        for lowercase in ("esc", "f10", "ctrl+", "enter", "pageup"):
            assert lowercase not in keys.split(", ")
        assert footer(app) == "Esc Close"


@pytest.mark.parametrize("size", SIZES)
async def test_n_and_f3_go_from_match_to_match(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await started(app, pilot)
        await pilot.press("n")
        assert notices(app)[-1] == "no filter: / types one, then n goes from match to match"
        await pilot.press("slash", *"python", "enter")
        assert app.processes.pids() == [101, 102, 204]
        assert app.processes.cursor_row.process.pid == 101
        await pilot.press("n")
        assert app.processes.cursor_row.process.pid == 102
        await pilot.press("f3", "f3")  # 204, then round to the first again
        assert app.processes.cursor_row.process.pid == 101


@pytest.mark.parametrize("size", SIZES)
async def test_k_in_read_only_mode_says_why_nothing_happens(size: tuple[int, int]) -> None:
    app = make_app(readonly=True)
    async with app.run_test(size=size) as pilot:
        await started(app, pilot)
        await pilot.press("k")
        assert not isinstance(app.screen, KillScreen)
        assert notices(app) == ["read-only (--readonly): gputop sends no signals"]
        assert "Kill" not in footer(app)


@pytest.mark.parametrize("size", SIZES)
async def test_a_filter_error_is_shown_whole_and_notifications_keep_off_the_filter_box(
    size: tuple[int, int],
) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await started(app, pilot)
        await pilot.press("slash", *"re:(unclosed group")
        await pilot.pause()
        message = "invalid regular expression: missing ), unterminated subpattern at position 0"
        text = screen_text(app)
        assert message in " ".join(text.split())
        app.notify("a long notification " * 6, title="Alert", timeout=30)
        await pilot.pause()
        box = app.query_one("#filter-bar").region
        line = app.screen.query_one(MessageLine)
        assert line.display and not line.region.overlaps(box), (line.region, box)
        assert message in " ".join(screen_text(app).split())
