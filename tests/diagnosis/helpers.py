"""Snapshots for diagnosis tests, fed through the real Watcher (history, diagnoses, alerts)."""

from __future__ import annotations

from dataclasses import replace

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.analysis.foresight import Foresight, Watcher
from gputop.core.model import GpuSample, HostSample, ProcessSample, Snapshot
from gputop.core.settings import Thresholds

GIB = 1 << 30
TOTAL = 80 * GIB


def snapshot(t: float, *gpus: GpuSample) -> Snapshot:
    return Snapshot(timestamp=t, hostname="h", host=HostSample(), gpus=gpus)


def gpu(index: int = 0, used: int = 10 * GIB, **fields: object) -> GpuSample:
    """A healthy, quiet GPU: idle clocks, no errors, 70 of 700 W."""
    base = GpuSample(
        index=index,
        memory_total=TOTAL,
        memory_used=used,
        utilization_gpu=0.0,
        power_draw=70.0,
        power_limit=700.0,
        clock_event_reasons=("gpu_idle",),
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def process(pid: int = 4242, memory: int = 8 * GIB, sm: float | None = 0.0, **fields: object) -> ProcessSample:
    base = ProcessSample(
        pid=pid,
        gpu_index=0,
        type="C",
        gpu_memory=memory,
        sm_utilization=sm,
        started=1000.0 + pid,
        user="alice",
        name="python",
        visible=True,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def run(frames: list[tuple[float, GpuSample]], thresholds: Thresholds | None = None) -> tuple[Watcher, list[Foresight]]:
    """Feed one GPU's frames (time, sample) through a fresh Watcher; every tick's foresight."""
    watcher = Watcher(thresholds)
    return watcher, [watcher.update(snapshot(t, sample)) for t, sample in frames]


def raised(foresights: list[Foresight], kind: str) -> list[AlertEvent]:
    return [e for f in foresights for e in f.events if e.kind == kind and not e.cleared and not e.updated]


def updated(foresights: list[Foresight], kind: str) -> list[AlertEvent]:
    return [e for f in foresights for e in f.events if e.kind == kind and e.updated]


def cleared(foresights: list[Foresight], kind: str) -> list[AlertEvent]:
    return [e for f in foresights for e in f.events if e.kind == kind and e.cleared]
