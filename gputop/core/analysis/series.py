"""One device's or process's history: parallel arrays of floats (NaN for a value not known), at most
``maxlen`` rows, the oldest dropped first; read as sequences with None for what was not known.

``core.analysis.history`` keeps one of these per GPU, MIG device and process, and feeds them.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar, overload

from gputop.core.model import Activity

_T = TypeVar("_T")
NAN = float("nan")


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
        stored = NAN if memory is None else memory
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
            self._activity = (array("d", [NAN]) * rows, array("d", [NAN]) * rows, array("d", [NAN]) * rows)
        figures = (None, None, None) if activity is None else (
            activity.sm_active, activity.tensor_active, activity.dram_active
        )
        for column, figure in zip(self._activity, figures, strict=True):
            column.append(NAN if figure is None else figure)

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
        self._temperature.append(NAN if temperature is None else temperature)
        self._utilization.append(NAN if utilization is None else utilization)
        self._power.append(NAN if power is None else power)
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
        self._sm_utilization.append(NAN if sm is None else sm)
        self._cpu_percent.append(NAN if cpu is None else cpu)
        self._host_memory.append(NAN if host is None else host)
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
