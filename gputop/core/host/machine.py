"""Whole-host figures from psutil: CPU, memory, swap, load, network rates."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import psutil

from gputop.core.model import HostSample


class HostReader:
    """Reads the host each tick; rates come from the difference with the previous tick."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last_net: tuple[float, int, int] | None = None
        self._cpu_primed = False

    def sample(self) -> HostSample:
        cpu: float | None = psutil.cpu_percent(None)
        if not self._cpu_primed:
            # psutil's first figure covers no interval: it means nothing yet.
            self._cpu_primed = True
            cpu = None
        memory = psutil.virtual_memory()
        swap = psutil.swap_memory()
        try:
            load: tuple[float, float, float] | None = os.getloadavg()
        except OSError:
            load = None
        rx_rate, tx_rate = self._net_rates()
        return HostSample(
            cpu_percent=cpu,
            memory_total=memory.total,
            memory_used=memory.total - memory.available,
            swap_total=swap.total,
            swap_used=swap.used,
            load_average=load,
            net_rx_rate=rx_rate,
            net_tx_rate=tx_rate,
        )

    def _net_rates(self) -> tuple[float | None, float | None]:
        counters = psutil.net_io_counters()
        now = self._clock()
        if counters is None:
            return None, None
        last, self._last_net = self._last_net, (now, counters.bytes_recv, counters.bytes_sent)
        if last is None or now <= last[0]:
            return None, None
        elapsed = now - last[0]
        return (
            max(0, counters.bytes_recv - last[1]) / elapsed,
            max(0, counters.bytes_sent - last[2]) / elapsed,
        )
