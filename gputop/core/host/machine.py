"""Whole-host figures from psutil: CPU, memory, swap, load, network rates.

CPU % and the network's rates are differences between two readings. The first reading is taken
when the reader is made (before the first frame), so the first sample already has an interval
behind it and can show the truth; a figure is computed only over at least ``MIN_SPAN_S``: over a
few milliseconds the kernel's counters (100 ticks a second) have not moved, and a busy host would
read 0 %. Until then a figure is None (not known yet), never 0.

The network is the machine's traffic: by default only the interfaces with a device behind them
(``/sys/class/net/NAME/device``), so loopback, bridges, veth pairs, VLANs and bonds over counted
NICs neither add nor count twice; ``net_interfaces`` (names or shell patterns) chooses others.

The three files read each tick (``/proc/meminfo``, ``/proc/stat``, ``/proc/net/dev``) are held open
and read again from their start: the kernel writes them afresh at each read from the start, so a
reading is as new as one from a file opened for it, in one call where opening, reading and closing
through a Python file object took eight or nine.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from fnmatch import fnmatchcase
from pathlib import Path

import psutil

from gputop.core.host.procfs import CLOCK_TICKS, MIN_SPAN_S
from gputop.core.model import HostSample

SYS_CLASS_NET = Path("/sys/class/net")
PROC_MEMINFO = Path("/proc/meminfo")
PROC_NET_DEV = Path("/proc/net/dev")
PROC_STAT = Path("/proc/stat")
# /proc/stat's first line (the CPUs summed): ten numbers of at most twenty digits.
_STAT_LINE = 512
_MEMINFO_KEYS = (b"\nMemTotal:", b"\nMemAvailable:", b"\nSwapTotal:", b"\nSwapFree:")  # at a line's start


def physical_interfaces(names: Sequence[str], sys_class_net: Path = SYS_CLASS_NET) -> tuple[str, ...]:
    """Those of ``names`` with a device behind them (a NIC, real or paravirtual), in the order given."""
    return tuple(name for name in names if (sys_class_net / name / "device").exists())


def chosen_interfaces(
    names: Sequence[str], patterns: Sequence[str] | None, sys_class_net: Path = SYS_CLASS_NET
) -> tuple[str, ...]:
    """The interfaces counted: those matching one of ``patterns``, or the physical ones where None."""
    if patterns is None:
        return physical_interfaces(names, sys_class_net)
    return tuple(name for name in names if any(fnmatchcase(name, pattern) for pattern in patterns))


class HeldFile:
    """A file held open, read whole from its start at each ``read()``: one ``pread`` a reading.

    Opened at the first reading; one that fails closes it, and the next opens it again. Closed when
    the object goes (never by another thread while a reading may be under way: its descriptor's
    number could by then be another file's).
    """

    __slots__ = ("path", "_fd", "_size")

    def __init__(self, path: Path, size: int = 4096) -> None:
        self.path = path
        self._fd: int | None = None
        self._size = size  # the buffer a reading asks for; doubled while a file fills it

    def read(self, limit: int | None = None) -> bytes:
        """The whole file, or its first ``limit`` bytes at most; raises OSError."""
        fd = self._fd
        if fd is None:
            fd = self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            if limit is not None:
                return os.pread(fd, limit, 0)
            data = os.pread(fd, self._size, 0)
            while len(data) == self._size:  # maybe more: the whole file again, in a bigger buffer
                self._size *= 2
                data = os.pread(fd, self._size, 0)
        except OSError:
            self.close()
            raise
        return data

    def close(self, _close: Callable[[int], None] = os.close) -> None:
        # os.close bound here: __del__ may run at interpreter exit, when module globals may be gone.
        fd, self._fd = self._fd, None
        if fd is not None:
            _close(fd)

    def __del__(self) -> None:
        self.close()


def read_meminfo(path: Path | HeldFile = PROC_MEMINFO) -> tuple[int, int, int, int] | None:
    """Memory total and available, swap total and free (bytes), from one read of ``/proc/meminfo``;
    None where it cannot be read or lacks one of them (a kernel before 3.14 has no MemAvailable).

    psutil's virtual_memory() and swap_memory() read the file twice, and /proc/vmstat for swap-ins
    gputop does not show: 140 us a tick, where this takes 20.
    """
    try:
        text = b"\n" + _read(path)
    except OSError:
        return None
    # Each of the four looked up where its line starts, rather than the fifty-odd lines split and
    # tried one by one: 18 us a tick, where that took 23.
    figures = []
    for key in _MEMINFO_KEYS:
        at = text.find(key)
        if at < 0:
            return None
        at += len(key)
        end = text.find(b"\n", at)
        figures.append(int(text[at : None if end < 0 else end].split()[0]) * 1024)  # "   16316528 kB"
    total, available, swap_total, swap_free = figures
    return total, available, swap_total, swap_free


def _read(path: Path | HeldFile) -> bytes:
    if isinstance(path, HeldFile):
        return path.read()
    with open(path, "rb") as file:
        return file.read()


def read_net_dev(path: Path | HeldFile = PROC_NET_DEV) -> dict[str, tuple[int, int]] | None:
    """Bytes received and sent by each interface, from ``/proc/net/dev`` (as psutil reads it, without
    its tuple of eight counters per interface: 65 us a tick, where this takes 15); None where it
    cannot be read."""
    try:
        lines = _read(path).splitlines()[2:]  # two lines of headings
        counters = {}
        for line in lines:
            name, _, fields = line.rpartition(b":")
            figures = fields.split()
            counters[name.strip().decode()] = (int(figures[0]), int(figures[8]))
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return None
    return counters


def _psutil_memory() -> tuple[int, int, int, int]:
    """read_meminfo()'s figures from psutil, where /proc/meminfo does not give them all."""
    memory, swap = psutil.virtual_memory(), psutil.swap_memory()
    return memory.total, memory.available, swap.total, swap.total - swap.used


def read_cpu_times(stat: HeldFile) -> tuple[float, float] | None:
    """Seconds of CPU time busy and in all since boot, summed over the CPUs, from the first line of
    ``/proc/stat`` (as psutil's cpu_times() reads it, and by its rule: guest time is already in user
    time, and waiting for I/O is idle); None where it cannot be read."""
    try:
        line = stat.read(_STAT_LINE)
    except OSError:
        return None
    end = line.find(b"\n")
    if not line.startswith(b"cpu ") or end < 0:
        return None
    # cpu  user nice system idle iowait irq softirq steal guest guest_nice (older kernels: fewer)
    ticks = [int(field) for field in line[4:end].split()]
    if len(ticks) < 4:
        return None
    total = sum(ticks) - sum(ticks[8:10])
    idle = sum(ticks[3:5])
    return (total - idle) / CLOCK_TICKS, total / CLOCK_TICKS


def _cpu_busy_total() -> tuple[float, float]:
    """read_cpu_times()'s figures from psutil, where /proc/stat does not give them."""
    times = psutil.cpu_times()
    total = sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
    idle = times.idle + getattr(times, "iowait", 0.0)
    return total - idle, total


class HostReader:
    """Reads the host each tick; CPU % and rates from the difference with an earlier reading."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        net_interfaces: Sequence[str] | None = None,
        sys_class_net: Path = SYS_CLASS_NET,
        meminfo: Path = PROC_MEMINFO,
        net_dev: Path = PROC_NET_DEV,
    ) -> None:
        self._clock = clock
        self._meminfo = HeldFile(meminfo)
        self._net_dev = HeldFile(net_dev)
        self._stat = HeldFile(PROC_STAT)
        self._net_patterns = None if net_interfaces is None else tuple(net_interfaces)
        self._sys_class_net = sys_class_net
        self._cpu_percent: float | None = None
        self._net_rates: tuple[float | None, float | None] = (None, None)
        self._names: tuple[str, ...] | None = None  # the interfaces there were at the last reading
        self._counted: tuple[str, ...] = ()  # those of them counted
        # The first readings, now: the first sample is then a difference over the time until it.
        self._cpu_read = (self._clock(), *self._cpu_times())
        self._net_read = (self._clock(), self._net_counters())

    def sample(self) -> HostSample:
        total, available, swap_total, swap_free = read_meminfo(self._meminfo) or _psutil_memory()
        try:
            load: tuple[float, float, float] | None = os.getloadavg()
        except OSError:
            load = None
        counted = self._read_network()
        return HostSample(
            cpu_percent=self._read_cpu(),
            memory_total=total,
            memory_used=total - available,
            swap_total=swap_total,
            swap_used=swap_total - swap_free,
            load_average=load,
            net_rx_rate=self._net_rates[0],
            net_tx_rate=self._net_rates[1],
            net_interfaces=counted,
        )

    def _read_cpu(self) -> float | None:
        now = self._clock()
        then, busy_then, total_then = self._cpu_read
        if now - then < MIN_SPAN_S:
            return self._cpu_percent  # too soon: the figure of the last interval long enough
        busy, total = self._cpu_times()
        self._cpu_read = (now, busy, total)
        if total > total_then:
            self._cpu_percent = round(min(100.0, max(0.0, 100.0 * (busy - busy_then) / (total - total_then))), 1)
        return self._cpu_percent

    def _cpu_times(self) -> tuple[float, float]:
        return read_cpu_times(self._stat) or _cpu_busy_total()

    def _net_counters(self) -> dict[str, tuple[int, int]] | None:
        """Bytes received and sent per counted interface; None where neither /proc nor psutil gives them."""
        counters = read_net_dev(self._net_dev)
        if counters is None:
            try:
                counters = {
                    name: (nic.bytes_recv, nic.bytes_sent) for name, nic in psutil.net_io_counters(pernic=True).items()
                }
            except (OSError, RuntimeError):
                return None
        names = tuple(sorted(counters))
        if names != self._names:
            # Chosen again only when interfaces come or go: a node with hundreds of veth pairs would
            # otherwise look in /sys for each of them every tick.
            self._names = names
            self._counted = chosen_interfaces(names, self._net_patterns, self._sys_class_net)
        return {name: counters[name] for name in self._counted}

    def _read_network(self) -> tuple[str, ...] | None:
        """Update the rates when the interval allows; the interfaces counted (None: not readable)."""
        now = self._clock()
        then, before = self._net_read
        if now - then < MIN_SPAN_S:
            return None if before is None else tuple(before)
        counters = self._net_counters()
        self._net_read = (now, counters)
        if counters is None:
            self._net_rates = (None, None)
            return None
        # Interface by interface: one that comes or goes between readings adds nothing false.
        common = [name for name in counters if before is not None and name in before]
        if not common:
            self._net_rates = (None, None)
        else:
            assert before is not None
            elapsed = now - then
            received = sum(max(0, counters[name][0] - before[name][0]) for name in common)
            sent = sum(max(0, counters[name][1] - before[name][1]) for name in common)
            self._net_rates = (received / elapsed, sent / elapsed)
        return tuple(counters)
