"""NVML's GPU performance monitoring (GPM, Hopper and later): one sample a tick, metrics between two.

``GpmSamples`` is one device's (a GPU, or a MIG device through its GPU); no call sleeps, since the
metrics are computed between this tick's sample and the last tick's.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable, Sequence
from typing import Any

import pynvml

from gputop.core.model import Activity
from gputop.core.sources.nvml_gateway import Gateway

MIB = 1024 * 1024  # GPM gives throughput in MiB/s

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
        self._metric_ids = tuple(metric_id for _, metric_id in metrics)
        self._requests: list[Any] = []  # by turn: the request between the other sample and this turn's
        # Each metric's return code and value, read from the request's bytes at once (pynvml's structures
        # read and set each attribute through their __getattribute__ and __setattr__, about 1 us a field).
        slot = pynvml.c_nvmlGpmMetric_t
        code_at, value_at = slot.nvmlReturn.offset, slot.value.offset
        one = f"{code_at}xI{value_at - code_at - 4}xd{ctypes.sizeof(slot) - value_at - 8}x"
        self._answers = struct.Struct("=" + one * len(metrics))
        self._answers_at = pynvml.c_nvmlGpmMetricsGet_t.metrics.offset  # in a request
        self._last: tuple[tuple[float | int, ...], dict[str, float | None]] | None = None
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
            self._requests = [self._request(self._samples[1], self._samples[0]), self._request(*self._samples)]
        if self._take(self._samples[self._turn]) is None:
            self.usable = self.worked  # never worked: decided, no GPM here
            self._have_previous = False
            return None
        self.worked = True
        metrics = self._metrics() if self._have_previous else None
        self._have_previous = True
        self._turn = 1 - self._turn
        return metrics

    def _request(self, before: Any, now: Any) -> Any:
        """The metrics' request between two samples, made once: a turn's is the same each time."""
        request = pynvml.c_nvmlGpmMetricsGet_t()
        request.version = pynvml.NVML_GPM_METRICS_GET_VERSION
        request.numMetrics = len(self._metric_ids)
        for slot, metric_id in enumerate(self._metric_ids):
            request.metrics[slot].metricId = metric_id
        request.sample1, request.sample2 = before, now
        return request

    def _metrics(self) -> dict[str, float | None] | None:
        request = self._requests[self._turn]
        if self._gateway.call(pynvml.nvmlGpmMetricsGet, request) is None:
            return None
        at = ctypes.addressof(request) + self._answers_at
        answers = self._answers.unpack(ctypes.string_at(at, self._answers.size))
        last = self._last
        if last is not None and last[0] == answers:
            return last[1]  # the same figures: the same dict (its callers only read it)
        metrics = {
            name: answers[2 * slot + 1] if answers[2 * slot] == pynvml.NVML_SUCCESS else None
            for slot, name in enumerate(self._names)
        }
        self._last = (answers, metrics)
        return metrics


NO_FIGURES = Activity()


def activity(samples: GpmSamples | None, metrics: dict[str, float | None] | None) -> Activity | None:
    """The Activity of a tick's metrics: None without GPM; every figure None on a device with GPM
    that has none this tick (its first tick, a failed call: a gap, as any figure that stalls)."""
    if samples is None or not samples.usable:
        return None
    if metrics is None:
        return NO_FIGURES
    return Activity(**{name: metrics.get(name) for name, _ in ACTIVITY_METRICS})


def rate(metrics: dict[str, float | None] | None, name: str) -> float | None:
    value = None if metrics is None else metrics.get(name)
    return None if value is None else value * MIB
