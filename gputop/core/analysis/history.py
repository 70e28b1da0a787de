"""Bounded histories of GPUs, MIG devices and processes, fed one Snapshot at a time.

Every series is a set of parallel arrays of floats (NaN for a value not known) with a fixed
``maxlen``, so memory is bounded by count whatever the tick rate: 8 bytes a value, where a
deque of Python objects took 40 (a GPU's full hour is 144 KiB, not 720). Processes (and
devices) missing from a snapshot are dropped at once, so a machine that starts a new PID every
second does not grow the history.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TypeVar, overload

from gputop.core.analysis.process_rows import ProcessRows, process_rows
from gputop.core.model import Activity, ProcessIdentity, ProcessSample, Snapshot

DEFAULT_GPU_MAXLEN = 3600
DEFAULT_PROCESS_MAXLEN = 300

MigKey = tuple[int, int]  # (gpu index, MIG device index)
_T = TypeVar("_T")
_NAN = float("nan")


class _Series(Sequence["_T | None"]):
    """A read-only view of one figure of a history, None where NaN is stored."""

    __slots__ = ("_values", "_convert")

    def __init__(self, values: array[float], convert: Callable[[float], _T]) -> None:
        self._values = values
        self._convert = convert

    def __len__(self) -> int:
        return len(self._values)

    @overload
    def __getitem__(self, index: int) -> _T | None: ...

    @overload
    def __getitem__(self, index: slice) -> list[_T | None]: ...

    def __getitem__(self, index: int | slice) -> _T | None | list[_T | None]:
        if isinstance(index, slice):
            return [None if v != v else self._convert(v) for v in self._values[index]]
        value = self._values[index]
        return None if value != value else self._convert(value)

    def __iter__(self) -> Iterator[_T | None]:
        convert = self._convert
        return iter([None if v != v else convert(v) for v in self._values])

    def __reversed__(self) -> Iterator[_T | None]:
        # From the newest: a sparkline reads a few dozen values of thousands.
        convert = self._convert
        return (None if v != v else convert(v) for v in reversed(self._values))


class MemorySeries:
    """Timestamps and memory in use, the part of a series a forecast reads."""

    __slots__ = ("_maxlen", "_timestamps", "_memory", "last_memory_change")

    def __init__(self, maxlen: int) -> None:
        self._maxlen = maxlen
        self._timestamps = array("d")
        self._memory = array("d")
        # Time of the newest sample whose memory differed from the one before;
        # None while memory has never changed. Lets a forecast skip flat series.
        self.last_memory_change: float | None = None

    def _columns(self) -> tuple[array[float], ...]:
        """Every figure's array (the oldest row of each is dropped together)."""
        return self._timestamps, self._memory

    def _add_memory(self, timestamp: float, memory: int | None) -> None:
        stored = _NAN if memory is None else memory
        memories = self._memory
        if memories:
            last = memories[-1]
            if last != stored and not (last != last and stored != stored):  # NaN to NaN: unknown still
                self.last_memory_change = timestamp
        self._timestamps.append(timestamp)
        memories.append(stored)

    def _trim(self) -> None:
        """Drop the oldest row once there are more than ``maxlen``."""
        if len(self._timestamps) > self._maxlen:
            for column in self._columns():
                del column[0]

    @property
    def timestamps(self) -> Sequence[float]:
        return self._timestamps

    @property
    def memory(self) -> Sequence[int | None]:
        """Memory in use: ``memory_used`` of a device, ``gpu_memory`` of a process."""
        return _Series(self._memory, int)

    def __len__(self) -> int:
        return len(self._timestamps)


class MigHistory(MemorySeries):
    """One MIG device: (timestamp, memory_used)."""

    __slots__ = ()

    def _add(self, timestamp: float, memory: int | None) -> None:
        self._add_memory(timestamp, memory)
        self._trim()

    @property
    def memory_used(self) -> Sequence[int | None]:
        return _Series(self._memory, int)


class GpuHistory(MemorySeries):
    """One GPU: (timestamp, memory_used, temperature, utilization, power), and from the first tick
    that has GPM activity, SM active, tensor active and DRAM bandwidth (percent)."""

    __slots__ = ("_temperature", "_utilization", "_power", "memory_total", "_activity")

    def __init__(self, maxlen: int) -> None:
        super().__init__(maxlen)
        self._temperature = array("d")
        self._utilization = array("d")
        self._power = array("d")
        # The GPU's memory size as last reported: the memory sparkline's scale through a gap.
        self.memory_total: int | None = None
        # SM active, tensor active, DRAM: none kept (no memory spent) for a GPU that never had GPM.
        self._activity: tuple[array[float], array[float], array[float]] | None = None

    def _columns(self) -> tuple[array[float], ...]:
        columns = (self._timestamps, self._memory, self._temperature, self._utilization, self._power)
        return columns if self._activity is None else columns + self._activity

    def _add_activity(self, activity: Activity | None) -> None:
        """This tick's activity, before ``_add`` (which trims every column together)."""
        if self._activity is None:
            if activity is None:
                return
            rows = len(self._timestamps)  # the ticks before GPM answered: unknown
            self._activity = (array("d", [_NAN]) * rows, array("d", [_NAN]) * rows, array("d", [_NAN]) * rows)
        figures = (None, None, None) if activity is None else (
            activity.sm_active, activity.tensor_active, activity.dram_active
        )
        for column, figure in zip(self._activity, figures, strict=True):
            column.append(_NAN if figure is None else figure)

    @property
    def has_activity(self) -> bool:
        """Whether GPM activity was ever seen on this GPU (in the history held)."""
        return self._activity is not None

    def _activity_series(self, column: int) -> Sequence[float | None]:
        return () if self._activity is None else _Series(self._activity[column], float)

    @property
    def sm_active(self) -> Sequence[float | None]:
        return self._activity_series(0)

    @property
    def tensor_active(self) -> Sequence[float | None]:
        return self._activity_series(1)

    @property
    def dram_active(self) -> Sequence[float | None]:
        return self._activity_series(2)

    def _add(
        self, timestamp: float, memory: int | None, temperature: float | None, utilization: float | None,
        power: float | None,
    ) -> None:
        self._add_memory(timestamp, memory)
        self._temperature.append(_NAN if temperature is None else temperature)
        self._utilization.append(_NAN if utilization is None else utilization)
        self._power.append(_NAN if power is None else power)
        self._trim()

    @property
    def memory_used(self) -> Sequence[int | None]:
        return _Series(self._memory, int)

    @property
    def temperature(self) -> Sequence[float | None]:
        return _Series(self._temperature, float)

    @property
    def utilization(self) -> Sequence[float | None]:
        return _Series(self._utilization, float)

    @property
    def power(self) -> Sequence[float | None]:
        return _Series(self._power, float)


class ProcessHistory(MemorySeries):
    """One process: (timestamp, GPU memory summed over every GPU it uses, its highest SM %, CPU %,
    host memory).

    There is one of these per GPU process, thousands on a big machine: a deque costs 760 bytes
    before its first value, an array 64.
    """

    __slots__ = ("_sm_utilization", "_cpu_percent", "_host_memory")

    def __init__(self, maxlen: int) -> None:
        super().__init__(maxlen)
        self._sm_utilization = array("d")
        self._cpu_percent = array("d")
        self._host_memory = array("d")

    def _add(
        self, timestamp: float, memory: int | None, sm: float | None, cpu: float | None, host: int | None
    ) -> None:
        # Appended here, not through a loop over the columns: thousands of processes a tick.
        self._add_memory(timestamp, memory)
        self._sm_utilization.append(_NAN if sm is None else sm)
        self._cpu_percent.append(_NAN if cpu is None else cpu)
        self._host_memory.append(_NAN if host is None else host)
        if len(self._timestamps) > self._maxlen:
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        # Every column's oldest row in one statement, rather than _trim's loop over _columns(): every
        # process, every tick, once full.
        del self._timestamps[0], self._memory[0], self._sm_utilization[0], self._cpu_percent[0]
        del self._host_memory[0]

    @property
    def gpu_memory(self) -> Sequence[int | None]:
        return _Series(self._memory, int)

    @property
    def sm_utilization(self) -> Sequence[float | None]:
        return _Series(self._sm_utilization, float)

    @property
    def cpu_percent(self) -> Sequence[float | None]:
        return _Series(self._cpu_percent, float)

    @property
    def host_memory(self) -> Sequence[int | None]:
        return _Series(self._host_memory, int)


# A process history and what one tick adds to it: GPU memory, SM %, CPU %, host memory.
_Figures = tuple[ProcessHistory, int | None, float | None, float | None, int | None]
# A process history's timestamp column, each figure column's append with the figure it stores, and the history.
_Append = Callable[[float], None]
_Appends = tuple["array[float]", _Append, float, _Append, float, _Append, float, _Append, float, ProcessHistory]


class History:
    """Histories of every GPU, MIG device and process seen in the latest snapshot."""

    def __init__(
        self,
        gpu_maxlen: int = DEFAULT_GPU_MAXLEN,
        process_maxlen: int = DEFAULT_PROCESS_MAXLEN,
    ) -> None:
        if gpu_maxlen < 1 or process_maxlen < 1:
            raise ValueError("history lengths must be at least 1")
        self.gpu_maxlen = gpu_maxlen
        self.process_maxlen = process_maxlen
        self._timestamps = array("d")
        self._gpus: dict[int, GpuHistory] = {}
        self._migs: dict[MigKey, MigHistory] = {}
        self._processes: dict[ProcessIdentity, ProcessHistory] = {}
        # The process rows last added, and what each of their histories was given from them.
        self._rows: ProcessRows | None = None
        self._process_figures: list[_Figures] = []
        # While the rows stay the same: each history's appends of its figures (made on the first such tick).
        self._appends: list[_Appends] | None = None
        # Counts the times the processes' histories were given other figures (new rows) or cleared: while
        # it stays, every process history was given last tick's figures again.
        self.process_figures_version = 0

    def clear(self) -> None:
        self._timestamps = array("d")
        self._gpus = {}
        self._migs = {}
        self._processes = {}
        self._rows = None
        self._process_figures = []
        self._appends = None
        self.process_figures_version += 1

    def add(self, snapshot: Snapshot) -> None:
        """Append one snapshot.

        A snapshot no newer than the last one is ignored; one older than the
        last (a replay rewound, the clock stepped back) starts the history over,
        so every series stays in time order.
        """
        now = snapshot.timestamp
        if self._timestamps:
            last = self._timestamps[-1]
            if now == last:
                return
            if now < last:
                self.clear()
        self._timestamps.append(now)
        if len(self._timestamps) > self.gpu_maxlen:
            del self._timestamps[0]

        old_gpus, old_migs = self._gpus, self._migs
        gpus: dict[int, GpuHistory] = {}
        migs: dict[MigKey, MigHistory] = {}
        for gpu in snapshot.gpus:
            gpu_history = old_gpus.get(gpu.index) or GpuHistory(self.gpu_maxlen)
            gpu_history._add_activity(gpu.activity)
            gpu_history._add(now, gpu.memory_used, gpu.temperature, gpu.utilization_gpu, gpu.power_draw)
            if gpu.memory_total is not None:
                gpu_history.memory_total = gpu.memory_total
            gpus[gpu.index] = gpu_history
            for mig in gpu.mig_devices:
                key = (gpu.index, mig.index)
                mig_history = old_migs.get(key) or MigHistory(self.gpu_maxlen)
                mig_history._add(now, mig.memory_used)
                migs[key] = mig_history
        self._gpus, self._migs = gpus, migs

        rows = process_rows(snapshot)
        if rows is not self._rows:
            self._rows = rows
            self._processes, self._process_figures = self._process_histories(rows)
            self._appends = None
            self.process_figures_version += 1
            for process_history, memory, sm, cpu, host in self._process_figures:
                process_history._add(now, memory, sm, cpu, host)
            return
        # The same rows as last tick (process_rows keeps them while every list is the same object: an
        # idle machine's ticks): each history is given what it was given last tick, so its memory has not
        # changed (last_memory_change stays); the values stored and the arrays' appends are kept from
        # tick to tick, rather than two method calls and four None tests a process.
        appends = self._appends
        if appends is None:
            appends = self._appends = [_appends(*figures) for figures in self._process_figures]
        maxlen = self.process_maxlen
        for stamps, add_memory, memory_at, add_sm, sm_at, add_cpu, cpu_at, add_host, host_at, kept in appends:
            stamps.append(now)
            add_memory(memory_at)
            add_sm(sm_at)
            add_cpu(cpu_at)
            add_host(host_at)
            if len(stamps) > maxlen:
                kept._drop_oldest()

    def _process_histories(self, rows: ProcessRows) -> tuple[dict[ProcessIdentity, ProcessHistory], list[_Figures]]:
        """Each row's history (a new one for a process not seen last tick) and the figures it adds."""
        more = rows.more
        old_processes = self._processes
        processes: dict[ProcessIdentity, ProcessHistory] = {}
        figures: list[_Figures] = []
        for identity, process in rows.first.items():
            process_history = old_processes.get(identity)
            if process_history is None:
                process_history = ProcessHistory(self.process_maxlen)
            if more and identity in more:
                memory, sm = _merged(more[identity])
            else:
                memory, sm = process.gpu_memory, process.sm_utilization
            figures.append((process_history, memory, sm, process.cpu_percent, process.host_memory))
            processes[identity] = process_history
        return processes, figures

    def __len__(self) -> int:
        """Number of snapshots held (at most ``gpu_maxlen``)."""
        return len(self._timestamps)

    @property
    def timestamps(self) -> Sequence[float]:
        return self._timestamps

    def gpu(self, index: int) -> GpuHistory:
        """The history of GPU ``index``; KeyError if the last snapshot lacked it."""
        return self._gpus[index]

    def mig(self, gpu_index: int, mig_index: int) -> MigHistory:
        """The history of one MIG device; KeyError if the last snapshot lacked it."""
        return self._migs[(gpu_index, mig_index)]

    def process(self, identity: ProcessIdentity) -> ProcessHistory:
        """The history of one process; KeyError if the last snapshot lacked it."""
        return self._processes[identity]

    @property
    def gpus(self) -> Mapping[int, GpuHistory]:
        return MappingProxyType(self._gpus)

    @property
    def migs(self) -> Mapping[MigKey, MigHistory]:
        return MappingProxyType(self._migs)

    @property
    def processes(self) -> Mapping[ProcessIdentity, ProcessHistory]:
        return MappingProxyType(self._processes)


def _appends(
    process_history: ProcessHistory, memory: int | None, sm: float | None, cpu: float | None, host: int | None
) -> _Appends:
    """A process history's timestamp column, each figure column's append with the figure it stores, and
    the history."""
    return (
        process_history._timestamps,
        process_history._memory.append, _NAN if memory is None else memory,
        process_history._sm_utilization.append, _NAN if sm is None else sm,
        process_history._cpu_percent.append, _NAN if cpu is None else cpu,
        process_history._host_memory.append, _NAN if host is None else host,
        process_history,
    )


def _merged(rows: list[ProcessSample]) -> tuple[int | None, float | None]:
    """A process with a row on several GPUs: its memory summed over them (None where unknown everywhere),
    its SM % its busiest GPU's (its host figures are the same on every one)."""
    memory: int | None = None
    busiest: float | None = None
    for process in rows:
        more, sm = process.gpu_memory, process.sm_utilization
        if more is not None:
            memory = more if memory is None else memory + more
        if sm is not None and (busiest is None or sm > busiest):
            busiest = sm
    return memory, busiest
