"""What a host's GPUs add up to, served by the exporter beside the GPUs' own series.

A cluster view of 1,000 hosts would otherwise have Prometheus read and aggregate eight
series a host for every figure of every refresh; these are one series a host, each the
exact aggregate the cluster reader would ask of the GPUs' series (a sum, a mean, the
largest, how many), so a host that serves them and one that does not show the same.
A figure no GPU of the host gives is left out, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from prometheus_client.core import GaugeMetricFamily, Metric

from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.diagnosis.problems import problem_counts
from gputop.core.analysis.levels import Level, temperature_level
from gputop.core.model import GpuSample, Snapshot
from gputop.core.output.metric_names import (
    HOST_FLAG_LABEL,
    HOST_FLAGS,
    HOST_GPUS,
    HOST_GPUS_FLAGGED,
    HOST_MEMORY_FULLEST,
    HOST_MEMORY_TOTAL,
    HOST_MEMORY_USED,
    HOST_POWER,
    HOST_PROBLEMS,
    HOST_TEMPERATURE_MAX,
    HOST_UTILIZATION,
    HOSTNAME_LABEL,
)


def flagged(
    snapshot: Snapshot,
    seconds_to_full: Mapping[int, float | None],
    diagnoses: Diagnoses,
    counts: Mapping[int, Mapping[str, int]],
) -> dict[str, list[int]]:
    """HOST_FLAGS' GPUs, by index: filling (a forecast), hot (the temperature alarm), idle-hogged, unhealthy.

    ``counts``: the diagnoses' problems by GPU and kind (``problem_counts``).
    """
    flags: dict[str, list[int]] = {flag: [] for flag in HOST_FLAGS}
    for gpu in snapshot.gpus:
        judged = not gpu.lost and gpu.index in diagnoses.gpus  # the exporter's problem counts exist
        if seconds_to_full.get(gpu.index) is not None and not gpu.lost and gpu.answering:
            flags["filling"].append(gpu.index)
        if temperature_level(gpu.temperature, gpu.temperature_slowdown) is Level.ALARM:
            flags["hot"].append(gpu.index)
        if judged and counts[gpu.index].get("idle", 0) > 0:
            flags["idle-hogged"].append(gpu.index)
        if not gpu.answering or (judged and counts[gpu.index].get("health", 0) > 0):
            flags["unhealthy"].append(gpu.index)
    return flags


def rollup_families(
    hostname: str, snapshot: Snapshot, seconds_to_full: Mapping[int, float | None], diagnoses: Diagnoses
) -> Iterator[Metric]:
    """The host's GPUs summed up: how many of each model, memory, load, heat, problems and flagged GPUs."""
    gpus = snapshot.gpus
    labels = [HOSTNAME_LABEL]
    counts = problem_counts(snapshot, diagnoses)
    counted: dict[tuple[str, str], int] = {}
    for gpu in gpus:
        key = (gpu.name or "", "1" if gpu.lost else "0")
        counted[key] = counted.get(key, 0) + 1
    family = GaugeMetricFamily(HOST_GPUS, "The host's GPUs of each model, lost (1) or not (0).",
                               labels=[HOSTNAME_LABEL, "name", "lost"])
    for (name, lost), count in sorted(counted.items()):
        family.add_metric([hostname, name, lost], float(count))
    yield family

    def gauge(name: str, documentation: str, value: float | None) -> GaugeMetricFamily:
        family = GaugeMetricFamily(name, documentation, labels=labels)
        if value is not None:
            family.add_metric([hostname], value)
        return family

    yield gauge(HOST_MEMORY_USED, "GPU memory in use, all the host's GPUs together.",
                _total(g.memory_used for g in gpus))
    yield gauge(HOST_MEMORY_TOTAL, "GPU memory, all the host's GPUs together.", _total(g.memory_total for g in gpus))
    yield gauge(HOST_MEMORY_FULLEST, "The fullest GPU's memory in use over its size (0-1).",
                max((f for f in map(_fill, gpus) if f is not None), default=None))
    ratios = [g.utilization_gpu / 100 for g in gpus if g.utilization_gpu is not None]  # as each GPU's is served
    yield gauge(HOST_UTILIZATION, "The host's GPUs' mean utilization (0-1).",
                sum(ratios) / len(ratios) if ratios else None)
    yield gauge(HOST_POWER, "Power draw, all the host's GPUs together.", _total(g.power_draw for g in gpus))
    yield gauge(HOST_TEMPERATURE_MAX, "The hottest GPU's temperature.",
                max((g.temperature for g in gpus if g.temperature is not None), default=None))
    judged = [gpu for gpu in gpus if not gpu.lost and gpu.index in diagnoses.gpus]
    yield gauge(HOST_PROBLEMS, "Problems the diagnoses found, all the host's GPUs together.",
                float(sum(sum(counts[gpu.index].values()) for gpu in judged)) if judged else None)
    family = GaugeMetricFamily(
        HOST_GPUS_FLAGGED,
        "The host's GPUs filling up (an out-of-memory forecast), hot (within 5 °C of slowing down),"
        " holding an idle process's memory, or unhealthy (not answering, health problems).",
        labels=[HOSTNAME_LABEL, HOST_FLAG_LABEL],
    )
    for flag, indices in flagged(snapshot, seconds_to_full, diagnoses, counts).items():
        family.add_metric([hostname, flag], float(len(indices)))
    yield family


def _total(values: Iterable[float | None]) -> float | None:
    given = [float(v) for v in values if v is not None]
    return sum(given) if given else None


def _fill(gpu: GpuSample) -> float | None:
    if gpu.memory_used is None or not gpu.memory_total:
        return None
    return gpu.memory_used / gpu.memory_total
