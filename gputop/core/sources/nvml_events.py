"""Critical XID events from the driver, on a thread of their own.

Every GPU is registered for ``nvmlEventTypeXidCriticalError`` once, at the
first sample; then the thread waits on the event set with a short timeout,
so it notices when it is stopped. Events are kept per GPU (the newest ``KEEP`` of them) and read by
the sampler without waiting: nothing in the sampling path blocks on this.
A GPU that cannot register (NOT_SUPPORTED, a MIG device) reports None.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pynvml

from gputop.core.model import XidEvent

if TYPE_CHECKING:
    from gputop.core.sources.nvml import Gateway

KEEP = 32
WAIT_MS = 200
WAIT_VERSIONS = (pynvml.nvmlEventSetWait_v2, pynvml.nvmlEventSetWait)


def _address(handle: Any) -> int | None:
    return ctypes.cast(handle, ctypes.c_void_p).value


def nvmlDeviceRegisterEvents(handle: Any, event_types: int, event_set: Any) -> bool:  # noqa: N802 - NVML's name
    """pynvml's call, answering True so the gateway's None means it failed."""
    pynvml.nvmlDeviceRegisterEvents(handle, event_types, event_set)
    return True


class XidEvents(threading.Thread):
    """Collects XID events for the GPUs whose handles it is given, by GPU index."""

    def __init__(self, gateway: Gateway, handles: dict[int, Any], clock: Callable[[], float] = time.time) -> None:
        super().__init__(name="gputop-xid-events", daemon=True)
        self._gateway = gateway
        self._handles = handles
        self._clock = clock
        self._lock = threading.Lock()
        self._events: dict[int, deque[XidEvent]] = {}
        self._by_address: dict[int, int] = {}
        self._stopped = threading.Event()
        self._event_set: Any = None

    @classmethod
    def start_for(cls, gateway: Gateway, handles: dict[int, Any]) -> XidEvents:
        """Register the GPUs now (so the first sample already knows which can report), then listen."""
        events = cls(gateway, {index: handle for index, handle in handles.items() if handle is not None})
        events._event_set = events._register()
        events.start()
        return events

    def _register(self) -> Any:
        from gputop.core.sources.nvml import DeviceLost

        try:
            event_set = self._gateway.call(pynvml.nvmlEventSetCreate)
        except DeviceLost:
            return None
        if event_set is None:
            return None
        for index, handle in self._handles.items():
            try:
                done = self._gateway.call(
                    nvmlDeviceRegisterEvents, handle, pynvml.nvmlEventTypeXidCriticalError, event_set
                )
            except DeviceLost:
                continue
            address = _address(handle)
            if done and address is not None:
                self._by_address[address] = index
                self._events[index] = deque(maxlen=KEEP)
        return event_set

    def run(self) -> None:
        event_set = self._event_set
        if event_set is None or not self._events:
            return
        from gputop.core.sources.nvml import DeviceLost

        try:
            while not self._stopped.is_set():
                try:
                    data = self._gateway.call_versions("event_wait", WAIT_VERSIONS, event_set, WAIT_MS)
                except DeviceLost:
                    data = None
                if data is None:
                    # A timeout (no event within WAIT_MS) or an error: a pause, so an error never spins.
                    self._stopped.wait(0.05)
                    continue
                index = self._by_address.get(_address(data.device) or 0)
                if index is not None and int(data.eventType) & pynvml.nvmlEventTypeXidCriticalError:
                    with self._lock:
                        self._events[index].append(XidEvent(int(data.eventData), self._clock()))
        finally:
            with contextlib.suppress(DeviceLost):
                self._gateway.call(pynvml.nvmlEventSetFree, event_set)

    def stop(self) -> None:
        self._stopped.set()

    def events(self, index: int) -> tuple[XidEvent, ...] | None:
        """The XID events seen for GPU ``index``, oldest first; None when it is not registered."""
        with self._lock:
            kept = self._events.get(index)
            return None if kept is None else tuple(kept)
