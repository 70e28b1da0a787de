"""One GPU read through the NVML gateway: what `NvmlSource` runs on each GPU's own thread.

`NvmlDevice.sample()` is the per-GPU sampling function: static facts once (nvml_static.py),
the changing figures every tick, the processes and MIG devices. Readings of
new kinds of figure belong in their own module, called from `_read`.
`NvmlDevice.pcie()` reads the PCIe counters, which take a real driver about
20 ms each, so that they can be read beside the rest, on a second thread.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pynvml

from gputop.core.analysis.diagnosis.reasons import decode_reasons
from gputop.core.frozen_copy import keyword_maker
from gputop.core.model import GpuHealth, GpuSample, MigSample, ProcessSample
from gputop.core.sources import nvml_health
from gputop.core.sources.nvml_activity import ActivityReader
from gputop.core.sources.nvml_events import XidEvents
from gputop.core.sources.nvml_gateway import (
    MEMORY_VERSIONS,
    PROCESS_LISTS,
    TEMPERATURE_VERSIONS,
    DeviceLost,
    Gateway,
    Handle,
    ProcessList,
)
from gputop.core.sources.nvml_static import (
    STATIC_RETRY_SAMPLES,
    MigFacts,
    StaticFacts,
    incomplete,
    integer,
    number,
    read_mig_facts,
    read_static_facts,
    text,
)

PSTATE_UNKNOWN = 32
PCIE_KB = 1024  # NVML reports PCIe throughput in KB/s of 1024 bytes.
# A lost GPU shows the XID events that arrived since it was lost, and this long before: the driver
# often reports the XID (79: fallen off the bus) a moment before the first call fails.
XID_BEFORE_LOSS_S = 60.0
# GpuSample(...) for every GPU every tick, at two thirds of __init__'s cost (frozen_copy.py).
_gpu_sample = keyword_maker(GpuSample)


@dataclass(slots=True)
class NvmlDevice:
    """One GPU and what is remembered about it between samples."""

    index: int
    gateway: Gateway
    handle: Handle = None
    facts: StaticFacts | None = None
    samples_since_facts: int = 0
    facts_complete: bool = False  # every static fact known (_facts_complete)
    utilization_seen: int = 0  # last process-utilization timestamp (us)
    mig_facts: dict[str, MigFacts] = field(default_factory=dict)
    # Last sample's processes by MIG device (None: the GPU's own): what the driver listed and the
    # processes made of it (_Listed). An unchanged process is the same object from one sample to the
    # next, which the sampler's join recognises at once; lists as they were give the same tuple.
    process_lists: dict[int | None, _Listed] = field(default_factory=dict)
    last: GpuSample | None = None  # the newest sample it answered with (the same object while equal)
    xid_events: XidEvents | None = None  # the source's XID events, polled once a tick (nvml_events.py)
    activity: ActivityReader | None = None  # GPM, energy, NVLink, the PCIe link (nvml_activity.py)
    lost_since: float | None = None  # when it was first found lost (seconds since the epoch)
    # The answers of the last read that made a sample, and that sample (see _read).
    made: tuple[tuple[Any, ...], GpuSample] | None = None

    def sample(self) -> GpuSample:
        """Read the GPU; a GPU that answers as lost is listed as lost and tried again next time.

        Any other exception (a binding that lacks a name, a value it cannot convert) marks this GPU
        alone, as not answering with the error named: the other GPUs' reads go on.
        """
        return self._sample(with_pcie=False)

    def _sample(self, with_pcie: bool) -> GpuSample:
        try:
            if self.handle is None:
                self.handle = self.gateway.call(pynvml.nvmlDeviceGetHandleByIndex, self.index)
                if self.handle is None:
                    return self._lost_sample(None)
            self.samples_since_facts += 1
            if self.facts is None or (self.samples_since_facts > STATIC_RETRY_SAMPLES and not self._facts_complete()):
                self.facts = read_static_facts(self.gateway, self.handle)
                self.mig_facts.clear()
                self.samples_since_facts = 0
                self.facts_complete = False
            sample = self._read(self.handle, self.facts, with_pcie)
            self.lost_since = None
            return sample
        except DeviceLost as error:
            return self.lost(str(error))
        except Exception as error:  # noqa: BLE001 - one GPU's fault stays on that GPU
            return self.failed(error, self.gateway.last_call(threading.get_ident()))

    def _facts_complete(self) -> bool:
        """Whether every static fact of the GPU and its MIG devices is known: looked at again only
        after they are read (the facts do not change, and a complete set stays so)."""
        if not self.facts_complete:
            self.facts_complete = not incomplete([self.facts, *self.mig_facts.values()])
        return self.facts_complete

    def lost(self, error: str) -> GpuSample:
        """The GPU as lost; its handle is fetched again next sample, so that it can come back."""
        self.handle = None
        return self._lost_sample(error)

    def failed(self, error: BaseException, call: str | None) -> GpuSample:
        """The GPU after its read raised something unexpected in ``call``: as not answering (no
        figures, its last processes marked stale), ``last_error`` naming the call and the error."""
        words = f"read failed: {call or 'NVML'}: {type(error).__name__}: {error}"
        return dataclasses.replace(self.not_answering(time.time(), words), read_failed=True)

    def _lost_sample(self, error: str | None) -> GpuSample:
        """Lost, with the XID events that explain it (see XID_BEFORE_LOSS_S)."""
        if self.lost_since is None:
            self.lost_since = time.time()
        events = None if self.xid_events is None else self.xid_events.events(self.index)
        if events is not None:
            events = tuple(event for event in events if event.time >= self.lost_since - XID_BEFORE_LOSS_S)
        health = GpuHealth(xid_events=events)
        return self._remember(self._identity(lost=True, last_error=error, health=health))

    def not_answering(self, since: float, error: str) -> GpuSample:
        """The GPU while a call to it has not come back: no figures, its last processes marked stale."""
        last = self.last
        if last is None or last.lost:
            return self._identity(answering=False, not_answering_since=since, last_error=error)
        return dataclasses.replace(
            self._identity(answering=False, not_answering_since=since, last_error=error),
            mig_mode=last.mig_mode,
            mig_devices=tuple(
                MigSample(
                    index=mig.index,
                    uuid=mig.uuid,
                    name=mig.name,
                    gpu_instance_id=mig.gpu_instance_id,
                    compute_instance_id=mig.compute_instance_id,
                    processes=_stale(mig.processes),
                )
                for mig in last.mig_devices
            ),
            processes=_stale(last.processes),
        )

    def with_new_events(self, sample: GpuSample) -> GpuSample:
        """This tick's sample with the XID events taken after it was read (the tick's poll of the
        driver's events comes after the GPUs': an XID raised since the last tick joins this one). A
        lost GPU's events are picked by time (``_lost_sample``): it takes them from its next sample."""
        events = None if self.xid_events is None else self.xid_events.events(self.index)
        if events is None or sample.lost or not sample.answering or events == sample.health.xid_events:
            return sample
        joined = dataclasses.replace(sample, health=dataclasses.replace(sample.health, xid_events=events))
        if sample is self.last:
            self.last = joined  # its next read, with the same events, is then the same object
        return joined

    def sample_with_pcie(self) -> GpuSample:
        """sample() with the PCIe counters read last, on the same thread and into the same sample (one
        GpuSample a tick, not a second copy with the counters): for a GPU read in turn, or whose handle
        is not known yet. A counter that says the GPU is lost, or fails, marks the GPU as sample()'s
        own calls do."""
        return self._sample(with_pcie=True)

    def pcie(self) -> tuple[float | None, float | None]:
        """PCIe receive and transmit rates (bytes/s), None where not available; raises DeviceLost."""
        handle = self.handle
        if handle is None or (self.activity is not None and self.activity.gpm_rates):
            return None, None  # none, or GPM gives them (see _with_activity)
        rates = []
        for counter in (pynvml.NVML_PCIE_UTIL_RX_BYTES, pynvml.NVML_PCIE_UTIL_TX_BYTES):
            kbs = self.gateway.call(pynvml.nvmlDeviceGetPcieThroughput, handle, counter)
            rates.append(None if kbs is None else float(int(kbs) * PCIE_KB))
        return rates[0], rates[1]

    def _remember(self, sample: GpuSample) -> GpuSample:
        # A GPU whose figures did not move is the same object as last time (compared in C, field by
        # field, in a few microseconds): what takes it from here knows at once that nothing moved.
        if sample != self.last:
            self.last = sample
        return self.last

    def _identity(self, **fields: Any) -> GpuSample:
        """The GPU with only what identifies it (and `fields`)."""
        facts = self.facts
        if facts is None:
            return GpuSample(index=self.index, **fields)
        return GpuSample(
            index=self.index, name=facts.name, uuid=facts.uuid, pci_bus_id=facts.pci_bus_id, **fields
        )

    def _read(self, handle: Handle, facts: StaticFacts, with_pcie: bool = False) -> GpuSample:
        gateway = self.gateway
        call = gateway.call
        memory = gateway.call_versions("memory", MEMORY_VERSIONS, handle)
        utilization = call(pynvml.nvmlDeviceGetUtilizationRates, handle)
        encoder = call(pynvml.nvmlDeviceGetEncoderUtilization, handle)
        decoder = call(pynvml.nvmlDeviceGetDecoderUtilization, handle)
        power_mw = call(pynvml.nvmlDeviceGetPowerUsage, handle)
        pstate = call(pynvml.nvmlDeviceGetPerformanceState, handle)
        mig_mode = call(pynvml.nvmlDeviceGetMigMode, handle)
        in_mig = mig_mode is not None and int(mig_mode[0]) == pynvml.NVML_DEVICE_MIG_ENABLE
        activity = self.activity
        if activity is None:
            activity = self.activity = ActivityReader(gateway)
        reading = activity.read(handle)

        # Many drivers keep no per-process samples in MIG mode (None: SM use and idleness unknown);
        # where one does, its samples cover the processes of every MIG device of the GPU.
        sm_utilization = self._sm_utilization(handle)
        migs = self._migs(handle, facts.max_mig or 0, sm_utilization) if in_mig else ()
        in_migs = {process.pid for mig in migs for process in mig.processes}
        processes, processes_known = self._processes(None, handle, sm_utilization, skip=in_migs)
        # The rest in the order they were always asked in (a capture replays a tick's calls in order).
        temperature = gateway.call_versions("temperature", TEMPERATURE_VERSIONS, handle)
        fan = call(pynvml.nvmlDeviceGetFanSpeed, handle)
        clock_sm = call(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_SM)
        clock_memory = call(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_MEM)
        reasons = gateway.call_versions("clock_reasons", nvml_health.CLOCK_REASON_VERSIONS, handle)
        events = None if self.xid_events is None else self.xid_events.events(self.index)
        # Last, after every other call of the read (as when they were read after it).
        counters = self.pcie() if with_pcie else None
        # Every answer the sample is made of, as the calls gave it: the same as last read's (most ticks
        # on an idle or steady GPU) is last read's sample, neither made again nor compared field by field.
        # The few answers that are structures are taken apart (a structure is equal only to itself).
        rates = None if utilization is None else (utilization.gpu, utilization.memory)
        answers = (
            facts, memory, rates,
            None if encoder is None else encoder[0], None if decoder is None else decoder[0],
            power_mw, pstate, in_mig if mig_mode is not None else None, reading, migs, processes,
            processes_known, temperature, fan, clock_sm, clock_memory, reasons, events, counters,
        )
        made = self.made
        if made is not None and made[1] is self.last and made[0] == answers:
            return made[1]
        sample = self._remember(
            _gpu_sample(
                index=self.index,
                name=facts.name,
                uuid=facts.uuid,
                pci_bus_id=facts.pci_bus_id,
                memory_total=None if memory is None else memory.total,
                memory_used=None if memory is None else memory.used,
                memory_free=None if memory is None else memory.free,
                memory_reserved=None if memory is None else memory.reserved,
                utilization_gpu=None if rates is None else float(rates[0]),
                utilization_memory=None if rates is None else float(rates[1]),
                utilization_encoder=None if encoder is None else float(encoder[0]),
                utilization_decoder=None if decoder is None else float(decoder[0]),
                temperature=number(temperature),
                temperature_slowdown=facts.temperature_slowdown,
                temperature_shutdown=facts.temperature_shutdown,
                fan_speed=number(fan),
                power_draw=None if power_mw is None else int(power_mw) / 1000.0,
                power_limit=facts.power_limit,
                clock_sm=integer(clock_sm),
                clock_memory=integer(clock_memory),
                clock_sm_max=facts.clock_sm_max,
                clock_memory_max=facts.clock_memory_max,
                clock_event_reasons=None if reasons is None else decode_reasons(int(reasons)),
                pstate=None if pstate is None or int(pstate) == PSTATE_UNKNOWN else int(pstate),
                mig_mode=None if mig_mode is None else in_mig,
                health=nvml_health.health(
                    events, ecc=reading.ecc, remapped=reading.remapped, retired_pending=reading.retired_pending
                ),
                mig_devices=migs,
                processes=processes,
                **activity.sample_fields(reading, counters),
                processes_known=processes_known,
            )
        )
        self.made = (answers, sample)
        return sample

    def _sm_utilization(self, handle: Handle) -> nvml_health.SmSamples | None:
        """The per-process samples newer than the last ones seen; None when the GPU keeps none."""
        found = nvml_health.sm_samples(self.gateway, handle, self.utilization_seen)
        if found is not None:
            self.utilization_seen = found.seen
        return found

    def _processes(
        self,
        mig_index: int | None,
        handle: Handle,
        sm_samples: nvml_health.SmSamples | None,
        skip: set[int] | frozenset[int] = frozenset(),
    ) -> tuple[tuple[ProcessSample, ...], bool]:
        """The device's processes, and whether every process list could be read (a list the library
        lacks altogether is no list, not an unread one)."""
        listings = []
        complete = True
        for _, family, versions in PROCESS_LISTS:
            listed = self.gateway.call_versions(family, versions, handle)
            if listed is None and not self.gateway.lacks(family, versions):
                complete = False
            listings.append(listed)
        utilization = None if sm_samples is None else sm_samples.utilization
        last = self.process_lists.get(mig_index)
        # Listed as last time (compared in C; most ticks): the same processes, not worked out again.
        if last is not None and last[0] == listings and last[1] == utilization and last[2] == skip:
            return last[4], complete
        kinds: dict[int, str] = {}  # "C", "G" or "C+G"
        memory: dict[int, int | None] = {}
        for (letter, _, _), listed in zip(PROCESS_LISTS, listings, strict=True):
            for pid, used in listed or ():
                if pid in skip:
                    continue
                kind = kinds.get(pid)
                if kind is None:
                    kinds[pid], memory[pid] = letter, used
                    continue
                if letter not in kind:
                    kinds[pid] = "C+G"
                known = memory[pid]
                if used is not None and (known is None or used > known):
                    memory[pid] = used
        before = {} if last is None else last[3]
        now: dict[int, ProcessSample] = {}
        for pid, kind in kinds.items():
            # Absent from the samples: it did not run since the last ones, SM 0.
            sm = None if utilization is None else utilization.get(pid, 0.0)
            used = memory[pid]
            process = before.get(pid)
            if process is None or process.type != kind or process.gpu_memory != used or process.sm_utilization != sm:
                # Built only when something changed (about 3 us each): most processes stay as they were.
                process = ProcessSample(
                    pid=pid, gpu_index=self.index, type=kind, gpu_memory=used, sm_utilization=sm, mig_index=mig_index
                )
            now[pid] = process
        processes = tuple(now.values())
        self.process_lists[mig_index] = (listings, utilization, skip, now, processes)
        return processes, complete

    def _migs(
        self, handle: Handle, max_mig: int, sm_samples: nvml_health.SmSamples | None
    ) -> tuple[MigSample, ...]:
        call = self.gateway.call
        reader = self.activity
        migs = []
        for slot in range(max_mig):
            mig = call(pynvml.nvmlDeviceGetMigDeviceHandleByIndex, handle, slot)
            if mig is None:
                continue  # an empty slot answers NOT_FOUND
            uuid = text(call(pynvml.nvmlDeviceGetUUID, mig))
            key = uuid or f"slot {slot}"
            facts = self.mig_facts.get(key)
            if facts is None:
                facts = read_mig_facts(self.gateway, mig)
                self.mig_facts[key] = facts
                self.facts_complete = False
            memory = self.gateway.call_versions("memory", MEMORY_VERSIONS, mig)
            processes, processes_known = self._processes(slot, mig, sm_samples)
            migs.append(
                MigSample(
                    index=slot,
                    uuid=uuid,
                    name=facts.name,
                    gpu_instance_id=facts.gpu_instance_id,
                    compute_instance_id=facts.compute_instance_id,
                    memory_total=None if memory is None else memory.total,
                    memory_used=None if memory is None else memory.used,
                    memory_free=None if memory is None else memory.free,
                    processes=processes,
                    processes_known=processes_known,
                    activity=None if reader is None else reader.mig_activity(handle, facts.gpu_instance_id),
                )
            )
        return tuple(migs)


# A device's process lists as the driver gave them (one per kind, None: not read), its processes' SM
# samples, the PIDs left to its MIG devices; and the processes made of them, by PID and in order.
_Listed = tuple[
    list["ProcessList | None"],
    "dict[int, float] | None",
    "set[int] | frozenset[int]",
    dict[int, ProcessSample],
    tuple[ProcessSample, ...],
]


def _stale(processes: tuple[ProcessSample, ...]) -> tuple[ProcessSample, ...]:
    return tuple(dataclasses.replace(process, stale=True) for process in processes)
