"""One field table per record drives `--json` and its reading back: every field of every record is in
its table, and a GPU with every figure set comes back from its document as it went in."""

from __future__ import annotations

import dataclasses
import json

from gputop.core.model import (
    NO_HEALTH,
    Activity,
    Allocation,
    Energy,
    GpuHealth,
    GpuSample,
    HostSample,
    Job,
    MigSample,
    NvLink,
    ProcessSample,
    RemappedRows,
    Snapshot,
    XidEvent,
)
from gputop.core.output.snapshot_decode import snapshot_from_dict
from gputop.core.output.snapshot_fields import TABLES
from gputop.core.output.snapshot_json import dumps, snapshot_to_dict


def test_every_field_of_every_record_is_in_its_table() -> None:
    for record, (table, context) in TABLES.items():
        in_table = [row.attribute for row in table]
        assert len(in_table) == len(set(in_table)), record
        assert set(in_table) | context == {f.name for f in dataclasses.fields(record)}, record.__name__


JOB = Job("slurm", "1234", "0", "train-llm", "alice", "gpu", "proj42")
POD = Allocation("ml", "trainer-0", "main", "nvidia.com/gpu")


def process(pid: int, gpu: int, mig: int | None = None) -> ProcessSample:
    return ProcessSample(
        pid=pid, gpu_index=gpu, type="C", gpu_memory=7 << 30, sm_utilization=55.0, mig_index=mig,
        sm_last_active=1700000000.5, started=1699990000.25, user="alice", name="python",
        command="python train.py --bs 16", cpu_percent=101.5, host_memory=3 << 30, container="k8s:abc",
        container_name="ml/trainer-0", visible=True, parent_pid=1, parent_command="torchrun", stale=True,
        not_visible_reason="permission", container_runtime="containerd", container_id="f" * 64,
        pod_uid="6eab3b7b-f0a6-4bb8-bff2-d5bc9017c04b", job=JOB,
    )


ACTIVITY = Activity(*(10.0 + n for n in range(len(dataclasses.fields(Activity)))))


def full_gpu() -> GpuSample:
    """A GPU whose every field differs from its default: a field added to the model and not set here
    fails the test below, so that its round trip is checked too."""
    mig = MigSample(
        index=0, uuid="MIG-1", name="1g.10gb", gpu_instance_id=7, compute_instance_id=0, memory_total=10 << 30,
        memory_used=4 << 30, memory_free=6 << 30, processes=(process(300, 3, mig=0),), activity=ACTIVITY,
        allocation=POD, processes_known=False,
    )
    return GpuSample(
        index=3, name="NVIDIA H200", uuid="GPU-3", pci_bus_id="00000000:1B:00.0", lost=True, answering=False,
        not_answering_since=1700000001.0, last_error="read failed: x", read_failed=True,
        memory_total=141 << 30, memory_used=80 << 30, memory_free=61 << 30, memory_reserved=1 << 28,
        utilization_gpu=97.0, utilization_memory=40.0, utilization_encoder=1.0, utilization_decoder=2.0,
        temperature=71.0, temperature_slowdown=90.0, temperature_shutdown=95.0, memory_temperature=80.0,
        fan_speed=33.0, power_draw=650.5, power_limit=700.0, clock_sm=1980, clock_memory=2619,
        clock_sm_max=1980, clock_memory_max=2619, clock_event_reasons=("sw_power_cap",), pstate=0,
        pcie_rx=1e9, pcie_tx=2e9, pcie_link_gen=4, pcie_link_gen_max=5, pcie_link_width=8,
        pcie_link_width_max=16, pcie_replay_errors=3, activity=ACTIVITY,
        energy=Energy(since_driver_load_j=9.5e8, since_start_j=120.5),
        nvlink=NvLink(version=4, links_active=17, links_total=18, rx=5e9, tx=6e9, errors_crc=1, errors_replay=2,
                      errors_recovery=3, links_down=(5,), errors_by_link=((1, 6),)),
        mig_mode=True,
        health=GpuHealth(1, 2, RemappedRows(3, 4, True, False), True, (XidEvent(94, 1700000000.0),)),
        mig_devices=(mig,), processes=(process(200, 3),), allocation=POD, processes_known=False,
    )


def test_a_gpu_with_every_figure_set_comes_back_from_its_document_as_it_went_in() -> None:
    gpu = full_gpu()
    for record in (gpu, gpu.mig_devices[0], gpu.mig_devices[0].processes[0]):
        defaults = {f.name: f.default for f in dataclasses.fields(record) if f.default is not dataclasses.MISSING}
        unset = [name for name, default in defaults.items() if getattr(record, name) == default]
        assert unset == [], f"{type(record).__name__}: set these in the test too: {unset}"
    assert gpu.health != NO_HEALTH
    host = HostSample(55.5, 64 << 30, 32 << 30, 8 << 30, 1 << 30, (1.0, 2.0, 3.0), 1e6, 2e6, ("eth0", "ib0"))
    snapshot = Snapshot(1700000002.0, "node-1", host, (gpu,), "550.54.15", "12.4", "nvml")
    document = json.loads(dumps(snapshot_to_dict(snapshot)))
    assert snapshot_from_dict(document) == snapshot


def test_a_document_written_before_a_field_existed_reads_it_as_unknown() -> None:
    document = snapshot_to_dict(Snapshot(1.0, "h", HostSample(), (full_gpu(),)))
    gpu_document = document["gpus"][0]
    del gpu_document["temperature"]["memory"], gpu_document["nvlink"], gpu_document["health"]
    del gpu_document["processes"][0]["job"], gpu_document["answering"]
    gpu = snapshot_from_dict(document).gpus[0]
    assert (gpu.memory_temperature, gpu.nvlink, gpu.health, gpu.answering) == (None, None, NO_HEALTH, True)
    assert gpu.processes[0].job is None
