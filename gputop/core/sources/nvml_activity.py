"""NVML reads of what the GPU is really doing: GPM activity, energy, NVLink, the PCIe link.

`ActivityReader` is one GPU's: it takes one GPM sample per tick (per MIG device
too) and computes the metrics between it and the last tick's, so no call sleeps;
whether the GPU has GPM is decided once. The rest comes in one batched
`nvmlDeviceGetFieldValues` a tick (energy, ECC, NVLink state and error totals,
NVLink throughput counters without GPM), each field with its classic call behind
it (nvml_fallback.py); what does not change (NVLink link count and version, the
PCIe link's maximum) is read once, the current PCIe link every few ticks. Every
call goes through the gateway.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pynvml

from gputop.core.model import Activity, Energy, NvLink
from gputop.core.sources.nvml_fallback import FieldReads, Value
from gputop.core.sources.nvml_fields import (
    ALL_LINKS,
    FI_ECC_AGGREGATE,
    FI_ECC_VOLATILE,
    FI_ENERGY,
    FI_ERROR_TOTALS,
    FI_LINK_COUNT,
    FI_LINK_ERRORS,
    FI_LINK_STATE,
    FI_LINK_VERSION,
    FI_MEMORY_TEMP,
    FI_NVLINK_RX,
    FI_NVLINK_TX,
    FI_PCIE_REPLAY,
    FI_REMAPPED,
    FI_RETIRED_PENDING,
    Field,
    integer,
    remapped,
    temperature,
)
from gputop.core.sources.nvml_gateway import Gateway, Handle
from gputop.core.sources.nvml_gpm import ACTIVITY_METRICS, RATE_METRICS, GpmSamples, activity, rate

KIB = 1024  # the NVLink throughput counters count KiB
# The current PCIe link is read once in this many ticks: it changes with load, not faster, and the
# check that uses it wants 10 s of load. Keeps a tick's calls at 8 GPUs below what they were.
PCIE_LINK_EVERY = 5
NVLINK_ACTIVE = 1  # NVML_FEATURE_ENABLED, the state of a link that is up


@dataclass(frozen=True, slots=True)
class Reading:
    """What one tick's activity reads found for a GPU; see ActivityReader.read."""

    activity: Activity | None = None
    pcie_rx: float | None = None  # from GPM, bytes/s
    pcie_tx: float | None = None
    energy: Energy | None = None
    nvlink: NvLink | None = None
    pcie_link_gen: int | None = None
    pcie_link_width: int | None = None
    ecc: tuple[int | None, int | None] = (None, None)  # uncorrected (volatile, aggregate)
    # (corrected, uncorrected, pending, failure) as nvmlDeviceGetRemappedRows gives them
    remapped: tuple[int, int, int, int] | None = None
    retired_pending: int | None = None  # 1: pages wait to be retired
    memory_temperature: float | None = None  # °C
    pcie_replay_errors: int | None = None


@dataclass(slots=True)
class _LinkFacts:
    count: int | None
    version: int | None
    gen_max: int | None
    width_max: int | None


@dataclass(slots=True)
class ActivityReader:
    """One GPU's activity, energy, NVLink and PCIe link reads, and what they remember."""

    gateway: Gateway
    gpm: GpmSamples | None = None
    gpm_decided: bool = False
    migs: dict[int, GpmSamples] = field(default_factory=dict)  # by GPU instance id
    facts: _LinkFacts | None = None
    batch: FieldReads | None = None
    link_errors: FieldReads | None = None  # each link's error counters, read when the totals change
    energy_at_start_mj: float | None = None
    ticks: int = 0
    link: tuple[int | None, int | None] = (None, None)
    errors_by_link: tuple[tuple[int, int], ...] = ()
    error_totals: tuple[int | None, ...] = ()
    nvlink_counts: tuple[float, int, int] | None = None  # (time, rx KiB, tx KiB) last read
    nvlink_made: tuple[dict[Field, Value], tuple[float | None, float | None], NvLink] | None = None  # see _nvlink
    made: tuple[tuple[Any, ...], Reading] | None = None  # the last Reading and what it was made of (read)

    @property
    def gpm_rates(self) -> bool:
        """Whether GPM gives this GPU's PCIe rates, so that the slow PCIe counters are not read."""
        return self.gpm is not None and self.gpm.usable

    def link_maxima(self) -> tuple[int | None, int | None]:
        facts = self.facts
        return (None, None) if facts is None else (facts.gen_max, facts.width_max)

    def sample_fields(
        self, reading: Reading, counters: tuple[float | None, float | None] | None = None
    ) -> dict[str, Any]:
        """GpuSample's fields from this tick's reading, and the PCIe counters' rates where they were
        read and answered (else GPM's rates, if any, stand)."""
        gen_max, width_max = self.link_maxima()
        rx, tx = (reading.pcie_rx, reading.pcie_tx) if counters is None or counters == (None, None) else counters
        return {
            "pcie_rx": rx,
            "pcie_tx": tx,
            "pcie_link_gen": reading.pcie_link_gen,
            "pcie_link_gen_max": gen_max,
            "pcie_link_width": reading.pcie_link_width,
            "pcie_link_width_max": width_max,
            "pcie_replay_errors": reading.pcie_replay_errors,
            "memory_temperature": reading.memory_temperature,
            "activity": reading.activity,
            "energy": reading.energy,
            "nvlink": reading.nvlink,
        }

    def read(self, handle: Handle) -> Reading:
        """This tick's reads of the GPU (not its MIG devices: see mig_activity)."""
        self._decide(handle)
        facts = self.facts
        assert facts is not None and self.batch is not None
        metrics = None if self.gpm is None else self.gpm.read()
        values = self.batch.read(self.gateway, handle)
        if self.ticks % PCIE_LINK_EVERY == 0:
            self.link = (
                integer(self.gateway.call(pynvml.nvmlDeviceGetCurrPcieLinkGeneration, handle)),
                integer(self.gateway.call(pynvml.nvmlDeviceGetCurrPcieLinkWidth, handle)),
            )
        self.ticks += 1
        nvlink = self._nvlink(handle, facts, values, metrics)
        # What the Reading is made of (the energy since start moves only with the energy read): as last
        # tick's, it is last tick's Reading, not made again, and the GPU's read knows it at once.
        answers = (values, metrics, self.link, nvlink, self.gpm is not None and self.gpm.usable)
        made = self.made
        if made is not None and made[0] == answers:
            return made[1]
        reading = Reading(
            activity=activity(self.gpm, metrics),
            pcie_rx=rate(metrics, "pcie_rx"),
            pcie_tx=rate(metrics, "pcie_tx"),
            energy=self._energy(values),
            nvlink=nvlink,
            pcie_link_gen=self.link[0],
            pcie_link_width=self.link[1],
            ecc=(integer(values.get((FI_ECC_VOLATILE, 0))), integer(values.get((FI_ECC_AGGREGATE, 0)))),
            remapped=remapped(values),
            retired_pending=integer(values.get((FI_RETIRED_PENDING, 0))),
            memory_temperature=temperature(values),
            pcie_replay_errors=integer(values.get((FI_PCIE_REPLAY, 0))),
        )
        self.made = (answers, reading)
        return reading

    def mig_activity(self, handle: Handle, gpu_instance_id: int | None) -> Activity | None:
        """A MIG device's activity this tick, from its own GPM samples (taken through the GPU)."""
        if gpu_instance_id is None or self.gpm is None:
            return None
        samples = self.migs.get(gpu_instance_id)
        if samples is None:
            call = self.gateway.call

            def take(sample: Any) -> Any:
                return call(pynvml.nvmlGpmMigSampleGet, handle, gpu_instance_id, sample)

            samples = self.migs[gpu_instance_id] = GpmSamples(self.gateway, take, ACTIVITY_METRICS)
        metrics = samples.read()
        return activity(samples, metrics)

    def _decide(self, handle: Handle) -> None:
        """What is read once: GPM support, the NVLink links and version, the PCIe link's maximum."""
        call = self.gateway.call
        if not self.gpm_decided:
            self.gpm_decided = True
            support = call(pynvml.nvmlGpmQueryDeviceSupport, handle)
            if support is not None and support.isSupportedDevice:

                def take(sample: Any) -> Any:
                    return call(pynvml.nvmlGpmSampleGet, handle, sample)

                self.gpm = GpmSamples(self.gateway, take, ACTIVITY_METRICS + RATE_METRICS)
        if self.facts is None:
            once = FieldReads([(FI_LINK_COUNT, 0), (FI_LINK_VERSION, 0)]).read(self.gateway, handle)
            count = integer(once.get((FI_LINK_COUNT, 0)))
            self.facts = _LinkFacts(
                count=count or None,  # 0 links: no NVLink
                version=integer(once.get((FI_LINK_VERSION, 0))) if count else None,
                gen_max=integer(call(pynvml.nvmlDeviceGetMaxPcieLinkGeneration, handle)),
                width_max=integer(call(pynvml.nvmlDeviceGetMaxPcieLinkWidth, handle)),
            )
            self.batch = FieldReads(self._tick_fields(self.facts.count or 0), links=self.facts.count or 0)

    def _tick_fields(self, links: int) -> list[Field]:
        fields: list[Field] = [
            (FI_ECC_VOLATILE, 0), (FI_ECC_AGGREGATE, 0), (FI_ENERGY, 0), (FI_MEMORY_TEMP, 0), (FI_PCIE_REPLAY, 0)
        ]
        fields += [(field_id, 0) for field_id in (*FI_REMAPPED, FI_RETIRED_PENDING)]
        if links:
            fields += [(FI_LINK_STATE, link) for link in range(links)]
            fields += [(field_id, 0) for field_id in FI_ERROR_TOTALS]
            if not self.gpm_rates:
                fields += [(FI_NVLINK_RX, ALL_LINKS), (FI_NVLINK_TX, ALL_LINKS)]
        return fields

    def _energy(self, values: dict[Field, Value]) -> Energy | None:
        mj = values.get((FI_ENERGY, 0))
        if mj is None:
            return None
        if self.energy_at_start_mj is None or mj < self.energy_at_start_mj:
            self.energy_at_start_mj = float(mj)  # first read, or the driver reloaded (the count restarted)
        return Energy(since_driver_load_j=mj / 1000.0, since_start_j=(mj - self.energy_at_start_mj) / 1000.0)

    def _nvlink(
        self,
        handle: Handle,
        facts: _LinkFacts,
        values: dict[Field, Value],
        metrics: dict[str, float | None] | None,
    ) -> NvLink | None:
        if not facts.count:
            return None
        if self.gpm_rates:
            rx, tx = rate(metrics, "nvlink_rx"), rate(metrics, "nvlink_tx")
        else:
            rx, tx = self._nvlink_rates(values)
        made = self.nvlink_made
        if made is not None and made[0] is values and made[1] == (rx, tx):
            return made[2]  # the same fields read (error totals as well) and the same rates
        states = [values.get((FI_LINK_STATE, link)) for link in range(facts.count)]
        known = [state for state in states if state is not None]
        totals = tuple(integer(values.get((field_id, 0))) for field_id in FI_ERROR_TOTALS)
        if self.error_totals and totals != self.error_totals and any(total for total in totals if total):
            self.errors_by_link = self._errors_by_link(handle, facts.count)
        self.error_totals = totals
        nvlink = NvLink(
            version=facts.version,
            links_active=sum(1 for state in known if state == NVLINK_ACTIVE) if known else None,
            links_total=facts.count,
            rx=rx,
            tx=tx,
            errors_crc=totals[0],
            errors_replay=totals[1],
            errors_recovery=totals[2],
            links_down=tuple(link for link, state in enumerate(states) if state is not None and state != NVLINK_ACTIVE),
            errors_by_link=self.errors_by_link,
        )
        self.nvlink_made = (values, (rx, tx), nvlink)
        return nvlink

    def _errors_by_link(self, handle: Handle, count: int) -> tuple[tuple[int, int], ...]:
        """Each link's error counters summed, read only when the totals change: names the link."""
        if self.link_errors is None:
            self.link_errors = FieldReads([(field_id, link) for link in range(count) for field_id in FI_LINK_ERRORS])
        values = self.link_errors.read(self.gateway, handle)
        if all(value is None for value in values.values()):
            return self.errors_by_link
        found = []
        for link in range(count):
            counts = [values.get((field_id, link)) for field_id in FI_LINK_ERRORS]
            total = sum(int(count) for count in counts if count is not None)
            if total:
                found.append((link, total))
        return tuple(found)

    def _nvlink_rates(self, values: dict[Field, Value]) -> tuple[float | None, float | None]:
        """Bytes/s from the throughput counters (KiB) between this read and the last."""
        rx, tx = values.get((FI_NVLINK_RX, ALL_LINKS)), values.get((FI_NVLINK_TX, ALL_LINKS))
        if rx is None or tx is None:
            self.nvlink_counts = None
            return None, None
        now = time.monotonic()
        last, self.nvlink_counts = self.nvlink_counts, (now, int(rx), int(tx))
        if last is None or now <= last[0] or rx < last[1] or tx < last[2]:
            return None, None
        elapsed = now - last[0]
        return (int(rx) - last[1]) * KIB / elapsed, (int(tx) - last[2]) * KIB / elapsed


