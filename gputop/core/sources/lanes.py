"""One thread per device, so that a call that hangs blocks only its own device.

ctypes releases the GIL during a foreign call, so a lane stuck in the driver
costs nothing but its thread. A lane runs one job at a time and refuses a new
one while the last is still running: calls never pile up behind a hung one,
and the number of threads stays one per device.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
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
