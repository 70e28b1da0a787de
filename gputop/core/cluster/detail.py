"""One host's exporter, GPUs and processes, from every series Prometheus holds of it (read while its screen is open)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from gputop.core.cluster import queries
from gputop.core.cluster.client import PrometheusClient, Sample
from gputop.core.cluster.model import ClusterGpu, ClusterProcess, HostDetail
from gputop.core.output import metric_names

_INFO = metric_names.EXPORTER_INFO + "_info"
_DCGM_PREFIX = "DCGM_FI_"
_ERRORS = metric_names.SAMPLE_ERRORS + "_total"
_DCGM_ONLY = frozenset(metric_names.DCGM_ONLY_FIELDS)
_NOT_INFO = frozenset(("__name__", "hostname", "instance", "job"))


@dataclass(slots=True)
class _Gpu:
    uuid: str | None = None
    name: str | None = None
    figures: dict[str, float] = field(default_factory=dict)
    seconds_to_full: float | None = None
    lost: bool = False
    answering: bool | None = None
    problems: dict[str, int] = field(default_factory=dict)
    mig_profile: str | None = None
    verdict: str | None = None


def read_detail(client: PrometheusClient, hostname: str, now: float, lookback_s: float) -> HostDetail:
    """The host's series now; when it serves no GPU any more, the last GPU figures Prometheus kept."""
    detail = parse_detail(hostname, client.query(queries.detail_query(hostname), now), live=True)
    if detail.gpus:
        return detail
    return parse_detail(hostname, client.query(queries.kept_detail_query(hostname, lookback_s), now), live=False)


def parse_detail(hostname: str, samples: list[Sample], live: bool) -> HostDetail:
    """A HostDetail from one host's series (gputop's names in ``metric_names``, or DCGM exporter's)."""
    gpus: dict[tuple[int, int | None], _Gpu] = {}
    processes: list[ClusterProcess] = []
    pods: set[ClusterProcess] = set()
    # Scraped without honor_labels, where the target has pod labels of its own (dcgm-exporter's pod):
    # DCGM's are then exported_*, and the plain ones name the exporter, not a GPU's workload.
    renamed = any("exported_pod" in sample.labels for sample in samples)
    exporter: dict[str, float] = {}
    info: dict[str, str] = {}
    for sample in samples:
        name = sample.labels.get("__name__", "")
        labels = sample.labels
        if math.isnan(sample.value):
            continue
        if name == metric_names.PROCESS_GPU_MEMORY:
            if live and (process := _process(hostname, labels, sample.value)) is not None:
                processes.append(process)
            continue
        if name in (metric_names.UP, _ERRORS, metric_names.LAST_SAMPLE_TIMESTAMP, metric_names.PROCESS_SERIES_DROPPED):
            exporter[name] = sample.value
            continue
        if name == _INFO:
            info = {k: v for k, v in labels.items() if k not in _NOT_INFO}
            continue
        beside = labels.get(metric_names.BESIDE_GPUTOP_LABEL) == metric_names.BESIDE_GPUTOP_VALUE
        if beside and not labels.get(metric_names.DCGM_MIG_INSTANCE_LABEL) and name not in _DCGM_ONLY:
            continue  # a gputop host's GPU figure, read by gputop's own name (not rounded to DCGM's units)
        # A gputop host's own pod labels (beside its processes, which list the pods already) are not pods to add.
        if live and not beside and name in metric_names.DCGM_FIELD_BY_NAME and (
            pod := _pod(hostname, labels, renamed)
        ) is not None:
            pods.add(pod)
        gpu = _gpu(gpus, labels)
        if gpu is None:
            continue
        if (figure := metric_names.GPU_FIGURE_BY_NAME.get(name)) is not None:
            gpu.figures[figure.field] = figure.read_back(sample.value)
        elif name == metric_names.GPU_LOST:
            gpu.lost = sample.value == 1.0
        elif name == metric_names.GPU_ANSWERING:
            gpu.answering = sample.value == 1.0
        elif name == metric_names.GPU_PROBLEMS and live and sample.value > 0:
            gpu.problems[labels.get("kind", "?")] = int(sample.value)
        elif name == metric_names.GPU_VERDICT:
            # What the figures add up to now: not from figures Prometheus merely kept.
            if live and sample.value == 1.0:
                gpu.verdict = labels.get(metric_names.VERDICT_LABEL) or None
        elif name == metric_names.GPU_SECONDS_TO_FULL:
            # A forecast is about now: one Prometheus merely kept is not shown.
            gpu.seconds_to_full = sample.value if live else None
        elif (dcgm := metric_names.DCGM_FIELD_BY_NAME.get(name)) is not None:
            # In gputop's unit (MiB -> bytes), under the reading's name (``metric_names.DcgmField``).
            gpu.figures[dcgm.reading] = dcgm.read_back(sample.value)
        elif name.startswith(_DCGM_PREFIX):
            # A field gputop does not take itself (profiling, energy, NVLink …): shown as DCGM serves it.
            gpu.figures[name] = sample.value
    up = exporter.get(metric_names.UP)
    return HostDetail(
        hostname=hostname,
        live=live,
        gpus=tuple(_finish(key, gpus[key]) for key in sorted(gpus, key=lambda k: (k[0], -1 if k[1] is None else k[1]))),
        processes=tuple(
            sorted([*processes, *pods], key=lambda p: (p.gpu_index, -(p.gpu_memory or 0.0), p.pid or 0, p.container))
        ),
        exporter_up=None if up is None else up == 1.0,
        sample_errors=exporter.get(_ERRORS),
        last_sample=exporter.get(metric_names.LAST_SAMPLE_TIMESTAMP),
        process_series_dropped=exporter.get(metric_names.PROCESS_SERIES_DROPPED),
        info=info,
    )


def _gpu(gpus: dict[tuple[int, int | None], _Gpu], labels: Mapping[str, str]) -> _Gpu | None:
    try:
        index = int(labels.get("gpu", ""))
        instance = int(labels[metric_names.DCGM_MIG_INSTANCE_LABEL]) if labels.get("GPU_I_ID") else None
    except ValueError:
        return None
    gpu = gpus.setdefault((index, instance), _Gpu())
    gpu.uuid = gpu.uuid or labels.get("uuid") or labels.get("UUID") or None
    gpu.name = gpu.name or labels.get("name") or labels.get("modelName") or None
    gpu.mig_profile = gpu.mig_profile or labels.get(metric_names.DCGM_MIG_PROFILE_LABEL) or None
    return gpu


def _pod(hostname: str, labels: Mapping[str, str], renamed: bool) -> ClusterProcess | None:
    """The Kubernetes pod a DCGM series names (``exported_*`` where the scrape renamed DCGM's own), if any."""

    def label(name: str) -> str:
        return labels.get(f"exported_{name}" if renamed else name) or ""

    pod, namespace, container = label("pod"), label("namespace"), label("container")
    if not pod:
        return None
    try:
        gpu_index = int(labels.get("gpu", ""))
    except ValueError:
        return None
    where = f"{namespace}/{pod}" if namespace else pod
    return ClusterProcess(
        hostname=hostname,
        gpu_index=gpu_index,
        pid=None,
        user=None,
        command=container or None,
        container=where,
        gpu_memory=None,
    )


def _finish(key: tuple[int, int | None], gpu: _Gpu) -> ClusterGpu:
    index, instance = key
    figures = gpu.figures
    if "memory_total" not in figures and "memory_used" in figures and "memory_free" in figures:
        figures["memory_total"] = figures["memory_used"] + figures["memory_free"] + figures.get("memory_reserved", 0.0)
    return ClusterGpu(
        index=index,
        uuid=gpu.uuid,
        name=gpu.name,
        figures=figures,
        seconds_to_full=gpu.seconds_to_full,
        lost=gpu.lost,
        answering=gpu.answering,
        problems=gpu.problems,
        mig_instance=instance,
        mig_profile=gpu.mig_profile if instance is not None else None,
        verdict=gpu.verdict,
    )


def _process(hostname: str, labels: Mapping[str, str], memory: float) -> ClusterProcess | None:
    try:
        gpu_index, pid = int(labels.get("gpu", "")), int(labels.get("pid", ""))
    except ValueError:
        return None
    return ClusterProcess(
        hostname=hostname,
        gpu_index=gpu_index,
        pid=pid,
        user=labels.get("user") or None,
        command=labels.get("command") or None,
        container=labels.get("container") or None,
        gpu_memory=memory,
    )
