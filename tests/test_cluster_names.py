"""The exporter and the cluster reader share one table of names: whatever ``gputop export`` serves is read back.

No Prometheus here: the exporter's own text, parsed, stands in for the host's series.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gputop.core.cluster.client import Sample
from gputop.core.cluster.detail import parse_detail
from gputop.core.cluster.model import HostDetail
from gputop.core.cluster.rollup import flagged_count, rollup_figures
from gputop.core.model import GpuHealth, GpuSample, HostSample, ProcessSample, RemappedRows, Snapshot, XidEvent
from gputop.core.output import metric_names
from gputop.core.output.dcgm_export import reading
from gputop.core.output.exporter import SnapshotCollector, make_registry

GIB = 1024**3

FULL_GPU = GpuSample(
    index=0,
    name="NVIDIA H100 80GB HBM3",
    uuid="GPU-aaaa",
    memory_total=80 * GIB,
    memory_used=60 * GIB,
    memory_free=20 * GIB,
    utilization_gpu=87.0,
    utilization_memory=41.0,
    temperature=71.0,
    temperature_slowdown=87.0,
    temperature_shutdown=92.0,
    fan_speed=35.0,
    power_draw=612.5,
    power_limit=700.0,
    clock_sm=1980,
    clock_memory=2619,
    clock_sm_max=1980,
    processes=(ProcessSample(pid=101, gpu_index=0, type="C", gpu_memory=40 * GIB, user="alice", name="python",
                             container="k8s:pod-1"),),
)
# Every figure of the table set, those added after this test was written included (made-up values).
FULL_GPU = replace(
    FULL_GPU,
    **{f.field: 7 + n for n, f in enumerate(metric_names.GPU_FIGURES) if getattr(FULL_GPU, f.field) is None},
)
# Every DCGM reading too: the health counters and clock event reasons (gputop's own series of these
# are the diagnoses', which the host screen does not read back yet).
DCGM_GPU = replace(
    FULL_GPU,
    memory_free=20 * GIB - 512 * 1024**2,  # total = used + free + reserved, as NVML's v2 memory info says
    memory_reserved=512 * 1024**2,
    utilization_encoder=3.0,
    utilization_decoder=4.0,
    clock_event_reasons=("sw_power_cap", "hw_slowdown"),
    health=GpuHealth(
        ecc_uncorrected_volatile=2,
        ecc_uncorrected_aggregate=5,
        remapped_rows=RemappedRows(corrected=3, uncorrected=1, pending=True, failure=False),
        retired_pages_pending=False,
        xid_events=(XidEvent(code=79, time=1.0), XidEvent(code=48, time=2.0)),
    ),
)
LOST_GPU = GpuSample(index=1, name="NVIDIA A100-SXM4-40GB", uuid="GPU-bbbb", lost=True)
SNAPSHOT = Snapshot(
    timestamp=1700000000.5,
    hostname="node-1",
    host=HostSample(),
    gpus=(FULL_GPU, LOST_GPU),
    driver_version="560.35.03",
    cuda_driver_version="12.6",
    source="nvml",
)
DCGM_SNAPSHOT = replace(SNAPSHOT, gpus=(DCGM_GPU, LOST_GPU))


def exported(names: str = "gputop") -> list[Sample]:
    """What ``gputop export --names NAMES`` serves for SNAPSHOT, as the series Prometheus would hold."""
    collector = SnapshotCollector(names=names)
    collector.update(SNAPSHOT if names == "gputop" else DCGM_SNAPSHOT, {0: 1234.0})
    text = generate_latest(make_registry(collector)).decode()
    return [
        Sample({"__name__": s.name, **s.labels, "instance": "node-1:9400", "job": "gputop"}, 0.0, s.value)
        for family in text_string_to_metric_families(text)
        for s in family.samples
    ]


def read_back(detail: HostDetail, sample: Sample) -> object:
    """Where the cluster reader put this exported series' value (in the exporter's unit)."""
    name, labels = sample.labels["__name__"], sample.labels
    if name == metric_names.UP:
        return 1.0 if detail.exporter_up else 0.0
    if name == metric_names.SAMPLE_ERRORS + "_total":
        return detail.sample_errors
    if name == metric_names.LAST_SAMPLE_TIMESTAMP:
        return detail.last_sample
    if name == metric_names.PROCESS_SERIES_DROPPED:
        return detail.process_series_dropped
    if name == metric_names.EXPORTER_INFO + "_info":
        return 1.0 if {k: labels[k] for k in detail.info} == dict(detail.info) and len(detail.info) == 4 else None
    if name == metric_names.PROCESS_GPU_MEMORY:
        found = [p for p in detail.processes if (str(p.gpu_index), str(p.pid)) == (labels["gpu"], labels["pid"])]
        return found[0].gpu_memory if found and (found[0].user, found[0].command) == (labels["user"],
                                                                                     labels["command"]) else None
    if name.startswith("gputop_host_"):
        # What the host's GPUs add up to is read by every refresh, not by the host's screen.
        refresh = [promql for parts in rollup_figures().values() for _, promql in parts] + [flagged_count("hot")]
        return sample.value if any(f"{name}{{" in promql for promql in refresh) else None
    gpu = next(g for g in detail.gpus if str(g.index) == labels["gpu"])
    dcgm = metric_names.DCGM_FIELD_BY_NAME.get(name)
    if dcgm is not None:
        assert (gpu.uuid, gpu.name) == (labels["UUID"], labels["modelName"])
        value = gpu.figure(dcgm.reading)
        return None if value is None else dcgm.export(value)
    assert (gpu.uuid, gpu.name) == (labels["uuid"], labels["name"])
    if name == metric_names.GPU_LOST:
        return 1.0 if gpu.lost else 0.0
    if name == metric_names.GPU_ANSWERING:
        return 1.0 if gpu.answering else 0.0
    if name == metric_names.GPU_SECONDS_TO_FULL:
        return gpu.seconds_to_full
    figure = metric_names.GPU_FIGURE_BY_NAME.get(name)
    assert figure is not None, f"{name} is exported but the cluster reader does not read it back"
    value = gpu.figure(figure.field)
    return None if value is None else figure.export(value)


def test_every_series_the_exporter_serves_is_read_back_by_the_cluster_reader_with_its_value() -> None:
    samples = exported()
    detail = parse_detail("node-1", samples, live=True)
    names = {s.labels["__name__"] for s in samples}
    # Every GPU figure of the table is served for a GPU that has them all (none left out by accident).
    assert {f.name for f in metric_names.GPU_FIGURES} <= names
    for sample in samples:
        assert read_back(detail, sample) == pytest.approx(sample.value), sample.labels["__name__"]


def test_every_dcgm_field_served_is_read_back_by_the_cluster_reader_with_its_value() -> None:
    samples = exported("dcgm")
    detail = parse_detail("node-1", samples, live=True)
    names = {s.labels["__name__"] for s in samples}
    # A GPU that gives every reading serves every DCGM field of the table; the lost GPU serves none.
    assert {f.name for f in metric_names.DCGM_FIELDS} <= names
    assert {s.labels.get("gpu") for s in samples if s.labels["__name__"].startswith("DCGM_")} == {"0"}
    for sample in samples:
        assert read_back(detail, sample) == pytest.approx(sample.value), sample.labels["__name__"]


def test_dcgm_fields_are_in_dcgms_units_and_read_back_in_gputops() -> None:
    served = {s.labels["__name__"]: s.value for s in exported("dcgm")}
    assert served["DCGM_FI_DEV_FB_USED"] == 60 * 1024  # MiB
    assert served["DCGM_FI_DEV_FB_RESERVED"] == 512.0
    assert served["DCGM_FI_DEV_SM_CLOCK"] == 1980.0  # MHz
    assert served["DCGM_FI_DEV_GPU_UTIL"] == 87.0  # %
    assert served["DCGM_FI_DEV_XID_ERRORS"] == 48.0  # the last XID, as DCGM gives it
    assert served["DCGM_FI_DEV_CLOCKS_EVENT_REASONS"] == 0x4 | 0x8  # NVML's bits
    assert served["DCGM_FI_DEV_ROW_REMAP_PENDING"] == 1.0
    gpu = parse_detail("node-1", exported("dcgm"), live=True).gpus[0]
    assert gpu.figure("memory_used") == 60 * GIB
    assert gpu.memory_percent == 75.0  # the total from free + used + reserved
    for field in metric_names.DCGM_FIELDS:
        assert gpu.figure(field.reading) == reading(field, DCGM_GPU), field.name


def test_the_figures_come_back_in_gputops_own_units() -> None:
    gpu = parse_detail("node-1", exported(), live=True).gpus[0]
    assert gpu.figure("utilization_gpu") == pytest.approx(87.0)
    assert gpu.figure("clock_sm") == 1980.0
    assert gpu.memory_percent == 75.0
