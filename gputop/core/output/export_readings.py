"""The readings the exported metrics are made of: a ``GpuSample`` field, or one of these, by name.

Both name sets (``metric_names.GPU_FIGURES``, gputop's, and ``metric_names.DCGM_FIELDS``, DCGM's) name
the reading each metric comes from, and the cluster view keeps what it reads back under the same
name (``ClusterGpu.figures``): one vocabulary from the snapshot to the host screen. Units are
gputop's (percent, bytes/s, joules); each metric's table row scales them on the way out.
"""

from __future__ import annotations

from collections.abc import Callable

from gputop.core.analysis.diagnosis.reasons import REASONS
from gputop.core.model import Activity, GpuSample, MigSample

_BIT = {name: bit for bit, name, _words in REASONS}
# Activity's fields (GPM, percent), read the same way from a GPU and from a MIG device.
ACTIVITY_READINGS = ("sm_active", "sm_occupancy", "tensor_active", "dram_active", "fp64_active", "fp32_active",
                     "fp16_active", "graphics_active")


def _xid_last(gpu: GpuSample) -> float | None:
    # DCGM gives the last XID code, 0 while there has been none; without event support there is no field.
    events = gpu.health.xid_events
    if events is None:
        return None
    return float(events[-1].code) if events else 0.0


def _flag(value: bool | None) -> float | None:
    return None if value is None else float(value)


def _clock_event_mask(gpu: GpuSample) -> float | None:
    reasons = gpu.clock_event_reasons
    return None if reasons is None else float(sum(_BIT.get(name, 0) for name in reasons))


def _activity(name: str) -> Callable[[Activity | None], float | None]:
    def read(activity: Activity | None) -> float | None:
        value: float | None = None if activity is None else getattr(activity, name)
        return value

    return read


def _gpu_activity(name: str) -> Callable[[GpuSample], float | None]:
    read = _activity(name)
    return lambda gpu: read(gpu.activity)


def _number(value: float | None) -> float | None:
    return None if value is None else float(value)


# The readings that are not a GpuSample field of the same name.
READINGS: dict[str, Callable[[GpuSample], float | None]] = {
    "xid_last": _xid_last,
    "ecc_dbe_volatile": lambda gpu: _number(gpu.health.ecc_uncorrected_volatile),
    "ecc_dbe_aggregate": lambda gpu: _number(gpu.health.ecc_uncorrected_aggregate),
    "retired_pending": lambda gpu: _flag(gpu.health.retired_pages_pending),
    "remapped_uncorrectable": lambda gpu: None if (r := gpu.health.remapped_rows) is None else r.uncorrected,
    "remapped_correctable": lambda gpu: None if (r := gpu.health.remapped_rows) is None else r.corrected,
    "remap_failure": lambda gpu: None if (r := gpu.health.remapped_rows) is None else float(r.failure),
    "remap_pending": lambda gpu: None if (r := gpu.health.remapped_rows) is None else float(r.pending),
    "clock_event_mask": _clock_event_mask,
    "energy_since_driver_load_j": lambda gpu: None if gpu.energy is None else gpu.energy.since_driver_load_j,
    "energy_since_start_j": lambda gpu: None if gpu.energy is None else gpu.energy.since_start_j,
    "nvlink_rx": lambda gpu: None if gpu.nvlink is None else gpu.nvlink.rx,
    "nvlink_tx": lambda gpu: None if gpu.nvlink is None else gpu.nvlink.tx,
    "nvlink_version": lambda gpu: None if gpu.nvlink is None else _number(gpu.nvlink.version),
    "nvlink_links_active": lambda gpu: None if gpu.nvlink is None else _number(gpu.nvlink.links_active),
    "nvlink_links_total": lambda gpu: None if gpu.nvlink is None else _number(gpu.nvlink.links_total),
    "nvlink_errors_crc": lambda gpu: None if gpu.nvlink is None else _number(gpu.nvlink.errors_crc),
    "nvlink_errors_replay": lambda gpu: None if gpu.nvlink is None else _number(gpu.nvlink.errors_replay),
    "nvlink_errors_recovery": lambda gpu: None if gpu.nvlink is None else _number(gpu.nvlink.errors_recovery),
    **{name: _gpu_activity(name) for name in ACTIVITY_READINGS},
}


def gpu_reading(name: str, gpu: GpuSample) -> float | None:
    """The reading ``name`` of ``gpu`` in gputop's unit, None where the GPU does not give it."""
    read = READINGS.get(name)
    value = read(gpu) if read is not None else getattr(gpu, name)
    return None if value is None else float(value)


def mig_reading(name: str, mig: MigSample) -> float | None:
    """The reading ``name`` of a MIG device (its memory and activity), None where it has none."""
    value = _activity(name)(mig.activity) if name in ACTIVITY_READINGS else getattr(mig, name, None)
    return None if value is None else float(value)
