"""The exporter and the cluster reader share one table of names: whatever ``gputop export`` serves is read back.

No Prometheus here: the exporter's own text, parsed, stands in for the host's series.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.diagnosis.diagnoser import GpuDiagnosis
from gputop.core.analysis.diagnosis.memory import NOTHING_UNATTRIBUTED
from gputop.core.cluster.client import Sample
from gputop.core.cluster.detail import parse_detail
from gputop.core.cluster.model import HostDetail
from gputop.core.cluster.rollup import flagged_count, rollup_figures
from gputop.core.model import (
    Activity,
    Energy,
    GpuHealth,
    GpuSample,
    HostSample,
    MigSample,
    NvLink,
    ProcessSample,
    RemappedRows,
    Snapshot,
    XidEvent,
)
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
    activity=Activity(sm_active=34.5, sm_occupancy=21.0, tensor_active=12.0, dram_active=61.0, fp64_active=0.0,
                      fp32_active=8.0, fp16_active=3.0),
    energy=Energy(since_driver_load_j=3_600_000.123, since_start_j=1234.5),
    nvlink=NvLink(version=4, links_active=17, links_total=18, rx=2048.0 * 1024**2, tx=1024.0 * 1024**2,
                  errors_crc=1, errors_replay=2, errors_recovery=3),
    pcie_rx=512.0 * 1024**2,
    pcie_tx=64.0 * 1024**2,
    processes=(ProcessSample(pid=101, gpu_index=0, type="C", gpu_memory=40 * GIB, user="alice", name="python",
                             container="k8s:pod-1"),),
)
# Every figure of the table set, those added after this test was written included (made-up values).
FULL_GPU = replace(
    FULL_GPU,
    **{f.field: 7 + n for n, f in enumerate(metric_names.GPU_FIGURES) if getattr(FULL_GPU, f.field, 0) is None},
)
# Every DCGM reading too: the health counters and clock event reasons (gputop's own series of these
# are the diagnoses', which the host screen does not read back yet).
DCGM_GPU = replace(
    FULL_GPU,
    memory_free=20 * GIB - 512 * 1024**2,  # total = used + free + reserved, as NVML's v2 memory info says
    memory_reserved=512 * 1024**2,
    utilization_encoder=3.0,
    utilization_decoder=4.0,
    memory_temperature=64.0,
    pcie_replay_errors=3,
    activity=Activity(sm_active=34.5, sm_occupancy=21.0, tensor_active=12.0, dram_active=61.0, fp64_active=0.0,
                      fp32_active=8.0, fp16_active=3.0, graphics_active=88.5),
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
DIAGNOSES = Diagnoses(
    gpus={
        0: GpuDiagnosis(
            verdict="busy_few_sms",
            limiting=(),
            unattributed=NOTHING_UNATTRIBUTED,
            health=(),
            new_ecc_errors=False,
            busy_few_sms=True,
        )
    },
    migs={},
    processes={},
)


def exported(names: str = "gputop") -> list[Sample]:
    """What ``gputop export --names NAMES`` serves for SNAPSHOT, as the series Prometheus would hold."""
    collector = SnapshotCollector(names=names)
    collector.update(SNAPSHOT if names == "gputop" else DCGM_SNAPSHOT, {0: 1234.0}, DIAGNOSES)
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
    if name == metric_names.GPU_PROBLEMS:
        return float(gpu.problems.get(labels["kind"], 0))
    if name == metric_names.GPU_VERDICT:
        return 1.0 if gpu.verdict == labels[metric_names.VERDICT_LABEL] else 0.0
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
    assert served["DCGM_FI_DEV_MEMORY_TEMP"] == 64.0  # °C
    assert served["DCGM_FI_DEV_PCIE_REPLAY_COUNTER"] == 3.0
    assert served["DCGM_FI_PROF_GR_ENGINE_ACTIVE"] == 0.885  # GPM's percent as DCGM's ratio
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


def test_activity_energy_and_nvlink_are_served_as_dcgm_serves_them() -> None:
    served = {s.labels["__name__"]: s.value for s in exported("dcgm")}
    # GPM's percent as DCGM's ratios.
    assert {name: value for name, value in served.items() if name.startswith("DCGM_FI_PROF_PIPE")
            or name in ("DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_PROF_DRAM_ACTIVE")} == {
        "DCGM_FI_PROF_SM_ACTIVE": 0.345, "DCGM_FI_PROF_SM_OCCUPANCY": 0.21, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": 0.12,
        "DCGM_FI_PROF_DRAM_ACTIVE": 0.61, "DCGM_FI_PROF_PIPE_FP64_ACTIVE": 0.0, "DCGM_FI_PROF_PIPE_FP32_ACTIVE": 0.08,
        "DCGM_FI_PROF_PIPE_FP16_ACTIVE": 0.03,
    }
    # Bytes per second, and mJ since the driver loaded (3,600,000.123 J), whole as DCGM's integer fields.
    assert (served["DCGM_FI_PROF_PCIE_RX_BYTES"], served["DCGM_FI_PROF_PCIE_TX_BYTES"]) == (512 * 1024**2, 64 * 1024**2)
    assert (served["DCGM_FI_PROF_NVLINK_RX_BYTES"], served["DCGM_FI_PROF_NVLINK_TX_BYTES"]) == (2 * GIB, 1 * GIB)
    assert served["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] == 3_600_000_123.0
    assert [served[f"DCGM_FI_DEV_NVLINK_{kind}_ERROR_COUNT_TOTAL"] for kind in ("CRC_DATA", "REPLAY", "RECOVERY")] == [
        1.0, 2.0, 3.0]
    # Exactly that name: no _total added by the client library, no _created beside it.
    assert not [name for name in served if name.startswith("DCGM_") and name.endswith(("_total", "_created"))]


def test_what_dcgm_has_no_name_for_is_served_by_gputops_and_read_back() -> None:
    samples = exported()
    served = {(s.labels["__name__"], s.labels.get("verdict")): s.value for s in samples if s.labels.get("gpu") == "0"}
    assert served[("gputop_gpu_energy_since_start_joules", None)] == 1234.5
    assert (served[("gputop_gpu_nvlink_links_active", None)], served[("gputop_gpu_nvlink_links_present", None)]) == (
        17.0, 18.0)
    assert served[("gputop_gpu_nvlink_version", None)] == 4.0
    assert {verdict: value for (name, verdict), value in served.items() if name == metric_names.GPU_VERDICT} == {
        "throttled": 0.0, "stalled": 0.0, "busy_few_sms": 1.0, "memory_bound": 0.0}
    # The activity ratios have DCGM's names: not served twice under gputop's.
    assert not [name for name, _ in served if "sm_active" in name or name.startswith("DCGM_")]
    gpu = parse_detail("node-1", samples, live=True).gpus[0]
    assert (gpu.verdict, gpu.figure("energy_since_start_j"), gpu.figure("nvlink_links_active")) == (
        "busy_few_sms", 1234.5, 17.0)


def test_a_mig_device_serves_its_own_activity_with_its_instance_labels() -> None:
    mig = MigSample(index=0, name="NVIDIA H100 80GB HBM3 MIG 3g.40gb", gpu_instance_id=2, memory_used=GIB,
                    activity=Activity(sm_active=80.0, tensor_active=40.0))
    gpu = replace(DCGM_GPU, mig_mode=True, mig_devices=(mig,))
    collector = SnapshotCollector(names="dcgm")
    collector.update(replace(DCGM_SNAPSHOT, gpus=(gpu,)))
    text = generate_latest(make_registry(collector)).decode()
    mig_series = {
        s.name: s.value for family in text_string_to_metric_families(text) for s in family.samples
        if s.labels.get("GPU_I_ID") == "2" and s.labels.get("GPU_I_PROFILE") == "3g.40gb"
    }
    # Its memory and the activity it gives; the figures it does not give are left out, never 0.
    assert mig_series == {"DCGM_FI_DEV_FB_USED": 1024.0, "DCGM_FI_PROF_SM_ACTIVE": 0.8,
                          "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": 0.4}


def test_a_gpu_without_gpm_or_in_a_gap_serves_no_profiling_field() -> None:
    for activity in (None, Activity()):
        collector = SnapshotCollector(names="dcgm")
        collector.update(replace(DCGM_SNAPSHOT, gpus=(replace(DCGM_GPU, activity=activity),)))
        text = generate_latest(make_registry(collector)).decode()
        assert "DCGM_FI_PROF_SM_ACTIVE{" not in text and "DCGM_FI_PROF_PCIE_RX_BYTES{" in text


ROOT = Path(__file__).parent.parent
COUNTERS = ROOT / "tests" / "prom" / "dcgm" / "default-counters.csv"


def csv_fields() -> dict[str, tuple[str, str]]:
    """dcgm-exporter's default-counters.csv: field -> (type, "on" or "commented"); an enabled line wins."""
    fields: dict[str, tuple[str, str]] = {}
    for line in COUNTERS.read_text().splitlines():
        state = "commented" if line.startswith("# DCGM_FI_") else "on" if line.startswith("DCGM_FI_") else None
        if state is None:
            continue
        name, kind = (part.strip() for part in line.removeprefix("# ").split(",")[:2])
        if kind != "label" and (name not in fields or state == "on"):
            fields[name] = (kind, state)
    return fields


def table_rows(text: str, first: str) -> list[list[str]]:
    """The cells of every Markdown table row whose first cell is a backquoted name starting ``first``."""
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith(f"| `{first}")]


def test_docs_table_of_dcgm_fields_is_the_exporters_and_says_where_each_stands_in_default_counters() -> None:
    rows = {row[0].strip("`"): row for row in table_rows((ROOT / "docs" / "dcgm.md").read_text(), "DCGM_FI_")}
    assert sorted(rows) == sorted(metric_names.DCGM_FIELD_BY_NAME)
    listed = csv_fields()
    for name, field in metric_names.DCGM_FIELD_BY_NAME.items():
        kind, state = listed.get(name, (field.type, "—"))
        assert (rows[name][1], rows[name][-1]) == (field.type, state), name
        assert field.type == kind, f"{name} is a {kind} in default-counters.csv"


def test_the_docs_map_each_gputop_metric_to_the_dcgm_field_the_exporter_serves_for_the_same_reading() -> None:
    """The power limit is NVML's enforced one: DCGM_FI_DEV_ENFORCED_POWER_LIMIT, not DCGM_FI_DEV_POWER_MGMT_LIMIT."""
    dcgm_by_reading = {field.reading: field.name for field in metric_names.DCGM_FIELDS}
    mapped = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for row in table_rows(page.read_text(), "gputop_gpu_"):
            figure = metric_names.GPU_FIGURE_BY_NAME.get(row[0].strip("`"))
            if figure is not None and figure.field in dcgm_by_reading and len(row) >= 3:
                mapped[figure.name] = row[2]
    assert "gputop_gpu_power_limit_watts" in mapped  # the mapping table is found
    for name, cell in mapped.items():
        expected = dcgm_by_reading[metric_names.GPU_FIGURE_BY_NAME[name].field]
        assert cell.split("`")[1] == expected, name
