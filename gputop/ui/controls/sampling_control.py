"""The live sampler seen from the app: its thread, its interval, and the errors it reports.

Each tick is taken in full on the sampler thread (history, forecasts, diagnoses, alerts, recording)
and left in the hand-over; the app, told by a message, takes the newest when it can."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.message import Message

from gputop.core.analysis.tick_feed import Handover, TickFeed
from gputop.core.format import safe_text
from gputop.core.model import Snapshot
from gputop.core.sampler import Sampler, SamplerThread, clamp_interval
from gputop.ui.messages import SamplerFailed, TicksReady

# The steps ] and [ move the refresh interval through (faster, slower).
INTERVAL_STEPS_S = (0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0)


def next_interval(current_s: float, direction: int) -> float:
    """The next step up (``direction`` > 0) or down from ``current_s``, within the steps."""
    if direction > 0:
        bigger = [step for step in INTERVAL_STEPS_S if step > current_s + 1e-9]
        return bigger[0] if bigger else INTERVAL_STEPS_S[-1]
    smaller = [step for step in INTERVAL_STEPS_S if step < current_s - 1e-9]
    return smaller[-1] if smaller else INTERVAL_STEPS_S[0]


class SamplingControl:
    """Starts the sampler thread, retimes it, stops it.

    ``take_first``: the app's ``apply_snapshot`` (the first sample, taken on the UI thread); ``post``: posts a
    message to the app (thread-safe); ``notify``: tells the user.
    """

    def __init__(
        self,
        sampler: Sampler,
        interval_s: float,
        feed: TickFeed,
        handover: Handover,
        *,
        take_first: Callable[[Snapshot], object],
        post: Callable[[Message], object],
        notify: Callable[..., object],
    ) -> None:
        self.take_first, self.post, self.notify = take_first, post, notify
        self.sampler = sampler
        self.feed = feed
        self.handover = handover
        self.interval_s = clamp_interval(interval_s)
        self.thread: SamplerThread | None = None
        self.errors_reported: set[str] = set()
        self.started_at: float | None = None  # when live sampling started (epoch seconds)

    def start(self) -> None:
        """Start the sampler thread, after one sample here (so the first frame already has data) when
        that does not wait on the driver: the UI thread never does, the driver may be hung."""
        self.started_at = time.time()
        try:
            snapshot = self.sampler.sample_at_once()
            if snapshot is not None:
                self.take_first(snapshot)
        except Exception as error:  # noqa: BLE001 - shown, and the thread tries again
            self.report_error(error)
        self.thread = SamplerThread(
            self.sampler, self.interval_s, on_snapshot=self._take, on_error=self._post_error
        )
        self.thread.start()

    def stop(self) -> None:
        if self.thread is not None:
            self.thread.stop()

    def _take(self, snapshot: Snapshot) -> None:
        """Called on the sampler thread: the tick is taken here, whatever the UI thread is doing."""
        try:
            tick = self.feed.take(snapshot)
        except Exception as error:  # noqa: BLE001 - shown; the next tick is taken as usual
            self._post_error(error)
            return
        self.handover.put(tick)
        self.post(TicksReady())  # thread-safe

    def _post_error(self, error: BaseException) -> None:
        self.post(SamplerFailed(error))

    def step_interval(self, direction: int) -> None:
        """Sample less often (``direction`` > 0) or more often, from the next tick on."""
        self.interval_s = clamp_interval(next_interval(self.interval_s, direction))
        if self.thread is not None:
            self.thread.interval_s = self.interval_s

    def report_error(self, error: BaseException) -> None:
        """Notify a sampling error, once per distinct message."""
        text = safe_text(f"{type(error).__name__}: {error}")
        if text not in self.errors_reported:
            self.errors_reported.add(text)
            self.notify(text, title="Sampling failed (gputop keeps trying)", severity="error", markup=False)
