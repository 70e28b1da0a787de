"""GPUs and their processes from the NVIDIA driver, through nvidia-ml-py (pynvml).

Every NVML call goes through `Gateway`, which turns NVML errors into values:
"no value" errors become None, a lost GPU raises `DeviceLost` (the GPU is
then listed as lost and retried next sample), and a missing symbol falls back
to the older version of the call, remembered so it is not retried each tick.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pynvml

from gputop.core.actions import SignalResult
from gputop.core.model import GpuSample, HostSample, MigSample, ProcessIdentity, ProcessSample
from gputop.core.sources import nvml_health
from gputop.core.sources.base import SourceUnavailable
from gputop.core.sources.nvml_events import XidEvents

T = TypeVar("T")

DEMO_HINT = "run `gputop --demo` to try gputop without a GPU"
LOST_ERRORS = frozenset({pynvml.NVML_ERROR_GPU_IS_LOST, pynvml.NVML_ERROR_UNKNOWN})
PSTATE_UNKNOWN = 32
PCIE_KB = 1024  # NVML reports PCIe throughput in KB/s of 1024 bytes.
# Static facts that came back empty (a timeout, a permission) are read again this often.
STATIC_RETRY_SAMPLES = 30

Handle = Any  # a pynvml c_nvmlDevice_t
ProcessList = list[tuple[int, "int | None"]]  # (pid, used GPU memory) as NVML lists them


class DeviceLost(Exception):
    """An NVML call answered GPU_IS_LOST or UNKNOWN for the device it was asked about."""


class Gateway:
    """The one place NVML calls go through; maps NVML errors to results."""

    def __init__(self) -> None:
        self._missing: set[str] = set()
        self._version: dict[str, int] = {}

    def call(self, fn: Callable[..., T], *args: Any) -> T | None:
        """fn(*args), or None when NVML has no value; raises DeviceLost."""
        name = fn.__name__
        if name in self._missing:
            return None
        try:
            return fn(*args)
        except pynvml.NVMLError as error:
            if error.value in LOST_ERRORS:
                raise DeviceLost(str(error)) from error
            if error.value == pynvml.NVML_ERROR_FUNCTION_NOT_FOUND:
                self._missing.add(name)
            return None

    def call_versions(
        self, family: str, versions: Sequence[Callable[..., T]], *args: Any
    ) -> T | None:
        """The first of `versions` (newest first) the library has, remembered per family."""
        for position in range(self._version.get(family, 0), len(versions)):
            try:
                result = versions[position](*args)
            except pynvml.NVMLError as error:
                if error.value == pynvml.NVML_ERROR_FUNCTION_NOT_FOUND:
                    self._version[family] = position + 1
                    continue
                if error.value in LOST_ERRORS:
                    raise DeviceLost(str(error)) from error
                return None
            return result
        return None

    def version_used(self, family: str) -> int:
        """Index in its `versions` of the call a family now uses (0: the newest)."""
        return self._version.get(family, 0)


@dataclass(frozen=True, slots=True)
class _Memory:
    total: int
    used: int
    free: int
    reserved: int | None


def _memory_v2(handle: Handle) -> _Memory:
    info = pynvml.nvmlDeviceGetMemoryInfo(handle, version=pynvml.nvmlMemory_v2)
    return _Memory(int(info.total), int(info.used), int(info.free), int(info.reserved))


def _memory_v1(handle: Handle) -> _Memory:
    info = pynvml.nvmlDeviceGetMemoryInfo(handle)
    return _Memory(int(info.total), int(info.used), int(info.free), None)


MEMORY_VERSIONS = (_memory_v2, _memory_v1)


def _temperature_v(handle: Handle) -> int:
    return int(pynvml.nvmlDeviceGetTemperatureV(handle, pynvml.NVML_TEMPERATURE_GPU))


def _temperature_v0(handle: Handle) -> int:
    return int(pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU))


# nvidia-ml-py releases before GetTemperatureV only have the older call.
TEMPERATURE_VERSIONS = (
    (_temperature_v, _temperature_v0)
    if hasattr(pynvml, "nvmlDeviceGetTemperatureV")
    else (_temperature_v0,)
)


class _ProcessInfoV1(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


NOT_AVAILABLE = pynvml.NVML_VALUE_NOT_AVAILABLE_ulonglong.value


def _listing(fn: Callable[[Handle], list[Any]]) -> Callable[[Handle], ProcessList]:
    """A pynvml process-list call (v2/v3), as (pid, memory) pairs."""

    def call(handle: Handle) -> ProcessList:
        return [(int(p.pid), p.usedGpuMemory) for p in fn(handle)]

    call.__name__ = fn.__name__
    return call


def _listing_v1(symbol: str) -> Callable[[Handle], ProcessList]:
    """The unversioned (v1) process-list symbol, which pynvml no longer wraps."""

    def call(handle: Handle) -> ProcessList:
        fn = pynvml._nvmlGetFunctionPointer(symbol)
        count = ctypes.c_uint(0)
        result = fn(handle, ctypes.byref(count), None)
        if result == pynvml.NVML_SUCCESS:
            return []
        if result != pynvml.NVML_ERROR_INSUFFICIENT_SIZE:
            raise pynvml.NVMLError(result)
        count.value = count.value * 2 + 5  # room for processes started since
        infos = (_ProcessInfoV1 * count.value)()
        pynvml._nvmlCheckReturn(fn(handle, ctypes.byref(count), infos))
        return [
            (int(p.pid), None if p.usedGpuMemory == NOT_AVAILABLE else int(p.usedGpuMemory))
            for p in infos[: count.value]
        ]

    call.__name__ = symbol
    return call


# (type letter, version family, versions newest first)
PROCESS_LISTS: tuple[tuple[str, str, tuple[Callable[[Handle], ProcessList], ...]], ...] = tuple(
    (
        letter,
        kind,
        (
            _listing(getattr(pynvml, f"nvmlDeviceGet{kind}RunningProcesses_v3")),
            _listing(getattr(pynvml, f"nvmlDeviceGet{kind}RunningProcesses_v2")),
            _listing_v1(f"nvmlDeviceGet{kind}RunningProcesses"),
        ),
    )
    for letter, kind in (("C", "Compute"), ("G", "Graphics"), ("C", "MPSCompute"))
)


def cuda_version_text(version: int) -> str:
    """NVML's CUDA driver version integer as "major.minor": 12040 -> "12.4"."""
    return f"{version // 1000}.{version % 1000 // 10}"


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(slots=True)
class _StaticFacts:
    """What does not change while the driver is loaded; read once per device."""

    name: str | None
    uuid: str | None
    pci_bus_id: str | None
    temperature_slowdown: float | None
    temperature_shutdown: float | None
    power_limit: float | None
    max_mig: int | None
    clock_sm_max: int | None
    clock_memory_max: int | None


@dataclass(slots=True)
class _MigFacts:
    name: str | None
    gpu_instance_id: int | None
    compute_instance_id: int | None


@dataclass(slots=True)
class _Device:
    index: int
    handle: Handle = None
    facts: _StaticFacts | None = None
    samples_since_facts: int = 0
    utilization_seen: int = 0  # last process-utilization timestamp (us)
    mig_facts: dict[str, _MigFacts] = field(default_factory=dict)


@dataclass(slots=True)
class _Listed:
    """One PID merged across the compute, graphics and MPS lists."""

    letters: set[str]
    memory: int | None

    @property
    def type(self) -> str:
        return "C+G" if len(self.letters) == 2 else next(iter(self.letters))


class NvmlSource:
    """The real GPUs, through NVML."""

    name = "nvml"
    simulated = False

    def __init__(self) -> None:
        self._gateway = Gateway()
        self._devices: list[_Device] = []
        self._open = False
        self._driver_version: str | None = None
        self._cuda_driver_version: str | None = None
        self._xids: XidEvents | None = None

    @property
    def driver_version(self) -> str | None:
        return self._driver_version

    @property
    def cuda_driver_version(self) -> str | None:
        return self._cuda_driver_version

    @property
    def gateway(self) -> Gateway:
        return self._gateway

    def open(self) -> None:
        """Initialise NVML; SourceUnavailable (one line) when there is no usable driver."""
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError_LibraryNotFound:
            raise SourceUnavailable(_unavailable("libnvidia-ml.so.1 was not found")) from None
        except pynvml.NVMLError as error:
            raise SourceUnavailable(_unavailable(f"nvmlInit failed: {_describe(error)}")) from None
        self._open = True
        self._driver_version = _text(self._system(pynvml.nvmlSystemGetDriverVersion))
        cuda = self._system_versions(
            "cuda",
            (pynvml.nvmlSystemGetCudaDriverVersion_v2, pynvml.nvmlSystemGetCudaDriverVersion),
        )
        self._cuda_driver_version = None if cuda is None else cuda_version_text(int(cuda))

    def close(self) -> None:
        """Shut NVML down; safe to call twice."""
        if not self._open:
            return
        self._open = False
        self._devices = []
        if self._xids is not None:
            self._xids.stop()
            self._xids.join(timeout=1.0)
            self._xids = None
        with contextlib.suppress(pynvml.NVMLError):
            pynvml.nvmlShutdown()

    def sample(self) -> tuple[GpuSample, ...]:
        """One sample of every GPU; a GPU that stops answering is listed as lost."""
        if not self._open:
            raise RuntimeError("NvmlSource.sample() before open()")
        count = self._system(pynvml.nvmlDeviceGetCount)
        count = len(self._devices) if count is None else int(count)
        while len(self._devices) < count:
            self._devices.append(_Device(len(self._devices)))
        if self._xids is None:
            self._xids = XidEvents.start_for(self._gateway, {d.index: self._handle(d) for d in self._devices})
        return tuple(self._sample_device(device) for device in self._devices)

    def sample_host(self) -> HostSample | None:
        return None

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
        """NVML's processes are real: the caller signals them itself."""
        return None

    def _system(self, fn: Callable[[], T]) -> T | None:
        try:
            return self._gateway.call(fn)
        except DeviceLost:
            return None

    def _system_versions(self, family: str, versions: Sequence[Callable[[], T]]) -> T | None:
        try:
            return self._gateway.call_versions(family, versions)
        except DeviceLost:
            return None

    def _handle(self, device: _Device) -> Handle:
        """The device's handle, fetched now if it has none yet; None when it cannot be had."""
        if device.handle is None:
            with contextlib.suppress(DeviceLost):
                device.handle = self._gateway.call(pynvml.nvmlDeviceGetHandleByIndex, device.index)
        return device.handle

    def _sample_device(self, device: _Device) -> GpuSample:
        try:
            if device.handle is None:
                device.handle = self._gateway.call(pynvml.nvmlDeviceGetHandleByIndex, device.index)
                if device.handle is None:
                    return self._lost(device)
            device.samples_since_facts += 1
            if device.facts is None or (
                device.samples_since_facts > STATIC_RETRY_SAMPLES and _incomplete(device)
            ):
                device.facts = self._static_facts(device.handle)
                device.mig_facts.clear()
                device.samples_since_facts = 0
            return self._read(device, device.handle, device.facts)
        except DeviceLost:
            device.handle = None  # fetched again next sample, so the GPU can come back
            return self._lost(device)

    @staticmethod
    def _lost(device: _Device) -> GpuSample:
        facts = device.facts
        if facts is None:
            return GpuSample(index=device.index, lost=True)
        return GpuSample(
            index=device.index,
            name=facts.name,
            uuid=facts.uuid,
            pci_bus_id=facts.pci_bus_id,
            lost=True,
        )

    def _static_facts(self, handle: Handle) -> _StaticFacts:
        call = self._gateway.call
        pci = call(pynvml.nvmlDeviceGetPciInfo_v3, handle)
        limit_mw = call(pynvml.nvmlDeviceGetEnforcedPowerLimit, handle)
        threshold = pynvml.nvmlDeviceGetTemperatureThreshold
        clock_sm_max, clock_memory_max = nvml_health.max_clocks(self._gateway, handle)
        return _StaticFacts(
            name=_text(call(pynvml.nvmlDeviceGetName, handle)),
            uuid=_text(call(pynvml.nvmlDeviceGetUUID, handle)),
            pci_bus_id=None if pci is None else _bus_id(pci.busId),
            temperature_slowdown=_number(
                call(threshold, handle, pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
            ),
            temperature_shutdown=_number(
                call(threshold, handle, pynvml.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)
            ),
            power_limit=None if limit_mw is None else int(limit_mw) / 1000.0,
            max_mig=_integer(call(pynvml.nvmlDeviceGetMaxMigDeviceCount, handle)),
            clock_sm_max=clock_sm_max,
            clock_memory_max=clock_memory_max,
        )

    def _read(self, device: _Device, handle: Handle, facts: _StaticFacts) -> GpuSample:
        call = self._gateway.call
        memory = self._gateway.call_versions("memory", MEMORY_VERSIONS, handle)
        utilization = call(pynvml.nvmlDeviceGetUtilizationRates, handle)
        encoder = call(pynvml.nvmlDeviceGetEncoderUtilization, handle)
        decoder = call(pynvml.nvmlDeviceGetDecoderUtilization, handle)
        power_mw = call(pynvml.nvmlDeviceGetPowerUsage, handle)
        pstate = call(pynvml.nvmlDeviceGetPerformanceState, handle)
        rx_kbs = call(pynvml.nvmlDeviceGetPcieThroughput, handle, pynvml.NVML_PCIE_UTIL_RX_BYTES)
        tx_kbs = call(pynvml.nvmlDeviceGetPcieThroughput, handle, pynvml.NVML_PCIE_UTIL_TX_BYTES)
        mig_mode = call(pynvml.nvmlDeviceGetMigMode, handle)
        in_mig = mig_mode is not None and int(mig_mode[0]) == pynvml.NVML_DEVICE_MIG_ENABLE

        # In MIG mode NVML keeps no per-process samples: SM use (and idleness) is unknown there.
        sm_utilization = None if in_mig else self._sm_utilization(device, handle)
        migs = self._migs(device, handle, facts.max_mig or 0) if in_mig else ()
        in_migs = {process.pid for mig in migs for process in mig.processes}
        processes = self._processes(device.index, None, handle, sm_utilization, skip=in_migs)
        return GpuSample(
            index=device.index,
            name=facts.name,
            uuid=facts.uuid,
            pci_bus_id=facts.pci_bus_id,
            memory_total=None if memory is None else memory.total,
            memory_used=None if memory is None else memory.used,
            memory_free=None if memory is None else memory.free,
            memory_reserved=None if memory is None else memory.reserved,
            utilization_gpu=None if utilization is None else float(utilization.gpu),
            utilization_memory=None if utilization is None else float(utilization.memory),
            utilization_encoder=None if encoder is None else float(encoder[0]),
            utilization_decoder=None if decoder is None else float(decoder[0]),
            temperature=_number(
                self._gateway.call_versions("temperature", TEMPERATURE_VERSIONS, handle)
            ),
            temperature_slowdown=facts.temperature_slowdown,
            temperature_shutdown=facts.temperature_shutdown,
            fan_speed=_number(call(pynvml.nvmlDeviceGetFanSpeed, handle)),
            power_draw=None if power_mw is None else int(power_mw) / 1000.0,
            power_limit=facts.power_limit,
            clock_sm=_integer(call(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_SM)),
            clock_memory=_integer(
                call(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_MEM)
            ),
            clock_sm_max=facts.clock_sm_max,
            clock_memory_max=facts.clock_memory_max,
            clock_event_reasons=nvml_health.clock_event_reasons(self._gateway, handle),
            pstate=None if pstate is None or int(pstate) == PSTATE_UNKNOWN else int(pstate),
            pcie_rx=None if rx_kbs is None else float(int(rx_kbs) * PCIE_KB),
            pcie_tx=None if tx_kbs is None else float(int(tx_kbs) * PCIE_KB),
            mig_mode=None if mig_mode is None else in_mig,
            health=nvml_health.health(
                self._gateway, handle, None if self._xids is None else self._xids.events(device.index)
            ),
            mig_devices=migs,
            processes=processes,
        )

    def _sm_utilization(self, device: _Device, handle: Handle) -> dict[int, float] | None:
        """Per-PID SM utilization from the samples newer than the last ones seen; None when unknown.

        A process absent from the samples did not run since the last ones: it is not in the
        dict, and its SM utilization is 0.
        """
        samples = self._gateway.call(_process_utilization, handle, device.utilization_seen)
        if samples is None:
            return None
        if not samples:
            return {}
        latest: dict[int, tuple[int, float]] = {}
        for sample in samples:
            pid, stamp = int(sample.pid), int(sample.timeStamp)
            if pid not in latest or stamp >= latest[pid][0]:
                latest[pid] = (stamp, float(sample.smUtil))
        device.utilization_seen = max(stamp for stamp, _ in latest.values())
        return {pid: util for pid, (_, util) in latest.items()}

    def _processes(
        self,
        gpu_index: int,
        mig_index: int | None,
        handle: Handle,
        sm_utilization: dict[int, float] | None,
        skip: set[int] | frozenset[int] = frozenset(),
    ) -> tuple[ProcessSample, ...]:
        listed: dict[int, _Listed] = {}
        for letter, family, versions in PROCESS_LISTS:
            for pid, memory in self._gateway.call_versions(family, versions, handle) or ():
                if pid in skip:
                    continue
                entry = listed.get(pid)
                if entry is None:
                    listed[pid] = _Listed({letter}, memory)
                    continue
                entry.letters.add(letter)
                if memory is not None and (entry.memory is None or memory > entry.memory):
                    entry.memory = memory
        return tuple(
            ProcessSample(
                pid=pid,
                gpu_index=gpu_index,
                type=entry.type,
                gpu_memory=entry.memory,
                sm_utilization=None if sm_utilization is None else sm_utilization.get(pid, 0.0),
                mig_index=mig_index,
            )
            for pid, entry in listed.items()
        )

    def _migs(self, device: _Device, handle: Handle, max_mig: int) -> tuple[MigSample, ...]:
        call = self._gateway.call
        migs = []
        for slot in range(max_mig):
            mig = call(pynvml.nvmlDeviceGetMigDeviceHandleByIndex, handle, slot)
            if mig is None:
                continue  # an empty slot answers NOT_FOUND
            uuid = _text(call(pynvml.nvmlDeviceGetUUID, mig))
            key = uuid or f"slot {slot}"
            facts = device.mig_facts.get(key)
            if facts is None:
                facts = _MigFacts(
                    name=_text(call(pynvml.nvmlDeviceGetName, mig)),
                    gpu_instance_id=_integer(call(pynvml.nvmlDeviceGetGpuInstanceId, mig)),
                    compute_instance_id=_integer(call(pynvml.nvmlDeviceGetComputeInstanceId, mig)),
                )
                device.mig_facts[key] = facts
            memory = self._gateway.call_versions("memory", MEMORY_VERSIONS, mig)
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
                    processes=self._processes(device.index, slot, mig, None),
                )
            )
        return tuple(migs)


def _process_utilization(handle: Handle, since: int) -> list[Any]:
    """pynvml's per-process samples; NOT_FOUND (no process ran since ``since``) is an empty list."""
    try:
        return list(pynvml.nvmlDeviceGetProcessUtilization(handle, since))
    except pynvml.NVMLError as error:
        if error.value == pynvml.NVML_ERROR_NOT_FOUND:
            return []
        raise


_process_utilization.__name__ = "nvmlDeviceGetProcessUtilization"


def _incomplete(device: _Device) -> bool:
    """Whether a static fact of the device (or of one of its MIG devices) is missing."""
    facts = [device.facts, *device.mig_facts.values()]
    return any(
        fact is None or any(getattr(fact, name) is None for name in fact.__slots__)
        for fact in facts
    )


def _integer(value: Any) -> int | None:
    return None if value is None else int(value)


def _bus_id(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def _describe(error: Exception) -> str:
    try:
        return str(error)
    except Exception:  # pynvml asks the library for the text, which may be gone
        return f"NVML error {getattr(error, 'value', '?')}"


def _unavailable(what: str) -> str:
    return f"NVML is not available: {what} — {DEMO_HINT}"
