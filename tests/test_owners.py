"""The owner rollup: exact figures for each kind of owner, from one hand-made machine."""

from __future__ import annotations

import pytest

from gputop.core.analysis.diagnosis import Diagnoses, ProcessDiagnosis
from gputop.core.analysis.owners import owner_name, owner_rollup, owners_document
from gputop.core.model import Energy, GpuSample, HostSample, Job, MigSample, ProcessSample, Snapshot
from gputop.core.output.owner_table import render_owners

GIB = 1 << 30
NOW = 10_000.0
POD = "6eab3b7b-f0a6-4bb8-bff2-d5bc9017c04b"
JOB = Job(scheduler="slurm", id="1234", step="0")


def proc(pid: int, gpu: int, gib: float, user: str | None, sm: float | None, **owners: object) -> ProcessSample:
    return ProcessSample(pid=pid, gpu_index=gpu, type="C", gpu_memory=int(gib * GIB), sm_utilization=sm,
                         user=user, started=NOW - 100 * pid, visible=user is not None, **owners)  # type: ignore[arg-type]


def machine() -> Snapshot:
    """GPU 0 (80 GiB, 400 W): alice's job 1234 (60 % SM), bob in a pod (20 %), an idle process of bob's.
    GPU 1 (48 GiB, 100 W, no SM % known): alice's job 1234 again (6 GiB), carol's Docker container (2 GiB),
    and in MIG device 0 a process no one here can see (2 GiB)."""
    gpu0 = GpuSample(index=0, memory_total=80 * GIB, power_draw=400.0, processes=(
        proc(11, 0, 30, "alice", 60.0, job=JOB),
        proc(12, 0, 10, "bob", 20.0, pod_uid=POD, container_name="ml/trainer-0", container_runtime="containerd",
             container_id="5e" * 32),
        proc(13, 0, 4, "bob", 0.0),
    ))
    gpu1 = GpuSample(index=1, memory_total=48 * GIB, power_draw=100.0, processes=(
        proc(14, 1, 6, "alice", None, job=Job(scheduler="slurm", id="1234", step="1")),
        proc(15, 1, 2, "carol", None, container_runtime="docker", container_id="ab" * 32, container_name="web"),
    ), mig_devices=(MigSample(index=0, processes=(proc(16, 1, 2, None, None, mig_index=0),)),))
    return Snapshot(timestamp=NOW, hostname="node", host=HostSample(), gpus=(gpu0, gpu1))


IDLE = Diagnoses({}, {}, {(13, NOW - 1300): ProcessDiagnosis(idle_seconds=900.0, idle=True, memory=4 * GIB)})
ENERGY = {0: 36_000.0, 1: 8_000.0}


def figures(by: str) -> list[tuple[object, ...]]:
    return [
        (r.name, r.gpus, r.gpu_memory, r.memory_share, r.sm_share, r.power_share_w, r.energy_since_start_j,
         r.idle_memory, r.processes, r.longest_pid)
        for r in owner_rollup(machine(), by, IDLE, ENERGY)
    ]


def test_by_user_shares_memory_sm_power_and_energy_of_the_machine() -> None:
    # GPU 0 is split by SM time (60 + 20 + 0 = 80); GPU 1 by memory (6 + 2 + 2 = 10: no SM % known there).
    assert figures("user") == [
        ("alice", (0, 1), 36 * GIB, 36 / 128, 0.6, 400 * 60 / 80 + 100 * 6 / 10, 36_000 * 0.75 + 8_000 * 0.6,
         0, 2, 14),
        ("bob", (0,), 14 * GIB, 14 / 128, 0.2, 100.0, 9_000.0, 4 * GIB, 2, 13),
        ("carol", (1,), 2 * GIB, 2 / 128, None, 20.0, 1_600.0, 0, 1, 15),
    ]


def test_by_job_pod_and_container_only_processes_that_have_one() -> None:
    assert figures("job") == [("1234", (0, 1), 36 * GIB, 36 / 128, 0.6, 360.0, 31_800.0, 0, 2, 14)]
    assert figures("pod") == [("ml/trainer-0", (0,), 10 * GIB, 10 / 128, 0.2, 100.0, 9_000.0, 0, 1, 12)]
    # A pod's process is named runtime:id12 as a container: its container_name is the pod's.
    assert [row[0] for row in figures("container")] == ["containerd:5e5e5e5e5e5e", "web"]


def test_without_energy_or_power_those_figures_are_unknown_never_zero() -> None:
    [row] = owner_rollup(machine(), "job")
    assert row.energy_since_start_j is None
    snapshot = machine()
    unpowered = Snapshot(timestamp=NOW, hostname="node", host=HostSample(),
                         gpus=(snapshot.gpus[0], GpuSample(index=1, memory_total=48 * GIB,
                                                           processes=snapshot.gpus[1].processes)))
    alice = owner_rollup(unpowered, "user", energy_since_start_j={0: 1.0, 1: None})[0]
    assert (alice.name, alice.power_share_w, alice.energy_since_start_j) == ("alice", None, None)


def test_energy_since_start_is_read_from_each_gpus_own_energy_by_default() -> None:
    snapshot = machine()
    with_energy = Snapshot(timestamp=NOW, hostname="node", host=HostSample(), gpus=tuple(
        GpuSample(index=gpu.index, memory_total=gpu.memory_total, power_draw=gpu.power_draw,
                  processes=gpu.processes, mig_devices=gpu.mig_devices,
                  energy=Energy(since_driver_load_j=1e9, since_start_j=ENERGY[gpu.index]))
        for gpu in snapshot.gpus
    ))
    # The same split as when the figures are handed in: 36 kJ x 60/80 on GPU 0, 8 kJ x 6/10 on GPU 1.
    [job] = owner_rollup(with_energy, "job")
    assert job.energy_since_start_j == 36_000 * 0.75 + 8_000 * 0.6


def test_the_json_owners_document_has_exactly_the_issues_fields() -> None:
    document = owners_document(machine(), IDLE)
    assert list(document) == ["user", "job", "pod", "container"]
    assert document["pod"] == [{
        "name": "ml/trainer-0", "gpus": [0], "gpu_memory": 10 * GIB, "memory_share": 10 / 128, "sm_share": 0.2,
        "power_share_w": 100.0, "energy_since_start_j": None, "idle_memory": 0, "processes": 1,
    }]


def test_the_once_table_by_user() -> None:
    text = render_owners(owner_rollup(machine(), "user", IDLE, ENERGY), "user", NOW, width=100)
    assert text.splitlines() == [
        "USER                      GPUS     GPU-MEM  MEM%    SM  POWER  ENERGY IDLE-MEM PROCS LONGEST",
        "alice                     0,1      36.0GiB   28%   60%   360W  31.8kJ        -     2 14 23m20s",
        "bob                       0        14.0GiB   11%   20%   100W   9.0kJ   4.0GiB     2 13 21m40s",
        "carol                     1         2.0GiB    2%   N/A    20W   1.6kJ        -     1 15 25m00s",
    ]


def test_an_unknown_kind_of_owner_is_refused() -> None:
    with pytest.raises(ValueError, match="no such owner kind: 'team'"):
        owner_name(machine().gpus[0].processes[0], "team")


def test_by_without_once_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from gputop.cli.main import main

    assert main(["--demo", "--by", "job"]) == 2
    assert capsys.readouterr().err == (
        'gputop: --by groups the --once table: add --once (--json lists every grouping under "owners")\n'
    )


def test_once_by_user_on_the_demo_machine(capsys: pytest.CaptureFixture[str]) -> None:
    from gputop.cli.main import main

    assert main(["--demo", "--once", "--by", "user", "--width", "80"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # 80 columns leave no room for the longest process and the energy: their columns go first.
    assert lines[0].split() == ["USER", "GPUS", "GPU-MEM", "MEM%", "SM", "POWER", "IDLE-MEM", "PROCS"]
    assert len(lines) > 2 and all(len(line) <= 80 for line in lines)
