"""Bounded histories of GPUs, MIG devices and processes, fed one Snapshot at a time.

Every series is a set of parallel arrays of floats (NaN for a value not known) with a fixed
``maxlen``, so memory is bounded by count whatever the tick rate: 8 bytes a value, where a
deque of Python objects took 40 (a GPU's full hour is 144 KiB, not 720). Processes (and
devices) missing from a snapshot are dropped at once, so a machine that starts a new PID every
second does not grow the history.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from gputop.core.analysis.process_rows import ProcessRows, process_rows
from gputop.core.analysis.series import NAN as _NAN
from gputop.core.analysis.series import GpuHistory, MemorySeries, MigHistory, ProcessHistory
from gputop.core.model import ProcessIdentity, ProcessSample, Snapshot

# The series are read through this module too (``history.gpu(0)`` is a GpuHistory).
__all__ = [
    "DEFAULT_GPU_MAXLEN",
    "DEFAULT_PROCESS_MAXLEN",
    "GpuHistory",
    "History",
    "MemorySeries",
    "MigHistory",
    "MigKey",
    "ProcessHistory",
]

DEFAULT_GPU_MAXLEN = 3600
DEFAULT_PROCESS_MAXLEN = 300

MigKey = tuple[int, int]  # (gpu index, MIG device index)


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
