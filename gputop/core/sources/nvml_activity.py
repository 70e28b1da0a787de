"""NVML reads of what the GPU is really doing: GPM activity, energy, NVLink, the PCIe link.

`ActivityReader` is one GPU's: it takes one GPM sample per tick (per MIG device
too) and computes the metrics between it and the last tick's, so no call sleeps;
whether the GPU has GPM is decided once. The rest comes in one batched
`nvmlDeviceGetFieldValues` a tick (energy, ECC, NVLink state and error totals,
NVLink throughput counters without GPM); what does not change (NVLink link
count and version, the PCIe link's maximum) is read once, the current PCIe
link every few ticks. Every call goes through the gateway.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pynvml

from gputop.core.model import Activity, Energy, NvLink
from gputop.core.sources.nvml_gateway import Gateway, Handle, public, symbol

MIB = 1024 * 1024  # GPM gives throughput in MiB/s
KIB = 1024  # the NVLink throughput counters count KiB
ALL_LINKS = 0xFFFFFFFF  # a field's scope: summed over every link
# The current PCIe link is read once in this many ticks: it changes with load, not faster, and the
# check that uses it wants 10 s of load. Keeps a tick's calls at 8 GPUs below what they were.
PCIE_LINK_EVERY = 5
NVLINK_ACTIVE = 1  # NVML_FEATURE_ENABLED, the state of a link that is up

# Activity's fields and the GPM metric each comes from.
ACTIVITY_METRICS: tuple[tuple[str, int], ...] = (
    ("sm_active", pynvml.NVML_GPM_METRIC_SM_UTIL),
    ("sm_occupancy", pynvml.NVML_GPM_METRIC_SM_OCCUPANCY),
    ("tensor_active", pynvml.NVML_GPM_METRIC_ANY_TENSOR_UTIL),
    ("dram_active", pynvml.NVML_GPM_METRIC_DRAM_BW_UTIL),
    ("fp64_active", pynvml.NVML_GPM_METRIC_FP64_UTIL),
    ("fp32_active", pynvml.NVML_GPM_METRIC_FP32_UTIL),
    ("fp16_active", pynvml.NVML_GPM_METRIC_FP16_UTIL),
    # nvml.h: "Percentage of time any compute/graphics app was active on the GPU"; DCGM's
    # GR_ENGINE_ACTIVE: "the graphics engine is active if a graphics/compute context is bound and the
    # graphics pipe or compute pipe is busy". The same figure, one more metric in the same request.
    ("graphics_active", pynvml.NVML_GPM_METRIC_GRAPHICS_UTIL),
)
# Throughputs a whole GPU's samples give besides, MiB/s.
RATE_METRICS: tuple[tuple[str, int], ...] = (
    ("pcie_rx", pynvml.NVML_GPM_METRIC_PCIE_RX_PER_SEC),
    ("pcie_tx", pynvml.NVML_GPM_METRIC_PCIE_TX_PER_SEC),
    ("nvlink_rx", pynvml.NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC),
    ("nvlink_tx", pynvml.NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC),
)

def _field(name: str, number: int) -> int:
    """A field id by name; nvml.h's number where an older nvidia-ml-py does not name it yet."""
    return int(getattr(pynvml, name, number))


FI_ECC_VOLATILE = pynvml.NVML_FI_DEV_ECC_DBE_VOL_TOTAL  # uncorrected = double bit
FI_ECC_AGGREGATE = pynvml.NVML_FI_DEV_ECC_DBE_AGG_TOTAL
FI_ENERGY = pynvml.NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION  # mJ since the driver loaded
FI_MEMORY_TEMP = _field("NVML_FI_DEV_MEMORY_TEMP", 82)  # °C
FI_PCIE_REPLAY = _field("NVML_FI_DEV_PCIE_REPLAY_COUNTER", 94)  # replays since the driver loaded
FI_LINK_COUNT = pynvml.NVML_FI_DEV_NVLINK_LINK_COUNT
FI_LINK_VERSION = _field("NVML_FI_DEV_NVLINK_GET_VERSION", 166)
FI_LINK_STATE = _field("NVML_FI_DEV_NVLINK_GET_STATE", 165)
FI_ERROR_TOTALS = (
    pynvml.NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL,
    pynvml.NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL,
    pynvml.NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL,
)
FI_LINK_ERRORS = (
    _field("NVML_FI_DEV_NVLINK_ERROR_DL_CRC", 163),
    _field("NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY", 161),
    _field("NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY", 162),
)
# Row remapping (corrected rows, uncorrected rows, pending, failure) and pages pending retirement:
# nvmlDeviceGetRemappedRows and nvmlDeviceGetRetiredPagesPendingStatus, read in the tick's batch.
FI_REMAPPED = (
    _field("NVML_FI_DEV_REMAPPED_COR", 142),
    _field("NVML_FI_DEV_REMAPPED_UNC", 143),
    _field("NVML_FI_DEV_REMAPPED_PENDING", 144),
    _field("NVML_FI_DEV_REMAPPED_FAILURE", 145),
)
FI_RETIRED_PENDING = _field("NVML_FI_DEV_RETIRED_PENDING", 31)
FI_NVLINK_RX = _field("NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX", 139)
FI_NVLINK_TX = _field("NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX", 138)

_VALUE_MEMBERS = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}
Field = tuple[int, int]  # (field id, scope)


class FieldBatch:
    """A fixed list of fields read in one nvmlDeviceGetFieldValues; the array is kept between reads
    (pynvml builds a new one, field by field, each call)."""

    def __init__(self, fields: Sequence[Field]) -> None:
        self.fields = tuple(fields)
        self._array = (pynvml.c_nvmlFieldValue_t * len(self.fields))()
        for slot, (field_id, scope) in zip(self._array, self.fields, strict=True):
            slot.fieldId, slot.scopeId = field_id, scope

    def read(self, gateway: Gateway, handle: Handle) -> dict[Field, float | int | None] | None:
        """Each field's value (None where it has none); None when the call itself failed."""
        if not self.fields:
            return {}
        if gateway.call(_field_values, handle, self._array) is None:
            return None
        return {
            requested: _field_value(slot) for requested, slot in zip(self.fields, self._array, strict=True)
        }


def _field_values(handle: Handle, array: Any) -> bool:
    fn = symbol("nvmlDeviceGetFieldValues")
    if fn is None:
        # No private lookup in this pynvml: its public call, each field by id and scope, copied in.
        values = public("nvmlDeviceGetFieldValues")(handle, [(slot.fieldId, slot.scopeId) for slot in array])
        for slot, value in zip(array, values, strict=True):
            ctypes.memmove(ctypes.byref(slot), ctypes.byref(value), ctypes.sizeof(slot))
        return True
    result = int(fn(handle, ctypes.c_int(len(array)), array))
    if result != pynvml.NVML_SUCCESS:
        raise pynvml.NVMLError(result)
    return True


_field_values.__name__ = "nvmlDeviceGetFieldValues"


def _field_value(slot: Any) -> float | int | None:
    if slot.nvmlReturn != pynvml.NVML_SUCCESS:
        return None
    member = _VALUE_MEMBERS.get(int(slot.valueType))
    return None if member is None else getattr(slot.value, member)


def _integer(value: float | int | None) -> int | None:
    return None if value is None else int(value)


def _remapped(values: dict[Field, float | int | None] | None) -> tuple[int, int, int, int] | None:
    """The four row-remapping fields, or None unless the batch answered all four (then they are
    asked the old way: a driver may know the call and not the fields)."""
    if values is None:
        return None
    found = [values.get((field_id, 0)) for field_id in FI_REMAPPED]
    if any(value is None for value in found):
        return None
    corrected, uncorrected, pending, failure = (int(value) for value in found if value is not None)
    return corrected, uncorrected, pending, failure


def _temperature(values: dict[Field, float | int | None] | None) -> float | None:
    # A GPU without a memory sensor answers NOT_SUPPORTED (None) in the field; 0 °C is no reading either.
    value = None if values is None else values.get((FI_MEMORY_TEMP, 0))
    return float(value) if value else None


class GpmSamples:
    """One device's GPM: two samples taken in turn, one a tick, and the metrics between them.

    ``take(sample)`` takes a sample through the gateway (None when it failed). A device whose
    first sample fails has no GPM for this run; one that fails after that has a gap, that tick.
    """

    def __init__(self, gateway: Gateway, take: Callable[[Any], Any], metrics: Sequence[tuple[str, int]]) -> None:
        self._gateway = gateway
        self._take = take
        self._names = tuple(name for name, _ in metrics)
        self._samples: list[Any] = []
        self._request = pynvml.c_nvmlGpmMetricsGet_t()
        self._request.numMetrics = len(metrics)
        for slot, (_, metric_id) in enumerate(metrics):
            self._request.metrics[slot].metricId = metric_id
        self._turn = 0
        self._have_previous = False
        self.worked = False
        self.usable = True

    def read(self) -> dict[str, float | None] | None:
        """The metrics since last tick's sample; None on the first tick, a gap, or without GPM."""
        if not self.usable:
            return None
        if not self._samples:
            self._samples = [self._gateway.call(pynvml.nvmlGpmSampleAlloc) for _ in range(2)]
            if any(sample is None for sample in self._samples):
                self.usable = False
                return None
        now, before = self._samples[self._turn], self._samples[1 - self._turn]
        if self._take(now) is None:
            self.usable = self.worked  # never worked: decided, no GPM here
            self._have_previous = False
            return None
        self.worked = True
        metrics = self._metrics(before, now) if self._have_previous else None
        self._have_previous = True
        self._turn = 1 - self._turn
        return metrics

    def _metrics(self, before: Any, now: Any) -> dict[str, float | None] | None:
        request = self._request
        request.version = pynvml.NVML_GPM_METRICS_GET_VERSION
        request.sample1, request.sample2 = before, now
        if self._gateway.call(pynvml.nvmlGpmMetricsGet, request) is None:
            return None
        answers = request.metrics
        return {
            name: float(answers[slot].value) if answers[slot].nvmlReturn == pynvml.NVML_SUCCESS else None
            for slot, name in enumerate(self._names)
        }


NO_FIGURES = Activity()


def activity(samples: GpmSamples | None, metrics: dict[str, float | None] | None) -> Activity | None:
    """The Activity of a tick's metrics: None without GPM; every figure None on a device with GPM
    that has none this tick (its first tick, a failed call: a gap, as any figure that stalls)."""
    if samples is None or not samples.usable:
        return None
    if metrics is None:
        return NO_FIGURES
    return Activity(**{name: metrics.get(name) for name, _ in ACTIVITY_METRICS})


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
    ecc: tuple[int | None, int | None] | None = None  # (volatile, aggregate); None: ask the old way
    # (corrected, uncorrected, pending, failure) as nvmlDeviceGetRemappedRows; None: ask the old way
    remapped: tuple[int, int, int, int] | None = None
    retired_pending: int | None = None  # 1: pages wait to be retired; None: ask the old way
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
    batch: FieldBatch | None = None
    energy_at_start_mj: float | None = None
    ticks: int = 0
    link: tuple[int | None, int | None] = (None, None)
    errors_by_link: tuple[tuple[int, int], ...] = ()
    error_totals: tuple[int | None, ...] = ()
    nvlink_counts: tuple[float, int, int] | None = None  # (time, rx KiB, tx KiB) last read

    @property
    def gpm_rates(self) -> bool:
        """Whether GPM gives this GPU's PCIe rates, so that the slow PCIe counters are not read."""
        return self.gpm is not None and self.gpm.usable

    def link_maxima(self) -> tuple[int | None, int | None]:
        facts = self.facts
        return (None, None) if facts is None else (facts.gen_max, facts.width_max)

    def read(self, handle: Handle) -> Reading:
        """This tick's reads of the GPU (not its MIG devices: see mig_activity)."""
        self._decide(handle)
        facts = self.facts
        assert facts is not None and self.batch is not None
        metrics = None if self.gpm is None else self.gpm.read()
        values = self.batch.read(self.gateway, handle)
        if self.ticks % PCIE_LINK_EVERY == 0:
            self.link = (
                _integer(self.gateway.call(pynvml.nvmlDeviceGetCurrPcieLinkGeneration, handle)),
                _integer(self.gateway.call(pynvml.nvmlDeviceGetCurrPcieLinkWidth, handle)),
            )
        self.ticks += 1
        return Reading(
            activity=activity(self.gpm, metrics),
            pcie_rx=_rate(metrics, "pcie_rx"),
            pcie_tx=_rate(metrics, "pcie_tx"),
            energy=self._energy(handle, values),
            nvlink=self._nvlink(handle, facts, values, metrics),
            pcie_link_gen=self.link[0],
            pcie_link_width=self.link[1],
            ecc=None if values is None else (
                _integer(values.get((FI_ECC_VOLATILE, 0))),
                _integer(values.get((FI_ECC_AGGREGATE, 0))),
            ),
            remapped=_remapped(values),
            retired_pending=None if values is None else _integer(values.get((FI_RETIRED_PENDING, 0))),
            memory_temperature=_temperature(values),
            pcie_replay_errors=None if values is None else _integer(values.get((FI_PCIE_REPLAY, 0))),
        )

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
            once = FieldBatch([(FI_LINK_COUNT, 0), (FI_LINK_VERSION, 0)]).read(self.gateway, handle) or {}
            count = _integer(once.get((FI_LINK_COUNT, 0)))
            self.facts = _LinkFacts(
                count=count or None,  # 0 links: no NVLink
                version=_integer(once.get((FI_LINK_VERSION, 0))) if count else None,
                gen_max=_integer(call(pynvml.nvmlDeviceGetMaxPcieLinkGeneration, handle)),
                width_max=_integer(call(pynvml.nvmlDeviceGetMaxPcieLinkWidth, handle)),
            )
            self.batch = FieldBatch(self._tick_fields(self.facts.count or 0))

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

    def _energy(self, handle: Handle, values: dict[Field, float | int | None] | None) -> Energy | None:
        if values is None:  # no field values at all: the energy call of its own
            mj = self.gateway.call(pynvml.nvmlDeviceGetTotalEnergyConsumption, handle)
        else:
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
        values: dict[Field, float | int | None] | None,
        metrics: dict[str, float | None] | None,
    ) -> NvLink | None:
        if not facts.count:
            return None
        values = values or {}
        states = [values.get((FI_LINK_STATE, link)) for link in range(facts.count)]
        known = [state for state in states if state is not None]
        totals = tuple(_integer(values.get((field_id, 0))) for field_id in FI_ERROR_TOTALS)
        if self.error_totals and totals != self.error_totals and any(total for total in totals if total):
            self.errors_by_link = self._errors_by_link(handle, facts.count)
        self.error_totals = totals
        if self.gpm_rates:
            rx, tx = _rate(metrics, "nvlink_rx"), _rate(metrics, "nvlink_tx")
        else:
            rx, tx = self._nvlink_rates(values)
        return NvLink(
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

    def _errors_by_link(self, handle: Handle, count: int) -> tuple[tuple[int, int], ...]:
        """Each link's error counters summed, read only when the totals change: names the link."""
        fields = [(field_id, link) for link in range(count) for field_id in FI_LINK_ERRORS]
        values = FieldBatch(fields).read(self.gateway, handle)
        if values is None:
            return self.errors_by_link
        found = []
        for link in range(count):
            counts = [values.get((field_id, link)) for field_id in FI_LINK_ERRORS]
            total = sum(int(count) for count in counts if count is not None)
            if total:
                found.append((link, total))
        return tuple(found)

    def _nvlink_rates(self, values: dict[Field, float | int | None]) -> tuple[float | None, float | None]:
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


def _rate(metrics: dict[str, float | None] | None, name: str) -> float | None:
    value = None if metrics is None else metrics.get(name)
    return None if value is None else value * MIB
