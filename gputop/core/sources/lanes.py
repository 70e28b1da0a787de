"""One thread per device, so that a call that hangs blocks only its own device.

ctypes releases the GIL during a foreign call, so a lane stuck in the driver
costs nothing but its thread. A lane runs one job at a time and refuses a new
one while the last is still running: calls never pile up behind a hung one,
and the number of threads stays one per device. ``Turns`` takes jobs on several
lanes one after another, each lane that answers in its turn starting the next.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Ticket(Generic[T]):
    """The outcome of one job: `done`, then `result` or `error`."""

    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = False
        self.result: T | None = None
        self.error: BaseException | None = None

    def outcome(self) -> T:
        """The result of a done job; raises what the job raised."""
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[return-value]


class Lane:
    """A daemon thread that runs the jobs given to it, one at a time."""

    def __init__(self, name: str, on_done: Callable[[], None]) -> None:
        self._on_done = on_done
        self._wake = threading.Condition()
        self._job: Callable[[], Any] | None = None
        self._ticket: Ticket[Any] | None = None
        self._stopped = False
        # When the running job began (seconds since the epoch); None while idle.
        self.started_at: float | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def thread_id(self) -> int | None:
        return self._thread.ident

    @property
    def busy(self) -> bool:
        return self._job is not None

    def submit(self, job: Callable[[], T]) -> Ticket[T] | None:
        """Run `job` on the lane; None (and nothing runs) while the last job is still running."""
        with self._wake:
            if self._job is not None or self._stopped:
                return None
            ticket: Ticket[T] = Ticket()
            self._job, self._ticket = job, ticket
            self.started_at = time.time()
            self._wake.notify()
            return ticket

    def stop(self) -> None:
        """End the thread once it is idle (a job stuck in the driver is left to it)."""
        with self._wake:
            self._stopped = True
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._job is None and not self._stopped:
                    self._wake.wait()
                job, ticket = self._job, self._ticket
                if job is None or ticket is None:
                    return
            try:
                ticket.result = job()
            except BaseException as error:  # noqa: BLE001 - handed to whoever waits on the ticket
                ticket.error = error
            ticket.done = True
            with self._wake:
                self._job = self._ticket = None
                self.started_at = None
            self._on_done()


class Turns:
    """Jobs on several lanes taken in turn: each step starts once the step before is done, as long as
    each is done within ``turn_s`` of its start; the first that takes longer sets all the rest going
    at once (``broken``).

    The step after a quick one is started by whoever learns first that it may start: the lane that
    finished it (through its ``on_done``, calling ``advance``) rather than a coordinating thread
    woken for each step. Not locked on its own: every method is called under the one lock that the
    lanes' ``on_done`` takes. ``steps`` are called with True when started in turn, False once the
    turns are broken, and return the tickets of what they started (none: nothing to wait for).
    The steps in ``optional`` are waited for only while the turns hold: once they are broken, ``done``
    does not wait for them (a call that may hang, and that the tick can do without).
    """

    def __init__(
        self,
        steps: Sequence[Callable[[bool], Sequence[Ticket[Any]]]],
        turn_s: float,
        clock: Callable[[], float] = time.monotonic,
        optional: frozenset[int] = frozenset(),
    ) -> None:
        self._steps = steps
        self._optional = optional
        self._turn_s = turn_s
        self._clock = clock
        self._next = 0
        self._current: Sequence[Ticket[Any]] = ()
        self._since = 0.0
        self.broken = False
        # Per step: True when it was done within its turn, False when it took longer, None when it
        # was not read in turn (or started nothing).
        self.quick: list[bool | None] = [None] * len(steps)
        self.tickets: list[Ticket[Any]] = []  # what done() waits for
        self._optional_tickets: list[Ticket[Any]] = []  # what it waits for while the turns hold

    def advance(self) -> None:
        """Start the next step when the current one is done: in turn when it was quick, else all the rest."""
        while not self.broken:
            if not all(ticket.done for ticket in self._current):
                return
            if self._current:
                quick = self._clock() - self._since <= self._turn_s
                self.quick[self._next - 1] = quick
                self._current = ()
                if not quick:
                    self._break()
                    return
            if self._next == len(self._steps):
                return
            self._start(in_turn=True)

    def overdue(self) -> None:
        """Called when the turn of the step being read may be over: it is over, all the rest start."""
        running = self._current and not all(ticket.done for ticket in self._current)
        if not self.broken and running and self._clock() - self._since >= self._turn_s:
            self.quick[self._next - 1] = False
            self._break()

    def turn_ends(self) -> float:
        """When (on ``clock``) the turn of the step being read ends; infinity once no turn is running."""
        if self.broken or not self._current:
            return math.inf
        return self._since + self._turn_s

    def done(self) -> bool:
        """Every step started and every ticket done (those of ``optional`` steps: unless the turns are broken)."""
        return (
            self._next == len(self._steps)
            and all(ticket.done for ticket in self.tickets)
            and (self.broken or all(ticket.done for ticket in self._optional_tickets))
        )

    def _start(self, *, in_turn: bool) -> None:
        self._since = self._clock()
        self._current = self._steps[self._next](in_turn)
        (self._optional_tickets if self._next in self._optional else self.tickets).extend(self._current)
        self._next += 1

    def _break(self) -> None:
        self.broken = True
        self._current = ()
        while self._next < len(self._steps):
            self._start(in_turn=False)
