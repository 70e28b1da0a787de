"""Steps taken in turn as one job on one lane (core.sources.lanes.Round), and the lanes they run on."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from gputop.core.sources.lanes import Lane, Round, Ticket

TURN_S = 0.005
WAIT_S = 5.0  # long enough for any loaded machine: a test that needs it to run out has failed anyway


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Steps:
    """Steps that note how they were started: in turn on a lane (its thread's name), or not (None)."""

    def __init__(self) -> None:
        self.started: list[tuple[int, str | None]] = []
        self.ran: list[tuple[int, str]] = []
        self.tickets: dict[int, Ticket[Any]] = {}

    def step(self, at: int, job: Callable[[], Any] | None = None, *, nothing: bool = False) -> Any:
        """A step whose job is run by the round on its lane (``job``, by default one that notes its
        thread), or, with ``nothing``, that starts nothing (a GPU whose last call is still out)."""

        def start(here: Lane | None) -> Sequence[Ticket[Any]]:
            self.started.append((at, None if here is None else threading.current_thread().name))
            if nothing:
                return []
            if here is None:  # not in turn: started elsewhere, completed by the test
                self.tickets[at] = Ticket()
            else:
                self.tickets[at] = Ticket(job or (lambda: self.ran.append((at, threading.current_thread().name))))
            return [self.tickets[at]]

        return start


def no_wait(tickets: Sequence[Ticket[Any]], until: float) -> bool:
    raise AssertionError("a step run on the round's own lane is never waited for")


def wait_for(event: threading.Event) -> None:
    assert event.wait(WAIT_S), "the round's lane never got there"


def test_steps_in_turn_run_one_after_another_on_the_rounds_lane_and_the_waiting_thread_sleeps_once() -> None:
    steps = Steps()
    lane = Lane("test-round", lambda: None)
    turns = Round([steps.step(0), steps.step(1, nothing=True), steps.step(2)], TURN_S, no_wait, Clock())
    try:
        # The waiting thread is woken once, by the lane, when every step is done (not per step, nor
        # at a turn's end: the clock never moves).
        assert turns.start(lane, WAIT_S) is True
    finally:
        lane.stop()
    assert steps.started == [(0, "test-round"), (1, "test-round"), (2, "test-round")]
    assert steps.ran == [(0, "test-round"), (2, "test-round")]
    assert turns.quick == [True, None, True]
    assert turns.done() and not turns.broken
    assert turns.turn_ends() == 100.0 + TURN_S  # the last step's, over


def test_a_step_stuck_on_the_rounds_lane_past_its_turn_sets_all_the_rest_going_at_once() -> None:
    clock, steps = Clock(), Steps()
    inside, release = threading.Event(), threading.Event()
    lane = Lane("test-round", lambda: None)
    turns = Round(
        [steps.step(0, lambda: (inside.set(), release.wait(WAIT_S))), steps.step(1), steps.step(2)],
        TURN_S,
        no_wait,
        clock,
    )
    try:
        assert turns.start(lane, 0.0) is False
        wait_for(inside)
        assert turns.turn_ends() == 100.0 + TURN_S
        clock.now += TURN_S / 2
        assert not turns.overdue()  # still within its turn
        assert steps.started == [(0, "test-round")]
        clock.now += TURN_S
        assert turns.overdue()
        # The rest started by the thread that found it past its turn, each on its own (no lane given).
        assert steps.started == [(0, "test-round"), (1, None), (2, None)]
        assert turns.quick == [False, None, None]
        assert turns.turn_ends() == float("inf")
        steps.tickets[1].done = steps.tickets[2].done = True
        assert not turns.done()  # step 0 is still out
        release.set()
        assert turns.over(WAIT_S)  # its lane lets go of the round once the step comes back
        assert turns.done()
    finally:
        release.set()
        lane.stop()
    assert turns.quick == [False, None, None]


def test_a_step_started_on_another_lane_is_waited_for_by_the_rounds_lane_until_its_turn_ends() -> None:
    clock, steps = Clock(), Steps()
    waited: list[float] = []
    elsewhere = Ticket[Any]()  # on a lane of its own, and slower than its turn

    def wait(tickets: Sequence[Ticket[Any]], until: float) -> bool:
        assert list(tickets) == [elsewhere]
        waited.append(until)
        clock.now = until  # its turn runs out without an answer
        return False

    lane = Lane("test-round", lambda: None)
    turns = Round([lambda here: [elsewhere], steps.step(1)], TURN_S, wait, clock)
    try:
        # The round's own lane finds the step past its turn and starts the rest: the waiting thread
        # is woken once, by the round's end, not at the turn's.
        assert turns.start(lane, WAIT_S) is True
    finally:
        lane.stop()
    assert waited == [100.0 + TURN_S]
    assert turns.broken and turns.quick == [False, None]
    assert steps.started == [(1, None)]
    assert not turns.done()
    elsewhere.done = steps.tickets[1].done = True
    assert turns.done()


def test_an_optional_step_is_waited_for_while_the_turns_hold_and_not_once_it_runs_past_its_turn() -> None:
    clock, steps = Clock(), Steps()
    inside, release = threading.Event(), threading.Event()
    lane = Lane("test-round", lambda: None)
    turns = Round(
        [steps.step(0), steps.step(1, lambda: (inside.set(), release.wait(WAIT_S)))],
        TURN_S,
        no_wait,
        clock,
        optional=frozenset({1}),
    )
    try:
        assert turns.start(lane, 0.0) is False
        wait_for(inside)
        assert not turns.done()  # quick so far: the optional step is waited for
        clock.now += 2 * TURN_S
        assert turns.overdue()
        assert turns.quick == [True, False]
        assert turns.done()  # hung past its turn: the round ends without it
    finally:
        release.set()
        lane.stop()


def test_a_step_done_after_its_turn_but_before_anyone_looked_breaks_the_turns_too() -> None:
    clock, steps = Clock(), Steps()

    def slow() -> None:
        clock.now += 2 * TURN_S

    lane = Lane("test-round", lambda: None)
    turns = Round([steps.step(0, slow), steps.step(1)], TURN_S, no_wait, clock)
    try:
        assert turns.start(lane, WAIT_S) is True
    finally:
        lane.stop()
    assert turns.broken and turns.quick == [False, None]
    assert steps.started == [(0, "test-round"), (1, None)]


def test_a_round_whose_lane_has_not_begun_within_a_turn_sets_every_step_going_at_once() -> None:
    clock, steps = Clock(), Steps()
    inside, release = threading.Event(), threading.Event()
    busy = Lane("test-round", lambda: None)
    turns = Round([steps.step(0), steps.step(1)], TURN_S, no_wait, clock)
    try:
        assert busy.submit(lambda: (inside.set(), release.wait(WAIT_S))) is not None
        wait_for(inside)
        assert turns.start(busy, 0.0) is None  # a lane runs one job at a time
        clock.now += 2 * TURN_S
        assert turns.overdue()  # nothing ran in turn: every step goes on its own
        assert steps.started == [(0, None), (1, None)]
        assert turns.quick == [None, None]
    finally:
        release.set()
        busy.stop()


def test_a_lane_refuses_a_job_while_one_runs_and_tells_of_each_as_the_last_thing_it_does() -> None:
    told: list[tuple[bool, bool]] = []
    last = threading.Event()
    inside, release = threading.Event(), threading.Event()
    tickets: list[Ticket[Any]] = []

    def on_done() -> None:
        told.append((lane.busy, tickets[-1].done))
        last.set()

    lane = Lane("test-lane", on_done)
    try:
        first = lane.submit(lambda: (inside.set(), release.wait(WAIT_S), 7)[-1])
        assert first is not None
        tickets.append(first)
        wait_for(inside)
        assert lane.busy and lane.started_at is not None
        assert lane.submit(lambda: 8) is None  # calls never pile up behind one still out
        release.set()
        wait_for(last)
        assert first.outcome() == 7
        # Told once the lane is free and the ticket done: what is told may start the next job at once.
        assert told == [(False, True)]
        assert lane.started_at is None
        last.clear()
        then = threading.Event()
        second = lane.submit(lambda: 1 // 0, then=then.set)  # its own word instead of on_done
        assert second is not None
        wait_for(then)
        assert isinstance(second.error, ZeroDivisionError)
        assert told == [(False, True)]
    finally:
        release.set()
        lane.stop()


def test_a_stopped_lane_ends_its_thread_idle_or_once_its_job_is_done() -> None:
    idle = Lane("test-idle", lambda: None)
    idle.stop()
    inside, release = threading.Event(), threading.Event()
    busy = Lane("test-busy", lambda: None)
    assert busy.submit(lambda: (inside.set(), release.wait(WAIT_S))) is not None
    wait_for(inside)
    busy.stop()
    assert busy.submit(lambda: None) is None
    threads = {thread.name: thread for thread in threading.enumerate() if thread.name in ("test-idle", "test-busy")}
    if "test-idle" in threads:
        threads["test-idle"].join(WAIT_S)
    assert "test-idle" not in {thread.name for thread in threading.enumerate()}
    assert threads["test-busy"].is_alive()  # a job stuck in the driver is left to it
    release.set()
    threads["test-busy"].join(WAIT_S)
    assert not threads["test-busy"].is_alive()


def test_a_lane_stopped_twice_or_thrice_as_close_paths_may_is_stopped_once() -> None:
    lane = Lane("test-stopped-again", lambda: None)
    for _ in range(3):  # once raised "release unlocked lock" on the second or third
        lane.stop()
    assert lane.submit(lambda: None) is None
    thread = next((t for t in threading.enumerate() if t.name == "test-stopped-again"), None)
    if thread is not None:
        thread.join(WAIT_S)
    assert "test-stopped-again" not in {t.name for t in threading.enumerate()}
