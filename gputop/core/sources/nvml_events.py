"""Critical XID events from the driver, on a thread of their own.

The thread fetches each GPU's handle, registers it for
``nvmlEventTypeXidCriticalError``, then waits on the event set with a short
timeout, so it notices when it is stopped. Events are kept per GPU (the
newest ``KEEP`` of them) and read by the samplers without waiting: nothing
in the sampling path blocks on this thread, which may itself be stuck in a
driver call. A GPU that cannot register (NOT_SUPPORTED, or one that appeared
after the thread started) reports None; one not registered yet, no events.
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
WAIT_MS = 200
ERROR_PAUSE_S = 0.05
WAIT_VERSIONS = (pynvml.nvmlEventSetWait_v2, pynvml.nvmlEventSetWait)


def _address(handle: Any) -> int | None:
    return ctypes.cast(handle, ctypes.c_void_p).value


def nvmlDeviceRegisterEvents(handle: Any, event_types: int, event_set: Any) -> bool:  # noqa: N802 - NVML's name
    """pynvml's call, answering True so that the gateway's None means it failed."""
    pynvml.nvmlDeviceRegisterEvents(handle, event_types, event_set)
    return True


class XidEvents(threading.Thread):
    """Collects XID events for GPUs ``0 .. count-1``, by GPU index."""

    def __init__(self, gateway: Gateway, count: int, clock: Callable[[], float] = time.time) -> None:
        super().__init__(name="gputop-xid-events", daemon=True)
        self._gateway = gateway
        self._count = count
        self._clock = clock
        self._lock = threading.Lock()
        self._events: dict[int, deque[XidEvent]] = {}
        self._unsupported: set[int] = set()
        self._by_address: dict[int, int] = {}
        self._stopped = threading.Event()

    def run(self) -> None:
        try:
            event_set = self._gateway.call(pynvml.nvmlEventSetCreate)
        except DeviceLost:
            event_set = None
        if event_set is None:
            with self._lock:
                self._unsupported = set(range(self._count))
            return
        try:
            self._register(event_set)
            while not self._stopped.is_set() and self._by_address:
                self._wait(event_set)
        finally:
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

    def _wait(self, event_set: Any) -> None:
        started = time.monotonic()
        try:
            data = self._gateway.call_versions("event_wait", WAIT_VERSIONS, event_set, WAIT_MS)
        except DeviceLost:
            data = None
        if data is None:
            # A timeout (no event within WAIT_MS) or an error. One that came back at once is followed
            # by a pause, so that an error never spins; after a timeout the thread waits again at once
            # (each wake-up costs CPU, with nothing to read).
            if time.monotonic() - started < WAIT_MS / 2000:
                self._stopped.wait(ERROR_PAUSE_S)
            return
        index = self._by_address.get(_address(data.device) or 0)
        if index is not None and int(data.eventType) & pynvml.nvmlEventTypeXidCriticalError:
            with self._lock:
                self._events[index].append(XidEvent(int(data.eventData), self._clock()))

    def stop(self) -> None:
        self._stopped.set()

    def events(self, index: int) -> tuple[XidEvent, ...] | None:
        """The XID events seen for GPU ``index``, oldest first; None when it cannot report them."""
        with self._lock:
            if index in self._unsupported or index >= self._count:
                return None
            kept = self._events.get(index)
            return () if kept is None else tuple(kept)
