"""Playing a recording back: the timer that moves it, pause, step, speed and jump, and its title."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.timer import Timer

from gputop.core.model import Snapshot
from gputop.core.recording.replay import Replay, clock_text

if TYPE_CHECKING:
    from textual.app import App

# Takes one snapshot on the UI thread (``quiet``: neither announced nor drawn, a jump catching up).
TakeSnapshot = Callable[..., object]

# Snapshots fed (quietly) before the target of a replay jump, so forecasts and sparklines have a past.
REPLAY_REWIND = 300


class ReplayControl:
    """Moves a replay through its snapshots at its speed and feeds each one to the app.

    ``take``: the app's ``apply_snapshot``; ``show``: draws a snapshot unless the display is frozen;
    ``reset``: forgets the history and alerts (before a jump rebuilds them); ``moved``: says the new
    position in the title; ``app``: its timer, dialogs and notifications.
    """

    def __init__(
        self,
        replay: Replay,
        *,
        take: TakeSnapshot,
        show: Callable[[Snapshot], None],
        reset: Callable[[], None],
        moved: Callable[[], None],
        app: App[Any],
    ) -> None:
        self.replay = replay
        self.take, self.show, self.reset, self.moved = take, show, reset, moved
        self.app = app
        self._timer: Timer | None = None

    def start(self) -> None:
        """Show the first snapshot, say if the recording is damaged, and start playing."""
        replay = self.replay
        self.take(replay.current)
        if replay.damage is not None:
            self.app.notify(replay.damage, title="Recording damaged", severity="error", timeout=30, markup=False)
        self._schedule()

    def _schedule(self) -> None:
        """Arm the timer for the next recorded snapshot at the replay's speed (none while paused)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        delay = self.replay.delay_s()
        if delay is not None:
            self._timer = self.app.set_timer(delay, self._tick)

    def _moved(self) -> None:
        self.moved()
        self._schedule()

    def _tick(self) -> None:
        replay = self.replay
        self._timer = None
        if replay.advance():
            self.take(replay.current)
        if replay.at_end and not replay.paused:
            replay.paused = True
            where = "where the recording is damaged" if replay.damage else "the end of the recording"
            self.app.notify(f"replay paused at {where}", title="Replay", markup=False)
        self._moved()

    def seek(self, position: int) -> None:
        """Show snapshot ``position``, rebuilt from the snapshots before it (history, forecasts, alerts)."""
        replay = self.replay
        replay.position = position
        self.reset()
        for snapshot in replay.snapshots[max(0, position - REPLAY_REWIND) : position]:
            self.take(snapshot, quiet=True)
        self.take(replay.current, quiet=True)
        self.show(replay.current)
        self._moved()

    def toggle_pause(self) -> None:
        replay = self.replay
        replay.paused = not replay.paused
        if not replay.paused and replay.at_end:
            self.seek(0)  # play again from the start
            return
        self._moved()

    def step(self, count: int) -> None:
        """Step ``count`` snapshots forward or back; stepping pauses."""
        replay = self.replay
        replay.paused = True
        before = replay.position
        after = replay.step(count)
        if after == before + 1:
            self.take(replay.current)
            self._moved()
        elif after != before:
            self.seek(after)
        else:
            self._moved()

    def change_speed(self, direction: int) -> None:
        if direction > 0:
            self.replay.faster()
        else:
            self.replay.slower()
        self._moved()

    def ask_jump(self) -> None:
        """Ask for a time (or an offset) and jump there."""
        from gputop.ui.screens.jump import JumpScreen

        replay = self.replay

        def jump(text: str | None) -> None:
            if text is None or not text.strip():
                return
            try:
                target = replay.jump_target(text)
            except ValueError as error:
                self.app.notify(str(error), title="Jump", severity="error", markup=False)
                return
            position = replay.position
            replay.seek_time(target)
            new_position, replay.position = replay.position, position
            self.seek(new_position)

        self.app.push_screen(JumpScreen(clock_text(replay.current.timestamp)), jump)
