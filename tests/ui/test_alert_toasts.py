"""Alerts inform without covering (issue 26, point 1): what is wrong at start is a count in the title,
a notification is for news, one at a time, on the message line (the footer's row, over no data), gone at
the next key."""

from __future__ import annotations

import pytest
from textual.geometry import Region

from gputop.core.analysis.alerts import AlertEvent
from gputop.ui.feed import QUIET_START_S, AlertAnnouncer
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.message_line import MessageLine
from gputop.ui.widgets.process_table import ProcessTable
from tests.ui.factory import NOW, gpu, make_app, notices, proc, screen_text, snapshot


def raised(message: str, *, at: float, gpu_index: int = 0, kind: str = "memory") -> AlertEvent:
    return AlertEvent(time=at, gpu_index=gpu_index, mig_index=None, kind=kind, message=message)  # type: ignore[arg-type]


def test_alerts_found_at_start_are_not_said_news_is_one_at_a_time_and_a_repeat_never() -> None:
    announcer = AlertAnnouncer()
    late = NOW + QUIET_START_S
    # Conditions true at start (raised within the first QUIET_START_S): no notification.
    assert announcer.announce([raised("GPU 0 memory at 95%", at=NOW)], NOW) is None
    assert announcer.announce([raised("GPU 1 at 90 °C", at=late - 1, gpu_index=1, kind="thermal")], late - 1) is None
    # News: one notification, an error for a thermal alert.
    assert announcer.announce([raised("GPU 2 at 91 °C", at=late, gpu_index=2, kind="thermal")], late) == (
        "Alert", "GPU 2 at 91 °C", "error"
    )
    # While it shows, the next is not said (the title counts it), nor later: it was news then.
    assert announcer.announce([raised("GPU 3 memory 92%", at=late + 1, gpu_index=3)], late + 1, on_screen=True) is None
    assert announcer.announce([raised("GPU 3 memory at 93%", at=late + 60, gpu_index=3)], late + 60) is None
    # A repeat of one raised before (GPU 0's memory, found at start, cleared and raised again): logged only.
    assert announcer.announce([raised("GPU 0 memory at 91%", at=late + 90)], late + 90) is None
    # Not over a dialog.
    assert announcer.announce([raised("GPU 4 full", at=late + 95, gpu_index=4)], late + 95, blocked=True) is None
    # Several new at once share one notification, an error if any is one; a clearing is never said.
    cleared = AlertEvent(time=late + 99, gpu_index=2, mig_index=None, kind="thermal", message="gone", cleared=True)
    events = [
        raised("GPU 5 memory at 92%", at=late + 99, gpu_index=5),
        raised("GPU 6 is lost", at=late + 99, gpu_index=6, kind="lost"),
        raised("GPU 7 memory at 90%", at=late + 99, gpu_index=7),
        cleared,
    ]
    assert announcer.announce(events, late + 99) == (
        "Alert", "GPU 5 memory at 92%\nand 2 more: ! opens the alert log", "error"
    )


def hot_and_full(at: float, *, full: bool) -> object:
    """GPU 0 hot from the start; GPU 1's memory (80 GiB) at 97% once ``full``."""
    return snapshot(
        gpu(0, [proc(101, 0, 20.0)], temperature=86.0),
        gpu(1, [proc(201, 1, 77.0 if full else 10.0)]),
        timestamp=at,
    )


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_hot_gpu_at_start_is_counted_a_new_alert_toasts_top_right_and_a_key_dismisses_it(
    size: tuple[int, int],
) -> None:
    app = make_app()
    # Textual's test harness leaves notifications off unless asked: they are what is tested here.
    async with app.run_test(size=size, notifications=True) as pilot:
        # GPU 0 hot from the start: its alert is raised once that has held 3 s, at NOW + 3.
        for second in range(4):
            app.apply_snapshot(hot_and_full(NOW + second, full=False))  # type: ignore[arg-type]
        await pilot.pause()
        # At start: no notification; the title counts the alert.
        assert notices(app) == []
        assert not app.screen.query(MessageLine)
        assert "⚠ 1" in screen_text(app).splitlines()[0]
        # Twenty seconds on, GPU 1's memory fills: news once it has held 3 s, one notification, at the top right.
        for second in range(20, 23):
            app.apply_snapshot(hot_and_full(NOW + second, full=True))  # type: ignore[arg-type]
        await pilot.pause()
        assert notices(app) == [] and "⚠ 1" in screen_text(app).splitlines()[0]  # full for 2 s only: not yet
        app.apply_snapshot(hot_and_full(NOW + 23, full=True))  # type: ignore[arg-type]
        await pilot.pause()
        await pilot.pause()  # the notification's message, then its toast mounted
        assert notices(app) == ["GPU 1 memory at 97% (77.5GiB / 80.0GiB)"]
        assert "⚠ 2" in screen_text(app).splitlines()[0]
        # On the message line, the footer's row: over no card and no process row.
        line = app.screen.query_one(MessageLine)
        assert line.display and line.region == Region(0, size[1] - 1, size[0], 1)
        assert screen_text(app).splitlines()[-1].startswith(" Alert: GPU 1 memory at 97% (77.5GiB / 80.0GiB)")
        for data in (*app.screen.query(GpuCard), app.query_one(ProcessTable)):
            assert not line.region.overlaps(data.region)
        # Any key dismisses it (and does its work: down moves the cursor).
        await pilot.press("down")
        await pilot.pause()
        assert notices(app) == []
        assert not line.display and "F1 Help" in screen_text(app).splitlines()[-1]
        assert "⚠ 2" in screen_text(app).splitlines()[0]
