"""``gputop export``'s per-process series, capped per host so that thousands of processes cannot flood Prometheus.

Only the ``max_series`` label sets holding the most GPU memory are served (a process without a
memory figure counts as holding none); how many were cut is ``gputop_process_series_dropped``.
A new per-process label (a job, say) is one more name in ``metric_names.PROCESS_LABELS`` and
one more value in ``process_labels``.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from gputop.core.diagnosis import Diagnoses
from gputop.core.metric_names import (
    HOSTNAME_LABEL,
    PROCESS_GPU_MEMORY,
    PROCESS_IDLE_SECONDS,
    PROCESS_LABELS,
    PROCESS_SERIES_DROPPED,
)
from gputop.core.model import ProcessSample, Snapshot

DEFAULT_MAX_PROCESS_SERIES = 1000
# The Slurm job of a process (--job-label): its id, "" outside a job.
JOB_LABEL = "job"


def process_labels(hostname: str, process: ProcessSample) -> tuple[str, ...]:
    """The values of ``PROCESS_LABELS`` for one process, in that order."""
    return (
        hostname,
        str(process.gpu_index),
        str(process.pid),
        process.user or "",
        process.name or "",
        process.container or "",
        process.container_name or "",
    )


def process_families(
    hostname: str,
    snapshot: Snapshot,
    diagnoses: Diagnoses,
    max_series: int = DEFAULT_MAX_PROCESS_SERIES,
    job_label: bool = False,
) -> Iterator[Metric]:
    """GPU memory and idle time per process on each GPU, the largest ``max_series`` label sets of them."""
    # NVML can list one process twice on a GPU (compute and graphics lists);
    # one label set must be one series, so their memory is added up.
    memory: dict[tuple[str, ...], float] = {}
    idle: dict[tuple[str, ...], float] = {}
    seen: set[tuple[str, ...]] = set()
    for process in snapshot.processes():
        if process.stale:
            continue
        labels = process_labels(hostname, process)
        if job_label:
            # Only when asked: a label per job multiplies the series a cluster keeps.
            labels += ("" if process.job is None else process.job.id,)
        seen.add(labels)
        found = diagnoses.processes.get(process.identity)
        if found is not None and found.idle_seconds is not None:
            idle[labels] = found.idle_seconds
        if process.gpu_memory is not None:
            memory[labels] = memory.get(labels, 0.0) + process.gpu_memory
    kept = seen
    if len(seen) > max_series:
        # Largest first; ties by label values, so the same processes are kept from one scrape to the next.
        ranked = sorted(seen, key=lambda labels: (-memory.get(labels, 0.0), labels))
        kept = set(ranked[:max_series])
    label_names = (*PROCESS_LABELS, JOB_LABEL) if job_label else PROCESS_LABELS
    family = GaugeMetricFamily(PROCESS_GPU_MEMORY, "GPU memory used by one process on one GPU.", labels=label_names)
    for labels, value in memory.items():
        if labels in kept:
            family.add_metric(list(labels), value)
    yield family
    family = GaugeMetricFamily(
        PROCESS_IDLE_SECONDS,
        "Seconds since the process last used the GPU's SMs (absent where unknown).",
        labels=label_names,
    )
    for labels, value in idle.items():
        if labels in kept:
            family.add_metric(list(labels), value)
    yield family
    dropped = GaugeMetricFamily(
        PROCESS_SERIES_DROPPED,
        "Processes left out of the per-process series by --max-process-series (the smallest by GPU memory).",
        labels=[HOSTNAME_LABEL],
    )
    dropped.add_metric([hostname], float(len(seen) - len(kept)))
    yield dropped
