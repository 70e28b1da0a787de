"""Critical XID events from the driver, taken once a tick without waiting.

``poll()`` is the tick's last step, run on the lane that has just read the GPUs
(nvml.py; a lane of its own once a GPU slower than its turn has set the rest going
at once): the first poll creates the event set and registers each GPU for
``nvmlEventTypeXidCriticalError``; every poll then takes the events the set holds,
each wait given 0 ms (a driver with nothing to say answers TIMEOUT at once). The
driver keeps the events in the set until they are taken, so an XID raised since the
last tick joins this one (the source joins them to the GPUs' samples); a thread of
its own, waiting on the set with a timeout to notice when it is stopped, woke five
times a second for nothing. A poll that hangs in the driver blocks only the lane it
runs on: the tick does not wait for it past its turn, the source does not start
another while it is out, and the next tick's GPUs are read on another lane. An
event's time is when it was taken (NVML's events carry none): within an interval
of when the driver raised it. Events are kept per GPU (the newest ``KEEP`` of them)
and read by the GPUs' reads under a lock. A GPU that cannot register (NOT_SUPPORTED, or one that
appeared after the set was made) reports None; one not registered yet, no events.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import pynvml

from gputop.core.model import XidEvent
from gputop.core.sources.nvml_gateway import DeviceLost, Gateway

KEEP = 32
# How many events one poll takes at most: a driver that kept answering with events never ends a tick's step.
MOST_A_POLL = 64
WAIT_VERSIONS = (pynvml.nvmlEventSetWait_v2, pynvml.nvmlEventSetWait)


def _address(handle: Any) -> int | None:
    return ctypes.cast(handle, ctypes.c_void_p).value


def nvmlDeviceRegisterEvents(handle: Any, event_types: int, event_set: Any) -> bool:  # noqa: N802 - NVML's name
    """pynvml's call, answering True so that the gateway's None means it failed."""
    pynvml.nvmlDeviceRegisterEvents(handle, event_types, event_set)
    return True


class XidEvents:
    """Collects XID events for GPUs ``0 .. count-1``, by GPU index.

    ``poll`` and ``close`` are called on one lane at a time (never two at once); ``events`` on any thread.
    """

    def __init__(self, gateway: Gateway, count: int, clock: Callable[[], float] = time.time) -> None:
        self._gateway = gateway
        self._count = count
        self._clock = clock
        self._lock = threading.Lock()
        self._events: dict[int, deque[XidEvent]] = {}
        self._unsupported: set[int] = set()
        self._by_address: dict[int, int] = {}
        self._event_set: Any = None
        self._created = False
        self._closed = False
        # Whether the first poll has registered the GPUs (or found it could not), and whether a tick has begun
        # since (``publish``): until then every GPU has seen no event yet, whichever thread finished first (a
        # tick's reads and the registration run at once), and none is yet one that cannot report them.
        self._registered = False
        self._published = False

    def poll(self) -> None:
        """Take every event the driver holds (registering the GPUs first, the first time)."""
        if self._closed:
            return
        if not self._created:
            self._created = True
            with contextlib.suppress(DeviceLost):
                self._event_set = self._gateway.call(pynvml.nvmlEventSetCreate)
            if self._event_set is None:
                with self._lock:
                    self._unsupported = set(range(self._count))
                    self._registered = True
                return
            self._register(self._event_set)
            with self._lock:
                self._registered = True
        if self._event_set is None or not self._by_address:
            return
        for _ in range(MOST_A_POLL):
            try:
                # A timeout (nothing held) or an error: nothing more this tick; the next tick asks again.
                data = self._gateway.call_versions("event_wait", WAIT_VERSIONS, self._event_set, 0)
            except DeviceLost:
                return
            if data is None:
                return
            index = self._by_address.get(_address(data.device) or 0)
            if index is not None and int(data.eventType) & pynvml.nvmlEventTypeXidCriticalError:
                with self._lock:
                    self._events[index].append(XidEvent(int(data.eventData), self._clock()))

    def close(self) -> None:
        """Free the event set (no poll may be out); later polls take nothing."""
        self._closed = True
        event_set, self._event_set = self._event_set, None
        if event_set is not None:
            with contextlib.suppress(DeviceLost):
                self._gateway.call(pynvml.nvmlEventSetFree, event_set)

    def _register(self, event_set: Any) -> None:
        for index in range(self._count):
            done, handle = None, None
            with contextlib.suppress(DeviceLost):
                handle = self._gateway.call(pynvml.nvmlDeviceGetHandleByIndex, index)
                if handle is not None:
                    done = self._gateway.call(
                        nvmlDeviceRegisterEvents, handle, pynvml.nvmlEventTypeXidCriticalError, event_set
                    )
            address = None if handle is None else _address(handle)
            with self._lock:
                if done and address is not None:
                    self._by_address[address] = index
                    self._events[index] = deque(maxlen=KEEP)
                else:
                    self._unsupported.add(index)

    def publish(self) -> None:
        """A tick begins (on the thread that takes the ticks): what the first poll registered shows from the
        first tick that begins after it."""
        with self._lock:
            self._published = self._registered

    def events(self, index: int) -> tuple[XidEvent, ...] | None:
        """The XID events seen for GPU ``index``, oldest first; None when it cannot report them. Until the
        tick after the GPUs were registered (``publish``), none seen."""
        with self._lock:
            if index >= self._count:
                return None
            if not self._published:
                return ()
            if index in self._unsupported:
                return None
            kept = self._events.get(index)
            return () if kept is None else tuple(kept)
