"""The title says when the newest sample grows old, waking only for that: not at a fixed pace while
samples come in time (an idle monitor stays idle)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable

import pytest
from textual.app import App, ComposeResult
from textual.screen import Screen

from gputop.ui.controls.title_control import LATENESS_CHECK_S, LATENESS_MARGIN_S, OneShot, TitleControl, TitleFacts

from .factory import NOW, snapshot


class Timers:
    """A stand-in for the app's one-shot timers: what was armed, when, and which were stopped."""

    def __init__(self) -> None:
        self.armed: list[tuple[float, Callable[[], None], list[bool]]] = []

    def later(self, delay_s: float, call: Callable[[], None]) -> Timers.Armed:
        stopped = [False]
        self.armed.append((delay_s, call, stopped))
        return Timers.Armed(stopped)

    def running(self) -> list[float]:
        return [delay for delay, _call, stopped in self.armed if not stopped[0]]

    @dataclasses.dataclass
    class Armed:
        stopped: list[bool]

        def stop(self) -> None:
            self.stopped[0] = True


def _live(at: float, latest_at: float | None, interval_s: float = 2.0) -> TitleFacts:
    return TitleFacts(
        snapshot=None if latest_at is None else snapshot(timestamp=latest_at),
        latest=None if latest_at is None else snapshot(timestamp=latest_at),
        interval_s=interval_s, replay=None, recording=None, readonly=False, frozen=False, live=True,
        started_at=NOW, alerts=0, now=at,
    )


def test_a_sample_in_time_moves_the_title_s_one_wake_up_to_when_the_next_would_be_late() -> None:
    timers = Timers()
    facts = [_live(NOW + 1.0, NOW)]
    control = TitleControl(facts=lambda: facts[0], set_sub_title=lambda _t: None, top=Screen, later=timers.later)
    control.update()
    assert timers.armed == []  # not watching yet: no timer before sampling starts
    control.watch_lateness()
    # Taken at NOW, every 2 s: late once older than 4 s, that is 3 s from NOW + 1.
    assert timers.running() == [pytest.approx(3.0 + LATENESS_MARGIN_S)]
    for tick in range(1, 6):  # samples in time, one a tick: one timer at a time, moved on each time
        facts[0] = _live(NOW + 2.0 * tick + 0.5, NOW + 2.0 * tick)
        control.update()
        assert timers.running() == [pytest.approx(3.5 + LATENESS_MARGIN_S)]
    assert len(timers.armed) == 6


async def test_a_late_sample_is_said_when_it_turns_late_then_its_age_every_half_second() -> None:
    timers = Timers()
    facts = [_live(NOW + 1.0, NOW)]
    control = TitleControl(facts=lambda: facts[0], set_sub_title=lambda _t: None, top=Screen, later=timers.later)

    class TitleOnly(App[None]):
        def compose(self) -> ComposeResult:
            yield control.bar

    async with TitleOnly().run_test(size=(120, 3)) as pilot:
        control.watch_lateness()
        delay, fire, _stopped = timers.armed[-1]
        facts[0] = _live(NOW + 1.0 + delay, NOW)  # no sample since: the timer fires as it turns late
        fire()
        await pilot.pause()
        assert str(control.bar.render()).endswith(f"last sample {4.0 + LATENESS_MARGIN_S:.1f}s ago ")
        assert timers.running() == [LATENESS_CHECK_S]
        facts[0] = _live(NOW + 4.55, NOW + 4.5)  # a sample at last: on time again, the next wake-up 4 s on
        control.update()
        await pilot.pause()
        assert "last sample" not in str(control.bar.render())
        assert timers.running() == [pytest.approx(4.0 - 0.05 + LATENESS_MARGIN_S)]


def test_frozen_the_title_arms_no_timer_and_stops_the_one_it_had() -> None:
    timers = Timers()
    facts = [_live(NOW + 1.0, NOW)]
    control = TitleControl(facts=lambda: facts[0], set_sub_title=lambda _t: None, top=Screen, later=timers.later)
    control.watch_lateness()
    assert len(timers.running()) == 1
    facts[0] = dataclasses.replace(facts[0], frozen=True, live=False)
    control.update()
    assert timers.running() == []


async def test_the_app_s_one_shot_says_the_lateness_through_the_app_and_one_stopped_never_runs() -> None:
    # The app's timer for the title (armed and stopped on every tick that comes in time) is a one-shot on the
    # loop, not a Textual timer: it runs its call through the app's messages when it fires, and not at all
    # once stopped.
    facts = [_live(NOW, NOW, interval_s=0.1)]  # in time: the sample turns late 0.2 s on

    class TitleOnly(App[None]):
        def compose(self) -> ComposeResult:
            yield control.bar

    app = TitleOnly()
    control = TitleControl(
        facts=lambda: facts[0], set_sub_title=lambda _t: None, top=Screen,
        later=lambda delay_s, call: OneShot(delay_s, call, app.call_next),
    )
    async with app.run_test(size=(120, 3)) as pilot:
        control.watch_lateness()
        await pilot.pause()
        assert "last sample" not in str(control.bar.render())
        facts[0] = _live(NOW + 0.25, NOW, interval_s=0.1)  # no sample since
        await pilot.pause(0.2 + LATENESS_MARGIN_S + 0.15)
        assert str(control.bar.render()).endswith("last sample 0.2s ago ")
        ran: list[str] = []
        OneShot(0.01, lambda: ran.append("stopped"), app.call_next).stop()
        OneShot(0.01, lambda: ran.append("armed"), app.call_next)
        await asyncio.sleep(0.1)
        await pilot.pause()
        assert ran == ["armed"]
