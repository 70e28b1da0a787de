"""One thread per device, so that a call that hangs blocks only its own device.

ctypes releases the GIL during a foreign call, so a lane stuck in the driver
costs nothing but its thread. A lane runs one job at a time and refuses a new
one while the last is still running: calls never pile up behind a hung one,
and the number of threads stays one per device. ``Round`` takes steps one after
another as one job on one lane, each step that answers in its turn followed by
the next on the same thread, the first that does not setting the rest going on
lanes of their own.

Threads hand over with bare locks (``threading.Lock``, released by one thread and
acquired by another) rather than conditions: a lane sleeps on one, and the thread
that wakes another does so as the last thing before it sleeps itself, so that the
thread woken never finds the interpreter's lock still held (a second wake-up).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Ticket(Generic[T]):
    """The outcome of one job: `done`, then `result` or `error`.

    A ticket made with a ``job`` was given to no lane: whoever takes it runs it (``run``), as a
    round does on its own lane."""

    __slots__ = ("done", "error", "job", "result")

    def __init__(self, job: Callable[[], T] | None = None) -> None:
        self.done = False
        self.result: T | None = None
        self.error: BaseException | None = None
        self.job = job

    def run(self, job: Callable[[], T] | None = None) -> None:
        """Run ``job`` (else the ticket's own) on this thread: its result, or what it raised; then done."""
        job, self.job = job or self.job, None
        try:
            self.result = job() if job is not None else None
        except BaseException as error:  # noqa: BLE001 - handed to whoever waits on the ticket
            self.error = error
        self.done = True

    def outcome(self) -> T:
        """The result of a done job; raises what the job raised."""
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[return-value]


class Lane:
    """A daemon thread that runs the jobs given to it, one at a time; ``on_done`` (or the job's own
    ``then``) is the last thing it calls before it sleeps again."""

    def __init__(self, name: str, on_done: Callable[[], None]) -> None:
        self._on_done = on_done
        self._lock = threading.Lock()  # the job and the stop, between submit(), stop() and the lane
        self._go = threading.Lock()  # held while there is nothing to run: the lane sleeps acquiring it
        self._go.acquire()
        self._job: Callable[[], Any] | None = None
        self._ticket: Ticket[Any] | None = None
        self._then: Callable[[], None] | None = None
        self._stopped = False
        # When the running job began (seconds since the epoch; a round's: the read it is on); None while idle.
        self.started_at: float | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def thread_id(self) -> int | None:
        return self._thread.ident

    @property
    def busy(self) -> bool:
        return self._job is not None

    def submit(self, job: Callable[[], T], then: Callable[[], None] | None = None) -> Ticket[T] | None:
        """Run `job` on the lane, then `then` (else the lane's ``on_done``); None (and nothing runs)
        while the last job is still running."""
        with self._lock:
            if self._job is not None or self._stopped:
                return None
            ticket: Ticket[T] = Ticket()
            self._job, self._ticket, self._then = job, ticket, then
            self.started_at = time.time()
        self._go.release()  # only here, with a job set, and in stop(), with none: never twice
        return ticket

    def stop(self) -> None:
        """End the thread once it is idle (a job stuck in the driver is left to it)."""
        with self._lock:
            if self._stopped:
                return  # its thread is already told (a second release of the lock would raise)
            self._stopped = True
            if self._job is None:
                self._go.release()

    def _run(self) -> None:
        while True:
            self._go.acquire()
            job, ticket, then = self._job, self._ticket, self._then
            if job is None or ticket is None:
                return  # stopped
            ticket.run(job)
            with self._lock:
                self._job = self._ticket = self._then = None
                self.started_at = None
                stopped = self._stopped
            (then or self._on_done)()
            if stopped:
                return


Step = Callable[["Lane | None"], Sequence[Ticket[Any]]]


class Round:
    """Steps taken in turn, as one job on one lane (``start``): each step runs once the step before is
    done, as long as each is done within ``turn_s`` of its start; the first that takes longer sets all
    the rest going at once (``broken``).

    A step is called with the lane the round runs on while the turns hold, or None once they are
    broken; it returns the tickets of what it started (none: nothing to wait for). A ticket it made
    with a job (given to no lane) is run there and then by the round, on its lane: no thread woken
    for it. A ticket given to another lane is waited for (``wait``) until the step's turn ends. Who
    first learns that a step ran past its turn breaks the turns, and starts the rest: the round's
    lane, when the step comes back or its wait ends; or the thread waiting for the round, woken at
    the turn's end (``overdue``), when the step is stuck in a call on the round's lane itself.

    The steps in ``optional`` are waited for only while the turns hold: once they are broken, ``done``
    does not wait for them (a call that may hang, and that the tick can do without). Once the lane is
    done with the round, it calls ``tell`` and then lets ``over`` return, the last thing it does.
    """

    def __init__(
        self,
        steps: Sequence[Step],
        turn_s: float,
        wait: Callable[[Sequence[Ticket[Any]], float], object],
        clock: Callable[[], float] = time.monotonic,
        optional: frozenset[int] = frozenset(),
        tell: Callable[[], None] = lambda: None,
    ) -> None:
        self._steps = steps
        self._turn_s = turn_s
        self._wait = wait
        self._clock = clock
        self._optional = optional
        self._tell = tell
        self._lock = threading.Lock()  # which steps are started, and how; between the lane and overdue()
        self._ended = threading.Lock()  # held until the lane is done with the round
        self._ended.acquire()
        self._next = 0
        self._running: int | None = None  # the step the lane is on
        self._since = 0.0  # when it began, on ``clock``
        self.broken = False
        # Per step: True when it was done within its turn, False when it took longer, None when it
        # was not run in turn (or started nothing).
        self.quick: list[bool | None] = [None] * len(steps)
        self.tickets: list[Ticket[Any]] = []  # what done() waits for
        self._optional_tickets: list[Ticket[Any]] = []  # what it waits for while the turns hold

    def start(self, lane: Lane, timeout_s: float) -> bool | None:
        """Take the steps on ``lane`` (its job), then wait for it as ``over`` does; None (nothing
        started) when the lane is busy or stopped. The first step's turn counts from now.

        Nothing between the lane's start and this thread's sleep: the lane takes the interpreter's
        lock at once, rather than wake, find it held, and sleep on it again."""
        self._since = self._clock()
        if lane.submit(functools.partial(self._run, lane), then=self._end) is None:
            return None
        return self._ended.acquire(True, max(0.0, timeout_s))

    def over(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the lane to be done with the round: True once it is."""
        return self._ended.acquire(True, max(0.0, timeout_s))

    def overdue(self) -> bool:
        """Called when the turn of the step being run may be over (or the first's, while the lane has
        not started it): if it is, the rest start at once. True once the turns are broken."""
        with self._lock:
            running = self._running
            turning = running is not None or self._next == 0
            if not self.broken and turning and self._clock() - self._since >= self._turn_s:
                if running is not None:
                    self.quick[running] = False
                self._break()
            return self.broken

    def turn_ends(self) -> float:
        """When (on ``clock``) the turn of the step being run ends (the first's: counted from start());
        infinity once the turns are broken."""
        return float("inf") if self.broken else self._since + self._turn_s

    def stop(self) -> None:
        """Start no more steps (the wait for the round is given up); the one running goes on."""
        with self._lock:
            self._next = len(self._steps)

    def done(self) -> bool:
        """Every step started and every ticket done (those of ``optional`` steps: unless the turns are broken)."""
        with self._lock:
            return (
                self._next == len(self._steps)
                and all(ticket.done for ticket in self.tickets)
                and (self.broken or all(ticket.done for ticket in self._optional_tickets))
            )

    def _run(self, lane: Lane) -> None:
        with self._lock:
            at, tickets = self._take(lane)
        while at is not None:
            since = self._since
            for ticket in tickets:
                if ticket.job is not None:
                    lane.started_at = time.time()
                    ticket.run()
            if not all(ticket.done for ticket in tickets):
                self._wait(tickets, since + self._turn_s)
            with self._lock:
                if self.broken:  # found past its turn meanwhile: the rest are started
                    return
                if tickets:
                    quick = all(ticket.done for ticket in tickets) and self._clock() - since <= self._turn_s
                    self.quick[at] = quick
                    if not quick:
                        self._break()
                        return
                # The next step is taken under the hold of the lock that judged this one: the thread
                # that looks for a step past its turn never finds the lane between two steps.
                at, tickets = self._take(lane)

    def _take(self, lane: Lane) -> tuple[int | None, Sequence[Ticket[Any]]]:
        """The next step in turn, started (under the lock); None once there is none."""
        if self.broken or self._next == len(self._steps):
            self._running = None
            return None, ()
        at = self._running = self._next
        self._next += 1
        self._since = self._clock()
        return at, self._keep(at, self._steps[at](lane))

    def _end(self) -> None:
        self._tell()
        self._ended.release()

    def _keep(self, at: int, tickets: Sequence[Ticket[Any]]) -> Sequence[Ticket[Any]]:
        (self._optional_tickets if at in self._optional else self.tickets).extend(tickets)
        return tickets

    def _break(self) -> None:
        self._running = None
        while self._next < len(self._steps):
            at = self._next
            self._next += 1
            self._keep(at, self._steps[at](None))
        self.broken = True  # last: a thread that sees it without the lock sees every step started
