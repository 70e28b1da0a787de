"""What does not change while the driver is loaded: a GPU's and a MIG device's static facts.

Read once per device by `NvmlDevice` (nvml_device.py) through the gateway, and read again every
`STATIC_RETRY_SAMPLES` samples while one came back empty (a timeout, a permission).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pynvml

from gputop.core.sources import nvml_health
from gputop.core.sources.nvml_gateway import Gateway, Handle

# Static facts that came back empty (a timeout, a permission) are read again this often.
STATIC_RETRY_SAMPLES = 30


def text(value: Any) -> str | None:
    return None if value is None else str(value)


def number(value: Any) -> float | None:
    return None if value is None else float(value)


def integer(value: Any) -> int | None:
    return None if value is None else int(value)


def _bus_id(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


@dataclass(slots=True)
class StaticFacts:
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
class MigFacts:
    name: str | None
    gpu_instance_id: int | None
    compute_instance_id: int | None


def read_static_facts(gateway: Gateway, handle: Handle) -> StaticFacts:
    """A GPU's static facts, each None where the driver did not give it."""
    call = gateway.call
    pci = call(pynvml.nvmlDeviceGetPciInfo_v3, handle)
    limit_mw = call(pynvml.nvmlDeviceGetEnforcedPowerLimit, handle)
    threshold = pynvml.nvmlDeviceGetTemperatureThreshold
    clock_sm_max, clock_memory_max = nvml_health.max_clocks(gateway, handle)
    return StaticFacts(
        name=text(call(pynvml.nvmlDeviceGetName, handle)),
        uuid=text(call(pynvml.nvmlDeviceGetUUID, handle)),
        pci_bus_id=None if pci is None else _bus_id(pci.busId),
        temperature_slowdown=number(call(threshold, handle, pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)),
        temperature_shutdown=number(call(threshold, handle, pynvml.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)),
        power_limit=None if limit_mw is None else int(limit_mw) / 1000.0,
        max_mig=integer(call(pynvml.nvmlDeviceGetMaxMigDeviceCount, handle)),
        clock_sm_max=clock_sm_max,
        clock_memory_max=clock_memory_max,
    )


def read_mig_facts(gateway: Gateway, mig: Handle) -> MigFacts:
    """A MIG device's static facts."""
    call = gateway.call
    return MigFacts(
        name=text(call(pynvml.nvmlDeviceGetName, mig)),
        gpu_instance_id=integer(call(pynvml.nvmlDeviceGetGpuInstanceId, mig)),
        compute_instance_id=integer(call(pynvml.nvmlDeviceGetComputeInstanceId, mig)),
    )


def incomplete(facts: list[StaticFacts | MigFacts | None]) -> bool:
    """Whether a static fact of a device (or of one of its MIG devices) is missing."""
    return any(fact is None or any(getattr(fact, name) is None for name in fact.__slots__) for fact in facts)
