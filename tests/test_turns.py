"""Jobs on several lanes taken in turn (core.sources.lanes.Turns), the lane that answers starting the next."""

from __future__ import annotations

import threading
from typing import Any

from gputop.core.sources.lanes import Lane, Ticket, Turns

TURN_S = 0.005


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Steps:
    """Steps whose tickets the test completes by hand, in the order they were started."""

    def __init__(self) -> None:
        self.started: list[tuple[int, bool]] = []
        self.tickets: dict[int, Ticket[Any]] = {}

    def step(self, at: int, *, nothing: bool = False) -> Any:
        def start(in_turn: bool) -> list[Ticket[Any]]:
            self.started.append((at, in_turn))
            if nothing:
                return []  # a GPU whose last call is still out: nothing asked of it
            self.tickets[at] = Ticket()
            return [self.tickets[at]]

        return start

    def done(self, at: int) -> None:
        self.tickets[at].done = True


def test_each_step_done_within_its_turn_starts_the_next_and_the_last_ends_the_turns() -> None:
    clock, steps = Clock(), Steps()
    turns = Turns([steps.step(0), steps.step(1, nothing=True), steps.step(2)], TURN_S, clock)
    turns.advance()
    assert steps.started == [(0, True)]
    assert turns.turn_ends() == 100.0 + TURN_S
    clock.now += 0.004
    turns.advance()  # step 0 not done yet: nothing more starts
    assert steps.started == [(0, True)]
    steps.done(0)
    turns.advance()
    # Step 1 started nothing: step 2 starts at once after it.
    assert steps.started == [(0, True), (1, True), (2, True)]
    assert not turns.done()
    steps.done(2)
    turns.advance()
    assert turns.done() and not turns.broken
    assert turns.quick == [True, None, True]
    assert turns.turn_ends() == float("inf")


def test_a_step_that_runs_past_its_turn_sets_all_the_rest_going_at_once() -> None:
    clock, steps = Clock(), Steps()
    turns = Turns([steps.step(0), steps.step(1), steps.step(2)], TURN_S, clock)
    turns.advance()
    clock.now += TURN_S / 2
    turns.overdue()  # still within its turn
    assert steps.started == [(0, True)]
    clock.now += TURN_S
    turns.overdue()
    assert turns.broken
    assert steps.started == [(0, True), (1, False), (2, False)]
    assert turns.quick == [False, None, None]
    steps.done(1)
    steps.done(2)
    assert not turns.done()  # step 0 is still out
    steps.done(0)
    assert turns.done()


def test_an_optional_step_is_waited_for_while_the_turns_hold_and_not_once_it_runs_past_its_turn() -> None:
    clock, steps = Clock(), Steps()
    turns = Turns([steps.step(0), steps.step(1)], TURN_S, clock, optional=frozenset({1}))
    turns.advance()
    steps.done(0)
    turns.advance()
    assert steps.started == [(0, True), (1, True)]
    assert not turns.done()  # quick so far: the optional step is waited for
    clock.now += 2 * TURN_S
    turns.overdue()
    assert turns.broken and turns.quick == [True, False]
    assert turns.done()  # hung past its turn: the turns end without it


def test_a_step_done_after_its_turn_but_before_anyone_looked_breaks_the_turns_too() -> None:
    clock, steps = Clock(), Steps()
    turns = Turns([steps.step(0), steps.step(1)], TURN_S, clock)
    turns.advance()
    clock.now += 2 * TURN_S
    steps.done(0)
    turns.advance()
    assert turns.broken and turns.quick == [False, None]
    assert steps.started == [(0, True), (1, False)]


def test_a_lane_that_answers_in_its_turn_starts_the_next_job_itself_without_sleeping() -> None:
    # Two jobs on one lane, the second started from the lane's own on_done: the lane runs it
    # straight after the first, and the thread waiting for both is woken once, when both are done.
    lock = threading.Condition()
    done_order: list[str] = []
    turns_box: list[Turns] = []
    wakes = [0]

    def on_done() -> None:
        with lock:
            turns_box[0].advance()
            if turns_box[0].done():
                lock.notify_all()

    lane = Lane("test-turns", on_done)

    def job(name: str) -> Any:
        def start(in_turn: bool) -> list[Ticket[Any]]:
            ticket = lane.submit(lambda: done_order.append(name))
            assert ticket is not None, "the lane was still busy"
            return [ticket]

        return start

    turns = Turns([job("first"), job("second")], 10.0)
    turns_box.append(turns)
    try:
        with lock:
            turns.advance()
            while not turns.done():
                lock.wait(5)
                wakes[0] += 1
    finally:
        lane.stop()
    assert done_order == ["first", "second"]
    assert turns.quick == [True, True]
    assert wakes[0] == 1
