"""NVML reads for the diagnoses: the clock event reasons' calls, max clocks, process samples; the GPU's health.

Functions of the gateway and a device handle, called from the NVML source's
per-GPU sampling; every call goes through the gateway, so NOT_SUPPORTED is
None and a lost GPU raises ``DeviceLost`` like every other read. ``health``
assembles what the tick's field reads found (nvml_activity.py).
"""

from __future__ import annotations

import ctypes
from operator import itemgetter
from typing import NamedTuple

import pynvml

from gputop.core.model import GpuHealth, RemappedRows, XidEvent
from gputop.core.sources.nvml_gateway import Gateway, Handle, layout, public, read_list, symbol

# The newer name first; drivers before 535 only have ...ThrottleReasons.
CLOCK_REASON_VERSIONS = (
    pynvml.nvmlDeviceGetCurrentClocksEventReasons,
    pynvml.nvmlDeviceGetCurrentClocksThrottleReasons,
)


def max_clocks(gateway: Gateway, handle: Handle) -> tuple[int | None, int | None]:
    """The maximum SM and memory clocks, in MHz."""
    sm = gateway.call(pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_SM)
    memory = gateway.call(pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_MEM)
    return (None if sm is None else int(sm)), (None if memory is None else int(memory))


def health(
    xid_events: tuple[XidEvent, ...] | None,
    ecc: tuple[int | None, int | None],
    remapped: tuple[int, int, int, int] | None,
    retired_pending: int | None,
) -> GpuHealth:
    """ECC counts, row remapping and retired pages of one GPU, with the XID events seen for it.

    ``ecc`` (uncorrected, volatile and aggregate), ``remapped`` (corrected rows, uncorrected rows,
    pending, failure) and ``retired_pending`` (1: pages wait to be retired): what the tick's field
    reads found, each from the batch or its classic call (nvml_activity.py, nvml_fallback.py).
    """
    rows = None if remapped is None else RemappedRows(remapped[0], remapped[1], bool(remapped[2]), bool(remapped[3]))
    return GpuHealth(
        ecc_uncorrected_volatile=ecc[0],
        ecc_uncorrected_aggregate=ecc[1],
        remapped_rows=rows,
        retired_pages_pending=None if retired_pending is None else bool(retired_pending),
        xid_events=xid_events,
    )


class SmSamples(NamedTuple):
    """What the per-process utilization samples newer than ``since`` say."""

    utilization: dict[int, float]  # PID -> SM % of its newest sample; absent: it did not run
    seen: int  # the newest sample's timestamp (us), to ask from next time


_STAMP = itemgetter(1)


def sm_samples(gateway: Gateway, handle: Handle, since: int) -> SmSamples | None:
    """The samples newer than ``since`` (us); None when the GPU keeps none (NOT_SUPPORTED, MIG)."""
    samples = gateway.call(process_utilization, handle, since)
    if samples is None:
        return None
    if not samples:
        return SmSamples({}, since)
    ordered = sorted(samples, key=_STAMP)  # a PID's newest sample last (a stable sort: ties in order)
    return SmSamples({pid: float(sm) for pid, _, sm in ordered}, ordered[-1][1])


_SAMPLE = pynvml.c_nvmlProcessUtilizationSample_t
_SAMPLE_FIELDS = layout(_SAMPLE, "pid", "timeStamp", "smUtil")


def process_utilization(handle: Handle, since: int) -> list[tuple[int, int, int]]:
    """The per-process samples as (pid, timestamp in us, SM %); NOT_FOUND (no process ran since
    ``since``) is an empty list."""
    fn = symbol("nvmlDeviceGetProcessUtilization")
    stamp = ctypes.c_ulonglong(since)
    try:
        if fn is None:
            listed = public("nvmlDeviceGetProcessUtilization")(handle, since)
            return [(int(item.pid), int(item.timeStamp), int(item.smUtil)) for item in listed]
        raw = read_list(lambda array, count: int(fn(handle, array, ctypes.byref(count), stamp)), _SAMPLE)
    except pynvml.NVMLError as error:
        if error.value == pynvml.NVML_ERROR_NOT_FOUND:
            return []
        raise
    return list(_SAMPLE_FIELDS.iter_unpack(raw))


process_utilization.__name__ = "nvmlDeviceGetProcessUtilization"
