"""One sample of the machine per tick: GPUs from the source, host facts from psutil."""

from __future__ import annotations

import dataclasses
import operator
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from gputop.core.frozen_copy import copier
from gputop.core.host.machine import HostReader
from gputop.core.host.podresources import PodResources, with_allocations
from gputop.core.host.procinfo import HostFacts, ProcessInfo
from gputop.core.model import GpuSample, HostSample, MigSample, ProcessIdentity, ProcessSample, Snapshot
from gputop.core.sources.base import GpuSource, ReadsBeside

if TYPE_CHECKING:  # the process screen's reader, imported when a process is opened
    from gputop.core.host.procdetail import ProcessDetail

MIN_INTERVAL_S = 0.1
MAX_INTERVAL_S = 3600.0


class Sampler:
    """Turns one source into Snapshots."""

    def __init__(
        self,
        source: GpuSource,
        clock: Callable[[], float] = time.time,
        process_info: ProcessInfo | None = None,
        host_reader: HostReader | None = None,
        pod_resources: PodResources | None = None,
        net_interfaces: Sequence[str] | None = None,
    ) -> None:
        """``net_interfaces``: the interfaces the host's network rates count (names or shell patterns;
        None: those with a device behind them, see core.host.machine)."""
        self.source = source
        # Decided once: a check against a runtime protocol walks its members (about 20 us a tick).
        self._reads_beside: ReadsBeside | None = source if isinstance(source, ReadsBeside) else None
        # The kubelet's GPU allocations (core.host.podresources): nothing is asked where it has no socket.
        self.pod_resources = pod_resources or PodResources()
        self._clock = clock
        self.process_info = process_info or ProcessInfo()
        # Made now: its first readings of the CPU and network are then an interval before the first sample.
        self._host = host_reader or HostReader(net_interfaces=net_interfaces)
        self._hostname = socket.gethostname()
        self._pids: list[int] = []  # the GPU processes of the last sample
        # GPU readings taken by first_look() that the next sample() joins instead of reading again.
        self._first_gpus: tuple[GpuSample, ...] | None = None
        # Last tick's processes by list (GPU index, MIG device index or None): what the source said,
        # the host facts, the two joined; a joined process is kept while the other two are unchanged,
        # and the whole joined list while all of them are.
        self._joined: dict[tuple[int, int | None], _Joined] = {}
        # Last tick's GPUs by index: as the source gave it, its lists joined, and the GPU joined.
        self._joined_gpus: dict[int, _JoinedGpu] = {}
        # Last tick's GPUs as the source gave them, every process's host facts in order, and the GPUs joined.
        # (None: not worked out, the GPUs having moved.)
        self._last_join: tuple[tuple[GpuSample, ...], tuple[HostFacts | None, ...] | None, tuple[GpuSample, ...]] = (
            (), (), ()
        )
        # A source that replays another machine (a capture) says what time it is there, and its name.
        self._clock = getattr(source, "clock", self._clock)
        self._hostname = getattr(source, "hostname", None) or self._hostname

    def source_time(self) -> float | None:
        """The time where the source is (a capture: its tick's), when that is not this machine's now."""
        return self._clock() if hasattr(self.source, "clock") else None

    def open(self) -> None:
        """Open the source; raises SourceUnavailable."""
        self.source.open()

    def close(self) -> None:
        self.source.close()

    def first_look(self) -> Snapshot:
        """What the source gives at once, without host facts: enough for a first frame.

        The next sample() completes these same readings with the host facts instead of reading
        the GPUs again.
        """
        self._first_gpus = self.source.sample()
        return self._snapshot(HostSample(), self._first_gpus)

    def sample_at_once(self) -> Snapshot | None:
        """A sample, when one can be had without waiting on the driver (after first_look(), or from a
        simulated source); else None: the driver may be hung, and the caller must not wait on it."""
        if self._first_gpus is None and not self.source.simulated:
            return None
        return self.sample()

    def sample(self) -> Snapshot:
        first, self._first_gpus = self._first_gpus, None
        if self.source.simulated:
            gpus = first or self.source.sample()
            host = self.source.sample_host() or self._host.sample()
        elif first is not None:
            host = self.source.sample_host() or self._host.sample()
            gpus = self._join_host_facts(first)
        else:
            # A driver's calls take milliseconds each: the host is read while a slow GPU is, and
            # the facts of the processes the GPUs listed last time.
            read: list[HostSample] = []

            def read_host() -> None:
                read.append(self.source.sample_host() or self._host.sample())
                self.process_info.read_ahead(self._pids)

            if self._reads_beside is not None:
                with self._reads_beside.beside(read_host):
                    listed = self.source.sample()
            else:
                listed = self.source.sample()
            if not read:  # a source that does not read beside, or did not get to it
                read_host()
            host = read[0]
            gpus = self._join_host_facts(listed)
        return self._snapshot(host, gpus)

    def _snapshot(self, host: HostSample, gpus: tuple[GpuSample, ...]) -> Snapshot:
        if not self.source.simulated:
            gpus = with_allocations(gpus, self.pod_resources.allocations())
        return Snapshot(
            timestamp=self._clock(),
            hostname=self._hostname,
            host=host,
            gpus=gpus,
            driver_version=self.source.driver_version,
            cuda_driver_version=self.source.cuda_driver_version,
            source=self.source.name,
        )

    def process_detail(self, identity: ProcessIdentity) -> ProcessDetail:
        """Everything known about one process: from the source when simulated, else from /proc (on demand)."""
        detail = self.source.process_detail(identity)
        if detail is not None:
            return detail
        from gputop.core.host.procdetail import read_process_detail  # here: only the process screen reads it

        return read_process_detail(identity)

    def _join_host_facts(self, gpus: tuple[GpuSample, ...]) -> tuple[GpuSample, ...]:
        last_tick = self._last_join
        # The source's GPUs all as they were (the same objects: an idle machine's ticks): the same PIDs.
        same_gpus = len(gpus) == len(last_tick[0]) and all(map(operator.is_, gpus, last_tick[0]))
        if not same_gpus:
            self._pids = [p.pid for gpu in gpus for p in gpu.all_processes()]
        facts = self.process_info.lookup(self._pids)
        found_all = None  # worked out only where it may spare the walk: GPUs that move cost nothing more
        if same_gpus:
            found_all = tuple(map(facts.get, self._pids))
            if found_all == last_tick[1]:
                return last_tick[2]  # and their host facts too: every GPU joined as last tick
        joined_gpus = self._join_lists(gpus, facts)
        self._last_join = (gpus, found_all, joined_gpus)
        return joined_gpus

    def _join_lists(
        self, gpus: tuple[GpuSample, ...], facts: dict[int, HostFacts | None]
    ) -> tuple[GpuSample, ...]:
        before, self._joined = self._joined, {}

        def joined(place: tuple[int, int | None], processes: tuple[ProcessSample, ...]) -> tuple[ProcessSample, ...]:
            # A process joined afresh costs a new ProcessSample (about 5 us); thousands of them are
            # idle tick after tick, so the one built last tick is kept while what the source said of
            # it and its host facts (each the same object while unchanged, for NVML) are as they were.
            found = tuple(map(facts.get, map(_PID, processes)))
            last = before.get(place)
            # Most lists are as they were, process for process: compared in C (each item by identity
            # first), the whole list is kept, rather than looked up process by process (3.5 ms a
            # tick at 1,024 processes).
            if last is not None and last[1] == found and last[0] == processes:
                self._joined[place] = last
                return last[2]
            kept = {} if last is None else {p.pid: (p, f, r) for p, f, r in zip(*last, strict=True)}
            out = []
            for process, fact in zip(processes, found, strict=True):
                prior = kept.get(process.pid)
                if prior is not None and prior[1] is fact and (prior[0] is process or prior[0] == process):
                    out.append(prior[2])
                else:
                    out.append(_with_facts(process, fact, self.process_info))
            result = tuple(out)
            self._joined[place] = (processes, found, result)
            return result

        last_gpus, self._joined_gpus = self._joined_gpus, {}

        def joined_gpu(gpu: GpuSample) -> GpuSample:
            processes = joined((gpu.index, None), gpu.processes)
            mig_lists = tuple(joined((gpu.index, mig.index), mig.processes) for mig in gpu.mig_devices)
            last = last_gpus.get(gpu.index)
            # The source's GPU unchanged (the same object) and every list joined as last tick: the GPU
            # joined last tick, rather than a copy (~5 us a GPU; dataclasses.replace took 20).
            if (
                last is None
                or last[0] is not gpu
                or last[1] is not processes
                or any(map(operator.is_not, last[2], mig_lists))
            ):
                migs = tuple(map(_MIG_WITH_PROCESSES, gpu.mig_devices, mig_lists))
                last = (gpu, processes, mig_lists, _GPU_WITH_LISTS(gpu, processes, migs))
            self._joined_gpus[gpu.index] = last
            return last[3]

        return tuple(map(joined_gpu, gpus))


_PID = operator.attrgetter("pid")
_GPU_WITH_LISTS = copier(GpuSample, "processes", "mig_devices")
_MIG_WITH_PROCESSES = copier(MigSample, "processes")
# A list of processes as the source gave it, their host facts (None: not visible), and the two joined.
_Joined = tuple[tuple[ProcessSample, ...], tuple[HostFacts | None, ...], tuple[ProcessSample, ...]]
_JoinedGpu = tuple[GpuSample, tuple[ProcessSample, ...], tuple[tuple[ProcessSample, ...], ...], GpuSample]


def _with_facts(process: ProcessSample, facts: HostFacts | None, info: ProcessInfo) -> ProcessSample:
    if facts is None:
        reason = info.not_visible_reason(process.pid)
        return dataclasses.replace(process, visible=False, not_visible_reason=reason)
    return facts.apply(process)


class TickLoop:
    """One sample per tick, one tick after another, never overlapping: the loop of the TUI's sampler
    thread, the exporter's, and ``gputop record`` (which runs it on the main thread).

    The next tick is due ``interval_s`` after the previous one was due; a slow sample delays the
    next one instead of piling up behind it. With ``duration_s`` the loop ends that long after it
    started. An error from the sampler goes to ``on_error`` and the loop goes on; one raised by
    ``on_snapshot`` or ``on_error`` ends the loop and reaches the caller of ``run``.
    """

    def __init__(
        self,
        sampler: Sampler,
        interval_s: float,
        on_snapshot: Callable[[Snapshot], None],
        on_error: Callable[[BaseException], None],
        duration_s: float | None = None,
    ) -> None:
        self._sampler = sampler
        self._interval_s = interval_s
        self._on_snapshot = on_snapshot
        self._on_error = on_error
        self._duration_s = duration_s
        self._wake = threading.Event()
        self._stopped = threading.Event()

    @property
    def interval_s(self) -> float:
        return self._interval_s

    @interval_s.setter
    def interval_s(self, value: float) -> None:
        self._interval_s = clamp_interval(value)
        self._wake.set()

    def stop(self) -> None:
        self._stopped.set()
        self._wake.set()

    def run(self) -> None:
        started = due = time.monotonic()
        end = None if self._duration_s is None else started + self._duration_s
        while not self._stopped.is_set() and (end is None or time.monotonic() < end):
            try:
                snapshot = self._sampler.sample()
            except Exception as error:  # noqa: BLE001 - reported, the loop goes on
                self._on_error(error)
            else:
                if not self._stopped.is_set():
                    self._on_snapshot(snapshot)
            due = max(due + self._interval_s, time.monotonic())
            while not self._stopped.is_set():
                remaining = (due if end is None else min(due, end)) - time.monotonic()
                if remaining <= 0:
                    break
                self._wake.wait(remaining)
                if self._wake.is_set():
                    self._wake.clear()
                    # The interval changed: the next tick is due one new interval after now.
                    due = min(due, time.monotonic() + self._interval_s)


class SamplerThread(TickLoop):
    """The tick loop on its own (daemon) thread: for the TUI and the exporter."""

    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="gputop-sampler", daemon=True)
        self._thread.start()

    def join(self, timeout_s: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout_s)

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()


def clamp_interval(value: float) -> float:
    """Keep an interval within what the sampler supports."""
    return min(MAX_INTERVAL_S, max(MIN_INTERVAL_S, value))
