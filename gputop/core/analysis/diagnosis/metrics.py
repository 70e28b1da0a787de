"""The diagnoses as Prometheus metric families, for ``gputop export``.

XID events are counted here rather than read from the snapshot, which keeps
only the most recent events: ``XidCounter`` adds each event once, by the
time it arrived, so ``gputop_gpu_xid_errors_total`` only ever grows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from gputop.core.analysis.diagnosis.diagnoser import Diagnoses
from gputop.core.analysis.diagnosis.problems import problem_counts
from gputop.core.analysis.diagnosis.reasons import REASON_NAMES
from gputop.core.model import GpuSample, Snapshot
from gputop.core.output.metric_names import (
    GPU_CLOCK_EVENT_REASONS,
    GPU_ECC_UNCORRECTED,
    GPU_MEMORY_UNATTRIBUTED,
    GPU_PROBLEMS,
    GPU_REMAPPED_ROWS,
    GPU_XID_ERRORS,
    PROBLEM_KINDS,
)

GpuLabels = Callable[[GpuSample], list[str]]


class XidCounter:
    """XID events per (GPU index, code) since the exporter started."""

    def __init__(self) -> None:
        self.counts: dict[tuple[int, int], int] = {}
        self._newest: dict[int, float] = {}

    def update(self, snapshot: Snapshot) -> None:
        for gpu in snapshot.gpus:
            newest = self._newest.get(gpu.index, float("-inf"))
            for event in gpu.health.xid_events or ():
                if event.time > newest:
                    key = (gpu.index, event.code)
                    self.counts[key] = self.counts.get(key, 0) + 1
                    self._newest[gpu.index] = max(self._newest.get(gpu.index, event.time), event.time)


def diagnosis_families(
    snapshot: Snapshot,
    diagnoses: Diagnoses,
    xid_counts: Mapping[tuple[int, int], int],
    gpu_labels: GpuLabels,
    label_names: tuple[str, ...],
) -> Iterator[Metric]:
    """Unattributed memory, clock event reasons, ECC, remapped rows, problem counts and XID counts.

    (The max SM clock is a ``GpuFigure`` of ``core.output.metric_names``.)
    """
    gpus = [gpu for gpu in snapshot.gpus if not gpu.lost]
    unattributed = GaugeMetricFamily(
        GPU_MEMORY_UNATTRIBUTED,
        "GPU memory in use that no listed process accounts for.",
        labels=label_names,
    )
    reasons = GaugeMetricFamily(
        GPU_CLOCK_EVENT_REASONS,
        "1 while this reason holds the GPU's clocks down, else 0.",
        labels=(*label_names, "reason"),
    )
    ecc = CounterMetricFamily(
        GPU_ECC_UNCORRECTED,
        "Uncorrected ECC errors: since the driver loaded (volatile) and over the GPU's life (aggregate).",
        labels=(*label_names, "scope"),
    )
    rows = GaugeMetricFamily(
        GPU_REMAPPED_ROWS,
        "Rows remapped (corrected, uncorrected errors) and whether a remap is pending or failed (0/1).",
        labels=(*label_names, "kind"),
    )
    for gpu in gpus:
        labels = gpu_labels(gpu)
        diagnosis = diagnoses.gpus.get(gpu.index)
        if diagnosis is not None and diagnosis.unattributed.memory is not None:
            unattributed.add_metric(labels, float(diagnosis.unattributed.memory))
        if gpu.clock_event_reasons is not None:
            for name in REASON_NAMES:
                reasons.add_metric([*labels, name], 1.0 if name in gpu.clock_event_reasons else 0.0)
        health = gpu.health
        for scope, count in (
            ("volatile", health.ecc_uncorrected_volatile),
            ("aggregate", health.ecc_uncorrected_aggregate),
        ):
            if count is not None:
                ecc.add_metric([*labels, scope], float(count))
        remapped = health.remapped_rows
        if remapped is not None:
            for kind, value in (
                ("corrected", remapped.corrected),
                ("uncorrected", remapped.uncorrected),
                ("pending", int(remapped.pending)),
                ("failure", int(remapped.failure)),
            ):
                rows.add_metric([*labels, kind], float(value))
    counted = GaugeMetricFamily(
        GPU_PROBLEMS,
        "Problems the diagnoses found on the GPU, by kind: idle processes, devices with memory no process"
        " accounts for, throttled, stalled (0/1), health problems.",
        labels=(*label_names, "kind"),
    )
    counts = problem_counts(snapshot, diagnoses)
    for gpu in gpus:
        if gpu.index not in diagnoses.gpus:
            continue  # not diagnosed: no count, rather than a count of 0
        for kind in PROBLEM_KINDS:
            counted.add_metric([*gpu_labels(gpu), kind], float(counts[gpu.index].get(kind, 0)))
    yield from (unattributed, reasons, ecc, rows, counted)
    xids = CounterMetricFamily(
        GPU_XID_ERRORS, "Critical XID errors since the exporter started, by XID.", labels=(*label_names, "xid")
    )
    by_index = {gpu.index: gpu for gpu in snapshot.gpus}
    for (index, code), count in sorted(xid_counts.items()):
        if index in by_index:
            xids.add_metric([*gpu_labels(by_index[index]), str(code)], float(count))
    yield xids
