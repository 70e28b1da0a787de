"""What the title says: the machine, how the view moves (every N s, or the replay), recording,
read-only, frozen, and how old the newest sample is when sampling falls behind (a hung driver)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from gputop.core.model import Snapshot
from gputop.ui.screens.live import LiveScreen
from gputop.ui.widgets.title_bar import TitleBar, interval_text, title_text

if TYPE_CHECKING:
    from gputop.core.recording.replay import Replay
    from gputop.ui.app import GpuTopApp

# While sampling live, the title looks this often whether the newest sample has grown old.
LATENESS_CHECK_S = 0.5


def late_s(latest: Snapshot | None, now: float, interval_s: float, started_at: float | None = None) -> float | None:
    """The age of the newest sample when sampling is late (older than two intervals), else None.

    Before any sample, how long sampling (started at ``started_at``) has waited for the first one.
    """
    since = latest.timestamp if latest is not None else started_at
    if since is None:
        return None
    age = now - since
    return age if age > 2 * interval_s else None


def sub_title(interval_s: float, *, frozen: bool, replay: Replay | None) -> str:
    """The app's sub-title (the terminal's window title): "every 1s · FROZEN", or where the replay is."""
    if replay is not None:
        from gputop.ui.controls.replay_control import replay_status  # a replay's module, imported by the replay

        return replay_status(replay)
    return f"every {interval_s:g}s" + (" · FROZEN" if frozen else "")


class TitleControl:
    """Keeps the title bar, the sub-title and the open screen's title up to date."""

    def __init__(self, app: GpuTopApp) -> None:
        self.app = app
        self.bar = TitleBar(id="title-bar")

    def watch_lateness(self) -> None:
        """While sampling live: say in the title when the newest sample grows old."""
        self.app.set_interval(LATENESS_CHECK_S, self._say_lateness)

    def _say_lateness(self) -> None:
        # Not while the screen is being taken down. The bar's own link to the app, not a query of
        # every widget on every screen (a millisecond, twice a second).
        if self.bar.is_attached:
            self.update()

    def update(self) -> None:
        """Say in the title bar (and the sub-title) what is shown and how it moves."""
        app = self.app
        replay = app.replay
        if replay is None:
            mode = interval_text(app.interval_s)
        else:
            from gputop.ui.controls.replay_control import replay_title

            mode = replay_title(replay)
        recording = None if app.feed.recorder is None else app.feed.recorder.path
        live = app.start_sampler and not app.frozen
        late = late_s(app.latest, time.time(), app.interval_s, app.sampling.started_at) if live else None
        alerts = 0 if app.tick is None else len(app.tick.alerted)
        bar = title_text(
            app.snapshot, mode,
            recording=recording, readonly=app.readonly, frozen=app.frozen, late_s=late, alerts=alerts,
        )
        app.sub_title = sub_title(app.interval_s, frozen=app.frozen, replay=replay)
        # The late-sample timer may fire while the app is closing: the bar is gone by then.
        if self.bar.is_mounted:
            self.bar.show(bar)
        screen = app.screen
        if isinstance(screen, LiveScreen) and screen.is_mounted:  # else it says it once mounted
            screen.update_title()
