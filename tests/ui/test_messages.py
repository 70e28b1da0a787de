"""Messages never cover data (issue 34, point 6): each goes on the message line of the screen it was raised
on, the footer's row, and stays with that screen; a signal sent to several processes is one message."""

from __future__ import annotations

import pytest
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Footer

from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.screens.process import ProcessScreen
from gputop.ui.widgets.message_line import MessageLine
from tests.ui.factory import SIGTERM, RecordingSource, notices, screen_text, two_gpu_snapshot

SIZES = [(80, 24), (120, 40)]
LONG = "a settings warning long enough to need more than one line at any of these sizes " * 2


def app_with_warnings(source: RecordingSource | None = None) -> GpuTopApp:
    """An app fed by the test, with two settings warnings to say at start (as a file with unknown keys)."""
    return GpuTopApp(
        Sampler(source or RecordingSource()), RunConfig(interval_s=1.0), start_sampler=False,
        settings_warnings=[LONG, "unknown column ignored: flops"],
    )


def covered(app: GpuTopApp) -> list[tuple[Widget, Region]]:
    """The widgets of the screen on top that the message line covers (the footer and its keys aside)."""
    line = app.screen.query_one(MessageLine)
    assert line.display
    footer = app.screen.query_one(Footer)
    return [
        (widget, widget.region)
        for widget in app.screen.query("*")
        if widget is not line and widget is not footer and footer not in widget.ancestors
        and widget.display and widget.region.overlaps(line.region)
    ]


@pytest.mark.parametrize("size", SIZES)
async def test_the_messages_at_start_take_the_footers_row_and_cover_no_card_row_or_title(size: tuple[int, int]) -> None:
    app = app_with_warnings()
    async with app.run_test(size=size) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        line = app.screen.query_one(MessageLine)
        assert line.region == Region(0, size[1] - 1, size[0], 1) == app.screen.query_one(Footer).region
        assert covered(app) == []
        # One line, cut with a mark; the next warning waits its turn.
        bottom = screen_text(app).splitlines()[-1]
        assert bottom.startswith(" Settings: a settings warning long enough") and bottom.rstrip().endswith("…")
        assert notices(app) == [LONG, "unknown column ignored: flops"]


@pytest.mark.parametrize("size", SIZES)
async def test_a_signal_sent_to_three_tagged_processes_is_one_message(size: tuple[int, int]) -> None:
    source = RecordingSource()
    app = app_with_warnings(source)
    async with app.run_test(size=size) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("escape")  # the settings' warnings read: a key takes none of them away
        await pilot.press("space", "space", "space", "k", "enter")  # tags 101, 102 and 204; SIGTERM
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [(identity[0], number) for identity, number in source.sent] == [(101, SIGTERM), (102, SIGTERM),
                                                                               (204, SIGTERM)]
        said = [note for note in app.messages.shown() if note.title == "Signal sent"]
        assert [(note.message, note.severity) for note in said] == [
            ("SIGTERM sent to PIDs 101, 102, 204 (test)", "information")
        ]


@pytest.mark.parametrize("size", SIZES)
async def test_a_message_raised_on_the_main_screen_stays_there(size: tuple[int, int]) -> None:
    app = app_with_warnings()
    async with app.run_test(size=size) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("enter")  # the process screen of the selected process
        await pilot.pause()
        assert isinstance(app.screen, ProcessScreen)
        assert not app.screen.query(MessageLine), "the main screen's message followed onto the process screen"
        assert "Esc Back" in screen_text(app).splitlines()[-1]
        # One raised here is this screen's, on its footer's row, over none of its lines.
        app.notify("PID 101 has exited: nothing to signal", severity="warning")
        await pilot.pause()
        assert covered(app) == []
        assert screen_text(app).splitlines()[-1].startswith(" PID 101 has exited: nothing to signal")
        await pilot.press("escape")  # back on the main screen: its own message again, not the process screen's
        await pilot.pause()
        assert screen_text(app).splitlines()[-1].startswith(" Settings: ")
        await pilot.press("g")  # the detail screen of the selected process's GPU
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)
        assert not app.screen.query(MessageLine)
        app.notify(LONG, title="Settings", severity="error")
        await pilot.pause()
        assert covered(app) == []
