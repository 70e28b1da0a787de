"""What the title says: the machine, how the view moves (every N s, or the replay), recording,
read-only, frozen, and how old the newest sample is when sampling falls behind (a hung driver)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from gputop.core.model import Snapshot
from gputop.ui.screens.live import LiveScreen
from gputop.ui.widgets.title_bar import TitleBar, interval_text, title_text

if TYPE_CHECKING:
    from textual.screen import Screen

    from gputop.core.recording.replay import Replay

# While the newest sample is late, the title says its age again this often.
LATENESS_CHECK_S = 0.5
# The title looks whether the newest sample is late this long after it would be: just past the moment.
LATENESS_MARGIN_S = 0.05


class Timer(Protocol):
    """A timer that can be stopped (``OneShot``, or Textual's)."""

    def stop(self) -> None: ...


class OneShot:
    """``call`` once, ``delay_s`` from now, handed to ``call_next`` (an app's: it runs there as a Textual
    timer's callback runs, an error shown as Textual shows one). The title arms one and stops the last on
    every tick that comes in time: a loop's timer handle costs a fifth of a Textual ``Timer`` (a task each)."""

    __slots__ = ("_handle",)

    def __init__(self, delay_s: float, call: Callable[[], None], call_next: Callable[[Callable[[], None]], object]):
        self._handle = asyncio.get_running_loop().call_later(delay_s, call_next, call)

    def stop(self) -> None:
        self._handle.cancel()


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
        from gputop.ui.widgets.replay_title import replay_status  # a replay's module, imported by the replay

        return replay_status(replay)
    return f"every {interval_s:g}s" + (" · FROZEN" if frozen else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class TitleFacts:
    """What the title says, as the app has it now."""

    snapshot: Snapshot | None  # shown
    latest: Snapshot | None  # newest received (differs while frozen)
    interval_s: float
    replay: Replay | None
    recording: str | None  # the file recorded to
    readonly: bool
    frozen: bool
    live: bool  # sampling live and not frozen: the title says when the newest sample grows old
    started_at: float | None  # when live sampling started
    alerts: int  # alerts raised now
    now: float | None = None  # the source's time, where it is not this machine's (a capture's ticks)


class TitleControl:
    """Keeps the title bar, the sub-title and the open screen's title up to date.

    ``facts``: what the app has now; ``set_sub_title``: the terminal's window title; ``top``: the screen on
    top (a live one says its title again); ``later``: runs a function once, so many seconds from now (a
    timer). While sampling live the title wakes only when the newest sample would turn late (two intervals
    after it was taken), not at a fixed pace: a tick that comes in time moves that moment on.
    """

    def __init__(
        self,
        *,
        facts: Callable[[], TitleFacts],
        set_sub_title: Callable[[str], None],
        top: Callable[[], Screen[object]],
        later: Callable[[float, Callable[[], None]], Timer],
    ) -> None:
        self.facts = facts
        self.set_sub_title = set_sub_title
        self.top = top
        self.later = later
        self.bar = TitleBar(id="title-bar")
        self._watching = False
        self._timer: Timer | None = None

    def watch_lateness(self) -> None:
        """While sampling live: say in the title when the newest sample grows old."""
        self._watching = True
        self.update()

    def _say_lateness(self) -> None:
        # Not while the screen is being taken down. The bar's own link to the app, not a query of
        # every widget on every screen (a millisecond, twice a second).
        if self.bar.is_attached:
            self.update()
        elif self._watching:
            self._timer = self.later(LATENESS_CHECK_S, self._say_lateness)  # the bar is not on screen yet

    def update(self) -> None:
        """Say in the title bar (and the sub-title) what is shown and how it moves."""
        facts = self.facts()
        replay = facts.replay
        if replay is None:
            mode = interval_text(facts.interval_s)
        else:
            from gputop.ui.widgets.replay_title import replay_title

            mode = replay_title(replay)
        now = time.time() if facts.now is None else facts.now
        late = late_s(facts.latest, now, facts.interval_s, facts.started_at) if facts.live else None
        if self._watching:
            self._look_again(facts, now, late)
        bar = title_text(
            facts.snapshot, mode, recording=facts.recording, readonly=facts.readonly, frozen=facts.frozen,
            late_s=late, alerts=facts.alerts,
        )
        self.set_sub_title(sub_title(facts.interval_s, frozen=facts.frozen, replay=replay))
        # The late-sample timer may fire while the app is closing: the bar is gone by then.
        if self.bar.is_mounted:
            self.bar.show(bar)
        screen = self.top()
        if isinstance(screen, LiveScreen) and screen.is_mounted:  # else it says it once mounted
            screen.update_title()

    def _look_again(self, facts: TitleFacts, now: float, late: float | None) -> None:
        """Arm the one timer for the next moment the title can change by itself: when the newest sample
        turns late, or (late already) when its age has moved on; none while not sampling live."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if not facts.live:
            return  # frozen, or not sampling: unfreezing says the title again, and arms it
        since = facts.latest.timestamp if facts.latest is not None else facts.started_at
        if late is not None or since is None:
            delay = LATENESS_CHECK_S
        else:
            delay = max(0.0, since + 2 * facts.interval_s - now) + LATENESS_MARGIN_S
        self._timer = self.later(delay, self._say_lateness)
